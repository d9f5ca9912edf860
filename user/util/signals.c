// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <sys/signalfd.h>

#include "util/signals.h"

void signals_block_stop(sigset_t *mask, int extra, sigset_t *old)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
	if (extra)
		sigaddset(mask, extra);
	sigprocmask(SIG_BLOCK, mask, old);
}

bool signals_is_stop(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

int signals_fd(const sigset_t *mask)
{
	int fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

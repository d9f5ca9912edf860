/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The signals that end a run, taken synchronously by every command. */
#ifndef SCPROF_SIGNALS_H
#define SCPROF_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/*
 * Block SIGINT, SIGTERM and SIGHUP, plus extra unless it is 0, and return
 * them in mask (for sigtimedwait or signalfd); old gets the previous mask
 * when not NULL.
 */
void signals_block_stop(sigset_t *mask, int extra, sigset_t *old);
/* A signalfd for mask (non-blocking, close-on-exec): the fd or -errno. */
int signals_fd(const sigset_t *mask);
/* SIGINT, SIGTERM or SIGHUP. */
bool signals_is_stop(int sig);

#endif

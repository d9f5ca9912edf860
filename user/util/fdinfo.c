// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/fdinfo.h"

int fdinfo_target(pid_t pid, int fd, uint64_t ino, char *buf, size_t len)
{
	char path[64];
	struct stat st;
	ssize_t n;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (access(path, F_OK))
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	buf[n] = '\0';
	/* the file the link leads to, anonymous inodes included */
	if (ino && !stat(path, &st) && (uint64_t)st.st_ino != ino)
		return -ESTALE;
	return 0;
}

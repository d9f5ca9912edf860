/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a process's fd is, from /proc: the target of /proc/PID/fd/N (a
 * path, "pipe:[INO]", "socket:[INO]"), checked against the inode the
 * kernel side saw. Names are raw bytes from the kernel: escape them to
 * print.
 */
#ifndef SCPROF_FDINFO_H
#define SCPROF_FDINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The target of /proc/PID/fd/FD into buf (NUL-ended, cut to len - 1). ino
 * (when not 0) is the inode the fd had: another inode means the fd was
 * closed and reused. 0, -ENOENT (no such fd: closed), -ESTALE (reused),
 * -ESRCH (no such process) or -errno.
 */
int fdinfo_target(pid_t pid, int fd, uint64_t ino, char *buf, size_t len);
#endif

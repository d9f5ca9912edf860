/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a process's fd is, from /proc: the target of /proc/PID/fd/N (a
 * path, "pipe:[INO]", "socket:[INO]"), checked against the inode the
 * kernel side saw, and a unix socket's path from /proc/PID/net/unix.
 * Names are raw bytes from the kernel: escape them to print.
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
/*
 * One line of /proc/net/unix: when it is the socket of inode ino, its path
 * ("" unbound; "@name" abstract) into buf. 1 found, 0 another socket or
 * not a socket line.
 */
int fdinfo_unix_line(const char *line, uint64_t ino, char *buf, size_t len);
/* The path of unix socket ino, seen from PID's network namespace.
 * 0 (buf "" when unbound), -ENOENT (not there) or -errno.
 */
int fdinfo_unix_path(pid_t pid, uint64_t ino, char *buf, size_t len);

#endif

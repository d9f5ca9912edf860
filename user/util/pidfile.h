/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A pidfile held under an exclusive lock for a process's lifetime: a
 * second instance fails to take it, and its message names the holder.
 */
#ifndef SCPROF_PIDFILE_H
#define SCPROF_PIDFILE_H

/*
 * Create or open path, lock it and write this process's pid into it. The
 * locked descriptor (keep it open to hold the lock), or -errno (-EBUSY:
 * another process holds it) with the reason reported in one line.
 */
int pidfile_open(const char *path);
/* Remove path and close fd, the pidfile_open of path; nothing if fd < 0. */
void pidfile_close(int fd, const char *path);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which calls are which, by name, for the verdict's rules: the families
 * its patterns are made of (reads, writes, opens, waits...) and the cheap
 * calls whose advice names what they are.
 */
#ifndef SCPROF_VERDICT_CALLS_H
#define SCPROF_VERDICT_CALLS_H

#include <stdbool.h>

#include "model/verdict.h"

/* Calls that move bytes in (read, pread64, recvfrom...) or out. */
bool verdict_is_read(const char *name);
bool verdict_is_write(const char *name);
/* open, openat, openat2, creat; close. */
bool verdict_is_open(const char *name);
bool verdict_is_close(const char *name);
/* accept, accept4. */
bool verdict_is_accept(const char *name);
/* Calls that wait for something (a time, an event, a child, a lock...),
 * and of them those that sleep on purpose.
 */
bool verdict_is_wait(const char *name);
bool verdict_is_sleep(const char *name);
/* Calls on a path, or on an fd given as a dirfd with an empty path (the
 * C library's fstat is newfstatat(fd, "", AT_EMPTY_PATH)): their rows
 * have no fd kind, and they go with opening a file.
 */
bool verdict_is_stat_path(const char *name);
/* Which advice a cheap call gets: ids, clocks, sched_yield, or other. */
enum verdict_call verdict_cheap_call(const char *name);

#endif

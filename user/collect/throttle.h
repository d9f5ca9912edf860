/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A target's CPU quota throttling over a run: the cgroup that holds its
 * quota (the target's own, else its nearest ancestor with one; cgroup v2's
 * cpu.max, or v1's CFS quota, whichever controls the cpu controller
 * here) and what its cpu.stat counted since the start.
 */
#ifndef SCPROF_THROTTLE_H
#define SCPROF_THROTTLE_H

#include <sys/types.h>

#include "model/model.h"

struct throttle;

/*
 * Start watching the cgroup of pid (or, pid 0, the cgroup v2 directory
 * dir), and follow pid where it moves (throttle_poll, throttle_read): a
 * cgroup made after the start counts from its making, one that existed
 * from when it was found. NULL: none (no cpu controller, or no memory).
 */
struct throttle *throttle_start(pid_t pid, const char *dir);
/* Has the process moved to another cgroup since? (Now and then, while it
 * runs: one that moves and exits before the report is still known.)
 */
void throttle_poll(struct throttle *t);
/* What its cpu.stat counted since the start, into out (known false when
 * it cannot be read any more).
 */
void throttle_read(struct throttle *t, struct sc_throttle *out);
void throttle_free(struct throttle *t);

#endif

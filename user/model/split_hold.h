/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split's counters of a cumulative snapshot, held so that none goes
 * back from one snapshot to the next (the daemon's, per syscall row).
 *
 * Each of total, waiting, blocked and I/O wait is a counter that only
 * grows, but on a CPU is the total less its parts, and the snapshot reads
 * them one after another while calls end on other CPUs: a call's time can
 * be read in the total and not yet in its parts, or the other way round,
 * and on a CPU then reads more (or less) than it is, and goes back at the
 * next snapshot. A Prometheus counter that goes back is a reset: its rate
 * jumps by everything counted since the start. So the parts may grow by
 * no more than the total has since the last snapshot: what is left over is
 * held back until the total catches up (a call's parts never exceed its
 * time), and the four counters always add up (on a CPU + waiting +
 * blocked = total, I/O wait within blocked).
 */
#ifndef SCPROF_SPLIT_HOLD_H
#define SCPROF_SPLIT_HOLD_H

#include "model/model.h"

struct split_hold;

struct split_hold *split_hold__new(void);
void split_hold__free(struct split_hold *h);
/* Hold the split of every row of m->total (wait_ns, blocked_ns,
 * iowait_ns lowered where they outgrew their total) against the rows
 * held before, and remember them. 0 or -ENOMEM (m then unchanged where
 * it had no row held).
 */
int split_hold__apply(struct split_hold *h, struct sc_model *m);

#endif

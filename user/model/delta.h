/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Deltas between two cumulative snapshots of one collector: what happened
 * in an interval (-i, top). Maps are read without deleting anything; the
 * difference is computed here, in userspace.
 */
#ifndef SCPROF_DELTA_H
#define SCPROF_DELTA_H

#include <stdint.h>

#include "model/model.h"

/* dst = cur - prev for every counter and histogram bucket (never below 0).
 * min_ns/max_ns become the bounds of the lowest and highest non-empty
 * bucket of the difference, kept within cur's min/max: the exact extremes
 * of an interval are not known.
 */
void stats_delta(struct sc_stats *dst, const struct sc_stats *cur,
		 const struct sc_stats *prev);

/*
 * What cur has that prev (NULL: nothing) did not. Processes are matched by
 * (pid, start_ns); rows without calls or time are left out, and so are
 * processes without rows. Time in calls still in flight is in the totals
 * (so an interval has the part of a call spent in it) and the calls in
 * flight are cur's. The totals are cur's totals minus prev's, not a sum of the
 * per-process deltas, so a process that was folded into an aggregate
 * between the two snapshots is counted once. The aggregate (pid 0) gets
 * what the totals have beyond the other processes' deltas, that is what
 * the processes merged into it did in the interval, and merged counts
 * those processes. Errno counts and drops are differences too;
 * duration_ns is left 0 for the caller. Both models must be finalized.
 * NULL when out of memory.
 */
struct sc_model *model_delta(const struct sc_model *cur,
			     const struct sc_model *prev);

#endif

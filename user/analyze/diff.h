/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff: two runs compared figure by figure, each change judged
 * against the runs' own noise. Pure logic: the runs come from
 * analyze/diff_load, the result goes to render/diff_report.
 *
 * Figures, per syscall (the report's totals, and each --by group when
 * both runs have the same keys): calls/s, errors/s and time/s (ns inside
 * the call per second of run) over the run's length, so runs of
 * different lengths compare; the mean latency, p50 and p99 (calls-
 * weighted over the intervals).
 *
 * Noise: with intervals (-i, JSON lines), a run's figure has one value
 * per interval (rates: 0 where the syscall made no call; latencies: the
 * intervals with calls), and its standard error is sd / sqrt(n). A time
 * figure adds what a rerun would change, DIFF_RUN_SPREAD * sd (see
 * model/diff.h): the spread inside one run misses what differs between
 * runs. A last interval shorter than half the median is left out. A
 * change is significant when |B - A| > 3 sqrt(seA^2 + seB^2) and it is
 * at least --min-change. A side whose spread is unknown (no intervals,
 * or fewer than 2 values for that figure) borrows the other side's
 * relative standard error, its within-run part scaled by
 * sqrt(T_other / T_self) for the runs' lengths. With no spread on
 * either side a change is not judged: it is reported as it is, and
 * counts when it is at least --min-change.
 */
#ifndef SCPROF_DIFF_H
#define SCPROF_DIFF_H

#include <stdbool.h>

#include "analyze/diff_load.h"
#include "model/diff.h"

struct diff_opts {
	double min_change_pct; /* smaller changes are no change */
};

/* One side's figure: its value (NAN: none), the standard error of the
 * value over the run's intervals (NAN: unknown), and the standard
 * deviation a rerun would add (0 for counts).
 */
struct diff_est {
	double v, se, rerun;
};

/*
 * Judge a figure present on both sides: DIFF_CHANGED or DIFF_SAME, with
 * *judged false when neither standard error is known (then a change of
 * at least min_change_pct is DIFF_CHANGED) and *pct the change in %
 * (NAN from 0).
 */
enum diff_state diff_judge(struct diff_est a, struct diff_est b,
			   double min_change_pct, bool *judged, double *pct);
/* The smallest change in % of a.v that diff_judge counts: DIFF_SIGMAS
 * standard errors of the difference, or min_change_pct if more. NAN when
 * a standard error is unknown or a.v is 0.
 */
double diff_threshold_pct(struct diff_est a, struct diff_est b,
			  double min_change_pct);

/* Compare run a with run b. 0 or -ENOMEM. */
int diff_compare(const struct diff_run *a, const struct diff_run *b,
		 const struct diff_opts *o, struct diff_result **out);

#endif

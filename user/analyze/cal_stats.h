/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The calibration's statistics: pure, and unit-tested through calibrate.h. */
#ifndef SCPROF_CAL_STATS_H
#define SCPROF_CAL_STATS_H

#include <stddef.h>
#include <stdint.h>

struct cal_stats {
	double min, median, max;
};
/* Sort v in place and take its min, median and max. n > 0. */
void cal_stats_compute(double *v, size_t n, struct cal_stats *out);
/*
 * Iterations for a run to last about target_ns, given that iters took
 * elapsed_ns: at least 1, at most 1000 times iters (a run that took no
 * measurable time grows by that much and is measured again).
 */
uint64_t cal_scale_iters(uint64_t iters, uint64_t elapsed_ns,
			 uint64_t target_ns);
/* Per-call cost of a run with the empty loop's cost taken off; >= 0. */
double cal_per_call(uint64_t elapsed_ns, uint64_t iters, double overhead_ns);

#endif

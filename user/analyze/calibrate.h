/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Calibration: running the loops of the catalogue (model/calibration.h)
 * and measuring what scprof's own probes add to each call (the probe
 * effect).
 *
 * Each loop runs pinned to one CPU, scaled so that one timed run lasts long
 * enough for the clock to be negligible, and is repeated: the result is
 * the median run, with the fastest and slowest, in ns per call after the
 * cost of an empty loop is subtracted.
 */
#ifndef SCPROF_CALIBRATE_H
#define SCPROF_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/calibration.h"

struct calibrate_opts {
	bool quick;
	const bool *want; /* per loop index; NULL: every loop */
	bool probe;	  /* measure the probe effect (needs BPF) */
	/* Called before each step; i counts from 0 to n - 1. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *what);
	void *progress_ctx;
};

/* Run the loops. 0 or -errno, with the reason reported in one line. */
int calibrate__run(const struct calibrate_opts *o, struct calibration **out);

/* Pure helpers, exposed for the unit tests. */
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

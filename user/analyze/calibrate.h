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

#include "analyze/cal_stats.h" /* the pure helpers, for the unit tests */
#include "model/calibration.h"

struct collector_opts;

struct calibrate_opts {
	bool quick;
	const bool *want; /* per loop index; NULL: every loop */
	bool probe;	  /* measure the probe effect (needs BPF) */
	/* with probe: what to collect, as the plan decides (calibrate_plan) */
	const struct collector_opts *probe_opts;
	/* Called before each step; i counts from 0 to n - 1. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *what);
	void *progress_ctx;
};

/* Run the loops. 0 or -errno, with the reason reported in one line. */
int calibrate__run(const struct calibrate_opts *o, struct calibration **out);

#endif

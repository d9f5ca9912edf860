/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Calibration: what a syscall costs on this machine, measured by built-in
 * loops (the experiments of the seed articles), and what scprof's own
 * probes add to each call (the probe effect).
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

#include "machine.h"

/* The loop that gives the floor: the cheapest real kernel crossing. */
#define CAL_FLOOR_LOOP "syscall-getppid"
#define CAL_VDSO_LOOP "vdso-clock_gettime"

struct cal_loop_result {
	const char *name;      /* static, from the loop table */
	double ns_per_call;    /* the median run's (JSON: also median_ns) */
	double min_ns, max_ns; /* the fastest and slowest runs' */
	uint64_t calls;	       /* calls timed, over all runs */
	uint32_t runs;
	uint32_t bytes_per_call; /* 0: the loop moves no data */
};

/* The floor loop run bare and with scprof's programs attached and
 * targeting the calibrating process, in alternating pairs.
 */
struct cal_probe {
	bool measured;
	double bare_ns;	    /* median ns per call without the programs */
	double probed_ns;   /* median ns per call with them */
	double overhead_ns; /* median of the paired differences, >= 0 */
	double reported_ns; /* what scprof reported as the calls' latency */
	uint32_t pairs;
};

struct calibration {
	char *version; /* scprof version that measured it */
	bool quick;
	long long created;	 /* Unix time */
	int pinned_cpu;		 /* -1: not pinned */
	double loop_overhead_ns; /* an empty loop's iteration, subtracted */
	struct machine_info machine;
	struct cal_loop_result *loops; /* in table order */
	size_t nloops;
	struct cal_probe probe;
};

struct calibrate_opts {
	bool quick;
	const bool *want; /* per loop index; NULL: every loop */
	bool probe;	  /* measure the probe effect (needs BPF) */
	/* Called before each step; i counts from 0 to n - 1. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *what);
	void *progress_ctx;
};

/* The loop table: names, one-line descriptions, and the loop whose
 * figure each one is best compared with (NULL: the floor).
 */
size_t calibrate_nloops(void);
const char *calibrate_loop_name(size_t i);
const char *calibrate_loop_desc(size_t i);
const char *calibrate_loop_versus(size_t i);
/* Index of a loop name, or -1. */
int calibrate_find_loop(const char *name);

/* Run the loops. 0 or -errno, with the reason reported in one line. */
int calibrate__run(const struct calibrate_opts *o, struct calibration **out);
struct calibration *calibration__new(void);
void calibration__free(struct calibration *c);
/* A loop's result, or NULL if it was not run. */
const struct cal_loop_result *calibration__loop(const struct calibration *c,
						const char *name);
/* ns per byte of a loop that moves data, else 0. */
double cal_ns_per_byte(const struct cal_loop_result *r);
/* The part of the probe effect inside the latencies scprof reports:
 * min(overhead_ns, reported_ns).
 */
double cal_probe_in_latency(const struct cal_probe *p);

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

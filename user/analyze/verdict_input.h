/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the verdict judges (analyze/verdict.h), for the judge and its rules
 * alike: one process's rows, its times, the calibration's figures, and
 * what else was sampled (paths, call sites, the split's estimates, the
 * cgroup's throttling).
 */
#ifndef SCPROF_VERDICT_INPUT_H
#define SCPROF_VERDICT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/stacks.h"
#include "model/why.h"

/* A path the process had open, as /proc/PID/fd showed it, and how often
 * it was seen there (samples).
 */
struct verdict_path {
	const char *path;
	uint64_t seen;
	uint32_t fd_type; /* enum sc_fd_type: file, dir, chr or blk */
};

struct verdict_input {
	const struct sc_row *rows; /* one process, any ABI */
	size_t nrows;
	double wall_s;	 /* how long it was profiled */
	double thread_s; /* wall time summed over its threads */
	double utime_s;	 /* CPU time during the run */
	double stime_s;
	double runq_s; /* run-queue waits, summed over threads; 0: unknown */
	/* From the calibration. */
	double floor_ns;	  /* syscall-getppid round trip, > 0 */
	double vdso_ns;		  /* vdso-clock_gettime; 0: unknown */
	double probe_ns;	  /* probe_overhead_ns; 0: not corrected */
	double probe_reported_ns; /* what scprof reported for the floor call */
	/* Paths of the files it had open, if sampled (open-close-churn
	 * names the most seen of the kind it closes).
	 */
	const struct verdict_path *paths;
	size_t npaths;
	/* Sampled call sites, if any: each finding names its top one. */
	const struct sc_stacks *stacks;
	/* The split of the calls' time was measured (the rows' wait_ns,
	 * blocked_ns, iowait_ns), with its estimates (why: where the calls
	 * slept, who woke them, what ran instead; NULL: none); the CPU
	 * quota throttling of the process's cgroup (NULL: not read).
	 */
	bool split;
	const struct sc_whys *why;
	const struct sc_throttle *throttle;
	uint32_t pid; /* the process (its own threads among the others) */
};

#endif

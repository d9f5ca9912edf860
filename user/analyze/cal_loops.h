/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The calibration loops (one per entry of model/calibration.h's
 * catalogue), the environment they run in, and their timing.
 */
#ifndef SCPROF_CAL_LOOPS_H
#define SCPROF_CAL_LOOPS_H

#include <stddef.h>
#include <stdint.h>

struct cal_env {
	int fd; /* FILE_SIZE bytes, in the page cache */
	int devnull;
	char *buf;   /* BUF_SIZE destination, hot in the cache */
	size_t size; /* read and mmap loops: bytes per call, the loop's */
	uint64_t off;
	char *map; /* mmap loops: the file, mapped for one pass */
	size_t map_off;
	unsigned char *pool; /* getrandom-16B-buffered's buffer */
	size_t pool_pos;
	int err; /* -errno of the first failure inside a loop */
};

/* How long to measure: runs per loop and the length of one run. */
struct cal_plan {
	uint32_t runs;
	uint64_t run_ns;
};

typedef void (*cal_fn)(struct cal_env *e, uint64_t n);

/* What loop i of the catalogue runs. */
cal_fn cal_loop_fn(size_t i);
/* The empty loop, whose cost every figure has taken off. */
void cal_loop_empty(struct cal_env *e, uint64_t n);

/* n iterations of fn, in ns of this thread's CPU time. */
uint64_t cal_timed(cal_fn fn, struct cal_env *e, uint64_t n);
/* Grow the iteration count until a trial run is long enough to time,
 * then size it for one run of run_ns.
 */
uint64_t cal_scale(cal_fn fn, struct cal_env *e, uint64_t run_ns);

/* e starts with both descriptors at -1; cal_env_close undoes what was
 * done, whether this succeeded or not. 0 or -errno, reported.
 */
int cal_env_open(struct cal_env *e);
void cal_env_close(struct cal_env *e);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a calibration is: the catalogue of loops (the experiments of the
 * seed articles), and the results of a run on one machine. Measured by
 * analyze/calibrate, rendered, saved and loaded by render/calib_*.
 */
#ifndef SCPROF_CALIBRATION_H
#define SCPROF_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/machine.h"

/* The loops, in the order they run and are reported. */
enum cal_loop_id {
	CAL_LOOP_GETPPID,
	CAL_LOOP_LIBC_GETPID,
	CAL_LOOP_VDSO,
	CAL_LOOP_READ_1B,
	CAL_LOOP_READ_64KIB,
	CAL_LOOP_WRITE_DEVNULL,
	CAL_LOOP_READ_COPY_4KIB,
	CAL_LOOP_MMAP_COPY_4KIB,
	CAL_LOOP_READ_COPY_8KIB,
	CAL_LOOP_MMAP_COPY_8KIB,
	CAL_LOOP_READ_COPY_16KIB,
	CAL_LOOP_MMAP_COPY_16KIB,
	CAL_LOOP_GETRANDOM,
	CAL_LOOP_GETRANDOM_BUFFERED,
	CAL_LOOP_FOPEN,
	CAL_NLOOPS
};

struct cal_loop {
	const char *name;
	const char *desc;
	uint32_t bytes;	    /* per call: what the read and mmap loops move */
	const char *versus; /* compared with; NULL: the floor */
};

/* The loop that gives the floor: the cheapest real kernel crossing. */
#define CAL_FLOOR_LOOP "syscall-getppid"
#define CAL_VDSO_LOOP "vdso-clock_gettime"

struct cal_loop_result {
	const char *name;      /* static, from the catalogue */
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

/* Loop i of the catalogue, or NULL past its end. */
const struct cal_loop *cal_loop(size_t i);
/* Index of a loop name, or -1. */
int cal_find_loop(const char *name);

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

#endif

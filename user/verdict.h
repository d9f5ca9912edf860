/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verdict: from one process's syscall rows, its CPU and thread times
 * and this machine's calibration, decide whether syscalls dominate its
 * time and which of the known patterns it shows. Pure logic: no BPF, no
 * /proc, no output (verdict_report.c renders a verdict).
 *
 * Figures and rules (README "Is it the syscalls?"):
 *  - a call's round trip (user to kernel to user, probe effect removed) is
 *    floor + (its latency as scprof reports it - the floor call's latency
 *    as scprof reported it under the probe), and at least the floor;
 *  - syscall_s is the sum of round trips; syscall_share = syscall_s /
 *    thread_s, where thread_s is the threads' wall time (threads counted
 *    over the run) less the probe's cost (calls x probe_overhead_ns);
 *  - CPU time is utime + stime less the probe's cost; the part spent in
 *    syscalls is min(syscall_s, system time less the probe's cost);
 *  - what is left of thread_s after CPU time and run-queue waits is
 *    spent asleep, which happens inside syscalls: blocked_s =
 *    min(syscall_s, that);
 *  - syscall_bound: the process keeps at least a tenth of a CPU busy
 *    (cpu_s >= 0.1 x wall) and at least half of its CPU time is spent
 *    inside syscalls. Waiting, for an event or for a CPU, is not syscall
 *    overhead and does not count.
 */
#ifndef SCPROF_VERDICT_H
#define SCPROF_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "names.h"

/* Thresholds of the rules. */
#define VERDICT_BOUND_SHARE 0.5	    /* of CPU time, inside syscalls */
#define VERDICT_MIN_CPUS 0.1	    /* CPUs the process keeps busy */
#define VERDICT_VISIBLE_SHARE 0.05  /* of CPU time: a cost worth naming */
#define VERDICT_SMALL_IO_BYTES 4096 /* average below this: small I/O */
#define VERDICT_BUFFER_BYTES 65536  /* what buffering would move per call */
#define VERDICT_MIN_CALLS 1000	 /* fewer calls are never small-io/high-rate */
#define VERDICT_CHEAP_FLOORS 4.0 /* round trip within 4 floors: cheap */
/* (ids, clocks and sched_yield are cheap by nature, whatever measured) */
#define VERDICT_MIN_OPENS 100
#define VERDICT_IO_PER_OPEN 4.0	   /* at most this many I/O calls per open */
#define VERDICT_PER_OPEN_SLACK 0.1 /* one call per open, within 10% */
#define VERDICT_BLOCKED_SHARE 0.2  /* of thread time, blocked in syscalls */
#define VERDICT_BLOCKING_ROW 0.1   /* of thread time, in one syscall */
#define VERDICT_WAIT_FLOORS 100.0  /* a call this slow waits */

enum verdict_kind {
	VERDICT_SMALL_IO,
	VERDICT_OPEN_CLOSE_CHURN,
	VERDICT_HIGH_RATE,
	VERDICT_BLOCKING,
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
};

/* What kind of call a finding is about, for its advice. */
enum verdict_call {
	VERDICT_CALL_OTHER,
	VERDICT_CALL_READ,  /* small-io */
	VERDICT_CALL_WRITE, /* small-io */
	VERDICT_CALL_ID,    /* high-rate: getpid and the like */
	VERDICT_CALL_CLOCK, /* high-rate: the vDSO could answer it */
	VERDICT_CALL_YIELD, /* high-rate: sched_yield */
	VERDICT_CALL_SLEEP, /* blocking: it sleeps on purpose */
};

/* A finding's figures; verdict_advice() (verdict_report.h) words them. */
struct verdict_finding {
	enum verdict_kind kind;
	char syscall[SC_NAME_LEN];
	uint64_t calls;
	double avg_bytes;     /* < 0: not a byte-moving call */
	double share;	      /* its syscall time / thread time */
	double round_trip_ns; /* average, probe effect removed */
	double per_s;	      /* calls per second */
	uint64_t saved_calls; /* small-io: calls that 64 KiB buffers save */
	enum verdict_call call;
	/* Of its CPU time: what the saved crossings cost (small-io), the
	 * whole cycle (open-close-churn), the crossings (high-rate).
	 */
	double cpu_share;
	uint64_t buffered_calls; /* small-io: calls moving 64 KiB each */
	uint64_t closes;	 /* open-close-churn */
	double io_per_open;	 /* open-close-churn: reads and writes */
	double bytes_per_open;	 /* open-close-churn: what they move */
	char companions[96];	 /* open-close-churn: calls made once per
				  * open, at most 3: "newfstatat, ioctl"
				  */
};

/* One syscall's derived figures. */
struct verdict_row {
	char name[SC_NAME_LEN];
	uint64_t calls;
	uint64_t ok_calls;    /* the calls that did not fail */
	double round_trip_ns; /* average, probe effect removed */
	double time_s;	      /* sum of round trips */
	double share;	      /* of thread time */
	double avg_bytes;     /* < 0: not a byte-moving call */
	bool in_churn;	      /* part of an open-close-churn finding */
};

struct verdict {
	uint64_t calls;
	double calls_per_s;
	double wall_s;
	double thread_s;	 /* corrected */
	double syscall_s;	 /* time inside syscalls, corrected */
	double syscall_share;	 /* syscall_s / thread_s, in [0, 1] */
	double cpu_s;		 /* utime + stime, corrected */
	double user_s, system_s; /* as /proc says, not corrected */
	double cpus;		 /* cpu_s / wall_s */
	double runq_s;		 /* run-queue waits, summed over threads */
	double blocked_s;
	double blocked_share;	  /* of thread time */
	double syscall_cpu_s;	  /* CPU time inside syscalls, corrected */
	double cpu_syscall_share; /* syscall_cpu_s / cpu_s */
	double crossing_s;	  /* calls x floor */
	double crossing_share;	  /* of CPU time, in [0, 1] */
	double probe_s;		  /* calls x probe_overhead_ns, taken off */
	bool corrected;		  /* the probe effect was taken off */
	bool syscall_bound;
	double floor_ns;
	double vdso_ns;		  /* 0: unknown */
	struct verdict_row *rows; /* by time, largest first */
	size_t nrows;
	struct verdict_finding *findings; /* by share, largest first */
	size_t nfindings;
};

const char *verdict_kind_name(enum verdict_kind k);

/* 0 or -ENOMEM / -EINVAL (floor_ns <= 0, times not finite). */
int verdict_judge(const struct verdict_input *in, struct verdict **out);
void verdict_free(struct verdict *v);

#endif

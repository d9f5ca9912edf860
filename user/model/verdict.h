/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A verdict: the figures and findings that analyze/verdict derives from
 * one process's rows, and render/verdict_report words. The thresholds of
 * the rules are here because the advice quotes them.
 */
#ifndef SCPROF_MODEL_VERDICT_H
#define SCPROF_MODEL_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/names.h"
#include "model/why.h"

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
#define VERDICT_MIN_ACCEPTS 100	   /* fewer are never short-connections */
#define VERDICT_MAX_PATHS 3	   /* paths a churn finding names */
/* The split (a call's time on a CPU, waiting for one, blocked): a part of
 * a syscall's time worth a finding is at least this share of its calls'
 * time (and VERDICT_VISIBLE_SHARE of the threads' time; blocking:
 * VERDICT_BLOCKING_ROW)
 */
#define VERDICT_PART_SHARE 0.25
/* the advice about a call's cost (small-io, high-rate) only for calls at
 * least this much of whose time, waits for a CPU aside, is on a CPU
 */
#define VERDICT_ON_CPU_SHARE 0.5
#define VERDICT_THROTTLED_SHARE 0.1 /* of the run: a cgroup held back */
#define VERDICT_MAX_WHYS 8	    /* estimates a finding keeps per kind */
#define VERDICT_ADVICE_WHYS 3	    /* of them, those its advice names */

enum verdict_kind {
	VERDICT_SMALL_IO,
	VERDICT_OPEN_CLOSE_CHURN,
	VERDICT_HIGH_RATE,
	VERDICT_BLOCKING,
	VERDICT_SHORT_CONNECTIONS,
	/* from the split, per syscall */
	VERDICT_CPU_WAIT,  /* waiting for a CPU: contention, throttling */
	VERDICT_IO_WAIT,   /* asleep in I/O wait */
	VERDICT_LOCK_WAIT, /* asleep waiting for a lock */
	/* the process's cgroup held back by its CPU quota */
	VERDICT_CPU_QUOTA,
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

/* One estimate a finding names (model/why.h): where its calls slept, who
 * woke them, what ran while they waited for a CPU.
 */
struct verdict_why {
	uint8_t waker;		    /* enum sc_waker (woken_by) */
	bool lock;		    /* slept_in: waiting for a lock */
	uint32_t pid, tid;	    /* woken_by: the task's; ran_instead: pid */
	char name[SC_WHY_NAME_LEN]; /* raw bytes: escape to print */
	double share;		    /* of the part it splits */
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
				  * open, at most 3: "newfstatat, ioctl";
				  * short-connections: once per accept
				  */
	/* enum sc_fd_type: what the closes closed, the most closed kind
	 * (open-close-churn: file, dir, chr, blk; 0 when the rows are not
	 * split by fd kind), or socket (short-connections)
	 */
	uint32_t fd_type;
	uint32_t row_fd_type; /* the syscall's row's, as verdict_row */
	/* open-close-churn: the paths seen open most often, most first,
	 * as /proc showed them (attacker-controlled: escape to print)
	 */
	char paths[VERDICT_MAX_PATHS][256];
	size_t npaths;
	bool random_device; /* open-close-churn: a path is /dev/[u]random */
	/* --stacks: the syscall's call site with the most samples (raw
	 * text: escape it) and its share of them; "" when none was sampled
	 */
	char callsite[256];
	double callsite_share;
	/* The split's findings (cpu-wait, io-wait, lock-wait, and blocking
	 * on calls that returned: split): the part of the calls' time they
	 * are about, in seconds and as a share of the calls' time (that
	 * returned), and its evidence; blocking's part_s adds the time of
	 * the calls still in flight (part_share 0: only theirs).
	 */
	bool split;
	double part_s;
	double part_share;
	double on_cpu_ns;   /* a call's round trip on a CPU (the split's) */
	uint64_t in_flight; /* blocking: its calls still in flight, */
	double flight_s;    /* and their time so far */
	struct verdict_why slept_in[VERDICT_MAX_WHYS];
	struct verdict_why woken_by[VERDICT_MAX_WHYS];
	struct verdict_why ran_instead[VERDICT_MAX_WHYS];
	size_t nslept_in, nwoken_by, nran_instead;
};

/* One syscall's derived figures. */
struct verdict_row {
	char name[SC_NAME_LEN];
	uint32_t abi, nr;
	uint64_t calls;
	uint64_t ok_calls;    /* the calls that did not fail */
	double round_trip_ns; /* average, probe effect removed */
	double time_s;	      /* sum of round trips */
	double share;	      /* of thread time */
	double avg_bytes;     /* < 0: not a byte-moving call */
	uint32_t fd_type;     /* enum sc_fd_type; 0: not split by fd kind */
	bool in_churn;	      /* part of an open-close-churn finding */
	uint64_t in_flight;   /* calls still in flight (not in calls; their
			       * time so far is in time_s)
			       */
	double flight_s;      /* their time so far */
	/* The split of the calls that returned (split: it was measured and
	 * some returned timed): their time as measured, of it waiting for
	 * a CPU, blocked, in I/O wait and (estimated from where they slept)
	 * waiting for a lock, in seconds
	 */
	bool split;
	double returned_s, wait_s, blocked_s, iowait_s, lock_s;
	/* A call's round trip on a CPU (the round trip less its waiting
	 * and blocked time, at least the floor), and the row's time on a
	 * CPU: timed calls at that, the others at the floor. Without the
	 * split, round_trip_ns and time_s: all of it counted on a CPU.
	 */
	double on_cpu_ns;
	double on_cpu_s;
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
	/* Asleep in syscalls: with the split, what the calls that returned
	 * measured, plus the calls still in flight; without, what /proc
	 * leaves of the thread time after CPU time and run-queue waits
	 */
	double blocked_s;
	double blocked_share; /* of thread time */
	/* The split was measured: the calls' waits for a CPU (of the calls
	 * that returned), and their share of those calls' time
	 */
	bool split;
	double wait_s;
	double wait_share;
	double split_s;		/* the time of the calls that returned */
	double split_blocked_s; /* of it asleep */
	/* The CPU quota throttling of its cgroup over the run (known: it
	 * was read)
	 */
	struct sc_throttle throttle;
	uint32_t pid; /* the process: its own threads among the others */
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
	/* cpu_s > 0: shares of CPU time mean something. /proc counts CPU
	 * time in clock ticks, so a process can make calls and still show
	 * none; then no share of it is claimed (cpu_syscall_share and
	 * crossing_share stay 0 and are not stated), and no rule that weighs
	 * one fires.
	 */
	bool cpu_measured;
	bool idle; /* no calls and no CPU time: nothing to judge */
};

const char *verdict_kind_name(enum verdict_kind k);
void verdict_free(struct verdict *v);

#endif

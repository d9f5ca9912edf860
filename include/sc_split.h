/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Why a call took its time: its wall time split into on CPU, waiting for a
 * CPU (runnable, on a run queue) and blocked (asleep), and of blocked the
 * part in I/O wait, measured on the scheduler's tracepoints
 * (bpf/split.bpf.h) for the calls in flight: a call switched out is
 * blocked when it went to sleep, waiting when it was preempted; once
 * woken (sched_waking), it waits until it runs again. On CPU is the rest.
 *
 * Beside the sums, sleeps and waits are sampled (time-weighted: one per
 * split_sample_ns of them on a CPU, standing for the time since the
 * last) and sent on a ring
 * buffer with what userspace names them by: where the sleeper slept (its
 * kernel stack), who woke it (the waking task, and the waking context's
 * kernel stack: an interrupt or a timer shows there) and, for a wait
 * after a preemption, the tasks that ran instead (none for a wait after a
 * wake-up).
 *
 * What ran instead of a call preempted is sampled turn by turn: its CPU
 * remembers the last call preempted there, and each task's turn on that
 * CPU while the call waits goes out as time that task ran instead (a
 * call that moves to another CPU's queue, or a second call preempted on
 * the same CPU, leaves the rest of its wait unnamed).
 */
#ifndef SC_SPLIT_H
#define SC_SPLIT_H

#include "scprof.h"

/* One sample per this much time asleep (or waiting) on a CPU. */
#define SC_SPLIT_SAMPLE_NS 4000000ULL
/* Kernel frames kept of the sleeper's and the waker's stacks. */
#define SC_SPLIT_FRAMES 16
/* The split_events ring buffer (a power of two, in bytes). */
#define SC_SPLIT_RINGBUF (1U << 20)

/* struct sc_split.flags */
#define SC_SPLIT_BLOCKED 1U   /* switched out asleep, not woken yet */
#define SC_SPLIT_IOWAIT 2U    /* that sleep is in I/O wait (in_iowait) */
#define SC_SPLIT_OUT 4U	      /* switched out, not in again (runq_timed) */
#define SC_SPLIT_PREEMPTED 8U /* switched out preempted, not in again */
#define SC_SPLIT_SLEPT 16U    /* the last switch out was a sleep */
/* its preemption's wait is sampled turn by turn on its CPU (split_cpus) */
#define SC_SPLIT_TURNS 32U
#define SC_SPLIT_WAKING 64U /* woken, not on a run queue yet */

/*
 * A call's split so far, while it is in flight. A wait for a CPU after a
 * sleep (from its wake-up, sched_waking) is the wake-up's own time until
 * the task is on a run queue (sched_wakeup: an IPI to an idle CPU and its
 * way out of idle, which no run-queue delay holds), plus what the kernel's
 * own run-queue delay of the task (sched_info, as /proc/PID/schedstat
 * shows it) grew by until its next switch out or its exit; a wait after a
 * preemption is timed from the switch out to the switch in (a task whose
 * group is throttled is off the run queue, which that delay leaves out).
 * Where the kernel keeps no run-queue delay, every wait is timed.
 */
struct sc_split {
	__u64 call;	 /* the call's start stamp: whose figures these are */
	__u64 out_ns;	 /* switched out asleep (or at all: runq_timed) at */
	__u64 seg_delay; /* the task's run-queue delay at the last switch
			  * out: the wait after a sleep is its growth since
			  */
	__u64 wake_ns;	 /* sched_waking to sched_wakeup, since the last
			  * switch out (a wait, taken with the delay's growth)
			  */
	__u64 wait_ns;	 /* waits so far */
	__u64 blocked_ns;
	__u64 iowait_ns;
	__u32 flags;
	__u32 pad2;
};

/*
 * --slow and --stacks-by blocked: a call's longest sleep so far, kept
 * while it is in flight (beside its split: bpf/split.bpf.h), for where it
 * slept and who woke it. Written at sched_waking when a sleep is longer
 * than the call's longest before; read at its exit.
 */
struct sc_sleep {
	__u64 call; /* the call's start stamp: whose sleep this is */
	__u64 ns;   /* the sleep's length; 0: none yet */
	/* the waker: the task running the wakeup (an interrupt or a timer
	 * runs on whatever task was on the CPU: its stack shows which)
	 */
	__u32 waker_pid;
	__u32 waker_tid;
	char waker_comm[16];
	__u32 nsleeper;			/* frames in sleeper[] */
	__u32 nwaker;			/* frames in waker[] */
	__u64 sleeper[SC_SPLIT_FRAMES]; /* where it slept, innermost first */
	__u64 waker[SC_SPLIT_FRAMES];	/* the waking context */
};

/* What a sampled event is. */
enum sc_split_kind {
	SC_SPLIT_SLEEP, /* a sleep, sent as the sleeper is woken */
	/* a wait for a CPU: after a preemption, sent as the call runs
	 * again; after a wake-up, at its next switch out or its exit
	 */
	SC_SPLIT_WAIT,
	/* not a sample: a target process (proc.tgid) moved to another
	 * cgroup
	 */
	SC_SPLIT_MOVED,
};

struct sc_split_event {
	struct sc_proc_key proc; /* the call's row: its process key, */
	__u32 nr;		 /* number, */
	__u32 abi;		 /* ABI */
	__u32 fd_type;		 /* and fd kind */
	__u32 kind;		 /* enum sc_split_kind */
	__u32 tid;		 /* the caller */
	__u32 iowait;		 /* SLEEP: in I/O wait */
	__u64 weight_ns;	 /* the time the sample stands for */
	__u64 ns;		 /* the sleep's or the wait's own length */
	/* SLEEP: the waker (the task running the wakeup; an interrupt or
	 * a timer runs on whatever task was on the CPU, which its stack
	 * shows); WAIT: a task that ran on the call's CPU while it waited
	 * after a preemption, for ns (pid 0 and no name: a wait after a
	 * wake-up)
	 */
	__u32 other_pid;
	__u32 other_tid;
	char other_comm[16];
	__u32 nsleeper;			/* frames in sleeper[] (SLEEP) */
	__u32 nwaker;			/* frames in waker[] (SLEEP) */
	__u64 sleeper[SC_SPLIT_FRAMES]; /* where it slept, innermost first */
	__u64 waker[SC_SPLIT_FRAMES];	/* the waking context */
};

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Data shared by the BPF programs (bpf/) and the userspace loader (user/):
 * map keys and values, limits and enums. One definition for both sides.
 */
#ifndef SCPROF_H
#define SCPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "scprof_hist.h"

#define SC_COMM_LEN 16

/* Highest syscall number (exclusive) with a per-number flag entry. */
#define SC_NR_MAX 1024

/* Words of a syscall bitmap (-e trace=SET) for one ABI. */
#define SC_TRACE_WORDS (SC_NR_MAX / 32)

/* -z / -Z: which calls are counted by their return value. */
enum sc_status_filter {
	SC_STATUS_ALL = 0,
	SC_STATUS_SUCCESS, /* -z: calls that did not fail */
	SC_STATUS_FAILED,  /* -Z: calls that returned an error */
};

/* What a cell's process key stands for (--by). */
enum sc_key_kind {
	SC_KEY_PROCESS = 0, /* (tgid, group leader's start) */
	SC_KEY_THREAD = 1,  /* --by tid, -T: (tid, the thread's start) */
};

/* Largest pid the target bitmap can hold: the kernel's PID_MAX_LIMIT. */
#define SC_PID_LIMIT (1U << 22)
#define SC_TARGET_WORDS (SC_PID_LIMIT / 32)

/* Slots of the BPF side's verdict cache: one per CPU, CPUs beyond share. */
#define SC_WANT_SLOTS 256

/* One slot: a cache line of its own, written only by its CPU. The saved
 * registers addresses of the last task found not to be a target on that
 * CPU and of the last one found to be one, with its verdict (enum want).
 */
struct sc_want_slot {
	__u64 no;  /* 0: none */
	__u64 yes; /* 0: none */
	__u32 yes_want;
	__u32 pad32;
	/* sampled mode: runs of the counting exit program on this CPU
	 * (its tick, on a line it has just read: cost.bpf.h)
	 */
	__u64 runs;
	__u64 pad[4];
};

/*
 * Full mode's table of calls in flight, indexed by the caller's kernel
 * stack (its saved-registers address): the stamp of most calls lives here,
 * reached without a helper call; a call whose slot is taken falls back to
 * task storage.
 */
#define SC_FLIGHT_SLOTS 4096
#define SC_FLIGHT_SHIFT 14 /* kernel stacks are 16 KiB apart at least */

struct sc_flight {
	__u64 owner;	/* saved-registers address of the caller, 0: free */
	__u64 start_ns; /* bpf_ktime_get_ns() at entry */
	__u32 nr;
	__u8 abi;
	__u8 want;     /* the BPF side's filter verdict at entry */
	__u8 fd_type;  /* enum sc_fd_type of the call's fd at entry */
	__u8 switched; /* switched out since entry: splits[] has its split */
	__u32 gen;     /* sampled mode: window_gen at entry */
	__u32 cgtag;   /* the caller's cgroup tag at entry */
};

/*
 * A call in flight at report time, as the task iterator writes it: full
 * mode only (count-only mode keeps no stamps).
 */
struct sc_inflight {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 proc_start_ns; /* the process key's start_ns */
	__u64 start_ns;	     /* bpf_ktime_get_ns() at entry; 0: entered
			      * before attach (no stamp)
			      */
	__u32 cgtag;	     /* the process key's cgtag */
	__u32 pad;
	__u64 cgid; /* read_cgid: the thread's cgroup v2 id */
	__u32 nr;
	__u32 abi;
	char comm[SC_COMM_LEN]; /* the process's (group leader's) name */
};

/* Syscall ABIs, i.e. which number table a syscall number belongs to. */
enum sc_abi {
	SC_ABI_NATIVE = 0, /* x86_64's 64-bit table; arm64's asm-generic one */
	SC_ABI_COMPAT = 1, /* x86_64: i386 binaries, the 32-bit table; arm64:
			      32-bit arm binaries (no names) */
	SC_ABI_X32 = 2,	   /* x86_64: x32 binaries */
	SC_ABI_COUNT,
};

/* x32 syscalls carry this bit in their number. */
#define SC_X32_SYSCALL_BIT 0x40000000U

/* Per syscall number flags, filled in by userspace into rodata. */
enum sc_nr_flags {
	SC_NR_IO = 1 << 0, /* positive return is a byte count */
	SC_NR_NORETURN = 1
			 << 1, /* never returns on success: counted at entry */
	SC_NR_FORK = 1 << 2,   /* the new task returns from it too, with 0 */
	SC_NR_FD = 1 << 3,     /* first argument is an fd (--fd-types) */
	SC_NR_EXEC = 1 << 4,   /* execve, execveat: may return into a new ABI */
};

/*
 * What kind of file a call's fd refers to, read when the call starts
 * (--fd-types). 0 in every key of a run without it.
 */
enum sc_fd_type {
	SC_FD_NONE = 0, /* not split by fd kind */
	SC_FD_FILE,	/* regular file (memfd too), or a symlink (O_PATH) */
	SC_FD_DIR,
	SC_FD_SOCKET,
	SC_FD_PIPE, /* pipes and FIFOs */
	SC_FD_CHR,
	SC_FD_BLK,
	SC_FD_EVENTFD,
	SC_FD_TIMERFD,
	SC_FD_SIGNALFD,
	SC_FD_EPOLL,
	SC_FD_INOTIFY,
	SC_FD_PIDFD,
	SC_FD_ANON, /* other anonymous inodes (io_uring, bpf, perf...) */
	SC_FD_BAD,  /* not an open fd */
	SC_FD_COUNT,
};

/*
 * The collection mode, decided once (the plan, user/cmd/plan.c) and read
 * by both sides: which programs run, and where a call's cell lives.
 */
enum sc_progs {
	SC_PROGS_FULL = 0,   /* enter and exit: counts and latency */
	SC_PROGS_COUNT_ONLY, /* one exit program: calls, errors and bytes */
	SC_PROGS_SAMPLED,    /* the exit program counts every call; the
			      * enter program, attached in latency windows
			      * only, stamps the calls that are timed
			      */
	SC_PROGS_COUNT,
};

enum sc_cells {
	SC_CELLS_PER_PROCESS = 0, /* a (process, syscall) cell in the stats
				   * hash, created at first use
				   */
	SC_CELLS_ONE_TARGET,	  /* one target process: its calls in the
				   * arrays by syscall number (the rest in
				   * stats)
				   */
	SC_CELLS_AGGREGATE,	  /* every target's calls summed per
				   * syscall: the arrays by number, merged
				   * for the rest; no process has cells
				   */
	SC_CELLS_COUNT,
};

/* How the BPF side chooses whose syscalls to record. */
enum sc_filter_mode {
	SC_FILTER_ALL = 0,    /* every process but scprof itself */
	SC_FILTER_TGID = 1,   /* tgids in the target bitmap */
	SC_FILTER_CGROUP = 2, /* tasks under the cgroup in cgroup_map[0] */
};

/* What could not be kept, by its consequence; indexes of the drops array.
 * Why is in map_fails: the map whose update failed, and the errno.
 */
enum sc_drop {
	SC_DROP_CALLS = 0,    /* a whole call was lost (merged failed) */
	SC_DROP_UNTIMED,      /* a call was not timed or counted (no
			       * per-thread state for its stamp)
			       */
	SC_DROP_PROC_INFO,    /* a process has no name or exit (procs) */
	SC_DROP_ERRNO_DETAIL, /* an error missing from the errno breakdown */
	SC_DROP_CGROUP_MOVE,  /* a thread's move to another cgroup was not
			       * followed: its calls stay under its cgroup
			       * before the move
			       */
	SC_DROP_COUNT,
};

/*
 * The maps the programs add entries to, for counting their failed
 * updates by errno (map_fails): -E2BIG alone means the map is full; any
 * other errno (-ENOMEM from the allocator, -EBUSY from an update nested
 * in another on the same CPU...) is counted as itself.
 */
enum sc_map {
	SC_MAP_STATS =
		0,	/* (process, syscall) cells: the call goes to merged */
	SC_MAP_MERGED,	/* per-syscall cells: the call is lost */
	SC_MAP_PROCS,	/* process names and exits: the process has none */
	SC_MAP_ERRNOS,	/* errors by errno: the breakdown misses some */
	SC_MAP_THREADS, /* per-thread state in a hash (kernels without
			   * task storage): the call is not timed
			   */
	SC_MAP_CGTAGS,	/* cgroup tags (cgtag_tids, moved_procs): a
			 * move is not followed
			 */
	SC_MAP_COUNT,
};

/* Errnos counted one by one; larger ones share slot 0. */
#define SC_ERRNO_SLOTS 256

/*
 * Cgroup tags (--by cgroup, unit, container): a thread that changed cgroup
 * v2 while scprof runs carries a tag, a number that stands for the cgroup
 * it is in; the others carry 0, their process's cgroup at its first call
 * (see cgtag.bpf.h). The tag is part of the process key, so the calls
 * made after a move go to new cells.
 *
 * The tags live in a table by thread id (SC_CGTAG_SLOTS at most: fewer when
 * pid_max is lower), each slot its thread id and its tag; a thread whose
 * slot another one took finds its tag in a hash by thread id.
 */
#define SC_CGTAG_SLOTS 65536
/* A slot whose thread exited, kept from reading as free (thread id 0) */
#define SC_CGTAG_DEAD 1ULL
/* Most threads of one process whose tags a move of the process sets */
#define SC_CGTAG_THREADS 2048

/*
 * Cgroup names (--by cgroup, unit, container, pod, qos): each cgroup v2
 * removed while scprof runs, with its path relative to the hierarchy's
 * root ("/docker/ID"), as it goes (cgname.bpf.h): what names a container
 * that exited before userspace could look its directory up. A path is at
 * most SC_CGPATH_LEN bytes with its NUL (the tracepoint's own limit,
 * TRACE_CGROUP_PATH_LEN); the event is sent up to the NUL.
 */
#define SC_CGPATH_LEN 1024
#define SC_CGNAME_RINGBUF (256U << 10)

struct sc_cgname_event {
	__u64 id; /* its directory's inode number, as struct sc_proc_info's */
	char path[SC_CGPATH_LEN];
};

/*
 * A process, as opposed to a pid: pids are reused, start times are not.
 * With --by cgroup, unit and container, a process that changed cgroup has
 * one key (its cells and entry in procs) per cgroup tag it had.
 */
struct sc_proc_key {
	__u32 tgid;
	__u32 cgtag;	/* the cgroup tag of the threads that made its calls */
	__u64 start_ns; /* group leader's start_boottime, ns since boot */
};

/* A thread's or a process's totals over its syscalls (thread_totals). */
struct sc_counts {
	__u64 calls;
	__u64 errors;
	__u64 interrupted;
	__u64 bytes;
	__u64 total_ns; /* full mode only */
	__u64 wait_ns;	/* of total_ns, as in struct sc_stats */
	__u64 blocked_ns;
	__u64 iowait_ns;
};

struct sc_proc_info {
	char comm[SC_COMM_LEN];
	__u32 ppid;
	__u32 exited; /* the last thread has exited: data is final */
	__s32 exit_code;
	__u32 pad;
	/* --by tid: the key is a thread's (tid, start), comm its own name,
	 * exited set when it exits, and tgid its process
	 */
	__u32 tgid;
	__u32 pad2;
	__u64 cgid; /* --by cgroup/unit/container: its cgroup v2 id, read at
		     * the first call of its key; 0 otherwise
		     */
	/* thread_totals: the counts of its threads that had no slot in
	 * tslots (struct sc_tslot), atomic adds; final once exited is set,
	 * and read with the entry when it is folded
	 */
	struct sc_counts counts;
};

/* One (process, ABI, syscall number) cell of the stats map. */
struct sc_stats_key {
	struct sc_proc_key proc;
	__u32 nr;
	__u32 abi;
	__u32 fd_type; /* enum sc_fd_type */
	__u32 pad;
};

struct sc_stats {
	__u64 calls;
	__u64 errors;	   /* return value in [-4095, -1] */
	__u64 interrupted; /* return value in [-516, -512]: ERESTART* codes */
	__u64 total_ns;	   /* wall time inside the calls that returned */
	__u64 min_ns;	   /* 0: no timed call yet */
	__u64 max_ns;
	__u64 bytes; /* sum of positive returns of SC_NR_IO calls */
	/* Of total_ns (sc_split.h): waiting for a CPU, blocked, and of
	 * blocked in I/O wait; on a CPU is the rest.
	 */
	__u64 wait_ns;
	__u64 blocked_ns;
	__u64 iowait_ns;
	__u64 hist[SC_HIST_BUCKETS];
};

/*
 * The counters of a single target process, per (ABI, syscall) and per CPU,
 * added without atomics. --count-only keeps nothing else; the full mode
 * keeps the histogram, min and max beside them, in a shared array.
 */
/*
 * Sampled mode (latency on a duty cycle): what the syscall programs cost,
 * measured by themselves. Per CPU: every run is counted by kind; one run
 * in SC_COST_EVERY reads the clock at the start and the end of its work,
 * so ns / timed_runs is the work of a run (without the tracepoint's own
 * dispatch, as bpf_stats leaves it out too).
 */
enum sc_cost_kind {
	SC_COST_ENTER,	    /* the enter program (attached in windows) */
	SC_COST_EXIT,	    /* the exit program, on a call not timed */
	SC_COST_EXIT_TIMED, /* the exit program, on a call it timed */
	/* the enter program, on a call it lets go at once (another
	 * process's, scprof's own): counted, not timed; what it costs is
	 * the dispatch the daemon measures with its own such calls
	 */
	SC_COST_ENTER_OTHER,
	/* the split's scheduler programs (sc_switch, sc_waking or
	 * sc_waking_sleep, sc_wakeup), attached in latency windows only
	 */
	SC_COST_SWITCH,
	SC_COST_WAKING,
	SC_COST_WAKEUP,
	SC_COST_COUNT,
};
#define SC_COST_EVERY 256 /* a power of two */

/*
 * Sampled mode with tail calls: why the counting exit program hands calls
 * to the timing one (exit_timing, a bit each). In a cost window the enter
 * program is not attached, so every run of the timing program is an
 * untimed one, and its self-timing measures what the counting program's
 * runs cost (it has none of its own).
 */
enum sc_timing {
	SC_TIMING_LATENCY = 1, /* a latency window is open */
	SC_TIMING_COST = 2,    /* a cost window is open */
};
/* In a cost window the timing program times one run in this many (a
 * power of two): short windows, enough runs for a steady mean.
 */
#define SC_COST_WINDOW_EVERY 16
#define SC_COST_MAX_NS 50000 /* longer: interrupted, not timed */

struct sc_selfcost {
	__u64 ticks[SC_COST_COUNT]; /* runs, by the kind a run begins as */
	/* runs that end as another kind: [SC_COST_EXIT_TIMED] only (its
	 * runs began as SC_COST_EXIT)
	 */
	__u64 runs[SC_COST_COUNT];
	__u64 timed_runs[SC_COST_COUNT];
	__u64 timed_ns[SC_COST_COUNT];
};

/*
 * Per-thread totals (the daemon's per-name series without per-process
 * cells): a thread's calls, errors, bytes and timed time with its split,
 * in a slot of tslots found from its kernel stack address as flights[]
 * are, written by that thread alone (plain adds). When the thread exits,
 * its slot is marked dead (owner | 1) and keeps its counts until
 * userspace has read them and freed it; a thread whose slot is taken
 * counts in its process's entry of procs (sc_proc_info.counts).
 */
#define SC_TSLOTS 4096

struct sc_tslot {
	__u64 owner; /* saved-registers address; 0 free; | 1: thread exited */
	struct sc_proc_key proc;
	struct sc_counts c;
};

/* Error breakdown, aggregated over all processes. */
struct sc_errno_key {
	__u32 nr;
	__u16 abi;
	__u16 err;     /* positive errno */
	__u32 fd_type; /* enum sc_fd_type */
};

#endif /* SCPROF_H */

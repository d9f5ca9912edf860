// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof kernel side: count, time and size every syscall of the selected
 * processes, per process and syscall, on the raw_syscalls tracepoints.
 *
 * Full mode: enter stores a start stamp (in flights[], else in task local
 * storage); exit pairs with it and makes the one cell update of the call.
 * A call is counted when it returns, except exit/exit_group, which never
 * return and are counted at entry. An exit without a matching enter (a new
 * task's first return from clone, a call already running at attach time)
 * is ignored, so nothing is counted twice.
 *
 * Count-only mode (--count-only): one program, on sys_exit, counts calls,
 * errors and bytes; no stamps, no task storage, no clock. exit/exit_group
 * are counted when the thread exits (sched_process_exit). Sampled mode
 * (the daemon, top --latency-duty) counts the same way and times the calls
 * that the enter program, attached in latency windows, stamped.
 *
 * Every syscall of every task on the machine runs these programs, so the
 * hot path is short: the filter comes first (admit(): a task known not to
 * be a target is rejected without a helper call, others cost one); the
 * stamp is found again without task storage; the one target process (-p
 * PID or a command, without -f) and the aggregate of every target (no
 * per-process rows wanted) have their cells in arrays indexed by syscall
 * number instead of a hash map, their counters per CPU (enum sc_cells).
 * What is left is mostly the two clock reads. make bench measures each
 * step (see docs/overhead.md).
 *
 * This file holds the settings, the state and the maps, then the programs;
 * the helpers they inline come after the definitions, one header a
 * concern: filter.bpf.h (which tasks: pid bitmap, cgroup, non-target
 * cache), syscall.bpf.h (number, ABI, flags, return value), stamp.bpf.h
 * (full mode's start stamp: flights[] or task storage), admit.bpf.h (every
 * program's prologue), cgtag.bpf.h (the cgroup tags that file calls under
 * the cgroup their thread was in, moves followed), cgname.bpf.h (the
 * paths of cgroups as they are removed), proc.bpf.h (processes:
 * key, name, exit), record.bpf.h (the cell update of a call), exit.bpf.h
 * (a thread's exit), inflight.bpf.h (the calls in flight at report time,
 * for a task iterator), stacks.bpf.h (--stacks) and slow.bpf.h (--slow),
 * beside the generic maps.bpf.h. Those headers use the
 * definitions here and are included by this file only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "sc_split.h"

/* Settings, written by userspace before load. */
/*
 * The running kernel's facilities (task.bpf.h). This file is built twice:
 * for kernels that have them all, where the code never asks (KERN_* are
 * true), and with -DSCPROF_LEGACY for the kernels that lack one, where
 * the code asks these settings, set from userspace's probes. Both builds
 * declare them, so that their global data is laid out alike.
 */
const volatile bool kern_task_btf = true;
const volatile bool kern_task_storage = true;
const volatile bool kern_task_regs = true;
#ifdef SCPROF_LEGACY
#define KERN_TASK_BTF kern_task_btf
#define KERN_TASK_STORAGE kern_task_storage
#define KERN_TASK_REGS kern_task_regs
#else
#define KERN_TASK_BTF true
#define KERN_TASK_STORAGE true
#define KERN_TASK_REGS true
#endif
const volatile __u32 filter_mode = SC_FILTER_ALL;
const volatile __u32 self_tgid = 0;
const volatile bool follow_forks = false;
/* The collection mode (enum sc_progs, enum sc_cells): see scprof.h. */
const volatile __u32 progs = SC_PROGS_FULL;
const volatile __u32 cells = SC_CELLS_PER_PROCESS;
extern const volatile __u8 nr_flags[SC_ABI_COUNT][SC_NR_MAX];
/* rt_sigreturn's number by ABI (SC_NR_MAX: none), for exits that left the
 * number -1 (syscall.bpf.h).
 */
extern const volatile __u32 sigreturn_nr[SC_ABI_COUNT];
/* Verdict cache on (the pid filter or the whole system, kernel has
 * bpf_task_pt_regs), and how many of its slots are in use (one per CPU, at
 * most SC_WANT_SLOTS).
 */
const volatile bool want_cache_on = false;
const volatile __u32 want_slots = SC_WANT_SLOTS;
/* Full mode stamps calls in flights[] (kernel has bpf_task_pt_regs). */
const volatile bool flight_on = false;
/* --fd-types: cells of calls on an fd are split by its kind (full mode). */
const volatile bool fd_types = false;
/* --cgroup: the target cgroup's id (its directory's inode number), for
 * the in-flight iterator, which cannot use the current-task cgroup test.
 */
const volatile __u64 target_cgid = 0;
/* Per-thread totals beside the per-syscall cells (tslots.bpf.h). */
const volatile bool thread_totals = false;
/* The split of calls' time (split.bpf.h): the scheduler programs are
 * attached; a sample stands for split_sample_ns at most.
 */
const volatile bool split_on = false;
const volatile __u64 split_sample_ns = SC_SPLIT_SAMPLE_NS;
/* The kernel keeps no run-queue delay per task (sched_info): waits for a
 * CPU are timed at each switch in, which looks at the incoming task.
 */
const volatile bool split_runq_timed = false;
/* --slow, --stacks-by blocked (with the split): each call in flight keeps
 * its longest sleep, with where it slept and who woke it (split.bpf.h).
 */
const volatile bool sleep_on = false;
/* -e trace=SET (trace_filter.bpf.h): calls counted, by ABI and number, at
 * entry and (a superset) at exit; trace_beyond: numbers past SC_NR_MAX.
 * -z/-Z: status_filter (enum sc_status_filter).
 */
const volatile bool trace_on = false;
const volatile bool trace_beyond = false;
extern const volatile __u32 trace_bits[SC_ABI_COUNT][SC_TRACE_WORDS];
extern const volatile __u32 trace_exit_bits[SC_ABI_COUNT][SC_TRACE_WORDS];
const volatile __u32 status_filter = SC_STATUS_ALL;
/* --by (proc.bpf.h, group.bpf.h): what a process key stands for (enum
 * sc_key_kind), and whether a process's cgroup id is read at its first
 * call. -p TID of a thread: only_tid, that thread's calls only.
 */
const volatile __u32 key_kind = SC_KEY_PROCESS;
const volatile bool read_cgid = false;
const volatile __u32 only_tid = 0;
/* read_cgid: the slots of cgtags (a power of two), and whether every
 * thread id has its own (pid_max, read at start, is no larger; raised
 * while scprof runs, a thread beyond may lose its tag when one that
 * shares its slot exits). See cgtag.bpf.h.
 */
const volatile __u32 cgtag_slots = 1;
const volatile bool cgtag_exact = false;

/* Target tgids (SC_FILTER_TGID); userspace fills it before attach. */
__u32 target_bits[SC_TARGET_WORDS] = {};
/* Targets alive: set by userspace, moved by fork (when following) and exit. */
__s64 live_targets = 0;
/* What could not be recorded, by enum sc_drop. */
__u64 drops[SC_DROP_COUNT] = {};
/* Failed map updates, by map (enum sc_map) and errno (maps.bpf.h). */
__u64 map_fails[SC_MAP_COUNT][SC_ERRNO_SLOTS] = {};
/* Tests only (SCPROF_TEST_MAP_FAIL=MAP:ERRNO): every update of map
 * inject_map fails with inject_errno, as no kernel makes it fail at will.
 */
const volatile __u32 inject_map = SC_MAP_COUNT;
const volatile __s32 inject_errno = 0;
/* Sampled mode: userspace adds one when it attaches the enter program and
 * one when it detaches it; a stamp carries the value it was taken under.
 */
__u32 window_gen = 0;
/* Sampled mode, with tail calls: while userspace holds a latency window
 * or a cost window open (a bit each, enum sc_timing), the counting exit
 * program hands every call to the timing one.
 */
__u32 exit_timing = 0;
/* Calls that found no room in stats and were added to their merged cell
 * instead: counted, but not in their process's row.
 */
__u64 unattributed = 0;
/* Entries created in stats and procs, less those deleted (userspace takes
 * off what it folds): how full the maps are, so userspace folds early.
 */
__s64 stats_used = 0;
__s64 procs_used = 0;
/* Processes in procs marked exited, less those userspace folded. */
__s64 procs_exited = 0;
/* Calls whose stamp is in task state (tstore) now, not in flights[]: the
 * scheduler programs look there only while there are some (split.bpf.h).
 */
__s64 tstore_calls = 0;
/* Calls switched out preempted and not back on a CPU yet: while there
 * are some, the switch program looks at the incoming task too.
 */
__s64 split_preempted = 0;
/* Without bpf_task_pt_regs: where a task's saved registers are from the
 * base of its kernel stack, learned at the first syscall (task.bpf.h).
 */
__u64 regs_offset = 0;

/*
 * SC_CELLS_ONE_TARGET: the target process (set by userspace before
 * attach, cleared when it exits), whose cells are the arrays by syscall
 * number. one_start_ns is its identity beside the pid, written here at its
 * first recorded call.
 */
__u32 one_tgid = 0;
__u32 one_ready = 0;
__u64 one_start_ns = 0;

/*
 * The tables of slots below have slots of a cache line (or half of one),
 * so each starts on a line: else every slot spans two (the .bss section
 * is page-aligned in the kernel, its variables only as they ask).
 */
#define SC_LINE_ALIGNED __attribute__((aligned(64)))

/*
 * Verdict cache, one slot per CPU (its own cache line): the saved
 * registers addresses of the last task on that CPU found not to be a
 * target and of the last one found to be one (filter.bpf.h). That address
 * is the top of the task's kernel stack, unique to the task while it lives,
 * and comes with the tracepoint: a hit decides without a helper call.
 * Every task exit removes its address, before its stack can be reused.
 */
struct sc_want_slot want_cache[SC_WANT_SLOTS] SC_LINE_ALIGNED = {};

/* Full mode's calls in flight, by the caller's stack (see stamp.bpf.h). */
struct sc_flight flights[SC_FLIGHT_SLOTS] SC_LINE_ALIGNED = {};

/* Per-thread totals, by the thread's stack (tslots.bpf.h), how many
 * slots are dead (their thread exited) until userspace frees them, and
 * which: a bit a slot, so that userspace finds them without a look at
 * every slot.
 */
struct sc_tslot tslots[SC_TSLOTS] SC_LINE_ALIGNED = {};
__s64 tslots_dead = 0;
__u64 tslots_dead_bits[SC_TSLOTS / 64] = {};

/*
 * Scratch words that turn a pointer into a number (see addr_of() in
 * stamp.bpf.h): one per program kind and CPU.
 */
enum { SCR_ENTER, SCR_EXIT, SCR_TASK_EXIT, SCR_COUNT };

struct sc_scratch {
	__u64 v[SCR_COUNT];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_scratch);
} scratch SEC(".maps");

/* The same for the calls-in-flight iterator (inflight.bpf.h), apart so
 * that the hot path's scratch words stay as they are.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} iter_scratch SEC(".maps");

/* Sampled mode: what the syscall programs cost, measured by themselves on
 * one run in SC_COST_EVERY per CPU (see cost.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_selfcost);
} selfcost SEC(".maps");

/* Sampled mode: the timing exit program (sc_timed_exit), in slot 0, for
 * the counting one to tail-call (userspace fills it after load).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} timed_exit SEC(".maps");

/* Per-thread state of full mode: the syscall in flight. */
struct sc_task {
	__u64 start_ns; /* 0: no enter seen for the current call */
	__u32 nr;
	__u32 abi;
	__u32 fd_type;	       /* enum sc_fd_type, read at entry */
	__u32 gen;	       /* sampled mode: window_gen at entry */
	__u32 cgtag;	       /* the thread's cgroup tag at entry */
	struct sc_split split; /* the call's split (split.bpf.h) */
	struct sc_sleep sleep; /* sleep_on: its longest sleep */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sc_task);
} tstore SEC(".maps");

/* The general cells, per (process, ABI, syscall), created on first use. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct sc_stats_key);
	__type(value, struct sc_stats);
} stats SEC(".maps");

/*
 * Per (ABI, syscall) cells of no process (key: proc zero): the calls of
 * SC_CELLS_AGGREGATE that the arrays do not take, and the calls of a
 * process that found stats full. Sized for every number of every ABI, plus room
 * for numbers beyond SC_NR_MAX (bogus calls, ENOSYS), which alone can
 * fill it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	/* with --fd-types, room for up to 128 fd calls per ABI in each kind */
	__uint(max_entries, SC_ABI_COUNT *SC_NR_MAX +
				    SC_ABI_COUNT * 128 * SC_FD_COUNT + 1024);
	__type(key, struct sc_stats_key);
	__type(value, struct sc_stats);
} merged SEC(".maps");

/* The arrays by syscall number (SC_CELLS_ONE_TARGET, SC_CELLS_AGGREGATE),
 * full and sampled modes: the native calls' histogram, min and max (the
 * other calls go to stats or merged); the counters are in nr_counts.
 * Sized to one entry by userspace when not in use.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* userspace reads it in place */
	__uint(max_entries, SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_stats);
} nr_stats SEC(".maps");

/* The counters by syscall number, at ABI * SC_NR_MAX + number, per CPU
 * (plain adds); the full and sampled modes use the native ABI's only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SC_ABI_COUNT *SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_counts);
} nr_counts SEC(".maps");

/* The processes that have cells: name, parent, exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, struct sc_proc_info);
} procs SEC(".maps");

/* Processes that found procs full: their drop is counted once, not once
 * per cell. LRU: never full itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sc_proc_key);
	__type(value, __u8);
} nameless SEC(".maps");

/* Errors by (syscall, ABI, errno), over all processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct sc_errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

/* Per-process totals of threads whose tslots slot was taken. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, struct sc_counts);
} ptotals SEC(".maps");

/*
 * Cgroup tags of threads (read_cgid, cgtag.bpf.h): the table by thread id,
 * cgtag_slots of (tid << 32 | tag), sized by userspace (one entry when not
 * in use); every tag by thread id; and, for a process whose calls were
 * made under a tag, one such tag (key: the process's key with tag 0).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cgtags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SC_CGTAG_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} cgtag_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, __u32);
} moved_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

static __always_inline void count_drop(enum sc_drop why)
{
	__sync_fetch_and_add(&drops[why], 1);
}

#include "task.bpf.h"
#include "cgtag.bpf.h"
#include "cgname.bpf.h"
#include "filter.bpf.h"
#include "syscall.bpf.h"
#include "trace_filter.bpf.h"
#include "proc.bpf.h"
#include "stamp.bpf.h"
#include "split.bpf.h"
#include "admit.bpf.h"
#include "fdkind.bpf.h"
#include "record.bpf.h"
#include "tslots.bpf.h"
#include "exit.bpf.h"
#include "inflight.bpf.h"
#include "exec.bpf.h"
#include "cost.bpf.h"
#include "group.bpf.h"
#include "stacks.bpf.h"
#include "slow.bpf.h"

/* The tables declared above, defined after every scalar setting (the
 * headers' too), so that those share the section's first two cache lines
 * (tests/lint/rodata.py): the verifier prunes the branches on a setting,
 * but its load stays, so every call reads the lines they are in (four,
 * with the tables in between, on the count path).
 */
const volatile __u8 nr_flags[SC_ABI_COUNT][SC_NR_MAX] = {};
const volatile __u32 sigreturn_nr[SC_ABI_COUNT] = {};
const volatile __u32 trace_bits[SC_ABI_COUNT][SC_TRACE_WORDS] = {};
const volatile __u32 trace_exit_bits[SC_ABI_COUNT][SC_TRACE_WORDS] = {};

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_sys_enter, struct pt_regs *regs, long id)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	__u64 t0, addr;
	__u8 fl;

	c.w = admit(regs, id, false, NULL, &task, &addr);
	if (c.w == WANT_NO || id < 0) {
		/* (a window's cost: its dispatch, paid by every call) */
		cost_tick(SC_COST_ENTER_OTHER);
		return 0;
	}
	t0 = cost_begin(SC_COST_ENTER);
	/* A cached verdict leaves the task unfetched: most calls need it
	 * only when these are on, or their flight slot is taken.
	 */
	if (!task && (read_cgid || stack_period || fd_types))
		task = current_task();
	call_nr_abi(regs, &task, id, &c.nr, &c.abi);
	/* full mode files a call under its thread's cgroup at entry */
	c.cgtag = task ? cgtag_of(task) : 0;
	if (stack_period && !stack_by_time && task)
		stack_sample(task, regs, c.nr, c.abi);
	fl = flags_of(c.nr, c.abi);
	if (fl & SC_NR_NORETURN) {
		/* The task ends in this call: nothing to stamp. Sampled
		 * mode counts it when the thread exits, as count-only does.
		 */
		if (progs == SC_PROGS_FULL && status_ok(0))
			record(task, &c, fl, 0, false);
		goto out;
	}
	if (fd_types && task && (fl & SC_NR_FD))
		c.fd_type = fd_kind(task, regs, c.abi);
	if (flight_on && flight_enter(regs, addr, &c))
		goto out;
	/* Sampled: a call whose flight slot is taken goes untimed, so that
	 * the exit program never needs task storage.
	 */
	if (progs == SC_PROGS_FULL || !flight_on)
		task_enter(task ?: current_task(), &c);
out:
	cost_end(SC_COST_ENTER, t0);
	return 0;
}

/* Full mode's exit: the call stamped at its entry, timed and recorded. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sys_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .w = WANT_YES };
	struct task_struct *task;
	__u64 addr;

	c.w = admit(regs, syscall_nr(regs), true, &c, &task, &addr);
	if (c.w == WANT_NO)
		return 0;
	/* No task: the stamp was in flights[]; else it is in task storage,
	 * if the call's entry was seen.
	 */
	if (task && !task_exit(task, &c))
		return 0;
	split_claim(task, &c);
	if (stack_period && stack_by_time)
		stack_sample_time(task ?: current_task(), regs, c.nr, c.abi,
				  stack_by_blocked ? c.blocked_ns : c.delta_ns,
				  stack_by_blocked ? split_sleep(task) : NULL);
	if (status_ok(ret)) {
		slow_check(task, regs, &c, ret);
		record(task, &c, flags_of(c.nr, c.abi), ret, true);
	}
	return 0;
}

/* Count-only mode's one program: calls, errors and bytes at exit. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_count_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	long id = syscall_nr(regs);
	__u64 addr;
	__u8 fl;

	c.w = admit(regs, id, true, NULL, &task, &addr);
	if (c.w == WANT_NO)
		return 0;
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && (read_cgid || stack_period))
		task = current_task();
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		return 0;
	if (stack_period && !stack_by_time && id >= 0 && task)
		stack_sample(task, regs, c.nr, c.abi);
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return, from the fork or clone that made it,
	 * is not a call it made (full mode sees no enter for it); a
	 * successful exec was counted as made, when it renamed the thread
	 * (exec.bpf.h).
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC)))
		return 0;
	c.cgtag = task ? cgtag_of(task) : 0;
	if (trace_ok(c.nr, c.abi) && status_ok(ret))
		record(task, &c, fl, ret, false);
	return 0;
}

/*
 * Sampled mode's timing exit: counts every call as --count-only does, and
 * times it when the enter program stamped it in the current window; one
 * run in SC_COST_EVERY is timed itself (cost.bpf.h). With tail calls,
 * sc_sampled_exit below runs it in windows only (latency and cost ones);
 * without, it is the exit program attached.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_timed_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .delta_ns = 0 };
	struct task_struct *task;
	long id = syscall_nr(regs);
	enum want w;
	bool timed, counted = true;
	__u32 made_nr, made_abi;
	__u64 t0, addr;
	__u8 fl;

	w = admit(regs, id, true, NULL, &task, &addr);
	if (w == WANT_NO)
		return 0;
	/* (more of the runs are timed in a cost window, which is short) */
	t0 = cost_begin_every(SC_COST_EXIT, exit_timing & SC_TIMING_COST ?
						    SC_COST_WINDOW_EVERY - 1 :
						    SC_COST_EVERY - 1);
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && (read_cgid || !flight_on))
		task = current_task();
	timed = window_stamp(task, regs, addr, &c);
	if (timed) {
		cost_stamped();
		split_claim(task, &c);
	}
	/* The call as it exits: the stamp's verdict and kind are not kept
	 * (sampled mode splits nothing by fd kind), its number and ABI only
	 * for an exec.
	 */
	made_nr = c.nr;
	made_abi = c.abi;
	c.w = w;
	c.fd_type = SC_FD_NONE;
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		goto out;
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return: not a call it made (no stamp either).
	 * A successful exec was counted at rename (exec.bpf.h); timed, its
	 * latency is added under the call as its entry was stamped.
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC))) {
		if (!timed || !(fl & SC_NR_EXEC))
			goto out;
		c.nr = made_nr;
		c.abi = made_abi;
		fl = flags_of(c.nr, c.abi);
		counted = false;
	}
	/* filed under the thread's cgroup at exit, as counted */
	c.cgtag = task ? cgtag_of(task) : 0;
	record_call(task, &c, fl, ret, timed, counted);
	if (timed)
		slow_check(task, regs, &c, ret);
	thread_count(task, regs, addr, SCR_EXIT, fl, &c, ret, timed, counted);
out:
	cost_end(timed ? SC_COST_EXIT_TIMED : SC_COST_EXIT, t0);
	return 0;
}

/*
 * Sampled mode's counting exit (with tail calls): outside windows, every
 * call is counted here, with none of the timing program's work (the look
 * for a stamp, the self-timing and its per-CPU counters: 5 ns a call by
 * bpf_stats); in a window the timing program takes the call over. Its
 * runs are counted (in the verdict cache's slot when on), and their
 * cost measured by the timing program in the cost windows, where no call
 * is stamped: an untimed run there does the same work as one here, and a
 * look for a stamp besides (an upper bound).
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sampled_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	__u32 slot;
	long id;
	__u64 addr;
	__u8 fl;

	if (exit_timing)
		bpf_tail_call(ctx, &timed_exit, 0);
	/* (the slot empty: counted here, untimed) */
	id = syscall_nr(regs);
	c.w = admit_at(regs, id, true, NULL, &task, &addr, &slot);
	if (c.w == WANT_NO)
		return 0;
	/* The run is counted in the verdict cache's slot if it is on (a
	 * line admit() has just read), else with the others (selfcost).
	 */
	if (want_cache_on)
		want_cache[slot & (SC_WANT_SLOTS - 1)].runs++;
	else
		cost_tick(SC_COST_EXIT);
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && read_cgid)
		task = current_task();
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		return 0;
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return; a successful exec, counted at rename
	 * (as in sc_timed_exit)
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC)))
		return 0;
	c.cgtag = task ? cgtag_of(task) : 0;
	record_call(task, &c, fl, ret, false, true);
	thread_count(task, regs, addr, SCR_EXIT, fl, &c, ret, false, true);
	return 0;
}

/* The split of calls' time (split.bpf.h): a context switch, a task being
 * woken, and on a run queue again. Attached with the split only; in
 * sampled mode in latency windows only, where they time themselves as the
 * syscall programs do (cost.bpf.h: nothing in full mode).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sc_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 t0 = cost_begin(SC_COST_SWITCH);

	split_switch(preempt, prev, next);
	cost_end(SC_COST_SWITCH, t0);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sc_waking, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKING);

	split_woken(ctx, p, false);
	cost_end(SC_COST_WAKING, t0);
	return 0;
}

/* The same, keeping each call's longest sleep (sleep_on): attached
 * instead of sc_waking.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(sc_waking_sleep, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKING);

	split_woken(ctx, p, true);
	cost_end(SC_COST_WAKING, t0);
	return 0;
}

/* With the run-queue delay only (else a wait is timed at the switch in). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(sc_wakeup, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKEUP);

	split_enqueued(p);
	cost_end(SC_COST_WAKEUP, t0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sc_fork, struct task_struct *parent, struct task_struct *child)
{
	/* a new thread, not a new process: its cgroup tag */
	if (child->pid != child->tgid) {
		cgtag_thread_born(parent, child);
		return 0;
	}
	if (!follow_forks || filter_mode != SC_FILTER_TGID)
		return 0;
	if (is_target(parent->tgid))
		set_target(child->tgid);
	return 0;
}

/* A thread moved to another cgroup (cgtag.bpf.h); a target process, for
 * its CPU quota throttling (split.bpf.h).
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(sc_cgroup_attach, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	if (read_cgid)
		cgtag_moved(dst, task, threadgroup);
	split_moved(task);
	return 0;
}

/* A cgroup removed: its path, for userspace to name it by (cgname.bpf.h). */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(sc_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	cgname_removed(cgrp, path);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sc_exec, struct task_struct *p, pid_t old_pid)
{
	proc_exec(p, (__u32)old_pid);
	return 0;
}

/* Count-only and sampled modes: an exec renames the thread before it
 * loads the new program (begin_new_exec), while its registers still say
 * which call it is in; it is counted there. See exec.bpf.h.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(sc_exec_call, struct task_struct *task, const char *comm)
{
	exec_called(task);
	return 0;
}

/* --by tid: a thread's new name (prctl PR_SET_NAME, or a write to
 * /proc/.../comm), for its entry. See group.bpf.h.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(sc_thread_rename, struct task_struct *task, const char *comm)
{
	thread_renamed(task, comm);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sc_exit, struct task_struct *p)
{
	/* Count first: the thread's slots are forgotten after. */
	if (progs != SC_PROGS_FULL)
		count_noreturn(p);
	stack_forget(p);
	split_forget(p);
	/* Its state in hashes by thread id, before the id is reused. */
	if (!KERN_TASK_STORAGE) {
		thread_state_delete(&tstore, p, true);
	}

	/* Only the last thread of the group closes the process. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0) {
		thread_exited(p);
	} else {
		if (filter_mode == SC_FILTER_TGID) {
			clear_target(p->tgid);
			if (one_tgid == p->tgid)
				one_tgid = 0;
		}
		proc_exited(p);
	}
	/* Last: the entries above are found by the thread's cgroup tag. */
	cgtag_forget(p);
	return 0;
}

/* Report time: the calls in flight (inflight.bpf.h), one record each. */
SEC("iter/task")
int sc_inflight_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	return inflight_one(ctx->meta->seq, task);
}

/* At attach, once: the cgroup tags of threads already apart from their
 * process's leader (cgtag.bpf.h).
 */
SEC("iter/task")
int sc_cgtag_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		cgtag_seed(task);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
 * are counted when the thread exits (sched_process_exit).
 *
 * Every syscall of every task on the machine runs these programs, so the
 * hot path is short: the filter comes first (a task known not to be a
 * target is rejected without a helper call, others cost one); the stamp
 * is found again without task storage; a single target process ("solo":
 * -p PID or a command, without -f) has its cells in arrays indexed by
 * syscall number instead of a hash map, its counters per CPU. What is
 * left is mostly the two clock reads. make bench measures each step (see
 * the README's Overhead section).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "maps.bpf.h"

#define X86_TS_COMPAT 0x0002 /* arch/x86/include/asm/thread_info.h */

/* Settings, written by userspace before load. */
const volatile __u32 filter_mode = SC_FILTER_ALL;
const volatile __u32 self_tgid = 0;
const volatile bool follow_forks = false;
const volatile bool count_only = false;
const volatile __u8 nr_flags[SC_ABI_COUNT][SC_NR_MAX] = {};
/* Non-target cache on (SC_FILTER_TGID, kernel has bpf_task_pt_regs), and
 * how many of its slots are in use (one per CPU, at most SC_NT_SLOTS).
 */
const volatile bool nt_cache_on = false;
const volatile __u32 nt_slots = SC_NT_SLOTS;
/* Full mode stamps calls in flights[] (kernel has bpf_task_pt_regs). */
const volatile bool flight_on = false;

/* Target tgids (SC_FILTER_TGID); userspace fills it before attach. */
__u32 target_bits[SC_TARGET_WORDS] = {};
/* Targets alive: set by userspace, moved by fork (when following) and exit. */
__s64 live_targets = 0;
/* What could not be recorded, by enum sc_drop. */
__u64 drops[SC_DROP_COUNT] = {};

/*
 * The single target process, when there is exactly one and forks are not
 * followed (set by userspace before attach, cleared when it exits): its
 * cells live in solo_stats / solo_counts. solo_start_ns is its identity
 * beside the pid, written here at its first recorded call.
 */
__u32 solo_tgid = 0;
__u32 solo_ready = 0;
__u64 solo_start_ns = 0;

/*
 * Non-target cache, one slot per CPU (its own cache line): the saved
 * registers address of the last task on that CPU found not to be a target.
 * That address is the top of the task's kernel stack, unique to the task
 * while it lives, and comes with the tracepoint: a hit rejects the call
 * without a helper call. Only the pid filter uses it (a process's
 * membership changes at fork and exit only, unlike a cgroup's); every task
 * exit removes its address, before its stack can be reused.
 */
struct sc_nt_slot nt_cache[SC_NT_SLOTS] = {};

struct sc_flight flights[SC_FLIGHT_SLOTS] = {};

/*
 * A pointer cannot be shifted or masked in BPF, but it can be stored in a
 * map value and read back as a number. One scratch word per program kind
 * and CPU: a program is never nested in itself on one CPU.
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

static __always_inline __u64 addr_of(const void *ptr, int which)
{
	__u32 zero = 0;
	struct sc_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s || which < 0 || which >= SCR_COUNT)
		return 0;
	*(volatile __u64 *)&s->v[which] = (__u64)ptr;
	return *(volatile __u64 *)&s->v[which];
}

static __always_inline struct sc_flight *flight_of(__u64 addr)
{
	return &flights[(addr >> SC_FLIGHT_SHIFT) & (SC_FLIGHT_SLOTS - 1)];
}

static const struct sc_stats zero_stats = {};
static const __u64 zero_count = 0;

/* Per-thread state of full mode: the syscall in flight. */
struct sc_task {
	__u64 start_ns; /* 0: no enter seen for the current call */
	__u32 nr;
	__u32 abi;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sc_task);
} tstore SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct sc_stats_key);
	__type(value, struct sc_stats);
} stats SEC(".maps");

/* Full mode, solo: native syscalls by number (others go to stats), for
 * the histogram, min and max; the counters are in solo_counts. Sized to
 * one entry by userspace when there can be no solo target.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* userspace reads it in place */
	__uint(max_entries, SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_stats);
} solo_stats SEC(".maps");

/* Solo counters, by ABI * SC_NR_MAX + number, per CPU (the full mode uses
 * the native ABI's only).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SC_ABI_COUNT *SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_counts);
} solo_counts SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct sc_errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

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

/* Word of the target bitmap holding tgid. Pids are below SC_PID_LIMIT, a
 * power of two, so the mask only proves the bound to the verifier.
 */
static __always_inline __u32 *target_word(__u32 tgid)
{
	__u32 w = (tgid / 32) & (SC_TARGET_WORDS - 1);

	barrier_var(w);
	return &target_bits[w & (SC_TARGET_WORDS - 1)];
}

static __always_inline bool is_target(__u32 tgid)
{
	return *target_word(tgid) & (1U << (tgid % 32));
}

/* Only a fork (one per new tgid) and an exit touch a bit: no two CPUs
 * flip the same bit at once, so an atomic add does what an atomic or/and
 * would, on kernels without BPF_ATOMIC or/and.
 */
static __always_inline void set_target(__u32 tgid)
{
	if (is_target(tgid))
		return;
	__sync_fetch_and_add(target_word(tgid), 1U << (tgid % 32));
	__sync_fetch_and_add(&live_targets, 1);
}

static __always_inline void clear_target(__u32 tgid)
{
	if (!is_target(tgid))
		return;
	__sync_fetch_and_add(target_word(tgid), -(1U << (tgid % 32)));
	__sync_fetch_and_add(&live_targets, -1);
}

enum want { WANT_NO = 0, WANT_YES, WANT_SOLO };

/* Is the current task one whose syscalls we record, and is it the solo
 * target? Runs before any map access.
 */
static __always_inline enum want wanted(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	if (filter_mode == SC_FILTER_TGID) {
		__u32 solo = solo_tgid;

		if (solo)
			return tgid == solo ? WANT_SOLO : WANT_NO;
		return is_target(tgid) ? WANT_YES : WANT_NO;
	}
	/* scprof never records itself, even from inside the cgroup */
	if (tgid == self_tgid)
		return WANT_NO;
	if (filter_mode == SC_FILTER_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_map, 0) == 1 ?
			       WANT_YES :
			       WANT_NO;
	return WANT_YES;
}

/* Direct loads from the BTF pointer: BPF_CORE_READ would be a helper call
 * (bpf_probe_read_kernel), several times dearer, and this is on the hot
 * path of the hash cells.
 */
/* The cache slot of this CPU; true when regs is a known non-target. */
static __always_inline bool nt_known(const struct pt_regs *regs, __u32 *slot)
{
	if (!nt_cache_on)
		return false;
	*slot = bpf_get_smp_processor_id() & (SC_NT_SLOTS - 1);
	return nt_cache[*slot].regs == (__u64)regs;
}

static __always_inline void nt_remember(const struct pt_regs *regs, __u32 slot)
{
	if (nt_cache_on)
		nt_cache[slot & (SC_NT_SLOTS - 1)].regs = (__u64)regs;
}

/* A task exits: its stack may go to a target next. Forget it in the
 * non-target cache, and free a flight slot it left taken (a call that
 * never returned: the task was killed in it).
 */
static __always_inline void stack_forget(struct task_struct *p)
{
	struct pt_regs *regs;
	struct sc_flight *f;
	__u64 addr;

	if (!nt_cache_on && !flight_on)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(p);
	if (nt_cache_on)
		for (__u32 i = 0; i < SC_NT_SLOTS && i < nt_slots; i++)
			if (nt_cache[i].regs == (__u64)regs)
				nt_cache[i].regs = 0;
	if (flight_on) {
		addr = addr_of(regs, SCR_TASK_EXIT);
		f = flight_of(addr);
		if (addr && f->owner == addr)
			f->owner = 0;
	}
}

static __always_inline void proc_key_of(struct task_struct *task,
					struct sc_proc_key *key)
{
	key->tgid = task->tgid;
	key->pad = 0;
	key->start_ns = task->group_leader->start_boottime;
}

static __always_inline void read_leader_comm(struct task_struct *task,
					     char *comm)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	bpf_probe_read_kernel_str(comm, SC_COMM_LEN, &leader->comm);
}

/* Make the process known (name, parent); once per process and cell
 * creation, never on the hot path.
 */
static __always_inline void proc_init(struct task_struct *task,
				      const struct sc_proc_key *key)
{
	struct sc_proc_info info = {};
	static const __u8 one = 1;
	long err;

	read_leader_comm(task, info.comm);
	info.ppid = task->real_parent->tgid;
	err = bpf_map_update_elem(&procs, key, &info, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another thread got there first */ &&
	    !bpf_map_update_elem(&nameless, key, &one, BPF_NOEXIST))
		count_drop(SC_DROP_PROCS_FULL);
}

/* The solo target's first recorded call: its identity and its name. */
static __always_inline void solo_init(struct task_struct *task)
{
	struct sc_proc_key key;

	proc_key_of(task, &key);
	solo_start_ns = key.start_ns;
	proc_init(task, &key);
	solo_ready = 1;
}

static __always_inline void count_errno(__u32 nr, __u32 abi, long ret)
{
	struct sc_errno_key key = {
		.nr = nr,
		.abi = (__u16)abi,
		.err = (__u16)-ret,
	};
	__u64 *cnt;

	cnt = lookup_or_init(&errnos, &key, &zero_count);
	if (!cnt) {
		count_drop(SC_DROP_ERRNO_FULL);
		return;
	}
	__sync_fetch_and_add(cnt, 1);
}

static __always_inline __u8 flags_of(__u32 nr, __u32 abi)
{
	if (nr >= SC_NR_MAX || abi >= SC_ABI_COUNT)
		return 0;
	/* The mask only proves the bound to the verifier, which can lose
	 * the check above when clang merges paths.
	 */
	barrier_var(nr);
	return nr_flags[abi][nr & (SC_NR_MAX - 1)];
}

static __always_inline bool is_error(long ret)
{
	return ret < 0 && ret >= -4095;
}

static __always_inline bool is_interrupted(long ret)
{
	return ret <= -512 && ret >= -516; /* ERESTART* */
}

/* The syscall number and ABI of the call the task is in. */
static __always_inline void nr_abi_of(struct task_struct *task, long id,
				      __u32 *nr, __u32 *abi)
{
	*nr = (__u32)id;
	*abi = SC_ABI_NATIVE;
#if defined(__TARGET_ARCH_x86)
	if (task->thread_info.status & X86_TS_COMPAT) {
		*abi = SC_ABI_COMPAT;
	} else if (*nr & SC_X32_SYSCALL_BIT) {
		*abi = SC_ABI_X32;
		*nr &= ~SC_X32_SYSCALL_BIT;
	}
#endif
}

/* The general cell of (process, abi, nr), created on first use. */
static __always_inline struct sc_stats *stats_cell(struct task_struct *task,
						   __u32 nr, __u32 abi)
{
	struct sc_stats_key key = {
		.nr = nr,
		.abi = abi,
	};
	struct sc_stats *st;
	long err;

	proc_key_of(task, &key.proc);
	st = bpf_map_lookup_elem(&stats, &key);
	if (st)
		return st;
	/* A new cell: the first call of this syscall by this process. */
	proc_init(task, &key.proc);
	err = bpf_map_update_elem(&stats, &key, &zero_stats, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU won the race */) {
		count_drop(SC_DROP_STATS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&stats, &key);
}

/* The latency part of a cell: min, max and histogram. */
static __always_inline void add_latency(struct sc_stats *st, __u64 delta_ns)
{
	__u32 idx;

	/* min and max race only between threads of one process making the
	 * same syscall at the same instant; a lost update there is benign.
	 */
	if (delta_ns > st->max_ns)
		st->max_ns = delta_ns;
	if (!st->min_ns || delta_ns < st->min_ns)
		st->min_ns = delta_ns;
	idx = sc_hist_bucket(delta_ns);
	barrier_var(idx);
	if (idx >= SC_HIST_BUCKETS)
		idx = SC_HIST_BUCKETS - 1;
	__sync_fetch_and_add(&st->hist[idx], 1);
}

/* What a call's return value says, into per-CPU counters (plain adds). */
static __always_inline void counts_ret(struct sc_counts *c, __u32 nr, __u32 abi,
				       long ret)
{
	if (is_error(ret)) {
		c->errors++;
		if (is_interrupted(ret))
			c->interrupted++;
		count_errno(nr, abi, ret);
	} else if (ret > 0 && (flags_of(nr, abi) & SC_NR_IO)) {
		c->bytes += ret;
	}
}

/* The same into a shared cell (atomic adds). */
static __always_inline void stats_ret(struct sc_stats *st, __u32 nr, __u32 abi,
				      long ret)
{
	if (is_error(ret)) {
		__sync_fetch_and_add(&st->errors, 1);
		if (is_interrupted(ret))
			__sync_fetch_and_add(&st->interrupted, 1);
		count_errno(nr, abi, ret);
	} else if (ret > 0 && (flags_of(nr, abi) & SC_NR_IO)) {
		__sync_fetch_and_add(&st->bytes, ret);
	}
}

/* Full mode, solo target: counters per CPU (plain adds), latency shared. */
static __always_inline void record_solo(struct sc_counts *c,
					struct sc_stats *st, __u32 nr,
					__u32 abi, long ret, __u64 delta_ns,
					bool timed)
{
	c->calls++;
	if (!timed)
		return;
	counts_ret(c, nr, abi, ret);
	c->total_ns += delta_ns;
	add_latency(st, delta_ns);
}

/* Full mode: the one cell update of a call. timed: delta_ns is valid. */
static __always_inline void record(struct task_struct *task, enum want w,
				   __u32 nr, __u32 abi, long ret,
				   __u64 delta_ns, bool timed)
{
	struct sc_counts *c = NULL;
	struct sc_stats *st = NULL;

	/* task may be NULL: fetched only when needed (a helper call). */
	if (w == WANT_SOLO && abi == SC_ABI_NATIVE && nr < SC_NR_MAX) {
		if (!solo_ready) {
			if (!task)
				task = bpf_get_current_task_btf();
			solo_init(task);
		}
		c = bpf_map_lookup_elem(&solo_counts, &nr);
		st = bpf_map_lookup_elem(&solo_stats, &nr);
		if (c && st) {
			record_solo(c, st, nr, abi, ret, delta_ns, timed);
			return;
		}
		st = NULL;
	}
	if (!st) {
		if (!task)
			task = bpf_get_current_task_btf();
		st = stats_cell(task, nr, abi);
		if (!st)
			return;
	}
	__sync_fetch_and_add(&st->calls, 1);
	if (!timed)
		return;
	stats_ret(st, nr, abi, ret);
	__sync_fetch_and_add(&st->total_ns, delta_ns);
	add_latency(st, delta_ns);
}

/* Count-only mode: calls, errors, bytes of one returned (or exiting) call. */
static __always_inline void count_call(struct task_struct *task, enum want w,
				       __u32 nr, __u32 abi, long ret)
{
	struct sc_stats *st;

	if (w == WANT_SOLO && abi < SC_ABI_COUNT && nr < SC_NR_MAX) {
		__u32 idx = abi * SC_NR_MAX + nr;
		struct sc_counts *c;

		if (!solo_ready)
			solo_init(task);
		/* Per CPU: plain adds, no atomics. */
		c = bpf_map_lookup_elem(&solo_counts, &idx);
		if (!c)
			return;
		c->calls++;
		counts_ret(c, nr, abi, ret);
		return;
	}
	st = stats_cell(task, nr, abi);
	if (!st)
		return;
	__sync_fetch_and_add(&st->calls, 1);
	stats_ret(st, nr, abi, ret);
}

static __always_inline int sys_enter(struct pt_regs *regs, long id)
{
	struct task_struct *task;
	struct sc_task *ts;
	__u32 nr, abi, slot = 0;
	enum want w;

	if (nt_known(regs, &slot))
		return 0;
	task = bpf_get_current_task_btf();
	w = wanted(task);
	if (w == WANT_NO) {
		nt_remember(regs, slot);
		return 0;
	}
	if (id < 0)
		return 0;
	nr_abi_of(task, id, &nr, &abi);
	if (flags_of(nr, abi) & SC_NR_NORETURN) {
		/* The task ends in this call: nothing to stamp. */
		record(task, w, nr, abi, 0, 0, false);
		return 0;
	}
	if (flight_on) {
		__u64 addr = addr_of(regs, SCR_ENTER);
		struct sc_flight *f = flight_of(addr);
		__u64 owner = f->owner;

		/* Take the slot (or keep it: an entry of ours that never
		 * saw its exit, at attach time).
		 */
		if (addr && (owner == addr ||
			     (!owner && __sync_val_compare_and_swap(
						&f->owner, 0, addr) == 0))) {
			f->nr = nr;
			f->abi = (__u16)abi;
			f->want = (__u16)w;
			f->start_ns = bpf_ktime_get_ns();
			return 0;
		}
	}
	ts = bpf_task_storage_get(&tstore, task, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts) {
		count_drop(SC_DROP_TASK_STORAGE);
		return 0;
	}
	ts->nr = nr;
	ts->abi = abi;
	/* Last, so our own work above is not billed to the call. */
	ts->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_sys_enter, struct pt_regs *regs, long id)
{
	return sys_enter(regs, id);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	enum want w = WANT_YES;
	struct sc_task *ts;
	__u64 now, start;
	__u32 slot = 0;

	if (nt_known(regs, &slot))
		return 0;
	if (flight_on) {
		__u64 addr = addr_of(regs, SCR_EXIT);
		struct sc_flight *f = flight_of(addr);

		if (addr && f->owner == addr) {
			/* Our call: recorded at entry, so recorded now. */
			__u32 nr = f->nr, abi = f->abi;

			now = bpf_ktime_get_ns();
			start = f->start_ns;
			w = f->want;
			f->owner = 0;
			record(NULL, w, nr, abi, ret, now - start, true);
			return 0;
		}
	}
	task = bpf_get_current_task_btf();
	/* Only the pid filter is cheap enough to repeat here; otherwise a
	 * task is recorded at exit when it was at entry.
	 */
	if (filter_mode == SC_FILTER_TGID) {
		w = wanted(task);
		if (w == WANT_NO) {
			nt_remember(regs, slot);
			return 0;
		}
	}
	ts = bpf_task_storage_get(&tstore, task, 0, 0);
	if (!ts)
		return 0;
	start = ts->start_ns;
	if (!start)
		return 0;
	now = bpf_ktime_get_ns();
	ts->start_ns = 0;
	record(task, w, ts->nr, ts->abi, ret, now - start, true);
	return 0;
}

/* The syscall number a task is in, from its saved registers. */
static __always_inline long syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return (long)regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return (long)regs->syscallno;
#else
#error "scprof: syscall number register unknown for this architecture"
#endif
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sc_count_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	__u32 nr, abi, slot = 0;
	enum want w;
	long id;

	if (nt_known(regs, &slot))
		return 0;
	task = bpf_get_current_task_btf();
	w = wanted(task);
	if (w == WANT_NO) {
		nt_remember(regs, slot);
		return 0;
	}
	id = syscall_nr(regs);
	if (id < 0)
		return 0;
	nr_abi_of(task, id, &nr, &abi);
	/* A new task's first return, from the fork or clone that made it,
	 * is not a call it made (full mode sees no enter for it).
	 */
	if (ret == 0 && (flags_of(nr, abi) & SC_NR_FORK))
		return 0;
	count_call(task, w, nr, abi, ret);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sc_fork, struct task_struct *parent, struct task_struct *child)
{
	if (!follow_forks || filter_mode != SC_FILTER_TGID)
		return 0;
	if (child->pid != child->tgid) /* a new thread, not a new process */
		return 0;
	if (is_target(parent->tgid))
		set_target(child->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sc_exec, struct task_struct *p)
{
	struct sc_proc_key key;
	struct sc_proc_info *info;

	proc_key_of(p, &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (info)
		read_leader_comm(p, info->comm);
	return 0;
}

/*
 * Count-only mode: a thread leaving through exit or exit_group never
 * reaches sys_exit, so it is counted here: the syscall it is in is still in
 * its registers, and a thread killed by a signal has the signal in the low
 * bits of its exit code (one leaving through exit_group has 0 there).
 */
static __always_inline void count_noreturn(struct task_struct *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	enum want w;
	long id;
	__u32 nr, abi;

	if (task != p || (p->exit_code & 0x7f))
		return;
	w = wanted(task);
	if (w == WANT_NO)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return;
	id = syscall_nr(regs);
	if (id < 0)
		return;
	nr_abi_of(task, id, &nr, &abi);
	if (flags_of(nr, abi) & SC_NR_NORETURN)
		count_call(task, w, nr, abi, 0);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sc_exit, struct task_struct *p)
{
	struct sc_proc_key key;
	struct sc_proc_info *info;

	stack_forget(p);
	if (count_only)
		count_noreturn(p);

	/* Only the last thread of the group closes the process. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;

	if (filter_mode == SC_FILTER_TGID) {
		clear_target(p->tgid);
		if (solo_tgid == p->tgid)
			solo_tgid = 0;
	}

	proc_key_of(p, &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (!info)
		return 0;
	read_leader_comm(p, info->comm);
	info->exit_code = BPF_CORE_READ(p, exit_code);
	info->exited = 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

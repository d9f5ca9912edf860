// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof kernel side: count, time and size every syscall of the selected
 * processes, per process and syscall, on the raw_syscalls tracepoints.
 *
 * Enter stores a start stamp in task local storage; exit pairs with it and
 * makes the one map update of the call. A call is counted when it returns,
 * except exit/exit_group, which never return and are counted at entry. An
 * exit without a matching enter (a new task's first return from clone, a
 * call already running at attach time) is ignored, so nothing is counted
 * twice.
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
const volatile __u8 nr_flags[SC_ABI_COUNT][SC_NR_MAX] = {};

/* Target tgids (SC_FILTER_TGID); userspace fills it before attach. */
__u32 target_bits[SC_TARGET_WORDS] = {};
/* Targets alive: set by userspace, moved by fork (when following) and exit. */
__s64 live_targets = 0;
/* What could not be recorded, by enum sc_drop. */
__u64 drops[SC_DROP_COUNT] = {};

static const struct sc_stats zero_stats = {};
static const __u64 zero_count = 0;

/* Per-thread state: the syscall in flight and the process it belongs to. */
struct sc_task {
	__u64 start_ns; /* 0: no enter seen for the current call */
	struct sc_proc_key proc;
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, struct sc_proc_info);
} procs SEC(".maps");

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

/* Is the current task one whose syscalls we record? Runs before any map. */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_mode == SC_FILTER_TGID)
		return is_target(tgid);
	if (filter_mode == SC_FILTER_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_map, 0) == 1;
	return tgid != self_tgid;
}

static __always_inline void proc_key_of(struct task_struct *task,
					struct sc_proc_key *key)
{
	key->tgid = BPF_CORE_READ(task, tgid);
	key->pad = 0;
	key->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
}

static __always_inline void read_leader_comm(struct task_struct *task,
					     char *comm)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	bpf_probe_read_kernel_str(comm, SC_COMM_LEN, &leader->comm);
}

/* First syscall of a thread: remember its process, make the process known. */
static __always_inline void task_init(struct sc_task *ts,
				      struct task_struct *task)
{
	struct sc_proc_info info = {};
	long err;

	proc_key_of(task, &ts->proc);
	read_leader_comm(task, info.comm);
	info.ppid = BPF_CORE_READ(task, real_parent, tgid);
	err = bpf_map_update_elem(&procs, &ts->proc, &info, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another thread got there first */)
		count_drop(SC_DROP_PROCS_FULL);
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
	return nr_flags[abi][nr];
}

/* The one map update of a call. delta_ns == 0: the call was not timed. */
static __always_inline void record(const struct sc_task *ts, long ret,
				   __u64 delta_ns, bool timed)
{
	struct sc_stats_key key = {
		.proc = ts->proc,
		.nr = ts->nr,
		.abi = ts->abi,
	};
	struct sc_stats *st;
	__u32 idx;

	st = lookup_or_init(&stats, &key, &zero_stats);
	if (!st) {
		count_drop(SC_DROP_STATS_FULL);
		return;
	}
	__sync_fetch_and_add(&st->calls, 1);
	if (!timed)
		return;

	if (ret < 0 && ret >= -4095) {
		__sync_fetch_and_add(&st->errors, 1);
		if (ret <= -512 && ret >= -516)
			__sync_fetch_and_add(&st->interrupted, 1);
		count_errno(key.nr, key.abi, ret);
	} else if (ret > 0 && (flags_of(key.nr, key.abi) & SC_NR_IO)) {
		__sync_fetch_and_add(&st->bytes, ret);
	}

	__sync_fetch_and_add(&st->total_ns, delta_ns);
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

static __always_inline int on_enter(long id)
{
	struct task_struct *task;
	struct sc_task *ts;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 abi = SC_ABI_NATIVE;
	__u32 nr;

	if (!wanted(tgid) || id < 0)
		return 0;

	task = bpf_get_current_task_btf();
	ts = bpf_task_storage_get(&tstore, task, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts) {
		count_drop(SC_DROP_TASK_STORAGE);
		return 0;
	}
	if (!ts->proc.tgid)
		task_init(ts, task);

	nr = (__u32)id;
#if defined(__TARGET_ARCH_x86)
	if (task->thread_info.status & X86_TS_COMPAT) {
		abi = SC_ABI_COMPAT;
	} else if (nr & SC_X32_SYSCALL_BIT) {
		abi = SC_ABI_X32;
		nr &= ~SC_X32_SYSCALL_BIT;
	}
#endif
	ts->nr = nr;
	ts->abi = abi;

	if (flags_of(nr, abi) & SC_NR_NORETURN) {
		ts->start_ns = 0;
		record(ts, 0, 0, false);
		return 0;
	}
	/* Last, so our own work above is not billed to the call. */
	ts->start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_exit(long ret)
{
	struct sc_task *ts;
	__u64 now, start;

	if (filter_mode == SC_FILTER_TGID &&
	    !is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;

	ts = bpf_task_storage_get(&tstore, bpf_get_current_task_btf(), 0, 0);
	if (!ts)
		return 0;
	now = bpf_ktime_get_ns();
	start = ts->start_ns;
	if (!start)
		return 0;
	ts->start_ns = 0;
	record(ts, ret, now - start, true);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_sys_enter, struct pt_regs *regs, long id)
{
	return on_enter(id);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sys_exit, struct pt_regs *regs, long ret)
{
	return on_exit(ret);
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sc_exit, struct task_struct *p)
{
	struct sc_proc_key key;
	struct sc_proc_info *info;

	/* Only the last thread of the group closes the process. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;

	if (filter_mode == SC_FILTER_TGID)
		clear_target(p->tgid);

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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tasks on every kernel from 5.10: the current task, its fields, its
 * per-thread state and its saved registers, each through the facility the
 * running kernel has. Userspace probes the kernel before load and sets
 * the kern_* settings (rodata) of the legacy build, which KERN_* read; the
 * default build, for kernels with every facility, has them constant and
 * runs the code it always ran.
 *
 *  - KERN_TASK_BTF: bpf_get_current_task_btf() (5.11) gives a pointer the
 *    programs read directly. Before it, the current task is a number, its
 *    fields read with bpf_probe_read_kernel (BPF_CORE_READ). Tasks that a
 *    tracepoint or an iterator hands in are read the same way, whatever
 *    the kernel: the accessors below serve both.
 *  - KERN_TASK_STORAGE: task local storage in tracing programs (5.11).
 *    Before it, per-thread state lives in a hash keyed by thread id (the
 *    same map, its type changed by userspace), and the thread's entry is
 *    deleted when it exits (task_state_forget()).
 *  - KERN_TASK_REGS: bpf_task_pt_regs() (5.15). Before it, a task's saved
 *    registers are where the syscall tracepoints find the current task's:
 *    at a fixed offset from the base of its kernel stack, learned at the
 *    first syscall seen (regs_learn()).
 *
 * Uses the settings KERN_TASK_BTF, KERN_TASK_STORAGE, KERN_TASK_REGS (the
 * kern_* settings of settings.bpf.h).
 */
#ifndef SCPROF_TASK_BPF_H
#define SCPROF_TASK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "maps.bpf.h"
#include "settings.bpf.h"

/* Without bpf_task_pt_regs: where a task's saved registers are from the
 * base of its kernel stack, learned at the first syscall (regs_learn()).
 */
__u64 regs_offset = 0;

static __always_inline struct task_struct *current_task(void)
{
	if (KERN_TASK_BTF)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* A task field: a direct load where tasks are BTF pointers, else read. */
#define TASK_GET(t, direct, ...) \
	(KERN_TASK_BTF ? (direct) : BPF_CORE_READ(t, __VA_ARGS__))

static __always_inline __u32 task_tgid(struct task_struct *t)
{
	return TASK_GET(t, t->tgid, tgid);
}

static __always_inline __u32 task_tid(struct task_struct *t)
{
	return TASK_GET(t, t->pid, pid);
}

static __always_inline __u64 task_start_ns(struct task_struct *t)
{
	return TASK_GET(t, t->start_boottime, start_boottime);
}

/* The start of its process (the group leader's). */
static __always_inline __u64 task_proc_start_ns(struct task_struct *t)
{
	return TASK_GET(t, t->group_leader->start_boottime, group_leader,
			start_boottime);
}

static __always_inline __u32 task_ppid(struct task_struct *t)
{
	return TASK_GET(t, t->real_parent->tgid, real_parent, tgid);
}

static __always_inline int task_nr_threads(struct task_struct *t)
{
	return TASK_GET(t, t->signal->nr_threads, signal, nr_threads);
}

static __always_inline __u32 task_exec_id(struct task_struct *t)
{
	return TASK_GET(t, t->self_exec_id, self_exec_id);
}

#if defined(__TARGET_ARCH_x86)
static __always_inline __u32 task_ti_status(struct task_struct *t)
{
	return TASK_GET(t, t->thread_info.status, thread_info.status);
}
#elif defined(__TARGET_ARCH_arm64)
static __always_inline unsigned long task_ti_flags(struct task_struct *t)
{
	return TASK_GET(t, t->thread_info.flags, thread_info.flags);
}
#endif

/* task_struct.state was renamed __state in 5.14. */
struct task_struct___state {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	struct task_struct___state *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return TASK_GET(t, t->__state, __state);
	return BPF_CORE_READ(old, state);
}

/*
 * Before bpf_task_pt_regs: learn where the saved registers are from the
 * base of a task's kernel stack, from the current task's, which a syscall
 * tracepoint hands in (regs). Every syscall of every task runs the
 * programs: the first one after attach teaches it, before any filter.
 */
static __always_inline void regs_learn(const struct pt_regs *regs,
				       __u64 regs_addr)
{
	struct task_struct *t;
	__u64 stack;

	if (KERN_TASK_REGS || regs_offset || !regs_addr)
		return;
	t = (struct task_struct *)bpf_get_current_task();
	stack = (__u64)BPF_CORE_READ(t, stack);
	if (stack && regs_addr > stack && regs_addr - stack < (1U << 20))
		regs_offset = regs_addr - stack;
}

/* The address of a task's saved registers: 0 when not known. */
static __always_inline __u64 task_regs_addr(struct task_struct *t)
{
	__u64 stack;

	if (KERN_TASK_REGS)
		return (__u64)bpf_task_pt_regs(t);
	if (!regs_offset)
		return 0;
	stack = (__u64)TASK_GET(t, t->stack, stack);
	return stack ? stack + regs_offset : 0;
}

/* The syscall number in a task's saved registers; -1: none, or unknown. */
static __always_inline long task_syscall_id(struct task_struct *t)
{
	struct pt_regs *regs;

	if (KERN_TASK_REGS) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (!regs)
			return -1;
#if defined(__TARGET_ARCH_x86)
		return (long)regs->orig_ax;
#else
		return (long)regs->syscallno;
#endif
	}
	regs = (struct pt_regs *)task_regs_addr(t);
	if (!regs)
		return -1;
#if defined(__TARGET_ARCH_x86)
	return (long)BPF_CORE_READ(regs, orig_ax);
#else
	return (long)BPF_CORE_READ(regs, syscallno);
#endif
}

#if defined(__TARGET_ARCH_x86)
/* The return register of a task in a syscall (-ENOSYS until it returns). */
static __always_inline long task_syscall_ax(struct task_struct *t)
{
	struct pt_regs *regs;

	if (KERN_TASK_REGS) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		return regs ? (long)regs->ax : 0;
	}
	regs = (struct pt_regs *)task_regs_addr(t);
	return regs ? (long)BPF_CORE_READ(regs, ax) : 0;
}
#endif

/*
 * A thread's state in map: task local storage, or before it a hash keyed
 * by thread id (zero: the value a new entry starts from). NULL when there
 * is none (create false) or no room.
 */
static __always_inline void *thread_state(void *map, struct task_struct *t,
					  const void *zero, bool create)
{
	__u32 tid;
	void *v;

	if (KERN_TASK_STORAGE)
		return bpf_task_storage_get(
			map, t, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = task_tid(t);
	v = bpf_map_lookup_elem(map, &tid);
	if (v || !create)
		return v;
	return lookup_or_init(map, &tid, zero, SC_MAP_THREADS);
}

/* Drop a thread's state in map (task storage goes with the task itself;
 * a hash entry must go when the thread exits, before its id is reused).
 */
static __always_inline void
thread_state_delete(void *map, struct task_struct *t, bool at_exit)
{
	__u32 tid;

	if (KERN_TASK_STORAGE) {
		if (!at_exit)
			bpf_task_storage_delete(map, t);
		return;
	}
	tid = task_tid(t);
	bpf_map_delete_elem(map, &tid);
}

#endif /* SCPROF_TASK_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which tasks are profiled: the pid bitmap (with fork following), the
 * cgroup, or everything but scprof itself; and the per-CPU cache of tasks
 * known not to be targets, which rejects most calls of other tasks without
 * a helper call.
 *
 * Uses the settings filter_mode, self_tgid, cells, want_cache_on,
 * want_slots (settings.bpf.h).
 */
#ifndef SCPROF_FILTER_BPF_H
#define SCPROF_FILTER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "settings.bpf.h"
#include "task.bpf.h"

/* Target tgids (SC_FILTER_TGID); userspace fills it before attach. */
__u32 target_bits[SC_TARGET_WORDS] = {};
/* Targets alive: set by userspace, moved by fork (when following) and exit. */
__s64 live_targets = 0;

/*
 * SC_CELLS_ONE_TARGET: the target process (set by userspace before
 * attach, cleared when it exits), whose cells are the arrays by syscall
 * number. one_start_ns is its identity beside the pid, written at its
 * first recorded call (one_init(), proc.bpf.h), then one_ready.
 */
__u32 one_tgid = 0;
__u32 one_ready = 0;
__u64 one_start_ns = 0;

/*
 * Verdict cache, one slot per CPU (its own cache line): the saved
 * registers addresses of the last task on that CPU found not to be a
 * target and of the last one found to be one (want_cached()). That address
 * is the top of the task's kernel stack, unique to the task while it lives,
 * and comes with the tracepoint: a hit decides without a helper call.
 * Every task exit removes its address, before its stack can be reused.
 */
struct sc_want_slot want_cache[SC_WANT_SLOTS] SC_LINE_ALIGNED = {};

/* SC_FILTER_CGROUP: the target cgroup, in slot 0 (userspace sets it). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

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

enum want { WANT_NO = 0, WANT_YES, WANT_ONE };

/* Is the current task one whose syscalls we record, and is it the one
 * target (SC_CELLS_ONE_TARGET)? Runs before any map access.
 */
static __always_inline enum want wanted(struct task_struct *task)
{
	__u32 tgid = task_tgid(task);

	if (settings.filter_mode == SC_FILTER_TGID) {
		__u32 one = settings.cells == SC_CELLS_ONE_TARGET ? one_tgid :
								    0;

		if (one)
			return tgid == one ? WANT_ONE : WANT_NO;
		return is_target(tgid) ? WANT_YES : WANT_NO;
	}
	/* scprof never records itself, even from inside the cgroup */
	if (tgid == settings.self_tgid)
		return WANT_NO;
	if (settings.filter_mode == SC_FILTER_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_map, 0) == 1 ?
			       WANT_YES :
			       WANT_NO;
	return WANT_YES;
}

/*
 * The verdict cache: the last non-target and the last target seen on this
 * CPU, by their saved registers' address (unique to a task while it lives,
 * and given by the tracepoint), so that the calls of a task that keeps the
 * CPU are filtered without a helper call (a call costs 20 ns on an AMD
 * EPYC, where every return goes through the SRSO mitigation's thunk).
 * Only the filters whose verdict on a task holds while it lives use it:
 * the pid filter (a process's membership changes at fork and exit only,
 * unlike a cgroup's) and the whole system. *slot: this CPU's; *w: the
 * verdict when one is known; *addr: a target's saved registers address as
 * a number, when the cache holds it (else left as it is).
 */
static __always_inline bool want_cached(const struct pt_regs *regs, __u32 *slot,
					enum want *w, __u64 *addr)
{
	struct sc_want_slot *s;
	__u64 yes, cmp;

	if (!settings.want_cache_on)
		return false;
	*slot = bpf_get_smp_processor_id() & (SC_WANT_SLOTS - 1);
	s = &want_cache[*slot & (SC_WANT_SLOTS - 1)];
	if (s->no == (__u64)regs) {
		*w = WANT_NO;
		return true;
	}
	/* The address as a number, read from the map: what addr_of()
	 * (stamp.bpf.h) gives, without its round trip. It is compared
	 * through an opaque copy: clang, knowing yes equal to regs, would
	 * pass on regs, a pointer the verifier does not let us shift.
	 */
	yes = s->yes;
	cmp = yes;
	barrier_var(cmp);
	if (cmp == (__u64)regs) {
		*addr = yes;
		*w = (enum want)s->yes_want;
		return true;
	}
	return false;
}

static __always_inline void want_remember(const struct pt_regs *regs,
					  __u32 slot, enum want w)
{
	struct sc_want_slot *s = &want_cache[slot & (SC_WANT_SLOTS - 1)];

	if (!settings.want_cache_on)
		return;
	if (w == WANT_NO) {
		s->no = (__u64)regs;
		return;
	}
	/* The verdict first. A program preempted here (tracing programs
	 * run with migration, not preemption, disabled) lets another task
	 * on this CPU read it beside its own cached address: harmless, as
	 * every target of a run has the same verdict (WANT_ONE with one
	 * target's arrays, WANT_YES otherwise).
	 */
	s->yes_want = w;
	s->yes = (__u64)regs;
}

/* A task exits, its stack (regs) may go to another task next: forget it. */
static __always_inline void want_forget(const struct pt_regs *regs)
{
	if (!settings.want_cache_on)
		return;
	for (__u32 i = 0; i < SC_WANT_SLOTS && i < settings.want_slots; i++) {
		if (want_cache[i].no == (__u64)regs)
			want_cache[i].no = 0;
		if (want_cache[i].yes == (__u64)regs)
			want_cache[i].yes = 0;
	}
}

#endif /* SCPROF_FILTER_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which tasks are profiled: the pid bitmap (with fork following), the
 * cgroup, or everything but scprof itself; and the per-CPU cache of tasks
 * known not to be targets, which rejects most calls of other tasks without
 * a helper call.
 *
 * Uses the settings, globals and maps scprof.bpf.c defines before it
 * includes this file: filter_mode, self_tgid, nt_cache_on, nt_slots,
 * cells, target_bits, live_targets, one_tgid, nt_cache, cgroup_map.
 */
#ifndef SCPROF_FILTER_BPF_H
#define SCPROF_FILTER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "task.bpf.h"

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

	if (filter_mode == SC_FILTER_TGID) {
		__u32 one = cells == SC_CELLS_ONE_TARGET ? one_tgid : 0;

		if (one)
			return tgid == one ? WANT_ONE : WANT_NO;
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

/* A task exits, its stack (regs) may go to a target next: forget it. */
static __always_inline void nt_forget(const struct pt_regs *regs)
{
	if (!nt_cache_on)
		return;
	for (__u32 i = 0; i < SC_NT_SLOTS && i < nt_slots; i++)
		if (nt_cache[i].regs == (__u64)regs)
			nt_cache[i].regs = 0;
}

#endif /* SCPROF_FILTER_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Calls in flight, read at report time by a task iterator (not on the hot
 * path): for every target thread in a syscall, its stamp (from flights[]
 * or task storage, as the exit would find it) or, for a call that was
 * already running at attach and so has none, the syscall in its saved
 * registers. One struct sc_inflight per call, written to the iterator's
 * seq_file for userspace to read.
 *
 * Uses the settings filter_mode, target_cgid, self_tgid, flight_on
 * (settings.bpf.h), and the helpers and state of filter.bpf.h,
 * stamp.bpf.h, proc.bpf.h.
 */
#ifndef SCPROF_INFLIGHT_BPF_H
#define SCPROF_INFLIGHT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "filter.bpf.h"
#include "proc.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"
#include "trace_filter.bpf.h"

/* The scratch word of the iterator (addr_of() as stamp.bpf.h has it),
 * apart so that the hot path's scratch words stay as they are.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} iter_scratch SEC(".maps");

#define PF_KTHREAD_FLAG 0x00200000 /* include/linux/sched.h */
#define ENOSYS_RET (-38L)

/* struct cgroup before Linux 6.1 kept its ancestors' ids, not pointers. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

#define SC_CGROUP_MAX_LEVEL 32

/* Is task in the --cgroup target (target_cgid) or below it? What
 * cgroup_is_descendant() asks, in CO-RE reads: the main programs use
 * bpf_current_task_under_cgroup(), which tests the current task only.
 */
static __always_inline bool in_target_cgroup(struct task_struct *task)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	int level;

	if (!cg || !settings.target_cgid)
		return false;
	level = BPF_CORE_READ(cg, level);
	for (int i = 0; i <= level && i < SC_CGROUP_MAX_LEVEL; i++) {
		__u64 id = 0;

		if (bpf_core_field_exists(cg->ancestors)) {
			struct cgroup *a = NULL;

			bpf_core_read(&a, sizeof(a), &cg->ancestors[i]);
			id = BPF_CORE_READ(a, kn, id);
		} else {
			struct cgroup___ids *old = (void *)cg;

			bpf_core_read(&id, sizeof(id), &old->ancestor_ids[i]);
		}
		if (id == settings.target_cgid)
			return true;
	}
	return false;
}

/* Is this task one whose calls are recorded? A call without a stamp (one
 * running since before attach) is taken from a target only.
 */
static __always_inline bool inflight_wanted(struct task_struct *task,
					    bool *unstamped_ok)
{
	__u32 tgid = task_tgid(task);

	*unstamped_ok = false;
	if (TASK_GET(task, task->flags, flags) & PF_KTHREAD_FLAG)
		return false;
	if (settings.filter_mode == SC_FILTER_TGID) {
		*unstamped_ok = true;
		return is_target(tgid);
	}
	if (tgid == settings.self_tgid)
		return false;
	*unstamped_ok = settings.filter_mode == SC_FILTER_ALL ||
			(settings.filter_mode == SC_FILTER_CGROUP &&
			 in_target_cgroup(task));
	return true;
}

/* addr_of() (stamp.bpf.h) on the iterator's own scratch word. */
static __always_inline __u64 iter_addr_of(const void *ptr)
{
	__u32 zero = 0;
	__u64 *w = bpf_map_lookup_elem(&iter_scratch, &zero);

	if (!w)
		return 0;
	*(volatile __u64 *)w = (__u64)ptr;
	return *(volatile __u64 *)w;
}

/* The stamp of the call task is in, if it has one. */
static __always_inline bool inflight_stamp(struct task_struct *task,
					   struct sc_inflight *rec)
{
	struct sc_task *ts;

	if (settings.flight_on) {
		__u64 addr = iter_addr_of((const void *)task_regs_addr(task));
		struct sc_flight *f = flight_of(addr);

		if (addr && f->owner == addr) {
			rec->nr = f->nr;
			rec->abi = f->abi;
			rec->cgtag = f->cgtag;
			rec->start_ns = f->start_ns;
			return rec->start_ns != 0;
		}
	}
	ts = thread_state(&tstore, task, NULL, false);
	if (!ts || !ts->start_ns)
		return false;
	rec->nr = ts->nr;
	rec->abi = ts->abi;
	rec->cgtag = ts->cgtag;
	rec->start_ns = ts->start_ns;
	return true;
}

/* A call without a stamp: one that was running at attach. The thread
 * sleeps (a running thread may be in user space, its registers stale)
 * and its registers say it is in a syscall that has not returned (x86
 * sets the return register to -ENOSYS at entry).
 */
static __always_inline bool inflight_unstamped(struct task_struct *task,
					       struct sc_inflight *rec)
{
	long id = task_syscall_id(task);

	if (id < 0 || task_state(task) == 0 /* TASK_RUNNING */)
		return false;
#if defined(__TARGET_ARCH_x86)
	if (task_syscall_ax(task) != ENOSYS_RET)
		return false;
#endif
	nr_abi_of(task, id, &rec->nr, &rec->abi);
	rec->cgtag = cgtag_of(task);
	/* exit/exit_group: a thread on its way out, not a call in flight */
	if (flags_of(rec->nr, rec->abi) & SC_NR_NORETURN)
		return false;
	rec->start_ns = 0;
	return true;
}

static __always_inline int inflight_one(struct seq_file *seq,
					struct task_struct *task)
{
	struct sc_inflight rec = {};
	bool unstamped_ok;

	if (!inflight_wanted(task, &unstamped_ok))
		return 0;
	if (!task_regs_addr(task))
		return 0;
	if (!inflight_stamp(task, &rec) &&
	    !(unstamped_ok && inflight_unstamped(task, &rec)))
		return 0;
	if (!trace_ok(rec.nr, rec.abi) ||
	    (settings.only_tid && task_tid(task) != settings.only_tid))
		return 0;
	rec.pid = task_tgid(task);
	rec.tid = task_tid(task);
	rec.proc_start_ns = settings.key_kind == SC_KEY_THREAD ?
				    task_start_ns(task) :
				    task_proc_start_ns(task);
	if (settings.read_cgid)
		rec.cgid = task_cgid(task);
	read_leader_comm(task, rec.comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 0;
}

#endif /* SCPROF_INFLIGHT_BPF_H */

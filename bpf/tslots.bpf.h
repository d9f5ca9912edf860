/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-thread totals (thread_totals: the daemon's per-name series): each
 * call also adds to its thread's slot in tslots, found from the thread's
 * kernel stack address as flights[] are, with plain adds (the thread is
 * the slot's only writer). That replaces a hash lookup per call by an
 * array index. A thread whose slot another one holds (or one that is dead
 * and not yet freed by userspace) counts in ptotals, by process, with
 * atomic adds. See struct sc_tslot.
 *
 * Uses the settings, globals and maps scprof.bpf.c defines before it
 * includes this file: thread_totals, read_cgid, tslots, tslots_dead,
 * ptotals, unattributed, and regs_addr() with its scratch words.
 */
#ifndef SCPROF_TSLOTS_BPF_H
#define SCPROF_TSLOTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"

static const struct sc_counts zero_counts = {};

static __always_inline struct sc_tslot *tslot_of(__u64 addr)
{
	return &tslots[(addr >> SC_FLIGHT_SHIFT) & (SC_TSLOTS - 1)];
}

/* Take a free slot for the current thread (its counts are zero), for its
 * calls under cgroup tag cgtag.
 */
static __always_inline bool tslot_claim(struct sc_tslot *ts, __u64 addr,
					struct task_struct *task, __u32 cgtag)
{
	if (ts->owner || __sync_val_compare_and_swap(&ts->owner, 0, addr))
		return false;
	proc_key_of(task, cgtag, &ts->proc);
	proc_init(task, &ts->proc);
	return true;
}

/* A call's counts into a thread's slot (plain adds); timed: its time,
 * and its split (nothing for a call never switched out: all on a CPU).
 */
static __always_inline void counts_of_call(struct sc_counts *c, __u8 fl,
					   long ret,
					   const struct ended_call *call,
					   bool timed, bool counted)
{
	if (!counted)
		goto timing;
	c->calls++;
	if (is_error(ret)) {
		c->errors++;
		if (is_interrupted(ret))
			c->interrupted++;
	} else if (ret > 0 && (fl & SC_NR_IO)) {
		c->bytes += ret;
	}
timing:
	if (!timed)
		return;
	c->total_ns += call->delta_ns;
	if (call->wait_ns || call->blocked_ns) {
		c->wait_ns += call->wait_ns;
		c->blocked_ns += call->blocked_ns;
		c->iowait_ns += call->iowait_ns;
	}
}

/* A thread without a slot: its process's entry in ptotals. */
static __always_inline void ptotal_count(struct task_struct *task, __u8 fl,
					 const struct ended_call *call,
					 long ret, bool timed, bool counted)
{
	struct sc_proc_key key;
	struct sc_counts *c;

	proc_key_of(task, call->cgtag, &key);
	c = bpf_map_lookup_elem(&ptotals, &key);
	if (!c) {
		/* the process's first call here: its entry, and its name */
		c = lookup_or_init(&ptotals, &key, &zero_counts,
				   SC_MAP_PTOTALS);
		if (!c) {
			__sync_fetch_and_add(&unattributed, 1);
			return;
		}
		proc_init(task, &key);
	}
	if (!counted)
		goto timing;
	__sync_fetch_and_add(&c->calls, 1);
	if (is_error(ret)) {
		__sync_fetch_and_add(&c->errors, 1);
		if (is_interrupted(ret))
			__sync_fetch_and_add(&c->interrupted, 1);
	} else if (ret > 0 && (fl & SC_NR_IO)) {
		__sync_fetch_and_add(&c->bytes, ret);
	}
timing:
	if (!timed)
		return;
	__sync_fetch_and_add(&c->total_ns, call->delta_ns);
	if (call->wait_ns || call->blocked_ns) {
		__sync_fetch_and_add(&c->wait_ns, call->wait_ns);
		__sync_fetch_and_add(&c->blocked_ns, call->blocked_ns);
		__sync_fetch_and_add(&c->iowait_ns, call->iowait_ns);
	}
}

/* The thread's slot was taken under another cgroup tag than its call's:
 * the thread moved. It gives the slot up as if it had exited (userspace
 * takes its counts and frees it) and counts in ptotals until then.
 */
static __always_inline bool tslot_moved(struct sc_tslot *ts, __u64 addr,
					__u32 cgtag)
{
	if (!read_cgid || ts->proc.cgtag == cgtag)
		return false;
	ts->owner = addr | 1;
	__sync_fetch_and_add(&tslots_dead, 1);
	return true;
}

/* A call c of the current thread (regs: its saved registers, known: regs
 * as a number or 0, scr: the scratch word of the calling program kind;
 * see regs_addr()) with flags fl (flags_of()), filed under c->cgtag;
 * timed (c->delta_ns and its split) and counted as record_call() takes
 * them.
 * task: the current task, or NULL when not fetched yet (a thread with its
 * slot needs none).
 */
static __always_inline void thread_count(struct task_struct *task,
					 const struct pt_regs *regs,
					 __u64 known, int scr, __u8 fl,
					 const struct ended_call *c, long ret,
					 bool timed, bool counted)
{
	struct sc_tslot *ts;
	__u64 addr;

	if (!thread_totals)
		return;
	/* The slots need bpf_task_pt_regs (and compare-and-swap): before
	 * it, every thread counts in its process's entry of ptotals.
	 */
	if (!KERN_TASK_REGS) {
		ptotal_count(task ?: current_task(), fl, c, ret, timed,
			     counted);
		return;
	}
	addr = regs_addr(regs, known, scr);
	ts = tslot_of(addr);
	if (addr && ts->owner == addr && !tslot_moved(ts, addr, c->cgtag)) {
		counts_of_call(&ts->c, fl, ret, c, timed, counted);
		return;
	}
	if (!task)
		task = current_task();
	if (addr && tslot_claim(ts, addr, task, c->cgtag))
		counts_of_call(&ts->c, fl, ret, c, timed, counted);
	else
		ptotal_count(task, fl, c, ret, timed, counted);
}

/* A thread exits (regs: its stack): its slot, if it has one, is dead
 * until userspace has taken its counts.
 */
static __always_inline void tslot_forget(const struct pt_regs *regs)
{
	struct sc_tslot *ts;
	__u64 addr;

	if (!thread_totals || !KERN_TASK_REGS)
		return;
	addr = addr_of(regs, SCR_TASK_EXIT);
	ts = tslot_of(addr);
	if (addr && ts->owner == addr) {
		ts->owner = addr | 1;
		__sync_fetch_and_add(&tslots_dead, 1);
	}
}

#endif /* SCPROF_TSLOTS_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-thread totals (thread_totals: the daemon's per-name series): each
 * call also adds to its thread's slot in tslots, found from the thread's
 * kernel stack address as flights[] are, with plain adds (the thread is
 * the slot's only writer). That replaces a hash lookup per call by an
 * array index. A thread whose slot another one holds (or one that is dead
 * and not yet freed by userspace) counts in its process's entry of procs
 * (sc_proc_info.counts), with atomic adds: under process churn, most
 * short-lived processes, whose threads start on the cached kernel stack
 * of one that has just exited. Userspace reads those counts with the
 * entry, and folds them with it. See struct sc_tslot.
 *
 * Uses the settings thread_totals, read_cgid (settings.bpf.h), and
 * regs_addr() with its scratch words (stamp.bpf.h).
 */
#ifndef SCPROF_TSLOTS_BPF_H
#define SCPROF_TSLOTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"

/* Per-thread totals, by the thread's stack, how many slots are dead
 * (their thread exited) until userspace frees them, and which: a bit a
 * slot, so that userspace finds them without a look at every slot.
 */
struct sc_tslot tslots[SC_TSLOTS] SC_LINE_ALIGNED = {};
__s64 tslots_dead = 0;
__u64 tslots_dead_bits[SC_TSLOTS / 64] = {};

static __always_inline __u32 tslot_index(__u64 addr)
{
	return (addr >> SC_FLIGHT_SHIFT) & (SC_TSLOTS - 1);
}

static __always_inline struct sc_tslot *tslot_of(__u64 addr)
{
	return &tslots[tslot_index(addr)];
}

/* The slot of addr is dead: no program writes it any more. Its bit is
 * set once (it is clear until userspace has freed the slot, and no
 * program marks a slot not its own), so adding it sets it.
 */
static __always_inline void tslot_mark_dead(struct sc_tslot *ts, __u64 addr)
{
	__u32 i = tslot_index(addr);

	ts->owner = addr | 1;
	__sync_fetch_and_add(&tslots_dead, 1);
	__sync_fetch_and_add(&tslots_dead_bits[i / 64], 1ULL << (i % 64));
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

/* A thread without a slot: its process's entry in procs. */
static __always_inline void proc_count(struct task_struct *task, __u8 fl,
				       const struct ended_call *call, long ret,
				       bool timed, bool counted)
{
	struct sc_proc_info *info;
	struct sc_proc_key key;
	struct sc_counts *c;

	proc_key_of(task, call->cgtag, &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (!info) {
		/* the process's first call here: its entry, and its name */
		proc_init(task, &key);
		info = bpf_map_lookup_elem(&procs, &key);
		if (!info) { /* (procs full: proc_init counted it) */
			__sync_fetch_and_add(&unattributed, 1);
			return;
		}
	}
	c = &info->counts;
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
 * takes its counts and frees it) and counts in its procs entry until then.
 */
static __always_inline bool tslot_moved(struct sc_tslot *ts, __u64 addr,
					__u32 cgtag)
{
	if (!settings.read_cgid || ts->proc.cgtag == cgtag)
		return false;
	tslot_mark_dead(ts, addr);
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

	if (!settings.thread_totals)
		return;
	/* The slots need bpf_task_pt_regs (and compare-and-swap): before
	 * it, every thread counts in its process's entry of procs.
	 */
	if (!KERN_TASK_REGS) {
		proc_count(task ?: current_task(), fl, c, ret, timed, counted);
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
		proc_count(task, fl, c, ret, timed, counted);
}

/* A thread exits (regs: its stack): its slot, if it has one, is dead
 * until userspace has taken its counts.
 */
static __always_inline void tslot_forget(const struct pt_regs *regs)
{
	struct sc_tslot *ts;
	__u64 addr;

	if (!settings.thread_totals || !KERN_TASK_REGS)
		return;
	addr = addr_of(regs, SCR_TASK_EXIT);
	ts = tslot_of(addr);
	if (addr && ts->owner == addr)
		tslot_mark_dead(ts, addr);
}

#endif /* SCPROF_TSLOTS_BPF_H */

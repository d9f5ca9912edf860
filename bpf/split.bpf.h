/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split of a call's time (include/sc_split.h), on the scheduler's
 * tracepoints. A task in a stamped call (its flight slot, else its task
 * state) has its split in splits[] beside the slot, or in that state; the
 * switch program leaves at once for every other task, with two loads and
 * no helper call on kernels with bpf_task_pt_regs (a task storage look up
 * only while some call's stamp is there, tstore_calls).
 *
 *  - switched out: asleep (not preempted, its state not running) or
 *    preempted; the time it happens, and whether in I/O wait;
 *  - sched_waking: a sleeping call is woken (its blocked time ends, its
 *    wait for a CPU begins); one sleep in a time-weighted sample is sent
 *    with the sleeper's and the waker's kernel stacks;
 *  - switched in: the sleep or the wait ends, added up; one wait in a
 *    time-weighted sample is sent with the task that ran before it.
 *
 * At its exit the call takes its sums (split_take), which record.bpf.h
 * adds to its cell beside its time.
 *
 * Uses what scprof.bpf.c defines before it includes this file: flight_on,
 * split_on, split_sample_ns, tstore_calls, read_cgid, flights, tstore
 * (struct sc_task, whose split member this fills).
 */
#ifndef SCPROF_SPLIT_BPF_H
#define SCPROF_SPLIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "sc_split.h"
#include "proc.bpf.h"
#include "stamp.bpf.h"
#include "task.bpf.h"

/* Samples the ring had no room for. */
__u64 split_lost = 0;

/* The splits of the calls in flights[], slot for slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SC_FLIGHT_SLOTS);
	__type(key, __u32);
	__type(value, struct sc_split);
} splits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SC_SPLIT_RINGBUF); /* userspace may resize */
} split_events SEC(".maps");

/* A task's call in flight, found from the task. */
struct split_ref {
	struct sc_split *s;
	struct sc_flight *f; /* NULL: the stamp is in task state */
	struct sc_task *ts;
	__u64 call; /* the call's start stamp */
};

/* Is t in a stamped call? Its split, found without a helper call when
 * the stamp is in flights[].
 */
static __always_inline bool split_find(struct task_struct *t,
				       struct split_ref *r)
{
	__u64 addr;

	if (flight_on) {
		addr = task_regs_addr(t);
		if (addr) {
			__u32 i = flight_index(addr);
			struct sc_flight *f = &flights[i];

			if (f->owner == addr) {
				r->s = bpf_map_lookup_elem(&splits, &i);
				r->f = f;
				r->ts = NULL;
				r->call = f->start_ns;
				return r->s && r->call;
			}
		}
		if (tstore_calls <= 0)
			return false;
	}
	r->ts = thread_state(&tstore, t, NULL, false);
	if (!r->ts || !r->ts->start_ns)
		return false;
	r->s = &r->ts->split;
	r->f = NULL;
	r->call = r->ts->start_ns;
	return true;
}

/* The split of r's call: a new call starts from zero. */
static __always_inline struct sc_split *split_of(struct split_ref *r)
{
	struct sc_split *s = r->s;

	if (s->call != r->call) {
		s->call = r->call;
		s->wait_ns = 0;
		s->blocked_ns = 0;
		s->iowait_ns = 0;
		s->out_ns = 0;
		s->flags = 0;
	}
	return s;
}

static __always_inline bool task_in_iowait(struct task_struct *t)
{
	if (KERN_TASK_BTF)
		return BPF_CORE_READ_BITFIELD(t, in_iowait);
	return BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
}

/* prev, in a stamped call, leaves its CPU at now. */
static __always_inline void split_out(struct split_ref *r,
				      struct task_struct *prev, bool preempt,
				      __u64 now)
{
	struct sc_split *s = split_of(r);

	if (r->f)
		r->f->switched = 1;
	s->out_ns = now;
	s->wake_ns = 0;
	/* asleep: it chose to (not preempted) in a state other than
	 * running; a preempted task is runnable whatever its state says
	 */
	if (!preempt && task_state(prev) != 0)
		s->flags = SC_SPLIT_BLOCKED |
			   (task_in_iowait(prev) ? SC_SPLIT_IOWAIT : 0);
	else
		s->flags = 0;
}

/* Does a sleep or wait of ns go out as a sample, and for how much? */
static __always_inline bool split_sampled(__u64 ns, __u64 *weight)
{
	__u64 unit = split_sample_ns;

	if (!unit)
		return false;
	if (ns >= unit) {
		*weight = ns;
		return true;
	}
	*weight = unit;
	/* with probability ns / unit (both below 2^32 here) */
	return (__u64)bpf_get_prandom_u32() * unit < ns << 32;
}

static __always_inline void split_event_fill(struct sc_split_event *e,
					     const struct split_ref *r,
					     struct task_struct *t, __u32 kind,
					     __u64 ns, __u64 weight)
{
	__u32 cgtag = 0;

	if (r->f) {
		e->nr = r->f->nr;
		e->abi = r->f->abi;
		e->fd_type = r->f->fd_type;
		if (read_cgid)
			cgtag = r->f->cgtag;
	} else {
		e->nr = r->ts->nr;
		e->abi = r->ts->abi;
		e->fd_type = r->ts->fd_type;
		if (read_cgid)
			cgtag = r->ts->cgtag;
	}
	proc_key_of(t, cgtag, &e->proc);
	e->kind = kind;
	e->tid = task_tid(t);
	e->ns = ns;
	e->weight_ns = weight;
	e->nsleeper = 0;
	e->nwaker = 0;
	e->iowait = 0;
}

/* p, in a stamped call, is being woken at the current task's hands (or
 * an interrupt's, on top of it).
 */
static __always_inline void split_woken(void *ctx, struct task_struct *p)
{
	struct sc_split_event *e;
	struct split_ref r;
	struct sc_split *s;
	__u64 now, ns, weight;
	long n;

	if (!split_find(p, &r))
		return;
	s = r.s;
	if (s->call != r.call || !s->out_ns ||
	    (s->flags & (SC_SPLIT_BLOCKED | SC_SPLIT_WOKEN)) !=
		    SC_SPLIT_BLOCKED)
		return;
	now = bpf_ktime_get_ns();
	s->wake_ns = now;
	s->flags |= SC_SPLIT_WOKEN;
	ns = now - s->out_ns;
	if (!split_sampled(ns, &weight))
		return;
	e = bpf_ringbuf_reserve(&split_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&split_lost, 1);
		return;
	}
	split_event_fill(e, &r, p, SC_SPLIT_SLEEP, ns, weight);
	e->iowait = !!(s->flags & SC_SPLIT_IOWAIT);
	e->other_pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	e->other_tid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(e->other_comm, sizeof(e->other_comm));
	n = bpf_get_task_stack(p, e->sleeper, sizeof(e->sleeper), 0);
	e->nsleeper = n > 0 ? (__u32)n / 8 : 0;
	n = bpf_get_stack(ctx, e->waker, sizeof(e->waker), 0);
	e->nwaker = n > 0 ? (__u32)n / 8 : 0;
	bpf_ringbuf_submit(e, 0);
}

/* next, in a stamped call, gets its CPU back at now, after prev. */
static __always_inline void split_in(struct split_ref *r,
				     struct task_struct *next,
				     struct task_struct *prev, __u64 now)
{
	struct sc_split_event *e;
	struct sc_split *s = r->s;
	__u64 wait = 0, weight;

	if (s->call != r->call || !s->out_ns)
		return;
	if (s->flags & SC_SPLIT_BLOCKED) {
		__u64 woke = s->flags & SC_SPLIT_WOKEN ? s->wake_ns : now;
		__u64 slept = woke - s->out_ns;

		s->blocked_ns += slept;
		if (s->flags & SC_SPLIT_IOWAIT)
			s->iowait_ns += slept;
		wait = now - woke;
	} else {
		wait = now - s->out_ns;
	}
	s->wait_ns += wait;
	s->out_ns = 0;
	if (!wait || !split_sampled(wait, &weight))
		return;
	e = bpf_ringbuf_reserve(&split_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&split_lost, 1);
		return;
	}
	split_event_fill(e, r, next, SC_SPLIT_WAIT, wait, weight);
	e->other_pid = task_tgid(prev);
	e->other_tid = task_tid(prev);
	if (KERN_TASK_BTF)
		__builtin_memcpy(e->other_comm, prev->comm,
				 sizeof(e->other_comm));
	else
		BPF_CORE_READ_STR_INTO(&e->other_comm, prev, comm);
	bpf_ringbuf_submit(e, 0);
}

/* A context switch: either task may be in a stamped call. */
static __always_inline void split_switch(bool preempt, struct task_struct *prev,
					 struct task_struct *next)
{
	struct split_ref out, in;
	bool o = split_find(prev, &out), i = split_find(next, &in);
	__u64 now;

	if (!o && !i)
		return;
	now = bpf_ktime_get_ns();
	if (o)
		split_out(&out, prev, preempt, now);
	if (i)
		split_in(&in, next, prev, now);
}

/* The call c ending now takes its split from splits[], if it was
 * switched out with its stamp in flights[] (task state's split is taken
 * by task_exit).
 */
static __always_inline void split_claim(struct ended_call *c)
{
	const struct sc_split *s;
	__u32 i;

	if (!split_on || !c->split_slot)
		return;
	i = c->split_slot - 1;
	s = bpf_map_lookup_elem(&splits, &i);
	if (!s || s->call != c->split_call)
		return;
	c->wait_ns = s->wait_ns;
	c->blocked_ns = s->blocked_ns;
	c->iowait_ns = s->iowait_ns;
}

/* A thread exits in a call stamped in its task state (killed in it):
 * that stamp is no more.
 */
static __always_inline void split_forget(struct task_struct *p)
{
	struct sc_task *ts;

	if (!split_on || tstore_calls <= 0)
		return;
	ts = thread_state(&tstore, p, NULL, false);
	if (ts && ts->start_ns) {
		ts->start_ns = 0;
		__sync_fetch_and_sub(&tstore_calls, 1);
	}
}

#endif /* SCPROF_SPLIT_BPF_H */

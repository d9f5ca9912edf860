/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split of a call's time (include/sc_split.h), on the scheduler's
 * tracepoints. A task in a stamped call (its flight slot, else its task
 * state) has its split in splits[] beside the slot, or in that state; the
 * switch program leaves at once for every other task, with a look at
 * the outgoing task's flight slot (a task storage look up only while some
 * call's stamp is there, tstore_calls).
 *
 *  - switched out: asleep (not preempted, its state not running), when
 *    and whether in I/O wait; or preempted, when; the task's run-queue
 *    delay as the kernel keeps it (the wait after a sleep is what it
 *    grew by at the next switch out, or the exit);
 *  - switched in after a preemption (the switch program looks at the
 *    incoming task while any call waits so): the wait is timed, one in a
 *    time-weighted sample sent with the task that ran just before;
 *  - sched_waking: a sleeping call is woken, its blocked time ends; one
 *    sleep in a time-weighted sample is sent with the sleeper's and the
 *    waker's kernel stacks;
 *  - sched_wakeup (with the run-queue delay only): the woken call is on a
 *    run queue; the wake-up's time until then (an IPI to an idle CPU, its
 *    way out of idle: no run-queue delay holds it) is waiting too, taken
 *    with the delay's growth. A call whose sched_waking came before its
 *    own switch out (the waker saw it between its dequeue and the
 *    tracepoint) ends its sleep here;
 *  - at its exit (split_took): the call takes its sums; a wait after a
 *    wake-up is sampled with no task named. Where the kernel keeps no
 *    run-queue delay (split_runq_timed), waits are timed at each switch
 *    out and in, which looks at the incoming task on every switch.
 *
 * record.bpf.h adds a call's sums to its cell beside its time.
 *
 * Uses what scprof.bpf.c defines before it includes this file: flight_on,
 * split_on, split_runq_timed, split_sample_ns, tstore_calls,
 * split_preempted, read_cgid, flights, tstore (struct sc_task, whose split
 * member this fills).
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

static __always_inline __u64 task_run_delay(struct task_struct *t)
{
	return TASK_GET(t, t->sched_info.run_delay, sched_info.run_delay);
}

static __always_inline bool task_in_iowait(struct task_struct *t)
{
	if (KERN_TASK_BTF)
		return BPF_CORE_READ_BITFIELD(t, in_iowait);
	return BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
}

/* Per CPU: the time of sleeps (or waits) since the last sample. */
struct split_acc {
	__u64 sleep_ns;
	__u64 wait_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_acc);
} split_accs SEC(".maps");

/*
 * Does a sleep (or wait) of ns go out as a sample, and for how much? One
 * sample per split_sample_ns of such time on a CPU, as --stacks-by time
 * samples calls: the one that crosses the mark, standing for the time
 * since the last one. Shares stay those of the time, without a random
 * draw on each.
 */
static __always_inline bool split_sampled(__u64 ns, bool wait, __u64 *weight)
{
	__u32 zero = 0;
	struct split_acc *a = bpf_map_lookup_elem(&split_accs, &zero);
	__u64 *acc;

	if (!a || !split_sample_ns || !ns)
		return false;
	acc = wait ? &a->wait_ns : &a->sleep_ns;
	*acc += ns;
	if (*acc < split_sample_ns)
		return false;
	*weight = *acc;
	*acc = 0;
	return true;
}

/* A sample's row: the call's number, ABI, fd kind and process key. */
static __always_inline void split_event_fill(struct sc_split_event *e, __u32 nr,
					     __u32 abi, __u32 fd_type,
					     __u32 cgtag, struct task_struct *t,
					     __u32 kind, __u64 ns, __u64 weight)
{
	e->nr = nr;
	e->abi = abi;
	e->fd_type = fd_type;
	proc_key_of(t, read_cgid ? cgtag : 0, &e->proc);
	e->kind = kind;
	e->tid = task_tid(t);
	e->ns = ns;
	e->weight_ns = weight;
	e->nsleeper = 0;
	e->nwaker = 0;
	e->iowait = 0;
}

static __always_inline void split_ref_row(const struct split_ref *r, __u32 *nr,
					  __u32 *abi, __u32 *fd_type,
					  __u32 *cgtag)
{
	if (r->f) {
		*nr = r->f->nr;
		*abi = r->f->abi;
		*fd_type = r->f->fd_type;
		*cgtag = r->f->cgtag;
	} else {
		*nr = r->ts->nr;
		*abi = r->ts->abi;
		*fd_type = r->ts->fd_type;
		*cgtag = r->ts->cgtag;
	}
}

/* A wait for a CPU of ns by t in the call of row (nr, abi, fd_type,
 * cgtag); other: the task that ran just before t got its CPU back (NULL:
 * unknown, a wait after a wake-up). One in a time-weighted sample goes
 * out.
 */
static __always_inline void
split_wait_sample(struct task_struct *t, __u32 nr, __u32 abi, __u32 fd_type,
		  __u32 cgtag, struct task_struct *other, __u64 ns)
{
	struct sc_split_event *e;
	__u64 weight;

	if (!split_sampled(ns, true, &weight))
		return;
	e = bpf_ringbuf_reserve(&split_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&split_lost, 1);
		return;
	}
	split_event_fill(e, nr, abi, fd_type, cgtag, t, SC_SPLIT_WAIT, ns,
			 weight);
	e->other_pid = other ? task_tgid(other) : 0;
	e->other_tid = other ? task_tid(other) : 0;
	e->other_comm[0] = 0;
	if (other && KERN_TASK_BTF)
		__builtin_memcpy(e->other_comm, other->comm,
				 sizeof(e->other_comm));
	else if (other)
		BPF_CORE_READ_STR_INTO(&e->other_comm, other, comm);
	bpf_ringbuf_submit(e, 0);
}

/*
 * The wait for a CPU since s's last switch out, read from the kernel's
 * run-queue delay (now: delay) where that switch out was a sleep: the
 * wait after its wake-up, sampled with no task named. After a preemption
 * the wait was timed as it ran again (split_in), throttling included
 * (a throttled task is off the run queue); one not seen there (it went
 * unnoticed) is read here too.
 */
static __always_inline void split_sleep_wait(struct task_struct *t, __u32 nr,
					     __u32 abi, __u32 fd_type,
					     __u32 cgtag, struct sc_split *s,
					     __u64 delay)
{
	__u64 ns = delay > s->seg_delay ? delay - s->seg_delay : 0;

	/* and the wake-up's own time, before the run queue (split_enqueued) */
	ns += s->wake_ns;
	s->wake_ns = 0;
	if (s->flags & SC_SPLIT_PREEMPTED) { /* its switch in unseen */
		s->flags &= ~SC_SPLIT_PREEMPTED;
		__sync_fetch_and_sub(&split_preempted, 1);
	} else if (!(s->flags & SC_SPLIT_SLEPT)) {
		return;
	}
	if (!ns)
		return;
	s->wait_ns += ns;
	split_wait_sample(t, nr, abi, fd_type, cgtag, NULL, ns);
}

/* prev, in a stamped call, leaves its CPU. A sleep, or a preemption,
 * needs the clock (runq_timed: every switch out).
 */
static __always_inline void split_out(struct split_ref *r,
				      struct task_struct *prev, bool preempt)
{
	struct sc_split *s = r->s;
	__u64 delay = 0;
	bool asleep;

	if (!split_runq_timed)
		delay = task_run_delay(prev);
	if (s->call != r->call) { /* the call's first switch out */
		s->call = r->call;
		s->flags = 0;
		s->wake_ns = 0;
		s->wait_ns = 0;
		s->blocked_ns = 0;
		s->iowait_ns = 0;
		if (r->f)
			r->f->switched = 1;
	} else if (!split_runq_timed) {
		__u32 nr, abi, fd_type, cgtag;

		split_ref_row(r, &nr, &abi, &fd_type, &cgtag);
		split_sleep_wait(prev, nr, abi, fd_type, cgtag, s, delay);
	}
	s->seg_delay = delay;
	/* asleep: it chose to (not preempted), in a state other than
	 * running; a preempted task is runnable whatever its state says
	 */
	asleep = !preempt && task_state(prev) != 0;
	s->out_ns = bpf_ktime_get_ns();
	if (asleep) {
		s->flags = SC_SPLIT_BLOCKED | SC_SPLIT_SLEPT |
			   (task_in_iowait(prev) ? SC_SPLIT_IOWAIT : 0);
	} else {
		s->flags = SC_SPLIT_PREEMPTED;
		__sync_fetch_and_add(&split_preempted, 1);
	}
	if (split_runq_timed)
		s->flags |= SC_SPLIT_OUT;
}

/* p, in a stamped call, is being woken at the current task's hands (or
 * an interrupt's, on top of it): its sleep ends.
 */
static __always_inline void split_woken(void *ctx, struct task_struct *p)
{
	__u32 nr, abi, fd_type, cgtag;
	struct sc_split_event *e;
	struct split_ref r;
	struct sc_split *s;
	__u64 now, ns, weight;
	long n;

	if (!split_find(p, &r))
		return;
	s = r.s;
	if (s->call != r.call || !(s->flags & SC_SPLIT_BLOCKED))
		return;
	now = bpf_ktime_get_ns();
	ns = now - s->out_ns;
	s->blocked_ns += ns;
	if (s->flags & SC_SPLIT_IOWAIT)
		s->iowait_ns += ns;
	s->flags &= ~(SC_SPLIT_BLOCKED | SC_SPLIT_IOWAIT);
	/* the wait for a CPU starts now: timed until the run queue
	 * (split_enqueued), or (runq_timed) until the switch in
	 */
	s->out_ns = now;
	if (!split_runq_timed)
		s->flags |= SC_SPLIT_WAKING;
	if (!split_sampled(ns, false, &weight))
		return;
	e = bpf_ringbuf_reserve(&split_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&split_lost, 1);
		return;
	}
	split_ref_row(&r, &nr, &abi, &fd_type, &cgtag);
	split_event_fill(e, nr, abi, fd_type, cgtag, p, SC_SPLIT_SLEEP, ns,
			 weight);
	e->iowait = ns == s->iowait_ns;
	e->other_pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	e->other_tid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(e->other_comm, sizeof(e->other_comm));
	n = bpf_get_task_stack(p, e->sleeper, sizeof(e->sleeper), 0);
	e->nsleeper = n > 0 ? (__u32)n / 8 : 0;
	n = bpf_get_stack(ctx, e->waker, sizeof(e->waker), 0);
	e->nwaker = n > 0 ? (__u32)n / 8 : 0;
	bpf_ringbuf_submit(e, 0);
}

/* p, in a stamped call, is on a run queue again (sched_wakeup; loaded
 * with the run-queue delay only): the time since its sched_waking is a
 * wait, which split_sleep_wait takes with the delay's growth since. A
 * sleep whose sched_waking was not seen (it came before the switch out:
 * the waker found the task dequeued but still on its CPU) ends here.
 */
static __always_inline void split_enqueued(struct task_struct *p)
{
	struct split_ref r;
	struct sc_split *s;
	__u64 ns;

	if (!split_find(p, &r))
		return;
	s = r.s;
	if (s->call != r.call ||
	    !(s->flags & (SC_SPLIT_WAKING | SC_SPLIT_BLOCKED)))
		return;
	ns = bpf_ktime_get_ns() - s->out_ns;
	if (s->flags & SC_SPLIT_BLOCKED) {
		s->blocked_ns += ns;
		if (s->flags & SC_SPLIT_IOWAIT)
			s->iowait_ns += ns;
	} else {
		s->wake_ns += ns;
	}
	s->flags &= ~(SC_SPLIT_WAKING | SC_SPLIT_BLOCKED | SC_SPLIT_IOWAIT);
}

/* next, in a stamped call, gets its CPU back at now, after prev: a wait
 * after a preemption ends (sampled with prev), and where the kernel keeps
 * no run-queue delay (runq_timed), any wait.
 */
static __always_inline void split_in(struct split_ref *r,
				     struct task_struct *next,
				     struct task_struct *prev, __u64 now)
{
	struct sc_split *s = r->s;
	__u32 nr, abi, fd_type, cgtag;
	bool preempted;
	__u64 ns;

	if (s->call != r->call || (s->flags & SC_SPLIT_BLOCKED) ||
	    !(s->flags & (SC_SPLIT_OUT | SC_SPLIT_PREEMPTED)))
		return;
	preempted = s->flags & SC_SPLIT_PREEMPTED;
	ns = now - s->out_ns;
	/* a preemption's wait, timed: its time off the run queue while its
	 * group is throttled too, which the run-queue delay leaves out
	 */
	if (split_runq_timed || preempted)
		s->wait_ns += ns;
	s->flags &= ~(SC_SPLIT_OUT | SC_SPLIT_PREEMPTED);
	if (preempted)
		__sync_fetch_and_sub(&split_preempted, 1);
	split_ref_row(r, &nr, &abi, &fd_type, &cgtag);
	split_wait_sample(next, nr, abi, fd_type, cgtag,
			  preempted ? prev : NULL, ns);
}

/* A context switch: prev may be in a stamped call; so may next, which
 * only matters while some call waits after a preemption, or where waits
 * are timed here (runq_timed).
 */
static __always_inline void split_switch(bool preempt, struct task_struct *prev,
					 struct task_struct *next)
{
	struct split_ref out, in;

	if (split_find(prev, &out))
		split_out(&out, prev, preempt);
	if ((split_runq_timed || split_preempted > 0) && split_find(next, &in))
		split_in(&in, next, prev, bpf_ktime_get_ns());
}

/* The split of a call ending now (s: its own), into c. */
static __always_inline void split_took(struct task_struct *task,
				       struct ended_call *c, struct sc_split *s)
{
	/* the wait since the last switch out, after a sleep (reads the
	 * run-queue delay: the split is written, as the thread's own)
	 */
	if (!split_runq_timed)
		split_sleep_wait(task, c->nr, c->abi, c->fd_type, c->cgtag, s,
				 task_run_delay(task));
	c->blocked_ns = s->blocked_ns;
	c->iowait_ns = s->iowait_ns;
	c->wait_ns = s->wait_ns;
	/* (the parts never exceed the call: rounding, a sleep or a wait
	 * not closed)
	 */
	if (c->wait_ns + c->blocked_ns > c->delta_ns) {
		if (c->blocked_ns > c->delta_ns)
			c->blocked_ns = c->delta_ns;
		if (c->iowait_ns > c->blocked_ns)
			c->iowait_ns = c->blocked_ns;
		c->wait_ns = c->delta_ns - c->blocked_ns;
	}
}

/* The call c ending now takes its split from splits[], if it was
 * switched out with its stamp in flights[] (task state's split is taken
 * by task_exit, with split_took too).
 */
static __always_inline void split_claim(struct task_struct *task,
					struct ended_call *c)
{
	struct sc_split *s = c->split_ts;
	__u32 i;

	if (!split_on)
		return;
	if (!s && c->split_slot) {
		i = c->split_slot - 1;
		s = bpf_map_lookup_elem(&splits, &i);
	}
	if (!s || s->call != c->split_call)
		return;
	split_took(task ?: current_task(), c, s);
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

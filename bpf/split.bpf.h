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
 *    incoming task while any call waits so): the wait is timed; what ran
 *    instead is sampled turn by turn on its CPU (split_cpus: each task's
 *    turn there while the call waits, time-weighted);
 *  - sched_waking: a sleeping call is woken, its blocked time ends; one
 *    sleep in a time-weighted sample is sent with the sleeper's and the
 *    waker's kernel stacks; with sleep_on (--slow, --stacks-by blocked:
 *    the program sc_waking_sleep instead of sc_waking) the call's longest
 *    sleep is kept, with both stacks, in sleeps[] beside splits[] (or in
 *    the task state), for its exit (split_sleep);
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
 * Sampled mode (the daemon): the scheduler programs are attached in
 * latency windows only, as the enter program is, and see only the calls
 * stamped in the current window (the others are not timed); userspace
 * zeroes split_preempted before it attaches them, as a call preempted
 * when they were detached is switched in unseen.
 *
 * Uses the settings flight_on, progs, split_on, split_runq_timed,
 * split_sample_ns, sleep_on, read_cgid (settings.bpf.h), and the stamps
 * of stamp.bpf.h (window_gen, tstore_calls, flights, tstore: struct
 * sc_task, whose split member this fills).
 */
#ifndef SCPROF_SPLIT_BPF_H
#define SCPROF_SPLIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "sc_split.h"
#include "filter.bpf.h"
#include "proc.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "task.bpf.h"

/* Calls switched out preempted and not back on a CPU yet: while there
 * are some, the switch program looks at the incoming task too.
 */
__s64 split_preempted = 0;
/* Samples the ring had no room for. */
__u64 split_lost = 0;

/* The splits of the calls in flights[], slot for slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SC_FLIGHT_SLOTS);
	__type(key, __u32);
	__type(value, struct sc_split);
} splits SEC(".maps");

/* sleep_on: the longest sleeps of the calls in flights[], slot for slot
 * (one entry when off: userspace sizes it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SC_FLIGHT_SLOTS);
	__type(key, __u32);
	__type(value, struct sc_sleep);
} sleeps SEC(".maps");

/* The samples wake no one: the drain reads them every 50 ms (woken at
 * once only by a target's move, split_moved). A wake-up would come as the
 * sampled sleeper is woken, and put scprof's drain on a CPU beside it:
 * with one CPU (the kernel matrix's x86_64 guest) the adaptive wake-up
 * (flag 0: the first sample after each drain) put it on the run queue
 * ahead of the reader it had just sampled.
 */
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
	__u32 slot; /* its slot in flights[] + 1; 0: task state */
};

/* Is a call stamped under window generation gen one to split? Every
 * one in full mode; in sampled mode, those of the window open now.
 */
static __always_inline bool split_gen_ok(__u32 gen)
{
	return settings.progs != SC_PROGS_SAMPLED || gen == window_gen;
}

/* Is t in a stamped call? Its split, found without a helper call when
 * the stamp is in flights[].
 */
static __always_inline bool split_find(struct task_struct *t,
				       struct split_ref *r)
{
	__u64 addr;

	if (settings.flight_on) {
		addr = task_regs_addr(t);
		if (addr) {
			__u32 i = flight_index(addr);
			struct sc_flight *f = &flights[i];

			if (f->owner == addr) {
				r->s = bpf_map_lookup_elem(&splits, &i);
				r->f = f;
				r->slot = i + 1;
				r->ts = NULL;
				r->call = f->start_ns;
				return r->s && r->call && split_gen_ok(f->gen);
			}
		}
		if (tstore_calls <= 0)
			return false;
	}
	r->ts = thread_state(&tstore, t, NULL, false);
	if (!r->ts || !r->ts->start_ns || !split_gen_ok(r->ts->gen))
		return false;
	r->s = &r->ts->split;
	r->f = NULL;
	r->slot = 0;
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
	struct split_acc *a;
	__u64 *acc;

	if (!settings.split_sample_ns || !ns) /* (no samples: the sums only) */
		return false;
	a = bpf_map_lookup_elem(&split_accs, &zero);
	if (!a)
		return false;
	acc = wait ? &a->wait_ns : &a->sleep_ns;
	*acc += ns;
	if (*acc < settings.split_sample_ns)
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
	proc_key_of(t, settings.read_cgid ? cgtag : 0, &e->proc);
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

/* A wait for a CPU of ns in the call of row (proc, nr, abi, fd_type)
 * by thread tid; other: a task that ran instead (NULL: unknown, a wait
 * after a wake-up). One in a time-weighted sample goes out.
 */
static __always_inline void
split_wait_event(const struct sc_proc_key *proc, __u32 tid, __u32 nr, __u32 abi,
		 __u32 fd_type, struct task_struct *other, __u64 ns)
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
	e->proc = *proc;
	e->nr = nr;
	e->abi = abi;
	e->fd_type = fd_type;
	e->kind = SC_SPLIT_WAIT;
	e->tid = tid;
	e->ns = ns;
	e->weight_ns = weight;
	e->nsleeper = 0;
	e->nwaker = 0;
	e->iowait = 0;
	e->other_pid = other ? task_tgid(other) : 0;
	e->other_tid = other ? task_tid(other) : 0;
	e->other_comm[0] = 0;
	if (other && KERN_TASK_BTF)
		__builtin_memcpy(e->other_comm, other->comm,
				 sizeof(e->other_comm));
	else if (other)
		BPF_CORE_READ_STR_INTO(&e->other_comm, other, comm);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* The same for t in the call of row (nr, abi, fd_type, cgtag). */
static __always_inline void
split_wait_sample(struct task_struct *t, __u32 nr, __u32 abi, __u32 fd_type,
		  __u32 cgtag, struct task_struct *other, __u64 ns)
{
	struct sc_proc_key proc;

	proc_key_of(t, settings.read_cgid ? cgtag : 0, &proc);
	split_wait_event(&proc, task_tid(t), nr, abi, fd_type, other, ns);
}

/* Per CPU: the last call preempted there while it waits for the CPU
 * (its row and stamp), and since when the running task's turn runs.
 */
struct split_cpu {
	__u64 call; /* the waiting call's start stamp; 0: none */
	__u64 turn_ns;
	struct sc_proc_key proc;
	__u32 nr, abi, fd_type, tid;
	__u32 slot; /* its slot in flights[] + 1; 0: task state */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_cpu);
} split_cpus SEC(".maps");

static __always_inline struct split_cpu *split_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&split_cpus, &zero);
}

/* prev's turn on this CPU ends at now: while the call c remembers waits
 * (still preempted, as its slot's split says where it has one), the
 * turn is time prev ran instead.
 */
static __always_inline void split_turn(struct split_cpu *c,
				       struct task_struct *prev, __u64 now)
{
	__u64 ns = now - c->turn_ns;

	c->turn_ns = now;
	if (task_tid(prev) == c->tid) { /* it ran: its switch in unseen */
		c->call = 0;
		return;
	}
	if (c->slot) {
		__u32 i = c->slot - 1;
		struct sc_split *s = bpf_map_lookup_elem(&splits, &i);

		if (!s || s->call != c->call ||
		    !(s->flags & SC_SPLIT_PREEMPTED)) {
			c->call = 0; /* it ran again elsewhere */
			return;
		}
	}
	split_wait_event(&c->proc, c->tid, c->nr, c->abi, c->fd_type, prev, ns);
}

/* prev, in r's call, is preempted on this CPU at now: its wait is
 * sampled turn by turn here.
 */
static __always_inline void
split_turns_begin(struct split_ref *r, struct task_struct *prev, __u64 now)
{
	struct split_cpu *c = split_cpu();
	__u32 cgtag;

	if (!c)
		return;
	split_ref_row(r, &c->nr, &c->abi, &c->fd_type, &cgtag);
	proc_key_of(prev, settings.read_cgid ? cgtag : 0, &c->proc);
	c->tid = task_tid(prev);
	c->slot = r->slot;
	c->call = r->call;
	c->turn_ns = now;
	r->s->flags |= SC_SPLIT_TURNS;
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
				      struct task_struct *prev, bool preempt,
				      __u64 now)
{
	struct sc_split *s = r->s;
	__u64 delay = 0;
	bool asleep;

	if (!settings.split_runq_timed)
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
	} else if (!settings.split_runq_timed) {
		__u32 nr, abi, fd_type, cgtag;

		split_ref_row(r, &nr, &abi, &fd_type, &cgtag);
		split_sleep_wait(prev, nr, abi, fd_type, cgtag, s, delay);
	}
	s->seg_delay = delay;
	/* asleep: it chose to (not preempted), in a state other than
	 * running; a preempted task is runnable whatever its state says
	 */
	asleep = !preempt && task_state(prev) != 0;
	s->out_ns = now;
	if (asleep) {
		s->flags = SC_SPLIT_BLOCKED | SC_SPLIT_SLEPT |
			   (task_in_iowait(prev) ? SC_SPLIT_IOWAIT : 0);
	} else {
		s->flags = SC_SPLIT_PREEMPTED;
		__sync_fetch_and_add(&split_preempted, 1);
		split_turns_begin(r, prev, now);
	}
	if (settings.split_runq_timed)
		s->flags |= SC_SPLIT_OUT;
}

/*
 * sleep_on: a sleep of ns by p, in the call r, has just ended at the
 * current task's hands: the call's longest so far is kept, with the
 * sleeper's kernel stack and the waker's (the two stack walks only for a
 * sleep longer than the call's longest before).
 */
static __always_inline void split_keep_sleep(void *ctx, struct task_struct *p,
					     const struct split_ref *r,
					     __u64 ns)
{
	struct sc_sleep *z;
	__u32 i = r->slot - 1;
	long n;

	if (r->f)
		z = bpf_map_lookup_elem(&sleeps, &i);
	else
		z = &r->ts->sleep;
	if (!z)
		return;
	if (z->call != r->call) {
		z->call = r->call;
		z->ns = 0;
	}
	if (ns <= z->ns)
		return;
	z->ns = ns;
	z->waker_pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	z->waker_tid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(z->waker_comm, sizeof(z->waker_comm));
	n = bpf_get_task_stack(p, z->sleeper, sizeof(z->sleeper), 0);
	z->nsleeper = n > 0 ? (__u32)n / 8 : 0;
	n = bpf_get_stack(ctx, z->waker, sizeof(z->waker), 0);
	z->nwaker = n > 0 ? (__u32)n / 8 : 0;
}

/* p, in a stamped call, is being woken at the current task's hands (or
 * an interrupt's, on top of it): its sleep ends. keep (a constant: two
 * programs, sc_waking and sc_waking_sleep, so that the first one is
 * what it was without it): the call's longest sleep is kept.
 */
static __always_inline void split_woken(void *ctx, struct task_struct *p,
					const bool keep)
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
	if (!settings.split_runq_timed)
		s->flags |= SC_SPLIT_WAKING;
	if (keep)
		split_keep_sleep(ctx, p, &r, ns);
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
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
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
	if (settings.split_runq_timed || preempted)
		s->wait_ns += ns;
	if (preempted)
		__sync_fetch_and_sub(&split_preempted, 1);
	if (preempted && (s->flags & SC_SPLIT_TURNS)) {
		/* sampled turn by turn, the last one prev's just now */
		struct split_cpu *c = split_cpu();

		s->flags &=
			~(SC_SPLIT_OUT | SC_SPLIT_PREEMPTED | SC_SPLIT_TURNS);
		if (c && c->call == r->call)
			c->call = 0;
		return;
	}
	s->flags &= ~(SC_SPLIT_OUT | SC_SPLIT_PREEMPTED);
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
	struct split_cpu *c;
	__u64 now = 0;

	/* while some call waits after a preemption: prev's turn here */
	if (split_preempted > 0 && (c = split_cpu()) && c->call) {
		now = bpf_ktime_get_ns();
		split_turn(c, prev, now);
	}
	if (split_find(prev, &out))
		split_out(&out, prev, preempt, now ?: bpf_ktime_get_ns());
	if ((settings.split_runq_timed || split_preempted > 0) &&
	    split_find(next, &in))
		split_in(&in, next, prev, now ?: bpf_ktime_get_ns());
}

/* The split of a call ending now (s: its own), into c. */
static __always_inline void split_took(struct task_struct *task,
				       struct ended_call *c, struct sc_split *s)
{
	/* the wait since the last switch out, after a sleep (reads the
	 * run-queue delay: the split is written, as the thread's own)
	 */
	if (!settings.split_runq_timed)
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

/*
 * sleep_on: which call's longest sleep the exit program may read (its
 * stamp; 0: none) and where (its flight slot + 1; 0: the task state), per
 * CPU: noted as the split is claimed, read by split_sleep() at the end of
 * the same run (a program does not nest in itself on a CPU). Kept out of
 * struct ended_call so that the exit program keeps no more of it alive
 * when sleep_on is off.
 */
struct sleep_claim {
	__u64 call;
	__u32 slot;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sleep_claim);
} sleep_claims SEC(".maps");

static __always_inline void split_note_sleep(const struct ended_call *c)
{
	__u32 zero = 0;
	struct sleep_claim *cl = bpf_map_lookup_elem(&sleep_claims, &zero);

	if (!cl)
		return;
	cl->call = c->split_ts || c->split_slot ? c->split_call : 0;
	cl->slot = c->split_ts ? 0 : c->split_slot;
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

	if (!settings.split_on)
		return;
	if (settings.sleep_on)
		split_note_sleep(c);
	if (!s && c->split_slot) {
		i = c->split_slot - 1;
		s = bpf_map_lookup_elem(&splits, &i);
	}
	if (!s || s->call != c->split_call)
		return;
	split_took(task ?: current_task(), c, s);
}

/* A target process moves to another cgroup: userspace looks at its CPU
 * quota there at once (collect/throttle.c), before it is throttled.
 */
static __always_inline void split_moved(struct task_struct *task)
{
	struct sc_split_event *e;

	if (!settings.split_on || settings.filter_mode != SC_FILTER_TGID ||
	    !is_target(task_tgid(task)))
		return;
	e = bpf_ringbuf_reserve(&split_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&split_lost, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = SC_SPLIT_MOVED;
	e->proc.tgid = task_tgid(task);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* sleep_on: the longest sleep of the call c that has just ended (its
 * split claimed: split_claim), or NULL when it never slept (or the record
 * is another call's already). task: the caller (NULL: the current task).
 */
static __always_inline const struct sc_sleep *
split_sleep(struct task_struct *task)
{
	const struct sc_sleep *z = NULL;
	struct sleep_claim *cl;
	struct sc_task *ts;
	__u32 i = 0;

	if (!settings.sleep_on)
		return NULL;
	cl = bpf_map_lookup_elem(&sleep_claims, &i);
	if (!cl || !cl->call)
		return NULL;
	if (cl->slot) {
		i = cl->slot - 1;
		z = bpf_map_lookup_elem(&sleeps, &i);
	} else {
		ts = thread_state(&tstore, task ?: current_task(), NULL, false);
		if (!ts)
			return NULL;
		z = &ts->sleep;
	}
	if (!z || z->call != cl->call || !z->ns)
		return NULL;
	return z;
}

/* A thread exits in a call stamped in its task state (killed in it):
 * that stamp is no more.
 */
static __always_inline void split_forget(struct task_struct *p)
{
	struct sc_task *ts;

	if (!settings.split_on || tstore_calls <= 0)
		return;
	ts = thread_state(&tstore, p, NULL, false);
	if (ts && ts->start_ns) {
		ts->start_ns = 0;
		__sync_fetch_and_sub(&tstore_calls, 1);
	}
}

#endif /* SCPROF_SPLIT_BPF_H */

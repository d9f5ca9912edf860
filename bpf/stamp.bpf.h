/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Full mode's per-thread state: the start stamp of the call in flight,
 * taken at enter and found again at exit. It lives in flights[], indexed
 * by the caller's kernel stack and reached without a helper call, or, when
 * that slot is taken (or the kernel lacks bpf_task_pt_regs), in task local
 * storage.
 *
 * Uses the settings flight_on, read_cgid, split_on (settings.bpf.h).
 */
#ifndef SCPROF_STAMP_BPF_H
#define SCPROF_STAMP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "sc_split.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "settings.bpf.h"
#include "task.bpf.h"

/* Sampled mode: userspace adds one when it attaches the enter program and
 * one when it detaches it; a stamp carries the value it was taken under.
 */
__u32 window_gen = 0;
/* Calls whose stamp is in task state (tstore) now, not in flights[]: the
 * scheduler programs look there only while there are some (split.bpf.h).
 */
__s64 tstore_calls = 0;

/* Full mode's calls in flight, by the caller's stack (flight_of()). */
struct sc_flight flights[SC_FLIGHT_SLOTS] SC_LINE_ALIGNED = {};

/*
 * Scratch words that turn a pointer into a number (see addr_of()): one per
 * program kind and CPU.
 */
enum { SCR_ENTER, SCR_EXIT, SCR_TASK_EXIT, SCR_COUNT };

struct sc_scratch {
	__u64 v[SCR_COUNT];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_scratch);
} scratch SEC(".maps");

/* Per-thread state of full mode: the syscall in flight. */
struct sc_task {
	__u64 start_ns; /* 0: no enter seen for the current call */
	__u32 nr;
	__u32 abi;
	__u32 fd_type;	       /* enum sc_fd_type, read at entry */
	__u32 gen;	       /* sampled mode: window_gen at entry */
	__u32 cgtag;	       /* the thread's cgroup tag at entry */
	struct sc_split split; /* the call's split (split.bpf.h) */
	struct sc_sleep sleep; /* sleep_on: its longest sleep */
};

/* Task local storage, or before it a hash by thread id (task.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sc_task);
} tstore SEC(".maps");

static const struct sc_task zero_task = {};

/* A stamped call, found again at its exit. */
struct ended_call {
	__u64 delta_ns; /* time from enter to exit */
	__u32 nr;
	__u32 abi;
	enum want w;   /* set from the stamp in flights[] only */
	__u32 fd_type; /* enum sc_fd_type, read at entry */
	__u32 gen;     /* window_gen at entry (sampled mode) */
	__u32 cgtag;   /* the thread's cgroup tag (cgtag.bpf.h): at entry
			* in full mode, where a call is made, else at exit
			*/
	/* Of delta_ns (sc_split.h): waiting for a CPU, blocked, in I/O
	 * wait; zero for a call never switched out.
	 */
	__u64 wait_ns;
	__u64 blocked_ns;
	__u64 iowait_ns;
	/* Its split is in splits[split_slot - 1], or at split_ts, for stamp
	 * split_call (split.bpf.h's split_claim); 0 and NULL: none.
	 */
	__u32 split_slot;
	__u64 split_call;
	struct sc_split *split_ts;
};

/*
 * A pointer cannot be shifted or masked in BPF, but it can be stored in a
 * map value and read back as a number (the scratch map: one word per
 * program kind and CPU, as a program is never nested in itself on one
 * CPU).
 */
static __always_inline __u64 addr_of(const void *ptr, int which)
{
	__u32 zero = 0;
	struct sc_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s || which < 0 || which >= SCR_COUNT)
		return 0;
	*(volatile __u64 *)&s->v[which] = (__u64)ptr;
	return *(volatile __u64 *)&s->v[which];
}

/* The address of regs as a number: known (from the verdict cache, see
 * want_cached()) or read through scratch word which.
 */
static __always_inline __u64 regs_addr(const void *regs, __u64 known, int which)
{
	return known ? known : addr_of(regs, which);
}

static __always_inline __u32 flight_index(__u64 addr)
{
	return (__u32)(addr >> SC_FLIGHT_SHIFT) & (SC_FLIGHT_SLOTS - 1);
}

static __always_inline struct sc_flight *flight_of(__u64 addr)
{
	return &flights[flight_index(addr)];
}

/* Stamp the call c in flights[]; false when its slot is another task's.
 * known: regs as a number, or 0 (regs_addr).
 */
static __always_inline bool flight_enter(const struct pt_regs *regs,
					 __u64 known,
					 const struct ended_call *c)
{
	__u64 addr = regs_addr(regs, known, SCR_ENTER);
	struct sc_flight *f = flight_of(addr);
	__u64 owner = f->owner;

	/* Take the slot (or keep it: an entry of ours that never saw its
	 * exit, at attach time).
	 */
	if (!addr)
		return false;
	if (owner != addr &&
	    (owner || __sync_val_compare_and_swap(&f->owner, 0, addr) != 0))
		return false;
	f->nr = c->nr;
	f->abi = (__u8)c->abi;
	f->want = (__u8)c->w;
	f->fd_type = (__u8)c->fd_type;
	f->switched = 0;
	f->gen = window_gen;
	if (settings.read_cgid) /* (a setting: no store at all otherwise) */
		f->cgtag = c->cgtag;
	f->start_ns = bpf_ktime_get_ns();
	return true;
}

/* Stamp the call c in the task's own state (task storage, or by tid). */
static __always_inline void task_enter(struct task_struct *task,
				       const struct ended_call *c)
{
	struct sc_task *ts;

	ts = thread_state(&tstore, task, &zero_task, true);
	if (!ts) {
		count_drop(SC_DROP_UNTIMED);
		return;
	}
	/* the scheduler programs look here while a stamp is (split.bpf.h) */
	if (settings.split_on && !ts->start_ns)
		__sync_fetch_and_add(&tstore_calls, 1);
	ts->nr = c->nr;
	ts->abi = c->abi;
	ts->fd_type = c->fd_type;
	ts->gen = window_gen;
	if (settings.read_cgid)
		ts->cgtag = c->cgtag;
	/* Last, so our own work above is not billed to the call. */
	ts->start_ns = bpf_ktime_get_ns();
}

/* The call ending on this stack, if flights[] holds its stamp. */
static __always_inline bool flight_exit(const struct pt_regs *regs, __u64 known,
					struct ended_call *c)
{
	__u64 addr = regs_addr(regs, known, SCR_EXIT);
	struct sc_flight *f = flight_of(addr);
	__u64 now;

	if (!addr || f->owner != addr)
		return false;
	/* Our call: recorded at entry, so recorded now. */
	c->nr = f->nr;
	c->abi = f->abi;
	now = bpf_ktime_get_ns();
	c->delta_ns = now - f->start_ns;
	c->w = f->want;
	c->fd_type = f->fd_type;
	c->gen = f->gen;
	if (settings.read_cgid)
		c->cgtag = f->cgtag;
	if (f->switched) { /* its split is in splits[] (split_claim) */
		c->split_slot = flight_index(addr) + 1;
		c->split_call = f->start_ns;
	}
	f->owner = 0;
	return true;
}

/* The call the task ends, if its local storage holds a stamp for it (no
 * stamp: a call already running at attach time, or a new task's first
 * return from clone).
 */
static __always_inline bool task_exit(struct task_struct *task,
				      struct ended_call *c)
{
	struct sc_task *ts;
	__u64 now, start;

	ts = thread_state(&tstore, task, NULL, false);
	if (!ts)
		return false;
	start = ts->start_ns;
	if (!start)
		return false;
	now = bpf_ktime_get_ns();
	ts->start_ns = 0;
	if (settings.split_on) {
		__sync_fetch_and_sub(&tstore_calls, 1);
		/* its split, taken once delta_ns is known (split_claim) */
		if (ts->split.call == start) {
			c->split_ts = &ts->split;
			c->split_call = start;
		}
	}
	c->nr = ts->nr;
	c->abi = ts->abi;
	c->fd_type = ts->fd_type;
	c->gen = ts->gen;
	if (settings.read_cgid)
		c->cgtag = ts->cgtag;
	c->delta_ns = now - start;
	return true;
}

/*
 * Sampled mode: was the call ending now stamped in the window that is
 * still open? Windows have odd numbers (userspace adds one before it
 * attaches the enter program and one after it detaches it), so a stamp
 * taken under the same odd number began and ends in one window; a call
 * that straddles an attach or a detach is not timed. A stamp found in a
 * window is used up either way. Outside windows (most calls) the exit
 * does not look: a stamp left over is stale for the next window, and the
 * thread's next windowed call takes its flight slot over again.
 */
static __always_inline bool window_stamp(struct task_struct *task,
					 const struct pt_regs *regs,
					 __u64 known, struct ended_call *c)
{
	__u32 gen = window_gen;

	if (!(gen & 1))
		return false;
	if (settings.flight_on) {
		if (!flight_exit(regs, known, c))
			return false;
	} else if (!task_exit(task, c)) {
		return false;
	}
	return (gen & 1) && c->gen == gen;
}

/* A task exits (regs: its stack): free a flight slot it left taken, by a
 * call that never returned (the task was killed in it).
 */
static __always_inline void flight_forget(const struct pt_regs *regs)
{
	struct sc_flight *f;
	__u64 addr;

	if (!settings.flight_on)
		return;
	addr = addr_of(regs, SCR_TASK_EXIT);
	f = flight_of(addr);
	if (addr && f->owner == addr)
		f->owner = 0;
}

#endif /* SCPROF_STAMP_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the user stack of one call in stack_period, for userspace to
 * unwind with the binaries' CFI (as perf --call-graph dwarf does): the
 * user registers and the top SC_STACK_BYTES of the stack go to the
 * stack_events ring buffer.
 *
 * Sampling: a countdown per CPU, reset to a random value of mean
 * stack_period << shift (uniform in 1 .. 2 * mean - 1), so a loop whose
 * length divides the period cannot always land on the same call.
 *
 * Under pressure the rate adapts before the ring is full: from half full
 * on, each further eighth of the ring in use doubles the period of the
 * CPU's next countdown (shift up to SC_STACK_MAX_SHIFT), and it comes
 * back down as the ring drains: the rate follows what userspace can
 * unwind, without running away from it. A sample
 * carries its weight, 1 << shift of the countdown it ended: the number of
 * stack_period-sized shares of calls it stands for. The choice of shift
 * depends only on time, never on the call, so the weighted shares stay
 * unbiased whatever phase the program is in. A sample the ring still has
 * no room for is counted in stack_lost (with its weight) by syscall.
 *
 * Uses the settings stack_period, stack_by_time, stack_by_blocked (as by
 * time, by the call's blocked time, each sample with the kernel stack of
 * the call's longest sleep) and stack_budget_ns (settings.bpf.h). The hot
 * path has one call here, guarded: with stack_period 0 the verifier
 * removes it.
 */
#ifndef SCPROF_STACKS_BPF_H
#define SCPROF_STACKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "sc_stack.h"
#include "settings.bpf.h"
#include "syscall.bpf.h"
#include "task.bpf.h"

/* Samples lost (ring buffer full), by native syscall. */
__u64 stack_lost[SC_NR_MAX] = {};
/* Sampling is loaded but off while set: the daemon's profile endpoint
 * (user/cmd/daemon_profile.c) turns it on for a profile's seconds only,
 * writing this through the mapped .bss. Commands that sample for the
 * whole run leave it 0.
 */
bool stacks_paused = false;
/* The least shift of a countdown (0 to SC_STACK_MAX_SHIFT): the daemon
 * raises it to keep what unwinding costs in its budget, through the
 * mapped .bss; the ring's fill may raise a shift further.
 */
__u32 stack_shift_min = 0;

struct stack_countdown {
	__u32 left;  /* calls to the next sample (by count) */
	__u32 shift; /* the countdown's mean is stack_period << shift, the
		      * budget stack_budget_ns << shift
		      */
	__u64 acc;   /* time since the last sample (by time) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_countdown);
} stack_countdown SEC(".maps");

/* Processes sampled before: the first sample of a process wakes userspace
 * up, so that it reads the process's mappings while it still runs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* tgid << 32 ^ start time */
	__type(value, __u8);
} stack_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SC_STACK_RINGBUF); /* userspace may resize */
} stack_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SC_MAPS_RINGBUF); /* userspace may resize */
} maps_events SEC(".maps");

__u64 maps_lost = 0;

/* Copy the stack page by page from the page of sp up; stop at the first
 * page that cannot be read (the end of the stack's mapping).
 */
static __always_inline __u32 stack_copy(__u8 *data, __u64 sp)
{
	__u64 base = sp & ~(__u64)(SC_STACK_PAGE - 1);
	__u32 len = 0;

	for (int i = 0; i < SC_STACK_BYTES / SC_STACK_PAGE; i++) {
		if (bpf_probe_read_user(data + i * SC_STACK_PAGE, SC_STACK_PAGE,
					(void *)(base + i * SC_STACK_PAGE)))
			break;
		len += SC_STACK_PAGE;
	}
	return len;
}

/* A process's program image: an exec makes a new key, so that its first
 * sample has new mappings.
 */
static __always_inline __u64 stack_proc_key(struct task_struct *task)
{
	return (((__u64)task_tgid(task) << 32) ^ task_proc_start_ns(task)) +
	       (__u64)task_exec_id(task) * 0x9e3779b97f4a7c15ULL;
}

/*
 * A process's first sample, or its first since it mapped code (the
 * dynamic loader, dlopen) or exec'd: userspace must read its mappings
 * now, while it runs, so a notice wakes it up (it is otherwise on a
 * timer, or woken up when the stack ring is a quarter full). Before the
 * sample's own room is asked for, so a full stack ring does not keep it.
 */
static __always_inline bool stack_new_maps(struct task_struct *task)
{
	__u64 key = stack_proc_key(task);
	struct sc_maps_event n;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&stack_seen, &key))
		return false;
	bpf_map_update_elem(&stack_seen, &key, &one, BPF_ANY);
	n.pid = task_tgid(task);
	n.exec_id = task_exec_id(task);
	n.start_ns = task_proc_start_ns(task);
	if (bpf_ringbuf_output(&maps_events, &n, sizeof(n),
			       BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&maps_lost, 1);
	return true;
}

static __always_inline __u64 stack_wakeup(void)
{
	if (bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&stack_events, BPF_RB_RING_SIZE) / 4)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* mmap(..., PROT_EXEC, ...): the process's next sample (of a later call:
 * this one has not mapped anything yet) has new mappings. (An exec has a
 * new stack_proc_key.)
 */
static __always_inline bool stack_maps_code(struct pt_regs *regs, __u32 nr,
					    __u32 abi)
{
#if defined(__TARGET_ARCH_x86)
	return nr == 9 /* mmap */ && abi == SC_ABI_NATIVE && (regs->dx & 4);
#elif defined(__TARGET_ARCH_arm64)
	return nr == 222 /* mmap */ && abi == SC_ABI_NATIVE &&
	       (regs->regs[2] & 4);
#else
	return false;
#endif
}

/* The shift of a CPU's next sampling interval, from how full the ring
 * is: eighths in use 0-3 none, 4 one, ... 8 (full) five.
 */
static __always_inline __u32 stack_shift(void)
{
	__u64 used = bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&stack_events, BPF_RB_RING_SIZE);

	used = size ? used * 8 / size : 0;
	return used > 3 ? (__u32)(used - 3) & SC_STACK_MAX_SHIFT : 0;
}

/* What a sample and a slow call both carry: who made the call, its
 * registers and the top of its stack (when copy), the process's image,
 * whether it is new (stack_new_maps, asked before the event's room).
 */
static __always_inline void stack_fill(struct sc_stack_event *e,
				       struct task_struct *task,
				       struct pt_regs *regs, bool copy,
				       bool new_maps)
{
	e->pid = task_tgid(task);
	e->tid = task_tid(task);
	e->start_ns = task_proc_start_ns(task);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->len = 0;
	if (!copy)
		__builtin_memset(e->regs, 0, sizeof(e->regs));
#if defined(__TARGET_ARCH_x86)
	if (copy) {
		e->regs[0] = regs->ax;
		e->regs[1] = regs->dx;
		e->regs[2] = regs->cx;
		e->regs[3] = regs->bx;
		e->regs[4] = regs->si;
		e->regs[5] = regs->di;
		e->regs[6] = regs->bp;
		e->regs[7] = regs->sp;
		e->regs[8] = regs->r8;
		e->regs[9] = regs->r9;
		e->regs[10] = regs->r10;
		e->regs[11] = regs->r11;
		e->regs[12] = regs->r12;
		e->regs[13] = regs->r13;
		e->regs[14] = regs->r14;
		e->regs[15] = regs->r15;
		e->regs[16] = regs->ip;
		e->len = stack_copy(e->data, regs->sp);
	}
#elif defined(__TARGET_ARCH_arm64)
	if (copy) {
		bpf_core_read(e->regs, sizeof(regs->regs), &regs->regs);
		e->regs[SC_STACK_REG_SP] = regs->sp;
		e->regs[SC_STACK_REG_IP] = regs->pc;
		e->len = stack_copy(e->data, regs->sp);
	}
#endif
	e->flags = new_maps ? SC_STACK_F_NEW_MAPS : 0;
	e->exec_id = task_exec_id(task);
}

/* Only native stacks are unwound; an exec's stack belongs to the program
 * it replaces, whose mappings are gone when userspace reads them.
 */
static __always_inline bool stack_unwindable(__u32 nr, __u32 abi)
{
	return abi == SC_ABI_NATIVE && nr < SC_NR_MAX &&
	       !(flags_of(nr, abi) & SC_NR_EXEC);
}

/* The call's longest sleep into e (z NULL: none). */
static __always_inline void stack_sleep(struct sc_stack_event *e,
					const struct sc_sleep *z)
{
	if (!z)
		return;
	__builtin_memcpy(&e->sleep, z, sizeof(e->sleep));
	e->flags |= SC_STACK_F_SLEEP;
}

/* Send the call's user stack, standing for weight shares of calls (or of
 * time), with its longest sleep (z: --stacks-by blocked, else NULL); one
 * the ring has no room for is counted lost.
 */
static __always_inline void stack_emit(struct task_struct *task,
				       struct pt_regs *regs, __u32 nr,
				       __u32 abi, __u32 weight,
				       const struct sc_sleep *z)
{
	struct sc_stack_event *e;
	bool new_maps;

	if (!stack_unwindable(nr, abi))
		return;
	barrier_var(nr);
	nr &= SC_NR_MAX - 1;
	new_maps = stack_new_maps(task);
	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stack_lost[nr], weight);
		return;
	}
	stack_fill(e, task, regs, true, new_maps);
	e->nr = nr;
	e->abi = abi;
	e->weight = weight;
	stack_sleep(e, z);
	bpf_ringbuf_submit(e, stack_wakeup());
}

/* The new mappings of an mmap of code are read at the next sample. */
static __always_inline void stack_note_code(struct task_struct *task,
					    struct pt_regs *regs, __u32 nr,
					    __u32 abi)
{
	if (stack_maps_code(regs, nr, abi)) {
		__u64 key = stack_proc_key(task);

		bpf_map_delete_elem(&stack_seen, &key);
	}
}

/* --stacks-by count: one call in stack_period, at its entry. */
static __always_inline void stack_sample(struct task_struct *task,
					 struct pt_regs *regs, __u32 nr,
					 __u32 abi)
{
	struct stack_countdown *cd;
	__u32 zero = 0, weight, mean;

	/* (paused: no countdown; code mapped is still noted) */
	cd = stacks_paused ? NULL :
			     bpf_map_lookup_elem(&stack_countdown, &zero);
	if (cd && cd->left > 1) {
		cd->left -= 1;
	} else if (cd) {
		weight = 1U << (cd->shift & SC_STACK_MAX_SHIFT);
		cd->shift = settings.stack_period <
					    (1U << (30 - SC_STACK_MAX_SHIFT)) ?
				    stack_shift() :
				    0;
		if (cd->shift < stack_shift_min)
			cd->shift = stack_shift_min & SC_STACK_MAX_SHIFT;
		mean = settings.stack_period
		       << (cd->shift & SC_STACK_MAX_SHIFT);
		cd->left = 1 + bpf_get_prandom_u32() % (2 * mean - 1);
		stack_emit(task, regs, nr, abi, weight, NULL);
	}
	stack_note_code(task, regs, nr, abi);
}

/*
 * --stacks-by time: at a call's exit, where the user stack is the one it
 * was made from, each CPU adds the call's time to a budget; a sample is
 * taken each time it passes stack_budget_ns << shift, weighted by the
 * budgets it passed (in stack_budget_ns units), so a call is sampled in
 * proportion to its time and the weighted shares are shares of time.
 * --stacks-by blocked: the same with the call's blocked time (delta_ns
 * is that), a call never blocked never sampled, each sample with the
 * call's longest sleep (z).
 */
static __always_inline void stack_sample_time(struct task_struct *task,
					      struct pt_regs *regs, __u32 nr,
					      __u32 abi, __u64 delta_ns,
					      const struct sc_sleep *z)
{
	struct stack_countdown *cd;
	__u32 zero = 0;
	__u64 unit, n;

	cd = stacks_paused ? NULL :
			     bpf_map_lookup_elem(&stack_countdown, &zero);
	/* (by blocked time: no time, no sample, whatever the shift did) */
	if (cd && (delta_ns || !settings.stack_by_blocked)) {
		cd->acc += delta_ns;
		unit = settings.stack_budget_ns
		       << (cd->shift & SC_STACK_MAX_SHIFT);
		if (unit && cd->acc >= unit) {
			n = cd->acc / unit;
			cd->acc -= n * unit;
			n <<= cd->shift & SC_STACK_MAX_SHIFT;
			cd->shift = stack_shift();
			stack_emit(task, regs, nr, abi,
				   n > 0xffffffffULL ? 0xffffffffU : (__u32)n,
				   z);
		}
	}
	stack_note_code(task, regs, nr, abi);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the user stack of one call in stack_period, for userspace to
 * unwind with the binaries' CFI (as perf --call-graph dwarf does): the
 * user registers and the top SC_STACK_BYTES of the stack go to the
 * stack_events ring buffer.
 *
 * Sampling: a countdown per CPU, reset to a random value of mean
 * stack_period (uniform in 1 .. 2 * stack_period - 1), so a loop whose
 * length divides the period cannot always land on the same call. A sample
 * the ring buffer has no room for is counted in stack_lost by syscall, so
 * the shares of the others stay unbiased and the loss is shown.
 *
 * The settings and maps are here, not in scprof.bpf.c, so that the hot
 * path only has one guarded call: with stack_period 0 (rodata) the
 * verifier removes it.
 */
#ifndef SCPROF_STACKS_BPF_H
#define SCPROF_STACKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "sc_stack.h"
#include "task.bpf.h"

/* 0: off; N: one call in N (on average) has its stack sampled. */
const volatile __u32 stack_period = 0;

/* Samples lost (ring buffer full), by native syscall. */
__u64 stack_lost[SC_NR_MAX] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
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

static __always_inline __u64 stack_proc_key(struct task_struct *task)
{
	return ((__u64)task_tgid(task) << 32) ^ task_proc_start_ns(task);
}

/*
 * A process's first sample, or its first since it mapped code (the
 * dynamic loader, dlopen): userspace must read its mappings now, while it
 * runs, so it is woken up (and is otherwise on a timer, or woken up when
 * the ring is a quarter full).
 */
static __always_inline bool stack_new_maps(struct task_struct *task)
{
	__u64 key = stack_proc_key(task);
	__u8 one = 1;

	if (bpf_map_lookup_elem(&stack_seen, &key))
		return false;
	bpf_map_update_elem(&stack_seen, &key, &one, BPF_ANY);
	return true;
}

static __always_inline __u64 stack_wakeup(const struct sc_stack_event *e)
{
	if (e->flags & SC_STACK_F_NEW_MAPS)
		return BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&stack_events, BPF_RB_RING_SIZE) / 4)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* mmap(..., PROT_EXEC, ...): the process's next sample (of a later call:
 * this one has not mapped anything yet) has new mappings. (An exec is
 * seen in userspace: the samples' exec_id changes.)
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

static __always_inline void stack_sample_one(struct task_struct *task,
					     struct pt_regs *regs, __u32 nr,
					     __u32 abi)
{
	struct sc_stack_event *e;
	__u32 zero = 0, *left;

	left = bpf_map_lookup_elem(&stack_countdown, &zero);
	if (!left)
		return;
	if (*left > 1) {
		*left -= 1;
		return;
	}
	*left = 1 + bpf_get_prandom_u32() % (2 * stack_period - 1);
	/* Only native stacks are unwound; an exec's stack belongs to the
	 * program it replaces, whose mappings are gone when userspace reads
	 * them.
	 */
	if (abi != SC_ABI_NATIVE || nr >= SC_NR_MAX ||
	    (flags_of(nr, abi) & SC_NR_EXEC))
		return;
	barrier_var(nr);
	nr &= SC_NR_MAX - 1;
	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stack_lost[nr], 1);
		return;
	}
	e->pid = task_tgid(task);
	e->tid = task_tid(task);
	e->nr = nr;
	e->abi = abi;
	e->start_ns = task_proc_start_ns(task);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
#if defined(__TARGET_ARCH_x86)
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
#elif defined(__TARGET_ARCH_arm64)
	bpf_core_read(e->regs, sizeof(regs->regs), &regs->regs);
	e->regs[SC_STACK_REG_SP] = regs->sp;
	e->regs[SC_STACK_REG_IP] = regs->pc;
	e->len = stack_copy(e->data, regs->sp);
#else
	e->len = 0;
#endif
	e->flags = stack_new_maps(task) ? SC_STACK_F_NEW_MAPS : 0;
	e->exec_id = task_exec_id(task);
	e->pad = 0;
	bpf_ringbuf_submit(e, stack_wakeup(e));
}

static __always_inline void stack_sample(struct task_struct *task,
					 struct pt_regs *regs, __u32 nr,
					 __u32 abi)
{
	stack_sample_one(task, regs, nr, abi);
	if (stack_maps_code(regs, nr, abi)) {
		__u64 key = stack_proc_key(task);

		bpf_map_delete_elem(&stack_seen, &key);
	}
}

#endif

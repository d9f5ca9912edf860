/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A thread exits (sched_process_exit): what it leaves behind on its kernel
 * stack is forgotten, and in count-only and sampled modes the exit or
 * exit_group call it leaves through, which never reaches sys_exit, is
 * counted (count_current(), which exec.bpf.h uses too).
 *
 * Uses the settings want_cache_on, flight_on, thread_totals, progs
 * (settings.bpf.h).
 */
#ifndef SCPROF_EXIT_BPF_H
#define SCPROF_EXIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "filter.bpf.h"
#include "record.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"
#include "tslots.bpf.h"

/* A task exits: its stack may go to a target next. Forget it in the
 * non-target cache, and free a flight slot it left taken (a call that
 * never returned: the task was killed in it).
 */
static __always_inline void stack_forget(struct task_struct *p)
{
	struct pt_regs *regs;

	if (!settings.want_cache_on && !settings.flight_on &&
	    !settings.thread_totals)
		return;
	regs = (struct pt_regs *)task_regs_addr(p);
	want_forget(regs);
	flight_forget(regs);
	tslot_forget(regs);
}

/*
 * Count-only and sampled modes: count the call the current thread p is
 * in (c, fl: current_call()'s) off sys_exit, as one that returns 0,
 * untimed: in its cell, and in sampled mode in the thread's totals.
 */
static __always_inline void count_current(struct task_struct *p,
					  const struct ended_call *c, __u8 fl)
{
	if (!record_current(p, c, fl) || settings.progs != SC_PROGS_SAMPLED)
		return;
	thread_count(p, (struct pt_regs *)task_regs_addr(p), 0, SCR_TASK_EXIT,
		     fl, c, 0, false, true);
}

/*
 * Count-only and sampled modes: a thread leaving through exit or
 * exit_group never reaches sys_exit, so it is counted here: the syscall it
 * is in is still in its registers, and a thread killed by a signal has
 * the signal in the low bits of its exit code (one leaving through
 * exit_group has 0 there).
 */
static __always_inline void count_noreturn(struct task_struct *p)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	__u8 fl;

	/* p is the current thread, leaving by itself (no signal) */
	if ((p->exit_code & 0x7f) || !current_call(p, &c, &fl) ||
	    !(fl & SC_NR_NORETURN))
		return;
	count_current(p, &c, fl);
}

#endif /* SCPROF_EXIT_BPF_H */

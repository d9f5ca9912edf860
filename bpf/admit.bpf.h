/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The prologue of every syscall program: is the current call one to
 * record? One function, so that every program filters alike.
 *
 * Uses the settings scprof.bpf.c defines before it includes this file:
 * filter_mode, flight_on (through the helpers of filter.bpf.h,
 * trace_filter.bpf.h and stamp.bpf.h).
 */
#ifndef SCPROF_ADMIT_BPF_H
#define SCPROF_ADMIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "filter.bpf.h"
#include "stamp.bpf.h"
#include "trace_filter.bpf.h"

/*
 * The verdict on the call with number id, from the cheapest test up: the
 * thread (-p TID) and -e's set; the non-target cache, whose hit needs no
 * helper call; at full mode's exit (ended not NULL), the call's stamp in
 * flights[], which carries its entry's verdict and is taken into *ended;
 * then the task filter. A task found not to be a target is remembered in
 * the cache.
 *
 * *task is the current task once fetched, NULL when the stamp decided (the
 * caller fetches it only if it needs it).
 */
static __always_inline enum want admit(struct pt_regs *regs, long id,
				       bool at_exit, struct ended_call *ended,
				       struct task_struct **task)
{
	__u32 slot = 0;
	enum want w;

	*task = NULL;
	if (!KERN_TASK_REGS && !regs_offset)
		regs_learn(regs, addr_of(regs, at_exit ? SCR_EXIT : SCR_ENTER));
	if (!thread_ok() || !trace_wanted(id, at_exit))
		return WANT_NO;
	if (nt_known(regs, &slot))
		return WANT_NO;
	if (ended && flight_on && flight_exit(regs, ended))
		return ended->w;
	*task = current_task();
	/* At full mode's exit only the pid filter is cheap enough to
	 * repeat: otherwise a call is recorded at exit when its entry was,
	 * which its stamp in task storage says.
	 */
	if (ended && filter_mode != SC_FILTER_TGID)
		return WANT_YES;
	w = wanted(*task);
	if (w == WANT_NO)
		nt_remember(regs, slot);
	return w;
}

#endif /* SCPROF_ADMIT_BPF_H */

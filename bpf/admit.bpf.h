/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The prologue of every syscall program: is the current call one to
 * record? One function, so that every program filters alike.
 *
 * Uses the settings filter_mode, flight_on (settings.bpf.h), and the
 * helpers of filter.bpf.h, trace_filter.bpf.h and stamp.bpf.h.
 */
#ifndef SCPROF_ADMIT_BPF_H
#define SCPROF_ADMIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "filter.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "task.bpf.h"
#include "trace_filter.bpf.h"

/*
 * The verdict on the call with number id, from the cheapest test up: the
 * thread (-p TID) and -e's set; the verdict cache, whose hit needs no
 * helper call; at full mode's exit (ended not NULL), the call's stamp in
 * flights[], which carries its entry's verdict and is taken into *ended
 * (so there a cached target goes on to it); then the task filter, whose
 * verdict is remembered in the cache.
 *
 * *task is the current task once fetched, NULL when it was not (the cache
 * or the stamp decided first: the caller fetches it only if it needs it).
 * *addr is regs as a number when the cache gave it, else 0 (regs_addr()).
 * *slot is this CPU's slot of the verdict cache, if it is on (and the
 * verdict is not WANT_NO).
 */
static __always_inline enum want
admit_at(struct pt_regs *regs, long id, bool at_exit, struct ended_call *ended,
	 struct task_struct **task, __u64 *addr, __u32 *slot)
{
	enum want w;

	*task = NULL;
	*addr = 0;
	*slot = 0;
	if (!KERN_TASK_REGS && !regs_offset)
		regs_learn(regs, addr_of(regs, at_exit ? SCR_EXIT : SCR_ENTER));
	if (!thread_ok() || !trace_wanted(regs, id, at_exit, task))
		return WANT_NO;
	if (want_cached(regs, slot, &w, addr) && (w == WANT_NO || !ended))
		return w;
	if (ended && settings.flight_on && flight_exit(regs, *addr, ended)) {
		*task = NULL; /* (-e's test may have fetched it) */
		return ended->w;
	}
	if (!*task)
		*task = current_task();
	/* At full mode's exit only the pid filter is cheap enough to
	 * repeat: otherwise a call is recorded at exit when its entry was,
	 * which its stamp in task storage says.
	 */
	if (ended && settings.filter_mode != SC_FILTER_TGID)
		return WANT_YES;
	w = wanted(*task);
	want_remember(regs, *slot, w);
	return w;
}

static __always_inline enum want admit(struct pt_regs *regs, long id,
				       bool at_exit, struct ended_call *ended,
				       struct task_struct **task, __u64 *addr)
{
	__u32 slot;

	return admit_at(regs, id, at_exit, ended, task, addr, &slot);
}

#endif /* SCPROF_ADMIT_BPF_H */

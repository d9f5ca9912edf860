/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * strace's -e trace=SET and -z/-Z: which calls are counted at all. The set
 * is a bitmap by ABI and syscall number in rodata, tested before anything
 * else, so a call left out costs a load (and the task, for a call the
 * registers do not say the ABI of: call_nr_abi()); the return
 * status filter is one comparison before a call is recorded. Without -e,
 * -z or -Z the settings are false and every test folds to nothing.
 *
 * -p TID of a thread (only_tid) is tested with them: one thread's calls.
 *
 * Uses the settings trace_on, trace_beyond, status_filter, only_tid and
 * the tables trace_bits, trace_exit_bits (settings.bpf.h).
 */
#ifndef SCPROF_TRACE_FILTER_BPF_H
#define SCPROF_TRACE_FILTER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "settings.bpf.h"
#include "syscall.bpf.h"

static __always_inline bool trace_bit(bool at_exit, __u32 nr, __u32 abi)
{
	__u32 w = (nr / 32) & (SC_TRACE_WORDS - 1);

	if (nr >= SC_NR_MAX)
		return settings.trace_beyond;
	if (abi >= SC_ABI_COUNT)
		return false;
	/* As in flags_of(): keep the bound in the verifier's view. */
	barrier_var(abi);
	abi &= 3;
	if (abi >= SC_ABI_COUNT)
		return false;
	if (at_exit)
		return trace_exit_bits[abi][w] & (1U << (nr % 32));
	return trace_bits[abi][w] & (1U << (nr % 32));
}

/* Is the call numbered id, made by the current task (whose saved
 * registers are regs), in the set? *task: the current task if it had to be
 * fetched (call_nr_abi()), else left as it was.
 */
static __always_inline bool trace_wanted(const struct pt_regs *regs, long id,
					 bool at_exit,
					 struct task_struct **task)
{
	__u32 nr, abi;

	if (!settings.trace_on)
		return true;
	/* rt_sigreturn leaves with orig_ax -1 (no restart): let its exit
	 * through, its stamp decides
	 */
	if (id < 0)
		return at_exit;
	call_nr_abi(regs, task, id, &nr, &abi);
	return trace_bit(at_exit, nr, abi);
}

/* -p TID of a thread: is the current task that thread? */
static __always_inline bool thread_ok(void)
{
	return !settings.only_tid ||
	       (__u32)bpf_get_current_pid_tgid() == settings.only_tid;
}

/* A call known by number and ABI is in the set. */
static __always_inline bool trace_ok(__u32 nr, __u32 abi)
{
	return !settings.trace_on || trace_bit(false, nr, abi);
}

/* -z: successful calls only; -Z: failed ones only. */
static __always_inline bool status_ok(long ret)
{
	if (settings.status_filter == SC_STATUS_ALL)
		return true;
	return is_error(ret) == (settings.status_filter == SC_STATUS_FAILED);
}

#endif /* SCPROF_TRACE_FILTER_BPF_H */

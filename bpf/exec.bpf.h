/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Count-only and sampled modes: file an exec under the ABI and number it
 * was called with.
 *
 * sys_exit reads the call's number and ABI from the thread's registers and
 * status, but a successful exec rewrites both for the new program: loading
 * a 32-bit program sets TS_COMPAT and orig_ax = the i386 execve, a 64-bit
 * one clears TS_COMPAT and sets orig_ax = the 64-bit execve (x86's
 * set_personality_ia32() and set_personality_64bit()). A 64-bit shell's
 * execve of a 32-bit program would otherwise be counted as a 32-bit
 * execve, and any execveat as an execve. Full mode is not affected: it
 * takes both at sys_enter.
 *
 * Every exec renames the thread (task_rename, from begin_new_exec) after
 * its point of no return and before the new program is loaded, while the
 * registers still hold the call as made. Count-only mode counts the exec
 * there, and its sys_exit leaves out an exec that returns 0: an exec block
 * on that program's path (the task fetched, task storage read and
 * deleted), though rarely taken, cost every call of a getppid or write
 * loop about 19 ns outside the program's own run time (docs/overhead.md).
 * Sampled mode, which may time the exec, keeps the call in task storage
 * there for the exec's own sys_exit, which takes it back. An exec that
 * fails earlier never gets there and changed nothing. Other renames
 * (prctl, /proc/PID/comm) are not exec calls and keep nothing.
 *
 * Uses the settings and map scprof.bpf.c defines before it includes this
 * file: progs, exec_calls (and record()'s).
 */
#ifndef SCPROF_EXEC_BPF_H
#define SCPROF_EXEC_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "record.bpf.h"
#include "filter.bpf.h"
#include "syscall.bpf.h"
#include "task.bpf.h"

/* task_rename: keep the exec call the renamed thread is in, if it is one
 * (the thread renamed is the current one when it execs).
 */
static __always_inline void exec_called(struct task_struct *p)
{
	static const struct sc_exec_call zero = {};
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct sc_exec_call *e;
	__u8 fl;

	if (!current_call(p, &c, &fl) || !(fl & SC_NR_EXEC))
		return;
	/* Count-only: the exec is counted here, as made; its sys_exit, a
	 * success, is left out there (sc_count_exit), so that program has
	 * no exec fix-up on its path.
	 */
	if (progs == SC_PROGS_COUNT_ONLY) {
		record_current(p, &c, fl);
		return;
	}
	e = thread_state(&exec_calls, p, &zero, true);
	if (!e)
		return;
	e->nr = c.nr;
	e->abi = c.abi;
}

/* sys_exit of an exec: the call as it was made, if it got that far. */
static __always_inline void exec_as_called(struct task_struct *task, __u32 *nr,
					   __u32 *abi)
{
	struct sc_exec_call *e = thread_state(&exec_calls, task, NULL, false);

	if (!e)
		return;
	*nr = e->nr;
	*abi = e->abi;
	thread_state_delete(&exec_calls, task, false);
}

#endif /* SCPROF_EXEC_BPF_H */

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
 * registers still hold the call as made. Both modes count the exec there,
 * and their sys_exit programs leave out an exec that returns 0. Sampled
 * mode's sys_exit adds the latency of such an exec, when it timed it,
 * under the call its sys_enter stamped (the call as made), and counts
 * nothing. An exec fix-up at sys_exit instead (the task fetched, the call
 * kept in task storage at rename, read and deleted there), though rarely
 * taken, cost every call of a getppid or write loop about 19 ns outside
 * the program's own run time, in both modes (docs/overhead.md). An exec
 * that fails earlier never gets to the rename and changed nothing: its
 * sys_exit counts it. Other renames (prctl, /proc/PID/comm) are not exec
 * calls and count nothing.
 *
 * Uses the setting progs (settings.bpf.h), and record()'s.
 */
#ifndef SCPROF_EXEC_BPF_H
#define SCPROF_EXEC_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "exit.bpf.h"
#include "record.bpf.h"
#include "settings.bpf.h"

/* task_rename: count the exec call the renamed thread is in, if it is one
 * (the thread renamed is the current one when it execs).
 */
static __always_inline void exec_called(struct task_struct *p)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	__u8 fl;

	if (!current_call(p, &c, &fl) || !(fl & SC_NR_EXEC))
		return;
	count_current(p, &c, fl);
}

#endif /* SCPROF_EXEC_BPF_H */

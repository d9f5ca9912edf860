/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a call is: its number and ABI, its flags (I/O, no return, fork) and
 * what its return value says.
 *
 * Uses the setting nr_flags, which scprof.bpf.c defines before it includes
 * this file.
 */
#ifndef SCPROF_SYSCALL_BPF_H
#define SCPROF_SYSCALL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "task.bpf.h"

#define X86_TS_COMPAT 0x0002 /* arch/x86/include/asm/thread_info.h */
/* A 32-bit (arm EABI) task: arch/arm64/include/asm/thread_info.h's
 * TIF_32BIT, bit 22 since arm64 began.
 */
#define ARM64_TIF_32BIT (1UL << 22)

static __always_inline __u8 flags_of(__u32 nr, __u32 abi)
{
	if (nr >= SC_NR_MAX || abi >= SC_ABI_COUNT)
		return 0;
	/* The masks only prove the bounds to the verifier, which can lose
	 * the check above when clang merges paths: Linux 6.1's does lose
	 * abi's, checked in one copy and read from a stack slot that does
	 * not know it (sc_sampled_exit failed to load there).
	 */
	barrier_var(nr);
	barrier_var(abi);
	abi &= 3;
	if (abi >= SC_ABI_COUNT)
		return 0;
	return nr_flags[abi][nr & (SC_NR_MAX - 1)];
}

static __always_inline bool is_error(long ret)
{
	return ret < 0 && ret >= -4095;
}

static __always_inline bool is_interrupted(long ret)
{
	return ret <= -512 && ret >= -516; /* ERESTART* */
}

/* The syscall number and ABI of the call the task is in. */
static __always_inline void nr_abi_of(struct task_struct *task, long id,
				      __u32 *nr, __u32 *abi)
{
	*nr = (__u32)id;
	*abi = SC_ABI_NATIVE;
#if defined(__TARGET_ARCH_x86)
	if (task_ti_status(task) & X86_TS_COMPAT) {
		*abi = SC_ABI_COMPAT;
	} else if (*nr & SC_X32_SYSCALL_BIT) {
		*abi = SC_ABI_X32;
		*nr &= ~SC_X32_SYSCALL_BIT;
	}
#elif defined(__TARGET_ARCH_arm64)
	/* compat: numbered in arm's table, which scprof has no names for */
	if (task_ti_flags(task) & ARM64_TIF_32BIT)
		*abi = SC_ABI_COMPAT;
#endif
}

/*
 * At sys_exit, from the registers: the call that ends, when they still say
 * which. rt_sigreturn (and i386's sigreturn) restores the registers of the
 * interrupted code and leaves the number -1 (so that nothing restarts):
 * that exit is the sigreturn of the task's ABI (sigreturn_nr, set by
 * userspace; i386's sigreturn and rt_sigreturn cannot be told apart then
 * and are both filed as rt_sigreturn, x32's as the native one). False:
 * not a call to count.
 */
static __always_inline bool exit_nr_abi(struct task_struct *task, long id,
					__u32 *nr, __u32 *abi)
{
	if (id >= 0) {
		nr_abi_of(task, id, nr, abi);
		return true;
	}
	if (id != -1)
		return false;
	*abi = SC_ABI_NATIVE;
#if defined(__TARGET_ARCH_x86)
	if (task_ti_status(task) & X86_TS_COMPAT)
		*abi = SC_ABI_COMPAT;
#elif defined(__TARGET_ARCH_arm64)
	if (task_ti_flags(task) & ARM64_TIF_32BIT)
		*abi = SC_ABI_COMPAT;
#endif
	*nr = *abi == SC_ABI_COMPAT ? sigreturn_nr[SC_ABI_COMPAT] :
				      sigreturn_nr[SC_ABI_NATIVE];
	return *nr < SC_NR_MAX;
}

/* The syscall number a task is in, from its saved registers. */
static __always_inline long syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return (long)regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return (long)regs->syscallno;
#else
#error "scprof: syscall number register unknown for this architecture"
#endif
}

/* The call a task is in now, from its saved registers (a task asleep, or
 * the current one in a tracepoint other than raw_syscalls): false when it
 * is in none (or the kernel lacks bpf_task_pt_regs).
 */
static __always_inline bool task_syscall(struct task_struct *task, __u32 *nr,
					 __u32 *abi)
{
	long id = task_syscall_id(task);

	if (id < 0)
		return false;
	nr_abi_of(task, id, nr, abi);
	return true;
}

#endif /* SCPROF_SYSCALL_BPF_H */

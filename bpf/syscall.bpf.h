/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a call is: its number and ABI, its flags (I/O, no return, fork) and
 * what its return value says.
 *
 * Uses the settings' tables nr_flags and sigreturn_nr (settings.bpf.h).
 */
#ifndef SCPROF_SYSCALL_BPF_H
#define SCPROF_SYSCALL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "settings.bpf.h"
#include "task.bpf.h"

#define X86_TS_COMPAT 0x0002 /* arch/x86/include/asm/thread_info.h */
/* A 32-bit (arm EABI) task: arch/arm64/include/asm/thread_info.h's
 * TIF_32BIT, bit 22 since arm64 began.
 */
#define ARM64_TIF_32BIT (1UL << 22)
/* x86's __USER_CS (arch/x86/include/asm/segment.h), arm64's PSR_MODE32_BIT
 * (arch/arm64/include/uapi/asm/ptrace.h): ABI, they never change.
 */
#define X86_USER_CS 0x33
#define ARM64_PSR_MODE32 0x10

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

/* A call not made in compat mode: native, or x32 by its number's bit. */
static __always_inline void nr_abi_64(long id, __u32 *nr, __u32 *abi)
{
	*nr = (__u32)id;
	*abi = SC_ABI_NATIVE;
#if defined(__TARGET_ARCH_x86)
	if (*nr & SC_X32_SYSCALL_BIT) {
		*abi = SC_ABI_X32;
		*nr &= ~SC_X32_SYSCALL_BIT;
	}
#endif
}

/* The syscall number and ABI of the call the task is in. */
static __always_inline void nr_abi_of(struct task_struct *task, long id,
				      __u32 *nr, __u32 *abi)
{
	nr_abi_64(id, nr, abi);
#if defined(__TARGET_ARCH_x86)
	if (task_ti_status(task) & X86_TS_COMPAT) {
		*nr = (__u32)id;
		*abi = SC_ABI_COMPAT;
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

/*
 * The registers say a call is native without the task, for the common
 * case: on x86, a call made by the 64-bit syscall instruction, which
 * leaves the 64-bit code segment and its return address and flags in rcx
 * and r11 (32-bit tasks have their own segment; an int 0x80 from 64-bit
 * code, the one compat call with the 64-bit segment, has the caller's rcx
 * and r11, and so does a call that rewrote the registers, such as execve:
 * those ask the task; a program that sets ecx to its int 0x80's return
 * address and r11 to its flags has that call filed as a 64-bit one); on
 * arm64, a task in AArch64 state. False: ask the task.
 */
static __always_inline bool regs_native(const struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->cs == X86_USER_CS && regs->cx == regs->ip &&
	       regs->r11 == regs->flags;
#elif defined(__TARGET_ARCH_arm64)
	return !(regs->pstate & ARM64_PSR_MODE32);
#else
	return false;
#endif
}

/* nr_abi_of() from the registers when they tell, else from the task,
 * which is fetched into *task if it was not yet.
 */
static __always_inline void call_nr_abi(const struct pt_regs *regs,
					struct task_struct **task, long id,
					__u32 *nr, __u32 *abi)
{
	if (regs_native(regs)) {
		nr_abi_64(id, nr, abi);
		return;
	}
	if (!*task)
		*task = current_task();
	nr_abi_of(*task, id, nr, abi);
}

/* exit_nr_abi() the same way. */
static __always_inline bool call_exit_nr_abi(const struct pt_regs *regs,
					     struct task_struct **task, long id,
					     __u32 *nr, __u32 *abi)
{
	if (id >= 0) {
		call_nr_abi(regs, task, id, nr, abi);
		return true;
	}
	if (!*task)
		*task = current_task();
	return exit_nr_abi(*task, id, nr, abi);
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The settings: everything userspace writes before load, in .rodata (frozen
 * at load, so the verifier knows it and removes what it turns off). The
 * knobs are one struct, struct sc_settings (include/sc_settings.h), filled
 * by user/collect/settings.c; beside it the tables, too large for the two
 * cache lines the struct keeps to: the flags of each syscall number, the
 * sigreturn of each ABI and -e trace=SET's bitmaps.
 *
 * The running kernel's facilities (task.bpf.h): the programs are built
 * twice, for kernels that have them all, where the code never asks (KERN_*
 * are true), and with -DSCPROF_LEGACY for kernels that lack one, where it
 * asks the settings, set from userspace's probes. Both builds have the
 * settings, so that their global data is laid out alike
 * (bpf/same_layout.sh).
 */
#ifndef SCPROF_SETTINGS_BPF_H
#define SCPROF_SETTINGS_BPF_H

#include "vmlinux.h"

#include "scprof.h"
#include "sc_settings.h"

/*
 * A cache line's alignment: for the settings, and for the tables of slots
 * of a line (or half of one), so each starts on a line: else every slot
 * spans two (the global data sections are page-aligned in the kernel,
 * their variables only as they ask).
 */
#define SC_LINE_ALIGNED __attribute__((aligned(64)))

/* Every field written by userspace before load. */
const volatile struct sc_settings settings SC_LINE_ALIGNED = {};

/* Each syscall's enum sc_nr_flags, by ABI and number (syscall.bpf.h). */
const volatile __u8 nr_flags[SC_ABI_COUNT][SC_NR_MAX] = {};
/* rt_sigreturn's number by ABI (SC_NR_MAX: none), for exits that left the
 * number -1 (syscall.bpf.h).
 */
const volatile __u32 sigreturn_nr[SC_ABI_COUNT] = {};
/* -e trace=SET: the calls counted, by ABI and number, at entry and (a
 * superset) at exit (trace_filter.bpf.h).
 */
const volatile __u32 trace_bits[SC_ABI_COUNT][SC_TRACE_WORDS] = {};
const volatile __u32 trace_exit_bits[SC_ABI_COUNT][SC_TRACE_WORDS] = {};

#ifdef SCPROF_LEGACY
#define KERN_TASK_BTF settings.kern_task_btf
#define KERN_TASK_STORAGE settings.kern_task_storage
#define KERN_TASK_REGS settings.kern_task_regs
#else
#define KERN_TASK_BTF true
#define KERN_TASK_STORAGE true
#define KERN_TASK_REGS true
#endif

#endif /* SCPROF_SETTINGS_BPF_H */

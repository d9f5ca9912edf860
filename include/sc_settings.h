/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF programs' settings: every knob userspace sets before load, in
 * one struct. The BPF side has one `const volatile struct sc_settings
 * settings` in .rodata (bpf/settings.bpf.h); userspace fills one from the
 * plan's options, the kernel's facilities and the machine in one function
 * (user/collect/settings.c) and copies it to the skeleton once.
 *
 * .rodata is frozen at load: the verifier knows every field and removes
 * the code of the branches a setting turns off. The loads stay, so each
 * call reads the cache lines the settings are in: the struct is kept
 * within two (checked below; the BPF variable is aligned to a line).
 * Fixed-width types only, so that both sides lay it out alike: enums as
 * __u32, flags as __u8 (0 or 1).
 */
#ifndef SC_SETTINGS_H
#define SC_SETTINGS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Two cache lines: what every call of every task reads of the settings. */
#define SC_SETTINGS_MAX_SIZE 128

struct sc_settings {
	/* --cgroup: the target cgroup's id (its directory's inode number),
	 * for the in-flight iterator, which cannot use the current-task
	 * cgroup test (inflight.bpf.h)
	 */
	__u64 target_cgid;
	/* the split: a sample stands for this long at most; 0: no samples
	 * (split.bpf.h)
	 */
	__u64 split_sample_ns;
	/* --stacks-by time or blocked: one sample per this much time in
	 * calls (or blocked); 0: by count (stacks.bpf.h)
	 */
	__u64 stack_budget_ns;
	/* --slow: calls this long or longer are sent; 0: off (slow.bpf.h) */
	__u64 slow_ns;

	/* Whom (filter.bpf.h, trace_filter.bpf.h). */
	__u32 filter_mode;   /* enum sc_filter_mode */
	__u32 self_tgid;     /* scprof itself, never recorded */
	__u32 only_tid;	     /* -p TID of a thread: its calls only; 0: all */
	__u32 status_filter; /* -z/-Z: enum sc_status_filter */
	/* How: the collection mode (enum sc_progs, enum sc_cells), and what
	 * a process key stands for (--by: enum sc_key_kind, proc.bpf.h)
	 */
	__u32 progs;
	__u32 cells;
	__u32 key_kind;
	/* slots of the verdict cache in use: one per CPU, at most
	 * SC_WANT_SLOTS (filter.bpf.h)
	 */
	__u32 want_slots;
	/* read_cgid: the slots of cgtags, a power of two (cgtag.bpf.h) */
	__u32 cgtag_slots;
	/* --stacks: one call in stack_period sampled (or one sample per
	 * stack_period µs, by time or blocked); 0: off (stacks.bpf.h)
	 */
	__u32 stack_period;
	/* Tests only (SCPROF_TEST_MAP_FAIL=MAP:ERRNO): every update of map
	 * inject_map (enum sc_map; SC_MAP_COUNT: none) fails with
	 * inject_errno, as no kernel makes it fail at will (maps.bpf.h).
	 */
	__u32 inject_map;
	__s32 inject_errno;

	/*
	 * The running kernel's facilities (task.bpf.h), read by the legacy
	 * build only (-DSCPROF_LEGACY): the default build is for kernels
	 * that have them all, and has them constant.
	 */
	__u8 kern_task_btf;
	__u8 kern_task_storage;
	__u8 kern_task_regs;
	/* -f: forks of a target are targets (SC_FILTER_TGID) */
	__u8 follow_forks;
	/* The fast paths (kernels with bpf_task_pt_regs and compare-and-
	 * swap): the verdict cache (filter.bpf.h), and full mode's stamps in
	 * flights[] (stamp.bpf.h).
	 */
	__u8 want_cache_on;
	__u8 flight_on;
	/* --fd-types: cells of calls on an fd split by its kind (full mode,
	 * fdkind.bpf.h)
	 */
	__u8 fd_types;
	/* per-thread totals beside the per-syscall cells (tslots.bpf.h) */
	__u8 thread_totals;
	/* the split of calls' time (split.bpf.h); split_runq_timed: the
	 * kernel keeps no run-queue delay per task, so waits for a CPU are
	 * timed at each switch in; sleep_on (--slow, --stacks-by blocked,
	 * with the split): each call keeps its longest sleep
	 */
	__u8 split_on;
	__u8 split_runq_timed;
	__u8 sleep_on;
	/* -e trace=SET: the set's bitmaps are in use; trace_beyond: numbers
	 * past SC_NR_MAX are in the set (trace_filter.bpf.h)
	 */
	__u8 trace_on;
	__u8 trace_beyond;
	/* --by cgroup and the like: a thread's cgroup is read and tagged
	 * (cgtag.bpf.h); cgtag_exact: every thread id has its own slot
	 */
	__u8 read_cgid;
	__u8 cgtag_exact;
	/* --stacks-by time (at exit, by time in calls) or blocked (the
	 * same by blocked time, the kernel stack of where it slept on top)
	 */
	__u8 stack_by_time;
	__u8 stack_by_blocked;
	__u8 pad[7];
};

_Static_assert(sizeof(struct sc_settings) <= SC_SETTINGS_MAX_SIZE,
	       "the BPF settings fit in two cache lines");

#endif /* SC_SETTINGS_H */

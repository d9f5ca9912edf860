/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the running kernel offers the BPF programs (features.c): probed
 * once, each facility named in `scprof features`, and the programs chosen
 * and made loadable for it.
 */
#ifndef SCPROF_COLLECT_FACILITIES_H
#define SCPROF_COLLECT_FACILITIES_H

#include <stdbool.h>

#include "collect/opts.h"
#include "model/facility.h"

struct scprof_bpf;

/* What the running kernel offers that the programs adapt to (task.bpf.h). */
struct kernel_facilities {
	bool task_btf;	   /* bpf_get_current_task_btf (5.11) */
	bool task_storage; /* task local storage in tracing programs (5.11) */
	bool task_regs;	   /* bpf_task_pt_regs (5.15) */
	bool cmpxchg;	   /* BPF_ATOMIC compare-and-swap (5.12) */
	/* tail calls from programs with subprograms (x86-64 5.10, arm64
	 * 6.0): not needed by the default build, used where present
	 */
	bool tail_calls;
	/* each task's run-queue delay, kept by the scheduler (sched_info:
	 * /proc/PID/schedstat): the split's waits for a CPU, read at a
	 * call's ends instead of timed at each switch in
	 */
	bool run_delay;
};

/* Probe them: helpers and map types, with libbpf's probes; those named
 * in SCPROF_WITHOUT count as missing.
 */
void kernel_facilities_probe(struct kernel_facilities *k);
/* Has the kernel every one (the default BPF build runs)? */
bool kernel_facilities_all(const struct kernel_facilities *k);
/* The reasons BPF tracing cannot work here, each said in one line. */
int collector_preflight(void);
/* Before load: choose the programs that load, and make them loadable on
 * this kernel (per-thread maps without task storage, no compare-and-swap
 * before it). 0 or -errno.
 */
int collector_choose_progs(struct scprof_bpf *skel,
			   const struct collector_opts *o,
			   const struct kernel_facilities *k);

/* The kernel facilities the programs adapt to, probed here (also without
 * privileges: a probe that cannot load says "no"). 0.
 */
int collector__facilities(struct sc_facilities *out);

#endif

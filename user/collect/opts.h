/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What to collect (struct collector_opts), decided once by the plan, and
 * the questions asked of it in more than one place.
 */
#ifndef SCPROF_COLLECT_OPTS_H
#define SCPROF_COLLECT_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/model.h"
#include "model/stacks.h"
#include "model/trace_set.h"

/* What happens to the figures of a process once it has exited. */
enum collector_fold {
	COLLECTOR_FOLD_PROCS = 0, /* keep each exited process (default), up
				   * to max_exited; later ones are merged
				   * into the aggregate below
				   */
	COLLECTOR_FOLD_TOTAL,	  /* merge them all into one aggregate process
				   * (pid 0, start 0, empty comm): memory stays
				   * bounded however many processes come and go
				   */
};

/*
 * What to collect, decided once by the plan (user/cmd/plan.c) and read,
 * never re-derived, by everything that sets up, drains and folds the maps.
 */
struct collector_opts {
	/* Whom. */
	enum sc_filter_mode mode;
	const char *cgroup_path; /* SC_FILTER_CGROUP: a cgroup v2 directory */
	bool follow;		 /* SC_FILTER_TGID: add children on fork */
	pid_t only_tid; /* -p TID of a thread: its calls only; 0: none */
	const struct trace_set *trace; /* -e trace=SET; NULL: every call */
	enum sc_status_filter status;  /* -z / -Z */
	/* How: the programs that run, and where a call's cell lives. With
	 * SC_CELLS_ONE_TARGET, exactly one target is added.
	 */
	enum sc_progs progs;
	enum sc_cells cells;
	/* What else is kept. */
	bool fd_types;	    /* SC_PROGS_FULL: split calls on an fd by kind */
	bool in_flight;	    /* SC_PROGS_FULL: snapshots add the calls still
			     * in flight (kernels with bpf_task_pt_regs)
			     */
	bool thread_totals; /* each process's totals over its syscalls,
			     * kept per thread (collector__proc_totals)
			     */
	/* --by: what a process entry stands for (a thread with --by tid),
	 * and whether each one's cgroup is read (cgroup, unit, container)
	 */
	enum sc_key_kind key_kind;
	bool read_cgid;
	/* --stacks: sample the user stack of one call in stack_period (0:
	 * off); snapshots carry the stacks (model->stacks)
	 */
	uint32_t stack_period;
	/* --stacks-by: count (one call in stack_period), time (one sample
	 * per stack_period µs of time in calls, full mode, at exit) or
	 * blocked (the same by the calls' blocked time, the kernel stack of
	 * where each slept on top: needs the split)
	 */
	enum sc_stack_weighting stack_by;
	/* The stacks are sampled only when asked (collector__stacks_sample)
	 * and handed over by collector__stacks_take, not in snapshots: the
	 * daemon's profile endpoint. The programs are loaded with them.
	 */
	bool stacks_on_demand;
	/* Each sampled process's cgroup read when its first sample is
	 * unwound, and its stacks kept apart by it (sc_stack.cgroup): the
	 * daemon's profile, labelled as its --labels
	 */
	bool stack_cgroups;
	bool raw_symbols; /* --no-demangle: C++ and Rust names as mangled */
	/* Full and sampled modes: each timed call's time split into on a
	 * CPU, waiting for one, blocked and I/O wait (include/sc_split.h),
	 * and the CPU quota throttling of the first target's cgroup (or
	 * cgroup_path's); with split_samples, samples of where it slept,
	 * who woke it, what ran instead too (model->why), named by a thread
	 * of their own
	 */
	bool split;
	bool split_samples;
	/* --slow: calls that take this long or longer are reported, one by
	 * one (collector__slow_take); 0: off. Full and sampled modes (there,
	 * the calls timed in latency windows).
	 */
	uint64_t slow_ns;
	/* The thread that unwinds stacks (--stacks, --slow) keeps only the
	 * capabilities reading other processes' mappings and binaries needs
	 * (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH), from its start: for a
	 * command that drops its own (the daemon).
	 */
	bool drain_few_caps;
	/* Sizes, and what becomes of exited processes. */
	uint32_t max_stats; /* stats map entries, 0: default */
	uint32_t max_procs; /* procs map entries, 0: default */
	enum collector_fold fold;
	uint32_t max_exited; /* FOLD_PROCS: exited processes kept one by
			      * one, 0: default
			      */
};

/* Are the arrays by syscall number in use (SC_CELLS_ONE_TARGET or
 * SC_CELLS_AGGREGATE)?
 */
static inline bool collector_uses_arrays(const struct collector_opts *o)
{
	return o->cells != SC_CELLS_PER_PROCESS;
}

/* Does each call in flight keep its longest sleep (where it slept, who
 * woke it): for --slow's calls or --stacks-by blocked's samples, with the
 * split? (the setting sleep_on, and sc_waking_sleep for sc_waking)
 */
static inline bool collector_keeps_sleeps(const struct collector_opts *o)
{
	return o->split && o->progs != SC_PROGS_COUNT_ONLY &&
	       (o->slow_ns ||
		(o->stack_period && o->stack_by == SC_STACKS_BY_BLOCKED));
}

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "cmd/plan.h"
#include "model/group.h"
#include "sc_stack.h"

/* --count-only: no time columns; by default calls, errors, name by calls. */
static void count_only_report(const struct profile_opts *o,
			      struct report_opts *ro)
{
	static const enum report_col cols[] = { COL_CALLS, COL_ERRORS, COL_NAME,
						COL_NONE };

	if (!o->sort_given)
		ro->sort = COL_CALLS;
	if (!o->cols_given) {
		memset(ro->cols, 0, sizeof(ro->cols));
		memcpy(ro->cols, cols, sizeof(cols));
	}
}

/* -i without -U: strace's columns with calls/s after calls. */
static void add_rate_column(struct report_opts *ro)
{
	size_t n = 0;

	while (n < COL_COUNT && ro->cols[n] != COL_NONE)
		n++;
	if (n + 1 >= COL_COUNT)
		return;
	for (size_t i = 0; i < n; i++) {
		if (ro->cols[i] != COL_CALLS)
			continue;
		memmove(&ro->cols[i + 2], &ro->cols[i + 1],
			(n - i - 1) * sizeof(ro->cols[0]));
		ro->cols[i + 1] = COL_RATE;
		return;
	}
}

void profile_plan(const struct profile_opts *o,
		  const struct target_found *found, struct collector_opts *co,
		  struct report_opts *ro)
{
	const struct report_opts *asked = &o->report;
	/* Each process's cells, and the exited ones one by one, are only
	 * printed by -P, --by, JSON and CSV: otherwise every target's calls
	 * are summed per syscall as they come, and the exited merged as
	 * they go, so long runs stay small.
	 */
	bool rows = asked->per_process || asked->by.n ||
		    asked->format != REPORT_TABLE;

	memset(co, 0, sizeof(*co));
	target_collector_opts(&o->target, co);
	co->only_tid = found->only_tid;
	co->trace = o->trace.on ? &o->trace : NULL;
	co->status = o->status;
	co->progs = o->count_only ? SC_PROGS_COUNT_ONLY : SC_PROGS_FULL;
	co->fd_types = o->fd_types && !o->count_only;
	co->in_flight = !o->count_only;
	co->key_kind = group_has(&asked->by, GROUP_TID) ? SC_KEY_THREAD :
							  SC_KEY_PROCESS;
	co->read_cgid = group_needs_cgroups(&asked->by);
	co->stack_period = o->stack_period;
	co->stack_by = o->stack_by;
	co->raw_symbols = o->raw_symbols;
	co->slow_ns = o->count_only ? 0 : o->slow_ns;
	co->split = !o->count_only && !o->no_split;
	co->split_samples = co->split;
	co->max_exited = o->max_exited;
	co->fold = rows ? COLLECTOR_FOLD_PROCS : COLLECTOR_FOLD_TOTAL;
	co->cells = target_cells(&o->target, found->npids, rows, co);

	*ro = *asked;
	if (o->count_only)
		count_only_report(o, ro);
	if (o->interval_s > 0) {
		ro->interval = true;
		if (!o->cols_given)
			add_rate_column(ro);
	}
}

void top_plan(const struct top_opts *o, const struct target_found *found,
	      enum group_key group, struct collector_opts *co)
{
	/* --latency-duty: exact counts, latency in one window a frame */
	bool sampled = o->latency_duty >= 0;

	memset(co, 0, sizeof(*co));
	target_collector_opts(&o->target, co);
	co->progs = sampled ? SC_PROGS_SAMPLED : SC_PROGS_FULL;
	co->in_flight = !sampled;
	co->key_kind = group == GROUP_TID ? SC_KEY_THREAD : SC_KEY_PROCESS;
	co->read_cgid = group_key_needs_cgroup(group);
	/* WAIT% and BLK%: the split of the calls timed (all of them, or
	 * those in the latency windows)
	 */
	co->split = true;
	co->fold = COLLECTOR_FOLD_TOTAL;
	co->cells = target_cells(&o->target, found->npids, true, co);
}

void daemon_plan(const struct daemon_opts *o, const struct target_found *found,
		 struct collector_opts *co)
{
	memset(co, 0, sizeof(*co));
	target_collector_opts(&o->target, co);
	co->progs = SC_PROGS_SAMPLED;
	/* per-name series: per-thread totals, no per-process cells */
	co->thread_totals = o->comm_series != 0;
	co->read_cgid = o->comm_series && group_needs_cgroups(&o->labels);
	/* --slow: the calls timed (every one, at --latency-duty 1); the
	 * thread that unwinds their stacks keeps few capabilities, as the
	 * daemon keeps few itself
	 */
	co->slow_ns = o->slow_ns;
	/* the split of the calls timed, summed (no samples: the metrics
	 * have no place for where calls slept), and the CPU quota
	 * throttling of the first target's cgroup, or --cgroup's
	 */
	co->split = true;
	co->drain_few_caps = true;
	/* --pprof-endpoint: the stacks' programs loaded, sampling one call
	 * in the default period of those the latency windows see, and only
	 * while a profile runs
	 */
	if (o->pprof_endpoint) {
		co->stack_period = SC_STACK_DEFAULT_PERIOD;
		co->stack_by = SC_STACKS_BY_COUNT;
		co->stacks_on_demand = true;
		co->stack_cgroups = group_needs_cgroups(&o->labels);
	}
	co->fold = COLLECTOR_FOLD_TOTAL;
	co->cells = target_cells(&o->target, found->npids, false, co);
}

void verdict_plan(const struct verdict_opts *o, struct collector_opts *co)
{
	memset(co, 0, sizeof(*co));
	co->mode = SC_FILTER_TGID;
	co->progs = SC_PROGS_FULL;
	co->cells = SC_CELLS_ONE_TARGET;
	co->in_flight = true;
	/* fd kinds: closes of sockets are not closes of opened files */
	co->fd_types = true;
	/* each finding names its top call site: where the time in calls
	 * goes (the blocking and latency findings are about time)
	 */
	co->stack_period = o->stack_period;
	co->stack_by = SC_STACKS_BY_TIME;
	co->raw_symbols = o->raw_symbols;
	/* the findings per syscall: on a CPU, waiting for one, blocked;
	 * where they slept, who woke them, what ran instead
	 */
	co->split = true;
	co->split_samples = true;
}

void calibrate_plan(struct collector_opts *co)
{
	memset(co, 0, sizeof(*co));
	co->mode = SC_FILTER_TGID;
	co->progs = SC_PROGS_FULL;
	co->cells = SC_CELLS_ONE_TARGET;
}

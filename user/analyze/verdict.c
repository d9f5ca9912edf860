// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verdict: rows, times and the calibration in; figures and findings out
 * (the rules are verdict_rules.c, on the calls made, and verdict_waits.c,
 * on where their time went).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/verdict.h"
#include "analyze/verdict_rules.h"
#include "analyze/verdict_waits.h"
#include "model/hist.h"

/* Per-row figures; the name carries the ABI when it is not native. */
static void row_figures(const struct verdict_input *in, const struct sc_row *r,
			struct verdict_row *out)
{
	char buf[SC_NAME_LEN];
	const char *name = names_syscall_fmt(r->abi, r->nr, buf, sizeof(buf));
	uint64_t timed = hist_count(r->st.hist), untimed;
	double rt = in->floor_ns;

	snprintf(out->name, sizeof(out->name), "%s%s%s", name,
		 r->abi != SC_ABI_NATIVE ? "/" : "",
		 r->abi != SC_ABI_NATIVE ? names_abi(r->abi) : "");
	if (timed > r->st.calls)
		timed = r->st.calls;
	untimed = r->st.calls - timed;
	if (timed) {
		double rep = (double)row_returned_ns(r) / (double)timed;

		rt = in->floor_ns + rep - in->probe_reported_ns;
		if (rt < in->floor_ns)
			rt = in->floor_ns;
	} else if (r->flight_calls && r->flight_ns > 0) {
		/* only calls in flight: their time so far */
		rt = (double)r->flight_ns / (double)r->flight_calls;
	}
	out->calls = r->st.calls;
	out->ok_calls =
		r->st.calls > r->st.errors ? r->st.calls - r->st.errors : 0;
	out->round_trip_ns = rt;
	/* Calls in flight: their time so far, as measured (they were
	 * not crossing, and have no probe effect to take off yet).
	 */
	out->time_s = ((double)timed * rt + (double)untimed * in->floor_ns +
		       (double)r->flight_ns) /
		      1e9;
	out->in_flight = r->flight_calls;
	out->flight_s = r->flight_ns > 0 ? (double)r->flight_ns / 1e9 : 0;
	out->abi = r->abi;
	out->nr = r->nr;
	out->on_cpu_ns = rt;
	out->on_cpu_s = out->time_s;
	out->fd_type = r->fd_type;
	out->avg_bytes = -1;
	if (names_is_io(name))
		out->avg_bytes = out->ok_calls ? (double)r->st.bytes /
							 (double)out->ok_calls :
						 0;
}

/* Of the row's time asleep, what the samples say waited for a lock. */
static int lock_share(const struct verdict_input *in, const struct sc_row *r,
		      double *share)
{
	uint64_t all = 0, lock = 0;
	size_t n;
	struct sc_why *e;

	*share = 0;
	if (!in->why)
		return 0;
	e = whys_of_row(in->why, r->abi, r->nr, r->fd_type, SC_WHY_SLEPT_IN,
			r->st.blocked_ns, &n);
	if (n == SIZE_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		all += e[i].ns;
		if (e[i].lock)
			lock += e[i].ns;
	}
	free(e);
	*share = all ? (double)lock / (double)all : 0;
	return 0;
}

/* The split of the calls that returned, when it was measured: their
 * parts, and the round trip on a CPU. 0 or -ENOMEM.
 */
static int row_split(const struct verdict_input *in, const struct sc_row *r,
		     struct verdict_row *out)
{
	uint64_t timed = hist_count(r->st.hist), ret = row_returned_ns(r);
	double off, lock;
	int err;

	if (timed > r->st.calls)
		timed = r->st.calls;
	if (!in->split || !timed || !ret)
		return 0;
	err = lock_share(in, r, &lock);
	if (err)
		return err;
	off = (double)r->st.wait_ns + (double)r->st.blocked_ns;
	if (off > (double)ret)
		off = (double)ret;
	out->split = true;
	out->returned_s = (double)ret / 1e9;
	out->wait_s = (double)r->st.wait_ns / 1e9;
	out->blocked_s = (double)r->st.blocked_ns / 1e9;
	out->iowait_s = (double)r->st.iowait_ns / 1e9;
	if (out->iowait_s > out->blocked_s)
		out->iowait_s = out->blocked_s;
	out->lock_s = lock * out->blocked_s;
	out->on_cpu_ns = out->round_trip_ns - off / (double)timed;
	if (out->on_cpu_ns < in->floor_ns)
		out->on_cpu_ns = in->floor_ns;
	out->on_cpu_s = ((double)timed * out->on_cpu_ns +
			 (double)(r->st.calls - timed) * in->floor_ns) /
			1e9;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct verdict_row *x = a, *y = b;
	int c;

	if (x->time_s != y->time_s)
		return x->time_s > y->time_s ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->fd_type < y->fd_type ? -1 : x->fd_type > y->fd_type;
}

static bool bad(double v)
{
	return !isfinite(v) || v < 0;
}

static bool input_ok(const struct verdict_input *in)
{
	return in->floor_ns > 0 && !bad(in->floor_ns) && !bad(in->wall_s) &&
	       !bad(in->thread_s) && !bad(in->utime_s) && !bad(in->stime_s) &&
	       !bad(in->runq_s) && !bad(in->vdso_ns) && !bad(in->probe_ns) &&
	       !bad(in->probe_reported_ns);
}

/* The rows that saw calls, with their figures, longest time first. */
static int gather_rows(struct verdict *v, const struct verdict_input *in)
{
	v->rows = calloc(in->nrows ? in->nrows : 1, sizeof(*v->rows));
	if (!v->rows)
		return -ENOMEM;
	for (size_t i = 0; i < in->nrows; i++) {
		if (!row_seen(&in->rows[i]))
			continue;
		row_figures(in, &in->rows[i], &v->rows[v->nrows]);
		if (row_split(in, &in->rows[i], &v->rows[v->nrows]))
			return -ENOMEM;
		v->calls += v->rows[v->nrows].calls;
		v->syscall_s += v->rows[v->nrows].time_s;
		v->nrows++;
	}
	if (v->nrows > 1)
		qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_row);
	return 0;
}

/*
 * Asleep in syscalls, and the CPU time they may have used at most: with
 * the split, what the calls that returned measured (asleep; on a CPU)
 * plus the time of the calls still in flight, whose split is not known
 * yet (a thread asleep in a call for the whole run spent it so).
 */
static void split_figures(struct verdict *v, double *blocked, double *on_cpu)
{
	*blocked = *on_cpu = 0;
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		if (r->split) {
			*blocked += r->blocked_s + r->flight_s;
			*on_cpu += r->on_cpu_s + r->flight_s;
			v->wait_s += r->wait_s;
			v->split_blocked_s += r->blocked_s;
			v->split_s += r->returned_s;
		} else {
			*blocked += r->flight_s;
			*on_cpu += r->time_s;
		}
	}
	v->wait_share =
		v->split_s > 0 ? verdict_clamp01(v->wait_s / v->split_s) : 0;
}

/* The whole process's figures (verdict.h), the probe's cost taken off. */
static void process_figures(struct verdict *v, const struct verdict_input *in)
{
	double sleep_s, stime, on_cpu = v->syscall_s;

	v->calls_per_s = in->wall_s > 0 ? (double)v->calls / in->wall_s : 0;
	v->probe_s = (double)v->calls * in->probe_ns / 1e9;
	v->thread_s = in->thread_s - v->probe_s;
	if (v->thread_s < v->syscall_s)
		v->thread_s = v->syscall_s;
	v->user_s = in->utime_s;
	v->system_s = in->stime_s;
	v->cpu_s = in->utime_s + in->stime_s - v->probe_s;
	if (v->cpu_s < 0)
		v->cpu_s = 0;
	v->cpu_measured = v->cpu_s > 0;
	v->idle = !v->calls && in->utime_s + in->stime_s <= 0;
	v->cpus = in->wall_s > 0 ? v->cpu_s / in->wall_s : 0;
	v->runq_s = in->runq_s;
	sleep_s = v->thread_s - v->cpu_s - v->runq_s;
	if (sleep_s < 0)
		sleep_s = 0;
	v->split = in->split;
	if (in->split)
		split_figures(v, &sleep_s, &on_cpu);
	v->blocked_s = sleep_s < v->syscall_s ? sleep_s : v->syscall_s;
	v->blocked_share = v->thread_s > 0 ?
				   verdict_clamp01(v->blocked_s / v->thread_s) :
				   0;
	v->syscall_share = v->thread_s > 0 ?
				   verdict_clamp01(v->syscall_s / v->thread_s) :
				   0;
	stime = in->stime_s - v->probe_s;
	if (stime < 0)
		stime = 0;
	if (on_cpu > v->syscall_s)
		on_cpu = v->syscall_s;
	v->syscall_cpu_s = stime < on_cpu ? stime : on_cpu;
	v->cpu_syscall_share =
		v->cpu_s > 0 ? verdict_clamp01(v->syscall_cpu_s / v->cpu_s) : 0;
	v->crossing_s = (double)v->calls * in->floor_ns / 1e9;
	v->crossing_share = verdict_crossing_cpu(v, (double)v->calls);
	v->syscall_bound = v->cpu_s > 0 &&
			   v->cpu_s >= VERDICT_MIN_CPUS * in->wall_s &&
			   v->cpu_syscall_share >= VERDICT_BOUND_SHARE;
	for (size_t i = 0; i < v->nrows; i++)
		v->rows[i].share = v->thread_s > 0 ?
					   verdict_clamp01(v->rows[i].time_s /
							   v->thread_s) :
					   0;
}

/* Each finding's top call site, from the sampled stacks. */
static int name_callsites(struct verdict *v, const struct sc_stacks *stacks)
{
	for (size_t i = 0; stacks && i < v->nfindings; i++) {
		struct verdict_finding *f = &v->findings[i];
		int nr = names_syscall_nr(SC_ABI_NATIVE, f->syscall);
		char *site;

		if (nr < 0)
			continue;
		site = stacks_top_site(stacks, SC_ABI_NATIVE, (uint32_t)nr,
				       &f->callsite_share);
		if (!site && f->callsite_share > 0)
			return -ENOMEM;
		if (site)
			snprintf(f->callsite, sizeof(f->callsite), "%s", site);
		free(site);
	}
	return 0;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct verdict_finding *x = a, *y = b;
	int c;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = strcmp(x->syscall, y->syscall);
	if (c)
		return c;
	return x->row_fd_type < y->row_fd_type ?
		       -1 :
		       x->row_fd_type > y->row_fd_type;
}

/* Every rule's findings, largest share first. */
static int apply_rules(struct verdict *v, const struct verdict_input *in)
{
	size_t cap = 0;
	int err;

	err = verdict_call_rules(v, &cap, in);
	err = err ?: verdict_wait_rules(v, &cap, in);
	if (err)
		return err;
	if (v->nfindings > 1)
		qsort(v->findings, v->nfindings, sizeof(*v->findings),
		      cmp_finding);
	return 0;
}

int verdict_judge(const struct verdict_input *in, struct verdict **out)
{
	struct verdict *v;
	int err;

	*out = NULL;
	if (!input_ok(in))
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->floor_ns = in->floor_ns;
	v->vdso_ns = in->vdso_ns;
	v->wall_s = in->wall_s;
	v->corrected = in->probe_ns > 0 || in->probe_reported_ns > 0;
	v->pid = in->pid;
	if (in->throttle)
		v->throttle = *in->throttle;
	err = gather_rows(v, in);
	if (!err) {
		process_figures(v, in);
		err = apply_rules(v, in);
	}
	if (!err)
		err = name_callsites(v, in->stacks);
	if (err) {
		verdict_free(v);
		return err;
	}
	*out = v;
	return 0;
}

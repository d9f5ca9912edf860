// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `scprof [OPTIONS] TARGET` writes (cmd_profile_report.h): the
 * report at the end, or one every interval with -i; the stack files; the
 * slow calls as they come, and their trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd_profile_report.h"
#include "model/delta.h"
#include "render/callsites.h"
#include "render/drops.h"
#include "render/flamegraph.h"
#include "render/pprof.h"
#include "render/report.h"
#include "render/slowcalls.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/log.h"

/* "ls -l /tmp", "pid 12,34", ...: a description for the report header. */
char *profile_describe(const struct profile_opts *o,
		       const struct target_found *found)
{
	size_t len = 64;
	char *s, *p;

	if (o->target.kind == TARGET_CMD)
		for (char **a = o->argv; *a; a++)
			len += strlen(*a) + 1;
	else if (o->target.kind == TARGET_CGROUP)
		len += strlen(o->target.cgroup);
	else if (o->target.kind == TARGET_PIDS)
		len += found->npids * 12 + 32;
	s = calloc(1, len);
	if (!s)
		return NULL;
	p = s;
	switch (o->target.kind) {
	case TARGET_CMD:
		for (char **a = o->argv; *a; a++)
			p += sprintf(p, "%s%s", a == o->argv ? "" : " ", *a);
		break;
	case TARGET_PIDS:
		if (found->only_tid)
			p += sprintf(p, "thread %d of ", found->only_tid);
		p += sprintf(p, "pid ");
		for (size_t i = 0; i < found->npids; i++)
			p += sprintf(p, "%s%d", i ? "," : "", found->pids[i]);
		break;
	case TARGET_CGROUP:
		sprintf(p, "cgroup %s", o->target.cgroup);
		break;
	default:
		sprintf(p, "all processes");
		break;
	}
	return s;
}

static const char *mode_name(enum target_kind k)
{
	switch (k) {
	case TARGET_CMD:
		return "command";
	case TARGET_PIDS:
		return "pid";
	case TARGET_CGROUP:
		return "cgroup";
	default:
		return "all";
	}
}

/* What a JSON or CSV report does not say in words (a table says it in
 * its first line, the same words).
 */
static void warn_drops(const struct report_opts *ro, const struct sc_model *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (ro->format == REPORT_TABLE || !model_incomplete(m))
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	drops_sentence(f, &m->meta);
	if (!fclose(f))
		pr_warn("the counts are incomplete: %s", text);
	free(text);
}

/* --slow: print the slow calls seen since the last poll, one a line (a
 * JSON object with --format json), and keep them for --trace-out.
 */
int profile_slow_poll(struct profile_run *r)
{
	struct sc_slowlog got;
	int err;

	if (!r->o->slow_ns || !r->col)
		return 0;
	slowlog_init(&got, SIZE_MAX);
	err = collector__slow_take(r->col, &got, &r->slow_lost);
	if (err)
		pr_err("cannot read the slow calls: %s", strerror(-err));
	for (size_t i = 0; !err && i < got.n; i++) {
		err = slowcall_print(r->slow_f, &got.v[i],
				     r->report.format == REPORT_JSON);
		if (err)
			pr_err("cannot write the slow calls: %s",
			       strerror(-err));
		else
			r->slow_printed++;
	}
	if (!err && r->o->trace_out) {
		err = slowlog_move(&r->trace, &got);
		if (err)
			pr_err("cannot keep the slow calls for the trace: %s",
			       strerror(-err));
	}
	slowlog_clear(&got);
	return err;
}

/* The report's figures of the slow calls (the last report's). */
static void slow_meta(const struct profile_run *r, struct sc_model *m)
{
	m->meta.slow_ns = r->o->slow_ns;
	m->meta.slow_reported = r->slow_printed;
	m->meta.slow_lost = r->slow_lost;
}

/* "2025-11-22T14:03:05.120+0100": the wall-clock end of an interval. */
static void timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(buf + n, len - n, ".%03ld", ts.tv_nsec / 1000000);
	strftime(buf + n, len - n, "%z", &tm);
}

/*
 * -i: report what happened since the previous report, computed from two
 * cumulative snapshots (nothing is deleted from the maps for this). The
 * last report of a run detaches first, like the one-shot report, and is
 * left out when the short rest of the run saw no call.
 */
int profile_write_interval(struct profile_run *r, uint64_t now, bool last)
{
	struct report_opts ro = r->report;
	struct report_meta meta = {
		.mode = mode_name(r->o->target.kind),
		.targets_exited = last && (r->targets_exited ||
					   (r->launched && r->child.reaped)),
		.exit_status = last && r->launched && r->child.reaped ?
				       launch_exit_status(&r->child) :
				       -1,
	};
	struct sc_model *cur = NULL, *d;
	char stamp[64], *target = profile_describe(r->o, &r->found);
	int err;

	if (!target)
		return -ENOMEM;
	meta.target = target;
	err = collector__snapshot_at(r->col, now, &cur);
	if (last) {
		/* the slow calls up to the end, before the ring goes (it
		 * says why not)
		 */
		int e = err ? 0 : profile_slow_poll(r);

		collector__destroy(r->col);
		r->col = NULL;
		if (!err && e) {
			model_free(cur);
			free(target);
			return e;
		}
	}
	if (err) {
		pr_err("cannot read the collected data: %s", strerror(-err));
		free(target);
		return err;
	}
	d = model_delta(cur, r->prev);
	if (!d) {
		model_free(cur);
		free(target);
		pr_err("cannot compute the interval: out of memory");
		return -ENOMEM;
	}
	d->meta.duration_ns = now - r->t_prev;
	meta.duration_ns = d->meta.duration_ns;
	if (last)
		slow_meta(r, d);
	if (!last || d->ntotal || !r->reports) {
		timestamp(stamp, sizeof(stamp));
		ro.rate_ns = d->meta.duration_ns;
		meta.interval_end = stamp;
		meta.interval = r->reports + 1;
		if (ro.format == REPORT_TABLE)
			fprintf(r->out.f, "%s--- %s, interval %.3f s ---\n",
				r->reports ? "\n" : "", stamp,
				(double)d->meta.duration_ns / 1e9);
		err = report_write(r->out.f, d, &ro, &meta);
		if (err)
			pr_err("cannot write the report: %s", strerror(-err));
		r->reports++;
	}
	if (last)
		warn_drops(&r->report, cur);
	r->incomplete |= model_incomplete(d);
	free(target);
	model_free(d);
	model_free(r->prev);
	r->prev = cur;
	r->t_prev = now;
	return err;
}

/* --folded, --flamegraph and --pprof, from the stacks of the report's
 * model.
 */
static int write_stack_files(struct profile_run *r, const struct sc_model *m,
			     const char *target)
{
	int err = 0;

	if (!m->stacks)
		return 0;
	if (m->stacks->lost_total)
		pr_warn("%llu stack samples were lost: the ring buffer was "
			"full (a larger --stacks N samples fewer calls)",
			(unsigned long long)m->stacks->lost_total);
	if (r->o->folded) {
		err = callsites_folded(r->folded.f, m->stacks);
		err = err ?: output_commit(&r->folded);
	}
	if (!err && r->o->flamegraph) {
		/* the title says how the frames are weighed */
		char *title = NULL;

		if (asprintf(&title, "%s (%s)", target,
			     m->stacks->by == SC_STACKS_BY_BLOCKED ?
				     "by blocked time, off CPU" :
			     m->stacks->by == SC_STACKS_BY_TIME ?
				     "by time in calls" :
				     "by calls") < 0)
			return -ENOMEM;
		err = flamegraph_svg(r->flame.f, m->stacks, title);
		free(title);
		err = err ?: output_commit(&r->flame);
	}
	if (!err && r->o->pprof) {
		/* the wall-clock time of the start, from the monotonic one */
		uint64_t ago = clock_mono_ns() - r->t0;
		struct pprof_opts po = {
			.time_ns = (int64_t)(clock_real_ns() - ago),
			.target = target,
		};

		err = pprof_write(r->pprof.f, m, &po);
		err = err ?: output_commit(&r->pprof);
	}
	if (err)
		pr_err("cannot write the stacks: %s", strerror(-err));
	return err;
}

int profile_write_report(struct profile_run *r)
{
	struct report_meta meta = {
		.mode = mode_name(r->o->target.kind),
		.duration_ns = r->t1 - r->t0,
		.targets_exited = r->targets_exited ||
				  (r->launched && r->child.reaped),
		.exit_status = r->launched && r->child.reaped ?
				       launch_exit_status(&r->child) :
				       -1,
	};
	struct report_opts ro = r->report;
	struct sc_model *m = NULL;
	char *target = profile_describe(r->o, &r->found);
	int err, slow_err;

	if (!target)
		return -ENOMEM;
	meta.target = target;
	/* The run ends here: detached first, so that no process exits
	 * between the last harvest and the snapshot (under churn hundreds
	 * did, each then reported on its own past --max-exited). Then what
	 * exited since the last harvest is folded, so --max-exited holds for
	 * the report too.
	 */
	collector__detach(r->col);
	err = collector__harvest(r->col);
	if (!err) /* calls in flight timed to the end of the run; the
		   * exited processes moved, not copied
		   */
		err = collector__snapshot_last(r->col, r->t1, &m);
	/* the slow calls up to the end, before the ring goes (it says why
	 * not)
	 */
	slow_err = err ? 0 : profile_slow_poll(r);
	collector__report_folded(r->col);
	/* Detach before printing: the report is not the targets' cost. */
	collector__destroy(r->col);
	r->col = NULL;
	if (err)
		pr_err("cannot read the collected data: %s", strerror(-err));
	if (err || slow_err) {
		model_free(m);
		free(target);
		return err ?: slow_err;
	}
	m->meta.duration_ns = meta.duration_ns;
	slow_meta(r, m);
	warn_drops(&r->report, m);
	err = write_stack_files(r, m, target);
	if (err) {
		model_free(m);
		free(target);
		return err;
	}
	r->incomplete = model_incomplete(m);
	ro.rate_ns = meta.duration_ns; /* -U rate */
	err = report_write(r->out.f, m, &ro, &meta);
	if (err)
		pr_err("cannot write the report: %s", strerror(-err));
	model_free(m);
	free(target);
	return err;
}

/* --slow: where the calls go, line-buffered: --slow-out's file (written
 * as they come, so it can be followed) or stdout ("-"), else stderr. 0 or
 * -errno.
 */
int profile_slow_open(struct profile_run *r)
{
	slowlog_init(&r->trace, SC_SLOW_MAX_TRACE);
	r->slow_f = stderr;
	if (output_is_stdout(r->o->slow_out)) {
		/* nothing was written to it yet: no other output goes there */
		r->slow_f = stdout;
		setvbuf(stdout, NULL, _IOLBF, 0);
		return 0;
	}
	if (!r->o->slow_out)
		return 0;
	r->slow_f = fopen(r->o->slow_out, "we");
	if (!r->slow_f) {
		int err = -errno;
		char *e = esc_text(r->o->slow_out, strlen(r->o->slow_out));

		pr_err("cannot open '%s': %s", e ? e : "", strerror(-err));
		free(e);
		return err;
	}
	r->slow_f_own = true;
	setvbuf(r->slow_f, NULL, _IOLBF, 0);
	return 0;
}

/* --trace-out: the slow calls kept, as a Chrome trace. 0 or -errno. */
int profile_write_trace(struct profile_run *r)
{
	char *target = profile_describe(r->o, &r->found);
	struct slowtrace_opts to = {
		.target = target,
		.slow_ns = r->o->slow_ns,
		.left_out = r->trace.dropped,
		.lost = r->slow_lost,
	};
	int err = target ? 0 : -ENOMEM;

	if (r->trace.dropped)
		pr_warn("--trace-out holds the first %zu slow calls of %llu",
			r->trace.n, (unsigned long long)r->slow_printed);
	err = err ?: slowcalls_trace(r->trace_out.f, &r->trace, &to);
	if (err)
		pr_err("cannot write the trace: %s", strerror(-err));
	free(target);
	return err ?: output_commit(&r->trace_out);
}

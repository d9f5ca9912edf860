// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof [OPTIONS] TARGET`: profile until the target ends, then report. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd_profile_args.h"
#include "cmd/commands.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/cgroups.h"
#include "collect/collector.h"
#include "collect/launch.h"
#include "collect/target.h"
#include "model/delta.h"
#include "render/callsites.h"
#include "render/drops.h"
#include "render/flamegraph.h"
#include "render/output.h"
#include "render/pprof.h"
#include "render/report.h"
#include "render/slowcalls.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/signals.h"

#define HARVEST_INTERVAL_NS 1000000000ULL
/* How often the end of the targets, and how full the maps are, is
 * checked (a read of BPF globals): maps a quarter full are harvested at once,
 * so that fast process churn does not fill them between two periods.
 */
#define POLL_INTERVAL_NS 20000000ULL
/* The profile is incomplete (a drop, see model_incomplete()): the exit
 * status without a command, or with a command that exited 0.
 */
#define EXIT_INCOMPLETE 3

/* "ls -l /tmp", "pid 12,34", ...: a description for the report header. */
static char *describe(const struct profile_opts *o,
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

struct run {
	struct profile_opts *parsed;  /* written by parse and freed: */
	const struct profile_opts *o; /* the same, as everything else sees it */
	struct target_found found;    /* the targets as found at start */
	struct report_opts report;    /* the plan's */
	struct collector *col;
	struct launch child;
	bool launched;
	bool released; /* the command was let go to exec */
	bool targets_exited;
	uint64_t t0, t1;
	struct output out;
	struct output folded, flame,
		pprof; /* --folded, --flamegraph, --pprof */
	/* -i */
	struct sc_model *prev; /* the snapshot at the last interval report */
	uint64_t t_prev;
	unsigned int reports;
	bool incomplete; /* a report was missing something */
	/* --slow: where the calls are printed (stderr, or --slow-out's
	 * file, ours to close), how many were and how many were lost; the
	 * calls kept for --trace-out
	 */
	FILE *slow_f;
	bool slow_f_own;
	uint64_t slow_printed, slow_lost;
	struct sc_slowlog trace;
	struct output trace_out;
};

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
static int slow_poll(struct run *r)
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
static void slow_meta(const struct run *r, struct sc_model *m)
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
static int write_interval(struct run *r, uint64_t now, bool last)
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
	char stamp[64], *target = describe(r->o, &r->found);
	int err;

	if (!target)
		return -ENOMEM;
	meta.target = target;
	err = collector__snapshot_at(r->col, now, &cur);
	if (last) {
		/* the slow calls up to the end, before the ring goes (it
		 * says why not)
		 */
		int e = err ? 0 : slow_poll(r);

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

/* Wait for the end of the run: the targets end, the time is up, or a
 * stop signal. Exited processes are folded out of the maps as we go, and
 * with -i a report is printed at every interval.
 */
static int run_loop(struct run *r, const sigset_t *mask)
{
	uint64_t deadline = r->o->duration_s > 0 ?
				    r->t0 + (uint64_t)(r->o->duration_s * 1e9) :
				    UINT64_MAX;
	uint64_t ival = (uint64_t)(r->o->interval_s * 1e9);
	uint64_t next = ival ? r->t0 + ival : UINT64_MAX;
	uint64_t harvest = r->t0 + HARVEST_INTERVAL_NS;
	int stop_requests = 0;

	for (;;) {
		uint64_t now = clock_mono_ns(), wait = POLL_INTERVAL_NS;

		struct timespec ts;
		siginfo_t si;
		int sig, err;

		if (now >= deadline)
			return 0;
		if (deadline - now < wait)
			wait = deadline - now;
		if (next <= now)
			wait = 0;
		else if (next - now < wait)
			wait = next - now;
		ts.tv_sec = (time_t)(wait / 1000000000ULL);
		ts.tv_nsec = (long)(wait % 1000000000ULL);
		sig = sigtimedwait(mask, &si, &ts);
		if (sig > 0 && signals_is_stop(sig)) {
			/* A command gets the signal too: a terminal already
			 * sent it to the whole process group, anyone else is
			 * passed on. The report waits for the command to end;
			 * a second signal stops waiting.
			 */
			if (!r->launched || r->child.reaped || stop_requests++)
				return 0;
			if (si.si_code <= 0)
				kill(r->child.pid, sig);
		}
		err = collector__stacks_poll(r->col);
		err = err ?: slow_poll(r);
		if (err)
			return err;
		now = clock_mono_ns();
		if (now >= harvest || collector__harvest_due(r->col)) {
			err = collector__harvest(r->col);
			if (err)
				return err;
			harvest = now + HARVEST_INTERVAL_NS;
		}
		if (r->launched) {
			if (launch_poll(&r->child) &&
			    (!r->o->target.follow ||
			     collector__live_targets(r->col) <= 0))
				return 0;
		} else if (r->o->target.kind == TARGET_PIDS &&
			   collector__live_targets(r->col) <= 0) {
			r->targets_exited = true;
			return 0;
		}
		if (now >= next && now < deadline) {
			err = write_interval(r, now, false);
			if (err)
				return err;
			while (next <= now)
				next += ival;
		}
	}
}

/*
 * -d ended the profile while the command still runs: wait for it, as a
 * shell would, so scprof exits with its status and the terminal is not
 * handed back under a running program. Stop signals from other processes
 * are passed on; a second one from the terminal stops waiting.
 */
static void wait_command(struct run *r, const sigset_t *mask)
{
	int from_tty = 0;

	while (!launch_poll(&r->child)) {
		struct timespec ts = { .tv_sec = 1 };
		siginfo_t si;
		int sig = sigtimedwait(mask, &si, &ts);

		if (sig <= 0 || !signals_is_stop(sig))
			continue;
		if (si.si_code <= 0)
			kill(r->child.pid, sig);
		else if (++from_tty >= 2)
			return;
	}
}

/* --folded, --flamegraph and --pprof, from the stacks of the report's
 * model.
 */
static int write_stack_files(struct run *r, const struct sc_model *m,
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

static int write_report(struct run *r)
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
	char *target = describe(r->o, &r->found);
	int err, slow_err;

	if (!target)
		return -ENOMEM;
	meta.target = target;
	/* Fold what exited since the last harvest first, so --max-exited
	 * holds for the report too.
	 */
	err = collector__harvest(r->col);
	if (!err) /* calls in flight timed to the end of the run */
		err = collector__snapshot_at(r->col, r->t1, &m);
	/* the slow calls up to the end, before the ring goes (it says why
	 * not)
	 */
	slow_err = err ? 0 : slow_poll(r);
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

static int profile_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct run *r = ctx;
	int err = cli_parse_profile(argc, argv, r->parsed);

	if (err)
		cli_free_profile(r->parsed);
	*verbosity = r->parsed->verbosity;
	return err;
}

/* Open the collector as planned, add the command or the pids, attach. */
static int attach(struct run *r)
{
	struct collector_opts copts;
	int err;

	profile_plan(r->o, &r->found, &copts, &r->report);
	err = collector__open(&r->col, &copts);
	if (err)
		return err;
	if (r->o->target.kind == TARGET_CMD)
		collector__add_target(r->col, r->child.pid);
	for (size_t i = 0; i < r->found.npids; i++)
		collector__add_target(r->col, r->found.pids[i]);
	return collector__attach(r->col);
}

/* Attached: let the command go to exec, or say what is profiled. */
static int go(struct run *r)
{
	char *d, *e;
	int err;

	r->t0 = clock_mono_ns();
	r->t_prev = r->t0;
	if (r->launched) {
		launch_release(&r->child);
		r->released = true;
		err = launch_exec_error(&r->child);
		if (err)
			pr_err("cannot run '%s': %s", r->o->argv[0],
			       strerror(err));
		return !err ? 0 : err == ENOENT ? 127 : 126;
	}
	if (!isatty(STDERR_FILENO))
		return 0;
	d = describe(r->o, &r->found);
	e = d ? esc_text(d, strlen(d)) : NULL;
	pr_warn("profiling %s; Ctrl-C to stop and report", e ? e : "");
	free(d);
	free(e);
	return 0;
}

/* --slow: where the calls go, line-buffered: --slow-out's file (written
 * as they come, so it can be followed) or stdout ("-"), else stderr. 0 or
 * -errno.
 */
static int slow_open(struct run *r)
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

/* The targets, the output, the command (stopped before its exec), the
 * programs attached; then the command runs.
 */
static int profile_start(void *ctx, struct cmd_env *env)
{
	struct run *r = ctx;
	const struct profile_opts *o = r->o;
	int err;

	if (target_find(&o->target, true, &r->found))
		return EXIT_FAIL;
	if (group_needs_cgroups(&o->report.by)) {
		char mnt[4096];

		if (cgroups_v2_mount(mnt, sizeof(mnt))) {
			pr_err("--by cgroup, unit, container, pod and qos need cgroup v2, "
			       "and no cgroup2 file system is mounted here");
			return EXIT_FAIL;
		}
	}
	if (output_open(&r->out, o->output,
			o->target.kind == TARGET_CMD ? stderr : stdout))
		return EXIT_FAIL;
	if (o->folded && output_open(&r->folded, o->folded, NULL))
		return EXIT_FAIL;
	if (o->flamegraph && output_open(&r->flame, o->flamegraph, NULL))
		return EXIT_FAIL;
	if (o->pprof && output_open(&r->pprof, o->pprof, NULL))
		return EXIT_FAIL;
	if (o->trace_out && output_open(&r->trace_out, o->trace_out, NULL))
		return EXIT_FAIL;
	if (o->slow_ns && slow_open(r))
		return EXIT_FAIL;
	if (o->target.kind == TARGET_CMD) {
		err = launch_start(&r->child, o->argv, &env->oldmask,
				   profile_uses_stdout(o));
		if (err)
			return err == -ENOENT ? 127 :
			       err == -EACCES ? 126 :
						EXIT_FAIL;
		r->launched = true;
	}
	if (attach(r))
		return EXIT_FAIL;
	return go(r);
}

static int profile_loop(void *ctx, struct cmd_env *env)
{
	struct run *r = ctx;
	int err = run_loop(r, &env->mask);

	r->t1 = clock_mono_ns();
	if (err) {
		pr_err("collection failed: %s", strerror(-err));
		return EXIT_FAIL;
	}
	if (r->targets_exited)
		pr_warn("the target process%s exited: reporting what was "
			"collected",
			r->found.npids > 1 ? "es" : "");
	return 0;
}

/* --trace-out: the slow calls kept, as a Chrome trace. 0 or -errno. */
static int write_trace(struct run *r)
{
	char *target = describe(r->o, &r->found);
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

/* The report, then the command's end: its exit status is scprof's,
 * except that an incomplete profile of a command that exited 0 (or
 * without a command) exits with EXIT_INCOMPLETE.
 */
static int profile_report(void *ctx, struct cmd_env *env)
{
	struct run *r = ctx;
	int err, status;

	if (r->o->interval_s > 0)
		err = write_interval(r, r->t1, true);
	else
		err = write_report(r);
	if (err || output_commit(&r->out))
		return EXIT_FAIL;
	if (r->o->trace_out && write_trace(r))
		return EXIT_FAIL;
	if (r->launched && !r->child.reaped)
		wait_command(r, &env->mask);
	status = r->launched ? launch_exit_status(&r->child) : EXIT_OK;
	return status == EXIT_OK && r->incomplete ? EXIT_INCOMPLETE : status;
}

static void profile_teardown(void *ctx, int status)
{
	struct run *r = ctx;

	(void)status;
	/* Failed before the command could run: don't leave it stopped. */
	if (r->launched && !r->released)
		launch_kill(&r->child);
	collector__destroy(r->col);
	model_free(r->prev);
	output_abort(&r->out);
	output_abort(&r->folded);
	output_abort(&r->flame);
	output_abort(&r->pprof);
	output_abort(&r->trace_out);
	if (r->slow_f_own && fclose(r->slow_f))
		pr_err("cannot write the slow calls: %s", strerror(errno));
	slowlog_clear(&r->trace);
	target_found_free(&r->found);
	cli_free_profile(r->parsed);
}

/* Stop signals are taken by the run loop, whenever they come: one
 * arriving while the programs load waits there and ends the run cleanly,
 * with every link detached.
 */
static const struct cmd_ops profile_ops = {
	.prog = "scprof",
	.signals = CMD_SIGNALS_FIRST,
	.extra_signal = SIGCHLD,
	.parse = profile_parse,
	.start = profile_start,
	.loop = profile_loop,
	.report = profile_report,
	.teardown = profile_teardown,
};

int cmd_profile(int argc, char **argv)
{
	struct profile_opts o;
	struct run r = { .parsed = &o, .o = &o };

	return cmd_run(&profile_ops, &r, argc, argv);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `scprof [OPTIONS] TARGET`: profile until the target ends, then report
 * (what it writes: cmd_profile_report.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd_profile_args.h"
#include "cmd/cmd_profile_report.h"
#include "cmd/commands.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/cgroups.h"
#include "collect/collector.h"
#include "collect/launch.h"
#include "collect/target.h"
#include "render/output.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/selfmem.h"
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

/* Wait for the end of the run: the targets end, the time is up, or a
 * stop signal. Exited processes are folded out of the maps as we go, and
 * with -i a report is printed at every interval.
 */
static int run_loop(struct profile_run *r, const sigset_t *mask)
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
		err = err ?: profile_slow_poll(r);
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
			err = profile_write_interval(r, now, false);
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
static void wait_command(struct profile_run *r, const sigset_t *mask)
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

static int profile_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct profile_run *r = ctx;
	int err = cli_parse_profile(argc, argv, r->parsed);

	if (err)
		cli_free_profile(r->parsed);
	*verbosity = r->parsed->verbosity;
	return err;
}

/* Open the collector as planned, add the command or the pids, attach. */
static int attach(struct profile_run *r)
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
static int go(struct profile_run *r)
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
	d = profile_describe(r->o, &r->found);
	e = d ? esc_text(d, strlen(d)) : NULL;
	pr_warn("profiling %s; Ctrl-C to stop and report", e ? e : "");
	free(d);
	free(e);
	return 0;
}

/* The targets, the output, the command (stopped before its exec), the
 * programs attached; then the command runs.
 */
static int profile_start(void *ctx, struct cmd_env *env)
{
	struct profile_run *r = ctx;
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
	if (o->slow_ns && profile_slow_open(r))
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
	struct profile_run *r = ctx;
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

/* The report, then the command's end: its exit status is scprof's,
 * except that an incomplete profile of a command that exited 0 (or
 * without a command) exits with EXIT_INCOMPLETE.
 */
static int profile_report(void *ctx, struct cmd_env *env)
{
	struct profile_run *r = ctx;
	int err, status;

	if (r->o->interval_s > 0)
		err = profile_write_interval(r, r->t1, true);
	else
		err = profile_write_report(r);
	if (r->col) /* --interval's: the final report keeps the programs */
		collector__report_folded(r->col);
	selfmem_report("after the report");
	if (err || output_commit(&r->out))
		return EXIT_FAIL;
	if (r->o->trace_out && profile_write_trace(r))
		return EXIT_FAIL;
	if (r->launched && !r->child.reaped)
		wait_command(r, &env->mask);
	status = r->launched ? launch_exit_status(&r->child) : EXIT_OK;
	return status == EXIT_OK && r->incomplete ? EXIT_INCOMPLETE : status;
}

static void profile_teardown(void *ctx, int status)
{
	struct profile_run *r = ctx;

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
	struct profile_run r = { .parsed = &o, .o = &o };

	return cmd_run(&profile_ops, &r, argc, argv);
}

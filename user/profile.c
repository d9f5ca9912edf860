// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof [OPTIONS] TARGET`: profile until the target ends, then report. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "collector.h"
#include "commands.h"
#include "escape.h"
#include "launch.h"
#include "log.h"
#include "output.h"
#include "report.h"

#define HARVEST_INTERVAL_NS 1000000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The process a pid or thread id belongs to, or -errno. */
static int tgid_of(pid_t pid)
{
	char path[64], line[256];
	int tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = atoi(line + 5);
			break;
		}
	}
	fclose(f);
	return tgid > 0 ? tgid : -ESRCH;
}

/* "ls -l /tmp", "pid 12,34", ...: a description for the report header. */
static char *describe(const struct profile_opts *o)
{
	size_t len = 64;
	char *s, *p;

	if (o->kind == TARGET_CMD)
		for (char **a = o->argv; *a; a++)
			len += strlen(*a) + 1;
	else if (o->kind == TARGET_CGROUP)
		len += strlen(o->cgroup);
	else if (o->kind == TARGET_PIDS)
		len += o->npids * 12;
	s = calloc(1, len);
	if (!s)
		return NULL;
	p = s;
	switch (o->kind) {
	case TARGET_CMD:
		for (char **a = o->argv; *a; a++)
			p += sprintf(p, "%s%s", a == o->argv ? "" : " ", *a);
		break;
	case TARGET_PIDS:
		p += sprintf(p, "pid ");
		for (size_t i = 0; i < o->npids; i++)
			p += sprintf(p, "%s%d", i ? "," : "", o->pids[i]);
		break;
	case TARGET_CGROUP:
		sprintf(p, "cgroup %s", o->cgroup);
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

/* Turn -p arguments into distinct live process ids. */
static int resolve_pids(struct profile_opts *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->npids; i++) {
		int tgid = tgid_of(o->pids[i]);
		bool dup = false;

		if (tgid < 0) {
			pr_err("cannot profile pid %d: %s", o->pids[i],
			       tgid == -ESRCH ? "no such process" :
						strerror(-tgid));
			return tgid;
		}
		if (tgid != o->pids[i])
			pr_info("pid %d is a thread of process %d: profiling "
				"the whole process",
				o->pids[i], tgid);
		for (size_t j = 0; j < n; j++)
			dup |= o->pids[j] == tgid;
		if (!dup)
			o->pids[n++] = tgid;
	}
	o->npids = n;
	return 0;
}

struct run {
	struct profile_opts *o;
	struct collector *col;
	struct launch child;
	bool launched;
	bool released; /* the command was let go to exec */
	bool targets_exited;
	uint64_t t0, t1;
};

static bool is_stop_signal(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* Wait for the end of the run: the targets end, the time is up, or a
 * stop signal. Exited processes are folded out of the maps as we go.
 */
static int run_loop(struct run *r, const sigset_t *mask)
{
	uint64_t deadline = r->o->duration_s > 0 ?
				    r->t0 + (uint64_t)(r->o->duration_s * 1e9) :
				    UINT64_MAX;
	int stop_requests = 0;

	for (;;) {
		uint64_t now = now_ns(), wait = HARVEST_INTERVAL_NS;
		struct timespec ts;
		siginfo_t si;
		int sig, err;

		if (now >= deadline)
			return 0;
		if (deadline - now < wait)
			wait = deadline - now;
		ts.tv_sec = (time_t)(wait / 1000000000ULL);
		ts.tv_nsec = (long)(wait % 1000000000ULL);
		sig = sigtimedwait(mask, &si, &ts);
		if (sig > 0 && is_stop_signal(sig)) {
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
		err = collector__harvest(r->col);
		if (err)
			return err;
		if (r->launched) {
			if (launch_poll(&r->child) &&
			    (!r->o->follow ||
			     collector__live_targets(r->col) <= 0))
				return 0;
		} else if (r->o->kind == TARGET_PIDS &&
			   collector__live_targets(r->col) <= 0) {
			r->targets_exited = true;
			return 0;
		}
	}
}

static int write_report(struct run *r, struct output *out)
{
	struct report_meta meta = {
		.mode = mode_name(r->o->kind),
		.duration_ns = r->t1 - r->t0,
		.targets_exited = r->targets_exited ||
				  (r->launched && r->child.reaped),
		.exit_status = r->launched && r->child.reaped ?
				       launch_exit_status(&r->child) :
				       -1,
	};
	struct sc_model *m = NULL;
	char *target = describe(r->o);
	int err;

	if (!target)
		return -ENOMEM;
	meta.target = target;
	err = collector__snapshot(r->col, &m);
	/* Detach before printing: the report is not the targets' cost. */
	collector__destroy(r->col);
	r->col = NULL;
	if (err) {
		pr_err("cannot read the collected data: %s", strerror(-err));
		free(target);
		return err;
	}
	m->duration_ns = meta.duration_ns;
	if (m->drops[SC_DROP_STATS_FULL])
		pr_warn("%llu calls were not recorded: the stats map was full "
			"(raise --max-entries)",
			(unsigned long long)m->drops[SC_DROP_STATS_FULL]);
	if (m->drops[SC_DROP_TASK_STORAGE])
		pr_warn("%llu calls were not timed or counted: no task storage",
			(unsigned long long)m->drops[SC_DROP_TASK_STORAGE]);
	if (m->drops[SC_DROP_PROCS_FULL])
		pr_warn("%llu processes have no name: the process map was "
			"full (raise --max-procs)",
			(unsigned long long)m->drops[SC_DROP_PROCS_FULL]);
	err = report_write(out->f, m, &r->o->report, &meta);
	if (err)
		pr_err("cannot write the report: %s", strerror(-err));
	model_free(m);
	free(target);
	return err;
}

static enum sc_filter_mode filter_of(enum target_kind k)
{
	switch (k) {
	case TARGET_CMD:
	case TARGET_PIDS:
		return SC_FILTER_TGID;
	case TARGET_CGROUP:
		return SC_FILTER_CGROUP;
	default:
		return SC_FILTER_ALL;
	}
}

int cmd_profile(int argc, char **argv)
{
	struct profile_opts o;
	struct collector_opts copts = {};
	struct output out = {};
	struct log_ctx lctx = { .prog = "scprof" };
	struct run r = { .o = &o };
	sigset_t mask, oldmask;
	int ret = EXIT_FAIL, err;

	/* Stop signals are taken by the run loop, whenever they come: one
	 * arriving while the programs load waits there and ends the run
	 * cleanly, with every link detached.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);

	err = cli_parse_profile(argc, argv, &o);
	if (err) {
		cli_free_profile(&o);
		return err == 1 ? EXIT_OK : err;
	}
	lctx.level = o.verbosity;
	log_init(&lctx);
	libbpf_set_print(log_libbpf);

	if (o.kind == TARGET_PIDS && resolve_pids(&o))
		goto out;
	if (output_open(&out, o.output, o.kind == TARGET_CMD ? stderr : stdout))
		goto out;

	if (o.kind == TARGET_CMD) {
		err = launch_start(&r.child, o.argv, &oldmask);
		if (err) {
			ret = err == -ENOENT ? 127 : err == -EACCES ? 126 :
								   EXIT_FAIL;
			goto out;
		}
		r.launched = true;
	}

	copts.mode = filter_of(o.kind);
	copts.cgroup_path = o.cgroup;
	copts.follow = o.follow;
	copts.max_stats = o.max_stats;
	copts.max_procs = o.max_procs;
	if (collector__open(&r.col, &copts))
		goto out;
	if (o.kind == TARGET_CMD)
		collector__add_target(r.col, r.child.pid);
	for (size_t i = 0; i < o.npids; i++)
		collector__add_target(r.col, o.pids[i]);
	if (collector__attach(r.col))
		goto out;
	r.t0 = now_ns();

	if (r.launched) {
		launch_release(&r.child);
		r.released = true;
		err = launch_exec_error(&r.child);
		if (err) {
			pr_err("cannot run '%s': %s", o.argv[0], strerror(err));
			ret = err == ENOENT ? 127 : 126;
			goto out;
		}
	} else if (isatty(STDERR_FILENO)) {
		char *d = describe(&o), *e = d ? esc_text(d, strlen(d)) : NULL;

		pr_warn("profiling %s; Ctrl-C to stop and report", e ? e : "");
		free(d);
		free(e);
	}

	err = run_loop(&r, &mask);
	r.t1 = now_ns();
	if (err) {
		pr_err("collection failed: %s", strerror(-err));
		goto out;
	}
	if (r.targets_exited)
		pr_warn("the target process%s exited: reporting what was "
			"collected",
			o.npids > 1 ? "es" : "");
	if (write_report(&r, &out) || output_commit(&out))
		goto out;
	ret = r.launched ? launch_exit_status(&r.child) : EXIT_OK;
out:
	/* Failed before the command could run: don't leave it stopped. */
	if (r.launched && !r.released)
		launch_kill(&r.child);
	collector__destroy(r.col);
	output_abort(&out);
	cli_free_profile(&o);
	return ret;
}

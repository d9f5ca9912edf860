// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof verdict -p PID`: is it the syscalls? */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "analyze/calibrate.h"
#include "analyze/verdict.h"
#include "cmd/cli.h"
#include "cmd/cmd_calibrate.h"
#include "cmd/cmd_verdict.h"
#include "cmd/commands.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/collector.h"
#include "sc_stack.h"
#include "collect/proc_sampler.h"
#include "collect/target.h"
#include "render/calib_cache.h"
#include "render/calib_report.h"
#include "render/output.h"
#include "render/verdict_report.h"
#include "util/clock.h"
#include "util/fdpaths.h"
#include "util/log.h"
#include "util/procfs.h"
#include "util/signals.h"

#define DEFAULT_DURATION_S 5.0
#define SAMPLE_NS 20000000ULL /* /proc is read every 20 ms */

static void usage(FILE *f)
{
	fputs("Usage: scprof verdict -p PID [-d SECONDS] [OPTIONS]\n"
	      "\n"
	      "Is it the syscalls? Profile a running process (all its threads, not its\n"
	      "children) for a while and answer with numbers (calls on an fd are split by\n"
	      "the fd's kind, as --fd-types does):\n"
	      "  syscall_share   the share of its threads' wall time spent inside\n"
	      "                  syscalls, entry and exit included; calls still in\n"
	      "                  flight at the end (a thread blocked in read for the\n"
	      "                  whole run) count with their time so far, and are\n"
	      "                  listed at the end (JSON in_flight)\n"
	      "  syscall_bound   yes when the process keeps at least a tenth of a CPU busy\n"
	      "                  and at least half of its CPU time is spent inside\n"
	      "                  syscalls; time asleep in a syscall, or waiting for a CPU,\n"
	      "                  does not count: waiting is not syscall overhead\n"
	      "  split           of the calls' time, the shares on a CPU, waiting for a\n"
	      "                  CPU and asleep, measured on the scheduler's tracepoints;\n"
	      "                  ns/call is a call's round trip on a CPU, the waits left\n"
	      "                  out (wall ns/call: with them)\n"
	      "  CPU time        user and system time from /proc, and calls per second\n"
	      "  crossing cost   calls x the calibrated floor (the cheapest syscall's round\n"
	      "                  trip), as a share of its CPU time\n"
	      "  findings        the patterns behind the cost, with advice:\n"
	      "    small-io          read/write-family calls averaging under 4 KiB whose\n"
	      "                      crossings cost >= 5% of its CPU; says how many calls\n"
	      "                      64 KiB buffers would save\n"
	      "    open-close-churn  >= 100 opens, closed again (closes of files, dirs and\n"
	      "                      devices only: not of sockets or pipes), with <= 4\n"
	      "                      reads or writes on them each, taking >= 5% of its\n"
	      "                      CPU; names the paths seen opened (/proc/PID/fd)\n"
	      "    short-connections >= 100 accepts, each connection's socket closed\n"
	      "                      again, accepting and closing taking >= 5% of its CPU:\n"
	      "                      keep connections open (keep-alive, reuse)\n"
	      "    high-rate         a cheap call (getpid and other ids, clock calls that\n"
	      "                      bypass the vDSO, sched_yield, or any call within 4\n"
	      "                      floors on a CPU) made so often that the crossings\n"
	      "                      take >= 5% of its CPU\n"
	      "    (small-io and high-rate only for calls that spend at least half of\n"
	      "    their time on a CPU, waits for one aside: not for calls that sleep;\n"
	      "    the cycles weigh their time on a CPU)\n"
	      "    cpu-wait          a syscall waiting for a CPU inside its calls for\n"
	      "                      >= 25% of their time and >= 5% of its threads':\n"
	      "                      contention or throttling, not its cost; names what\n"
	      "                      ran instead and the cgroup's throttled time\n"
	      "    io-wait           asleep in I/O wait as much: where it slept\n"
	      "    lock-wait         asleep waiting for a lock (a futex, a kernel mutex,\n"
	      "                      rwsem or semaphore) as much: the thread that woke\n"
	      "                      it, which held the lock, and where it slept\n"
	      "    blocking          asleep otherwise for >= 25% of its calls' time and\n"
	      "                      >= 10% of its threads': where it slept, who woke it;\n"
	      "                      calls still in flight at the end taking >= 10%\n"
	      "    cpu-quota         its cgroup throttled by its CPU quota (cpu.max, or\n"
	      "                      cgroup v1's CFS quota) for >= 10% of the run\n"
	      "A process with no calls and no CPU time is idle: nothing is weighed. CPU\n"
	      "time too small for /proc to show (it counts 10 ms ticks) gets no share\n"
	      "of it claimed, and the rules that weigh calls against it do not fire.\n"
	      "\n"
	      "The figures use this machine's calibration (see scprof calibrate): the one\n"
	      "saved for this boot, or else the quick calibration, run first (about 15 s)\n"
	      "and saved. scprof's own cost is taken off: probe_overhead_ns per call from\n"
	      "CPU and thread time, and latencies are rebased on the floor call's.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID         the process (a thread id stands for its process)\n"
	      "  -d, --duration SECS   how long to profile, default 5 (decimals allowed);\n"
	      "                        Ctrl-C or SIGTERM stops early and reports\n"
	      "      --format FMT      table (default) or json: one object with\n"
	      "                        syscall_share, syscall_bound, findings [{kind,\n"
	      "                        syscall, calls, avg_bytes?, share, advice,\n"
	      "                        part_s?, ran_instead?, blocked_in?, woken_by?,\n"
	      "                        ...}], syscalls [{name, fd_type?,\n"
	      "                        round_trip_on_cpu_ns, cpu_wait_s?, ...}],\n"
	      "                        cpu_throttling, CPU and calibration figures\n"
	      "  -o, --output FILE     write the report to FILE (atomically) instead of\n"
	      "                        stdout; - is stdout (./- names a file called -)\n"
	      "      --cache FILE      the saved calibration (default\n"
	      "                        " CALIB_CACHE_PATH ")\n"
	      "      --recalibrate     run the quick calibration even if one is saved\n"
	      "      --stacks[=N]      sample the user stack by time in calls, one sample\n"
	      "                        per N µs of it (default 1000, on by default): each\n"
	      "                        finding names the call site where the most time\n"
	      "                        in calls goes (\"called from: 98% parse_header <-\n"
	      "                        load_config (conf.c:41)\"; JSON call_site and\n"
	      "                        call_site_share)\n"
	      "      --no-stacks       do not sample stacks\n"
	      "      --no-demangle     call sites' C++ and Rust names as mangled\n"
	      "  -v, --verbose         more messages\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "If the process exits during the run, the report covers what was seen and\n"
	      "says so. Exit status: 0, 1 on a runtime error (no such process,\n"
	      "privileges), 2 on a usage error. Needs root, or CAP_BPF and CAP_PERFMON.\n",
	      f);
}

enum {
	OPT_RECALIBRATE = CLI_OPT_OWN,
	OPT_STACKS,
	OPT_NO_STACKS,
	OPT_NO_DEMANGLE,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	CLI_CALIB_OPTIONS,
	{ "recalibrate", no_argument, NULL, OPT_RECALIBRATE },
	{ "stacks", optional_argument, NULL, OPT_STACKS },
	{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	CLI_COMMON_OPTIONS,
	{},
};

static int verdict_option(void *ctx, int c, const char *arg);

static const struct cli_cmd cmd = {
	.prog = "scprof verdict",
	.usage = usage,
	.short_opts = ":p:d:o:vqh",
	.long_opts = long_opts,
	.option = verdict_option,
};

static int verdict_option(void *ctx, int c, const char *arg)
{
	struct verdict_opts *o = ctx;
	uint64_t v;

	switch (c) {
	case 'p':
		if (o->pid)
			return cli_error(&cmd, "give one -p: scprof verdict "
					       "judges one process");
		if (cli_parse_u64(arg, 1, CLI_PID_MAX, &v))
			return cli_error(&cmd,
					 "invalid PID '%s': expected one "
					 "process id",
					 arg);
		o->pid = (pid_t)v;
		return 0;
	case 'd':
		return cli_duration(&cmd, arg, &o->duration_s);
	case OPT_RECALIBRATE:
		o->recalibrate = true;
		return 0;
	case OPT_STACKS:
		o->stack_period = SC_STACK_DEFAULT_TIME_US;
		if (arg && cli_parse_u64(arg, 1, 1U << 30, &v))
			return cli_error(&cmd,
					 "invalid --stacks '%s': expected one "
					 "sample per N µs in calls, N from 1 "
					 "to 1073741824",
					 arg);
		if (arg)
			o->stack_period = (uint32_t)v;
		return 0;
	case OPT_NO_STACKS:
		o->stack_period = 0;
		return 0;
	case OPT_NO_DEMANGLE:
		o->raw_symbols = true;
		return 0;
	default:
		return -ENOENT;
	}
}

/* 0 to run, 1 after --help, EXIT_USAGE after an error. */
static int parse(int argc, char **argv, struct verdict_opts *o)
{
	const struct cli_shared sh = {
		.calib = &o->out,
		.verbosity = &o->verbosity,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->duration_s = DEFAULT_DURATION_S;
	o->stack_period = SC_STACK_DEFAULT_TIME_US;
	o->out.cache = CALIB_CACHE_PATH;
	o->verbosity = LOG_WARN;
	err = cli_parse(&cmd, argc, argv, o, &sh);
	if (err)
		return err;
	if (!o->pid)
		return cli_error(&cmd, "which process? give -p PID");
	return 0;
}

/* The saved calibration, or a quick one run now and saved. */
static int get_calibration(const struct verdict_opts *o,
			   struct calibration **cal, bool *saved)
{
	struct calibrate_opts co = { .quick = true, .probe = true };
	int err = -ENOENT;

	*saved = false;
	if (!o->recalibrate) {
		err = calib_cache_load(o->out.cache, cal);
		if (!err) {
			*saved = true;
			return 0;
		}
		if (err == -ENOMEM) {
			pr_err("out of memory");
			return err;
		}
	}
	if (err == -EINVAL)
		pr_warn("ignoring %s: not a calibration", o->out.cache);
	if (!isatty(STDERR_FILENO))
		pr_warn("%s: running the quick one first (about 15 s)",
			o->recalibrate ? "--recalibrate" :
					 "no saved calibration for this boot");
	err = cmd_calibrate_run(&co, cmd.prog, o->verbosity, cal);
	if (err)
		return err;
	if (!calib_usable(*cal)) {
		pr_err("the calibration could not measure the floor and the "
		       "probe effect");
		calibration__free(*cal);
		*cal = NULL;
		return -EIO;
	}
	if (calib_cache_save(o->out.cache, *cal))
		pr_warn("the calibration is not saved: the next verdict will "
			"run it again");
	return 0;
}

/* The sampled paths as the verdict takes them, in a new array (NULL when
 * there are none, or no memory: the churn then names no path).
 */
static struct verdict_path *verdict_paths(const struct fd_paths *fp)
{
	static const uint32_t kinds[] = {
		[FD_PATH_FILE] = SC_FD_FILE,
		[FD_PATH_DIR] = SC_FD_DIR,
		[FD_PATH_CHR] = SC_FD_CHR,
		[FD_PATH_BLK] = SC_FD_BLK,
	};
	struct verdict_path *out;

	if (!fp->npaths)
		return NULL;
	out = calloc(fp->npaths, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < fp->npaths; i++) {
		out[i].path = fp->paths[i].path;
		out[i].seen = fp->paths[i].seen;
		out[i].fd_type = kinds[fp->paths[i].kind];
	}
	return out;
}

/*
 * Profile the process pid that started at start_ticks until the time is
 * up, it ends, or a signal of mask (blocked) comes; then take what was
 * collected.
 */
static int profile(const struct verdict_opts *o, struct collector *c,
		   const sigset_t *mask, pid_t pid, uint64_t start_ticks,
		   struct proc_sampler *s, struct sc_model **model)
{
	uint64_t deadline;
	int err;

	*model = NULL;
	err = collector__add_target(c, pid);
	if (err) {
		pr_err("cannot profile pid %d: %s", (int)pid, strerror(-err));
		return err;
	}
	err = collector__attach(c);
	if (err)
		return err;
	if (proc_sampler__start(s, pid, start_ticks)) {
		s->gone = true;
		goto snapshot;
	}
	deadline = s->t_first + (uint64_t)(o->duration_s * 1e9);
	for (;;) {
		uint64_t now = clock_mono_ns(), wait = SAMPLE_NS;
		struct timespec ts;

		if (now >= deadline)
			break;
		if (deadline - now < wait)
			wait = deadline - now;
		ts.tv_sec = (time_t)(wait / 1000000000ULL);
		ts.tv_nsec = (long)(wait % 1000000000ULL);
		if (sigtimedwait(mask, NULL, &ts) > 0)
			break;
		proc_sampler__tick(s);
		/* The only target, not followed: nothing else to fold. */
		if (s->gone || collector__live_targets(c) <= 0) {
			s->gone = true;
			break;
		}
	}
	proc_sampler__end(s);
snapshot:
	/* calls in flight timed to the last sample, like the threads */
	err = s->t_last ? collector__snapshot_at(c, s->t_last, model) :
			  collector__snapshot(c, model);
	if (err)
		pr_err("cannot read the collected data: %s", strerror(-err));
	return err;
}

/* The target's rows: the process with its pid and start time. */
static const struct sc_proc *find_proc(const struct sc_model *m,
				       const struct proc_sampler *s)
{
	uint64_t tick_ns = 1000000000ULL / (uint64_t)procfs_ticks_per_s();
	const struct sc_proc *any = NULL;

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *p = &m->procs[i];
		uint64_t ticks = p->start_ns / tick_ns;

		if (p->pid != (uint32_t)s->pid)
			continue;
		if (ticks + 1 >= s->first.starttime_ticks &&
		    ticks <= s->first.starttime_ticks + 1)
			return p;
		any = p;
	}
	/* Without a start time match, a lone process of that pid is it. */
	return any;
}

static int judge(const struct verdict_opts *o, const struct proc_sampler *s,
		 const struct sc_model *m, const struct calibration *cal,
		 bool saved, struct output *out)
{
	const struct sc_proc *p = find_proc(m, s);
	const struct cal_loop_result *fl = calibration__loop(cal,
							     CAL_FLOOR_LOOP),
				     *vd = calibration__loop(cal,
							     CAL_VDSO_LOOP);
	double hz = (double)procfs_ticks_per_s();
	struct verdict_input in = {
		.rows = p ? p->rows : NULL,
		.nrows = p ? p->nrows : 0,
		.wall_s = (double)(s->t_last - s->t_first) / 1e9,
		.thread_s = s->thread_s,
		.utime_s =
			(double)(s->last.utime_ticks - s->first.utime_ticks) /
			hz,
		.stime_s =
			(double)(s->last.stime_ticks - s->first.stime_ticks) /
			hz,
		.floor_ns = fl ? fl->ns_per_call : 0,
		.vdso_ns = vd ? vd->ns_per_call : 0,
		.probe_ns = cal->probe.measured ? cal->probe.overhead_ns : 0,
		.probe_reported_ns =
			cal->probe.measured ? cal->probe.reported_ns : 0,
	};
	struct verdict_meta meta = {
		.pid = s->pid,
		.comm = s->first.comm,
		.exited = s->gone,
		.threads = s->last.num_threads,
		.cal = cal,
		.cal_saved = saved,
		.now = (long long)time(NULL),
		.flights = m->flights,
		.nflights = m->nflights,
		.flights_known = m->meta.flights_known,
	};
	struct verdict_path *paths = verdict_paths(&s->paths);
	struct verdict *v = NULL;
	int err;

	if (s->paths.npaths && !paths)
		pr_warn("out of memory: the files it opens are not named");
	if (s->paths.full)
		pr_info("more than %d paths seen open: later ones not counted",
			FD_PATHS_MAX);
	in.paths = paths;
	in.npaths = paths ? s->paths.npaths : 0;
	in.stacks = m->stacks;
	in.split = m->meta.split;
	in.why = m->meta.split ? &m->why : NULL;
	in.throttle = &m->meta.throttle;
	in.pid = (uint32_t)s->pid;
	if (s->have_waits)
		in.runq_s = (double)procfs_waits_delta(s->waits0, s->nwaits0,
						       s->waits1, s->nwaits1) /
			    1e9;
	err = verdict_judge(&in, &v);
	free(paths);
	if (err) {
		pr_err("cannot judge: %s", strerror(-err));
		return err;
	}
	err = o->out.format == REPORT_JSON ?
		      verdict_write_json(out->f, v, &meta) :
		      verdict_write_table(out->f, v, &meta);
	if (err)
		pr_err("cannot write the report: %s", strerror(-err));
	verdict_free(v);
	return err;
}

struct verdict_run {
	struct verdict_opts o;
	pid_t pid;	     /* the process of o.pid */
	struct proc_stat st; /* as it was before the calibration */
	struct collector *col;
	struct calibration *cal;
	bool saved; /* cal is the one saved for this boot */
	struct proc_sampler s;
	struct sc_model *m;
	struct output out;
};

static int verdict_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct verdict_run *r = ctx;
	int err = parse(argc, argv, &r->o);

	*verbosity = r->o.verbosity;
	return err;
}

/* The process, the programs (loaded, not attached), the calibration and
 * the output: privileges and kernel support first, as the calibration
 * takes a while.
 */
static int verdict_start(void *ctx, struct cmd_env *env)
{
	struct verdict_run *r = ctx;
	struct collector_opts copts;
	size_t npids = 1;
	int err;

	(void)env;
	/* A thread id stands for its process. */
	r->pid = r->o.pid;
	if (target_resolve_pids(&r->pid, &npids))
		return EXIT_FAIL;
	if (r->pid == getpid()) {
		pr_err("cannot judge pid %d: that is scprof itself", r->pid);
		return EXIT_FAIL;
	}
	err = proc_sampler_read_live(r->pid, 0, &r->st);
	if (err) {
		pr_err("cannot judge pid %d: %s", (int)r->pid,
		       err == -ESRCH ? "no such process (or it has exited)" :
				       strerror(-err));
		return EXIT_FAIL;
	}
	verdict_plan(&r->o, &copts);
	if (collector__open(&r->col, &copts) ||
	    get_calibration(&r->o, &r->cal, &r->saved) ||
	    output_open(&r->out, r->o.out.output, stdout))
		return EXIT_FAIL;
	return 0;
}

static int verdict_loop(void *ctx, struct cmd_env *env)
{
	struct verdict_run *r = ctx;
	int err;

	/* The same process as before the calibration, not a new one given
	 * its pid: the one that started at the same time.
	 */
	err = profile(&r->o, r->col, &env->mask, r->pid, r->st.starttime_ticks,
		      &r->s, &r->m);
	/* Detach before judging: the report is not the target's cost. */
	collector__destroy(r->col);
	r->col = NULL;
	return err ? EXIT_FAIL : 0;
}

static int verdict_report(void *ctx, struct cmd_env *env)
{
	struct verdict_run *r = ctx;
	const struct proc_sampler *s = &r->s;

	(void)env;
	if (s->t_last == s->t_first) {
		pr_err("cannot judge pid %d: it exited before it could be "
		       "profiled",
		       r->pid);
		return EXIT_FAIL;
	}
	if (s->gone)
		pr_warn("pid %d exited after %.1f s: judging what was seen",
			r->pid, (double)(s->t_last - s->t_first) / 1e9);
	if (judge(&r->o, s, r->m, r->cal, r->saved, &r->out) ||
	    output_commit(&r->out))
		return EXIT_FAIL;
	return 0;
}

static void verdict_teardown(void *ctx, int status)
{
	struct verdict_run *r = ctx;

	(void)status;
	collector__destroy(r->col);
	output_abort(&r->out);
	model_free(r->m);
	calibration__free(r->cal);
	proc_sampler__free(&r->s);
}

/* The stop signals are blocked for the profile only: during the
 * calibration they end scprof as they would any program.
 */
static const struct cmd_ops verdict_ops = {
	.prog = "scprof verdict",
	.signals = CMD_SIGNALS_LOOP,
	.parse = verdict_parse,
	.start = verdict_start,
	.loop = verdict_loop,
	.report = verdict_report,
	.teardown = verdict_teardown,
};

int cmd_verdict(int argc, char **argv)
{
	struct verdict_run r = {};

	return cmd_run(&verdict_ops, &r, argc, argv);
}

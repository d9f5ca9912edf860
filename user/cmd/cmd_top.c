// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termcap.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <bpf/libbpf.h>

#include "cmd/cmd_top.h"
#include "cmd/commands.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/cgroups.h"
#include "collect/collector.h"
#include "collect/duty.h"
#include "collect/target.h"
#include "model/delta.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/signals.h"
#include "util/terminfo.h"

/* ---- command line ---------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: scprof top [OPTIONS] [-a | -p PID[,PID...] | --cgroup PATH]\n"
	      "\n"
	      "A live view of the busiest processes by syscall rate: calls and errors per\n"
	      "second, error share, p99 latency, share of wall time inside syscalls and\n"
	      "of that time the shares waiting for a CPU and blocked, and each process's\n"
	      "top syscalls, refreshed every interval. Keys: c, e, p, t\n"
	      "sort by calls/s, errors/s, p99, time in syscalls; g switches the rows\n"
	      "between processes, threads, systemd units and containers; q quits.\n"
	      "\n"
	      "Targets (default: the whole system, scprof excepted):\n"
	      "  -a, --all             the whole system\n"
	      "  -p, --pid PID[,PID]   running processes, all their threads\n"
	      "      --cgroup PATH     every task under a cgroup v2 directory\n"
	      "  -f, --follow          with -p, also children forked by the targets\n"
	      "      --max-entries N   stats map size (default 16384)\n"
	      "      --max-procs N     process map size (default 8192)\n"
	      "\n"
	      "Display:\n"
	      "  -i, --interval SECS   refresh every SECS seconds (default 1)\n"
	      "  -s, --sort KEY        calls (default), errors, p99 or time\n"
	      "  -g, --group KEY       rows per pid (default), tid, comm, cgroup, unit,\n"
	      "                        container, pod or qos, as scprof --by groups them\n"
	      "                        (process and thread: pid and tid)\n"
	      "  -b, --batch           plain-text frames on stdout, for scripts and logs\n"
	      "  -n, --frames N        stop after N frames\n"
	      "  -d, --duration SECS   stop after SECS seconds\n"
	      "      --rows N          processes per frame with --batch (default 20, 0: all)\n"
	      "      --latency-duty RATIO  time calls for this share of each interval\n"
	      "                        only (0 to 1, as the daemon does): calls/s and\n"
	      "                        errors/s stay exact, P99, IN-SYS%, WAIT% and\n"
	      "                        BLK% come from the calls timed, at a fraction of\n"
	      "                        the cost\n"
	      "  -v, --verbose         more messages (-vv: libbpf's too)\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Columns: CALLS/s, ERRORS/s, ERR% (of the calls), P99-us (the interval's\n"
	      "p99 latency), IN-SYS% (wall time inside syscalls, summed over threads, as\n"
	      "a share of the interval), WAIT% and BLK% (of the time of the calls that\n"
	      "returned in the interval, the shares spent waiting for a CPU and blocked,\n"
	      "asleep; the rest ran on a CPU; - when no call returned timed), TOP\n"
	      "SYSCALLS (calls/s).\n"
	      "IN-SYS% includes calls still in flight (a thread blocked for the whole\n"
	      "interval counts 100%); \"[N in a syscall now, longest CALL S s]\" lists a\n"
	      "process's threads inside a syscall at the frame (those running since before\n"
	      "scprof attached count from then).\n"
	      "\n"
	      "With -p, --batch stops once every target has exited. Exit status: 0, 1 on\n"
	      "a runtime error, 2 on a usage error (also: no terminal without --batch).\n",
	      f);
}

enum {
	OPT_ROWS = CLI_OPT_OWN,
	OPT_LATENCY_DUTY,
};

static const struct option long_opts[] = {
	CLI_TARGET_OPTIONS,
	{ "interval", required_argument, NULL, 'i' },
	{ "sort", required_argument, NULL, 's' },
	{ "group", required_argument, NULL, 'g' },
	{ "batch", no_argument, NULL, 'b' },
	{ "frames", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'd' },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "latency-duty", required_argument, NULL, OPT_LATENCY_DUTY },
	CLI_COMMON_OPTIONS,
	{},
};

static int top_option(void *ctx, int c, const char *arg);

static const struct cli_cmd top_cmd = {
	.prog = "scprof top",
	.usage = usage,
	.short_opts = ":ap:fi:s:g:bn:d:vqh",
	.long_opts = long_opts,
	.option = top_option,
	.default_target = TARGET_ALL,
	.stray_hint = "top watches running processes (use -p PID or "
		      "--cgroup PATH)",
};

static int top_option(void *ctx, int c, const char *arg)
{
	const struct cli_cmd *cmd = &top_cmd;
	struct top_opts *o = ctx;
	uint64_t v;

	switch (c) {
	case 'i':
		if (cli_parse_seconds(arg, &o->interval_s) ||
		    o->interval_s < 0.1)
			return cli_error(cmd,
					 "invalid interval '%s': expected a "
					 "number of seconds >= 0.1",
					 arg);
		return 0;
	case 'd':
		return cli_duration(cmd, arg, &o->duration_s);
	case 's':
		if (top_sort_parse(arg, &o->sort))
			return cli_error(cmd,
					 "invalid sort key '%s': expected "
					 "calls, errors, p99 or time",
					 arg);
		return 0;
	case 'g':
		if (top_group_parse(arg, &o->group))
			return cli_error(cmd,
					 "invalid group '%s': expected "
					 "pid, tid, comm, cgroup, unit, "
					 "container, pod or qos",
					 arg);
		return 0;
	case 'b':
		o->batch = true;
		return 0;
	case 'n':
		if (cli_parse_u64(arg, 1, 1000000000, &v))
			return cli_error(cmd,
					 "invalid frame count '%s': expected "
					 "a number >= 1",
					 arg);
		o->frames = (unsigned long)v;
		return 0;
	case OPT_ROWS:
		if (cli_parse_u64(arg, 0, 1000000, &v))
			return cli_error(cmd,
					 "invalid --rows '%s': expected a "
					 "number >= 0",
					 arg);
		o->rows = (unsigned int)v;
		return 0;
	case OPT_LATENCY_DUTY:
		return cli_ratio(cmd, "--latency-duty", arg, &o->latency_duty);
	default:
		return -ENOENT;
	}
}

int top_parse_args(int argc, char **argv, struct top_opts *o)
{
	const struct cli_shared sh = {
		.target = &o->target,
		.verbosity = &o->verbosity,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->interval_s = 1;
	o->rows = 20;
	o->latency_duty = -1;
	o->verbosity = LOG_WARN;
	err = cli_parse(&top_cmd, argc, argv, o, &sh);
	if (err)
		return err;
	if (!o->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return cli_error(&top_cmd, "the live view needs a terminal; "
					   "use --batch for plain-text frames");
	return 0;
}

void top_free_opts(struct top_opts *o)
{
	cli_target_free(&o->target);
}

/* ---- the loop ------------------------------------------------------------- */

struct top {
	struct top_opts *o;
	struct target_found found; /* -p's processes, as found at start */
	struct collector *col;
	struct sc_model *prev;
	uint64_t t_prev;
	struct top_frame frame; /* the last one; empty before the first */
	enum top_sort sort;
	enum top_group group;
	bool regroup;	      /* g was pressed: reopen for the new group */
	unsigned long frames; /* built so far */
	SCREEN *scr;	      /* the live view; NULL with --batch */
	struct duty *duty;    /* --latency-duty: the windows */
	uint64_t timed_prev;  /* time inside them, at the last frame */
};

/* One interval: snapshot, delta against the last one, fold the exited. */
static int tick(struct top *t)
{
	struct sc_model *cur = NULL, *d;
	uint64_t now = clock_mono_ns();
	int err;

	err = collector__snapshot_at(t->col, now, &cur);
	if (err)
		return err;
	d = model_delta(cur, t->prev);
	if (!d) {
		model_free(cur);
		return -ENOMEM;
	}
	top_frame_free(&t->frame);
	if (t->duty) {
		uint64_t timed = duty__timed_ns(t->duty, now);

		err = top_frame_build_timed(d, now - t->t_prev,
					    timed - t->timed_prev, t->sort,
					    t->group, &t->frame);
		t->timed_prev = timed;
	} else {
		err = top_frame_build_by(d, now - t->t_prev, t->sort, t->group,
					 &t->frame);
	}
	model_free(d);
	model_free(t->prev);
	t->prev = cur;
	t->t_prev = now;
	if (err)
		return err;
	t->frames++;
	/* After the snapshot: a process that exited in this interval has
	 * shown its last calls; now its cells can go.
	 */
	err = collector__harvest(t->col);
	if (t->o->target.kind == TARGET_PIDS &&
	    collector__live_targets(t->col) <= 0)
		t->frame.targets_gone = true;
	return err;
}

static int print_frame(struct top *t)
{
	char **lines;
	size_t n;
	int err;

	err = top_frame_lines(&t->frame, t->sort, t->o->rows, false, &lines,
			      &n);
	if (!err) {
		if (t->frames > 1)
			putchar('\n');
		for (size_t i = 0; i < n; i++)
			puts(lines[i]);
		if (fflush(stdout) || ferror(stdout))
			err = -EIO;
	}
	top_frame_lines_free(lines, n);
	return err;
}

static void draw(struct top *t)
{
	char **lines = NULL;
	size_t n = 0;

	erase();
	if (!t->frames) {
		mvprintw(0, 0,
			 "scprof top - collecting for %.1f s (per %s)...   "
			 "keys: c e p t sort, g group, q quit",
			 t->o->interval_s, top_group_name(t->group));
	} else if (!top_frame_lines(&t->frame, t->sort, 0, true, &lines, &n)) {
		for (size_t i = 0; i < n && (int)i < LINES; i++) {
			if (i == 2)
				attron(A_REVERSE);
			mvaddnstr((int)i, 0, lines[i], COLS);
			if (i == 2) {
				for (int x = (int)strlen(lines[i]); x < COLS;
				     x++)
					addch(' ');
				attroff(A_REVERSE);
			}
		}
	}
	top_frame_lines_free(lines, n);
	refresh();
}

/* The collector for t->group: entries per thread for threads, cgroup ids
 * for units and containers. A new group starts over (a new collector).
 */
static int open_collector(struct top *t)
{
	bool sampled = t->o->latency_duty >= 0;
	struct collector_opts copts;
	/* --latency-duty: one period a frame, each frame's window opening
	 * at its start.
	 */
	struct duty_opts dopts = { .ratio = t->o->latency_duty,
				   .period_s = t->o->interval_s };
	int err;

	duty__free(t->duty);
	t->duty = NULL;
	t->timed_prev = 0;
	collector__destroy(t->col);
	t->col = NULL;
	model_free(t->prev);
	t->prev = NULL;
	top_frame_free(&t->frame);
	t->frames = 0;
	top_plan(t->o, &t->found, t->group, &copts);
	err = target_attach(&t->found, &copts, &t->col);
	t->t_prev = clock_mono_ns();
	if (!err && sampled)
		err = duty__new(&t->duty, t->col, &dopts, t->t_prev);
	return err;
}

/* A key: true to quit. */
static bool on_key(struct top *t, int ch)
{
	if (ch == 'q' || ch == 'Q')
		return true;
	if (ch == 'g') {
		t->group = (t->group + 1) % TOP_GROUP_COUNT;
		t->regroup = true;
		return false;
	}
	if (!top_sort_by_key(ch, &t->sort))
		top_frame_sort(&t->frame, t->sort);
	return false;
}

static int run(struct top *t, int sigfd)
{
	uint64_t ival = (uint64_t)(t->o->interval_s * 1e9);
	uint64_t next = t->t_prev + ival;
	uint64_t deadline =
		t->o->duration_s > 0 ?
			t->t_prev + (uint64_t)(t->o->duration_s * 1e9) :
			UINT64_MAX;
	bool tty = !t->o->batch;
	struct pollfd pfd[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = tty ? STDIN_FILENO : -1, .events = POLLIN },
	};
	int err;

	if (tty)
		draw(t);
	for (;;) {
		uint64_t now = clock_mono_ns(),
			 until = next < deadline ? next : deadline, wake;
		int ms;

		if (t->duty) {
			err = duty__tick(t->duty, now, &wake);
			if (err)
				return err;
			if (wake < until)
				until = wake;
		}
		ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;

		if (poll(pfd, 2, ms) < 0 && errno != EINTR)
			return -errno;
		if (pfd[0].revents & POLLIN)
			return 0; /* SIGINT, SIGTERM, SIGHUP */
		if (tty) {
			int ch;

			while ((ch = getch()) != ERR) {
				if (on_key(t, ch))
					return 0;
				if (t->regroup) {
					t->regroup = false;
					err = open_collector(t);
					if (err)
						return err;
					next = t->t_prev + ival;
				}
				draw(t);
			}
		}
		now = clock_mono_ns();
		if (now >= deadline)
			return 0;
		if (now < next)
			continue;
		/* the next window opens before the frame's snapshot */
		if (t->duty) {
			err = duty__tick(t->duty, now, &wake);
			if (err)
				return err;
		}
		err = tick(t);
		if (err)
			return err;
		while (next <= now)
			next += ival;
		if (tty) {
			draw(t);
		} else {
			err = print_frame(t);
			if (err)
				return err;
			if (t->frame.targets_gone)
				return 0;
		}
		if (t->o->frames && t->frames >= t->o->frames)
			return 0;
	}
}

static int top_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct top *t = ctx;
	int err = top_parse_args(argc, argv, t->o);

	if (err)
		top_free_opts(t->o);
	t->sort = t->o->sort;
	*verbosity = t->o->verbosity;
	return err;
}

/* The modes top reads keys in, on the screen just opened. */
static void screen_modes(void)
{
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
}

/*
 * TERM without a terminfo entry: a built-in one when TERM is one of them or
 * there is no terminfo database at all (a static scprof in an empty root).
 * 0 or -ENOTTY after a one-line error.
 */
static int open_screen_builtin(struct top *t, const char *term)
{
	struct terminfo_fallback f;
	const char *why = NULL;
	int err = terminfo_fallback(term, &f, &why);

	if (err == -ENOENT) {
		pr_err("cannot use the terminal: is TERM right? (--batch "
		       "needs none)");
		return -ENOTTY;
	}
	if (err) {
		pr_err("cannot use the terminal: no terminfo entry for TERM=%s "
		       "and the built-in %s one: %s (%s); --batch needs none",
		       term, f.name ? f.name : "?", why, strerror(-err));
		return -ENOTTY;
	}
	if (strcmp(term, f.name))
		pr_warn("no terminfo database: TERM=%s shown with the built-in "
			"%s description",
			term, f.name);
	t->scr = newterm(f.name, stdout, stdin);
	terminfo_fallback_cleanup(&f);
	if (!t->scr) {
		pr_err("cannot use the terminal with the built-in %s "
		       "description (--batch needs none)",
		       f.name);
		return -ENOTTY;
	}
	screen_modes();
	return 0;
}

/* The full-screen terminal: 0 or -ENOTTY after a one-line error. */
static int open_screen(struct top *t)
{
	const char *term = getenv("TERM");

	setlocale(LC_ALL, "");
	/* Whether terminfo knows TERM, asked first: initscr would exit by
	 * itself, newterm fail leaving memory behind.
	 */
	if (term && tgetent(NULL, term) == 1)
		t->scr = newterm(NULL, stdout, stdin);
	else if (term && *term)
		return open_screen_builtin(t, term);
	if (!t->scr) {
		pr_err("cannot use the terminal: is TERM right? (--batch "
		       "needs none)");
		return -ENOTTY;
	}
	screen_modes();
	return 0;
}

static int top_start(void *ctx, struct cmd_env *env)
{
	struct top *t = ctx;
	struct top_opts *o = t->o;
	int err;

	(void)env;
	err = target_find(&o->target, false, &t->found);
	if (err)
		return err;
	t->group = o->group;
	if (top_group_needs_cgroups(t->group)) {
		char mnt[4096];

		if (cgroups_v2_mount(mnt, sizeof(mnt)) == -ENOENT) {
			pr_err("-g cgroup, unit, container, pod and qos need cgroup v2, and no "
			       "cgroup2 file system is mounted here");
			return -ENOTSUP;
		}
	}
	err = open_collector(t);
	if (err)
		return err;
	return o->batch ? 0 : open_screen(t);
}

static int top_loop(void *ctx, struct cmd_env *env)
{
	struct top *t = ctx;
	int err = run(t, env->sigfd);

	if (t->scr) {
		endwin();
		delscreen(t->scr);
		t->scr = NULL;
	}
	if (err)
		pr_err("%s", err == -EIO ? "cannot write the frames" :
					   strerror(-err));
	return err;
}

static void top_teardown(void *ctx, int status)
{
	struct top *t = ctx;

	(void)status;
	duty__free(t->duty);
	collector__destroy(t->col);
	top_frame_free(&t->frame);
	model_free(t->prev);
	target_found_free(&t->found);
	top_free_opts(t->o);
}

static const struct cmd_ops top_ops = {
	.prog = "scprof top",
	.signals = CMD_SIGNALS_FD,
	.parse = top_parse,
	.start = top_start,
	.loop = top_loop,
	.teardown = top_teardown,
};

int cmd_top(int argc, char **argv)
{
	struct top_opts o;
	struct top t = { .o = &o };

	return cmd_run(&top_ops, &t, argc, argv);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof calibrate`: measure what a syscall costs here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cmd/cmd_calibrate.h"
#include "analyze/calibrate.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "render/calib_cache.h"
#include "render/calib_report.h"
#include "render/output.h"
#include "util/log.h"
#include "util/strlist.h"

struct calibrate_cli {
	bool quick;
	bool *want; /* NULL: every loop */
	bool probe;
	bool save;
	bool list;
	struct cli_calib_opts out;
	int verbosity;
};

static void usage(FILE *f)
{
	fputs("Usage: scprof calibrate [OPTIONS]\n"
	      "\n"
	      "Measure what a system call costs on this machine, with built-in loops that\n"
	      "repeat the classic experiments: the raw syscall floor, a vDSO call that\n"
	      "does not cross into the kernel, 1-byte against 64 KiB reads, read() against\n"
	      "mmap for copying a file, getrandom per request against a buffered one, and\n"
	      "fopen/fread/fclose per request. Each loop runs pinned to one CPU, scaled so\n"
	      "that one timed run lasts 80 ms (200 ms for a full run), and is repeated 7\n"
	      "(15) times: ns/call is the median run, min and max the fastest and slowest,\n"
	      "spread their distance as a share of the median, all after an empty loop's\n"
	      "cost per iteration is taken off. The run reports the CPU model, the kernel\n"
	      "and the speculative-execution mitigations in force, which change what a\n"
	      "crossing costs.\n"
	      "\n"
	      "The probe effect: the floor loop runs again in alternating pairs, bare and\n"
	      "with scprof's own BPF programs attached and recording this process. The\n"
	      "median difference, probe_overhead_ns, is what scprof adds to each syscall\n"
	      "of a process it profiles; scprof verdict takes it off its figures.\n"
	      "\n"
	      "A calibration that measured the floor and the probe effect is saved for\n"
	      "this boot (keyed by /proc/sys/kernel/random/boot_id) and used by\n"
	      "scprof verdict, which otherwise runs the quick calibration itself.\n"
	      "\n"
	      "Options:\n"
	      "      --quick           about 15 s instead of about a minute: 7 runs of\n"
	      "                        80 ms per loop instead of 15 runs of 200 ms\n"
	      "  -l, --loops LIST      only these loops, comma-separated (see --list)\n"
	      "      --list            print the loop names and what each measures\n"
	      "      --no-probe        do not measure the probe effect (no BPF needed)\n"
	      "      --format FMT      table (default) or json: one object with loops\n"
	      "                        [{name, ns_per_call, min_ns, median_ns, max_ns,\n"
	      "                        calls, runs, bytes_per_call?, ns_per_byte?}],\n"
	      "                        mitigations {name: state}, probe_overhead_ns,\n"
	      "                        probe, machine, loop_overhead_ns, quick, created,\n"
	      "                        version\n"
	      "  -o, --output FILE     write the report to FILE (atomically) instead of\n"
	      "                        stdout; - is stdout (./- names a file called -)\n"
	      "      --cache FILE      where to save the calibration (default\n"
	      "                        " CALIB_CACHE_PATH ")\n"
	      "      --no-save         do not save it\n"
	      "  -v, --verbose         more messages\n"
	      "  -q, --quiet           only errors, and no progress line\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Figures are this machine's, now: other load on the CPU shows up as spread.\n"
	      "Exit status: 0, 1 on a runtime error, 2 on a usage error.\n",
	      f);
}

enum {
	OPT_QUICK = CLI_OPT_OWN,
	OPT_LIST,
	OPT_NO_PROBE,
	OPT_NO_SAVE,
};

static const struct option long_opts[] = {
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "loops", required_argument, NULL, 'l' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "no-probe", no_argument, NULL, OPT_NO_PROBE },
	CLI_CALIB_OPTIONS,
	{ "no-save", no_argument, NULL, OPT_NO_SAVE },
	CLI_COMMON_OPTIONS,
	{},
};

static int calibrate_option(void *ctx, int c, const char *arg);

static const struct cli_cmd cmd = {
	.prog = "scprof calibrate",
	.usage = usage,
	.short_opts = ":l:o:vqh",
	.long_opts = long_opts,
	.option = calibrate_option,
};

/* "a,b,c" into want[]; unknown or repeated names are usage errors. */
static int parse_loops(const char *s, bool **want)
{
	const char *pos = s, *item;
	size_t len;

	free(*want);
	*want = calloc(CAL_NLOOPS, sizeof(**want));
	if (!*want)
		return cli_error(&cmd, "out of memory");
	while (strlist_next(&pos, &item, &len)) {
		char name[64];
		int idx;

		if (!len)
			return cli_error(&cmd,
					 "empty loop name in --loops '%s'", s);
		if (strlist_copy(item, len, name, sizeof(name)))
			return cli_error(&cmd,
					 "unknown loop '%.*s': --list names "
					 "them",
					 (int)len, item);
		idx = cal_find_loop(name);
		if (idx < 0)
			return cli_error(&cmd,
					 "unknown loop '%s': --list names them",
					 name);
		if ((*want)[idx])
			return cli_error(&cmd, "loop '%s' is named twice",
					 name);
		(*want)[idx] = true;
	}
	return 0;
}

static int calibrate_option(void *ctx, int c, const char *arg)
{
	struct calibrate_cli *o = ctx;

	switch (c) {
	case OPT_QUICK:
		o->quick = true;
		return 0;
	case 'l':
		return parse_loops(arg, &o->want) ? EXIT_USAGE : 0;
	case OPT_LIST:
		o->list = true;
		return 0;
	case OPT_NO_PROBE:
		o->probe = false;
		return 0;
	case OPT_NO_SAVE:
		o->save = false;
		return 0;
	default:
		return -ENOENT;
	}
}

static void list_loops(void)
{
	for (size_t i = 0; i < CAL_NLOOPS; i++)
		printf("%-24s %s\n", cal_loop(i)->name, cal_loop(i)->desc);
}

/* 0 to run, 1 after --help/--list, EXIT_USAGE after an error. */
static int parse(int argc, char **argv, struct calibrate_cli *o)
{
	const struct cli_shared sh = {
		.calib = &o->out,
		.verbosity = &o->verbosity,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->probe = true;
	o->save = true;
	o->out.cache = CALIB_CACHE_PATH;
	o->verbosity = LOG_WARN;
	err = cli_parse(&cmd, argc, argv, o, &sh);
	if (err || !o->list)
		return err;
	list_loops();
	return 1;
}

int cmd_calibrate_run(struct calibrate_opts *co, const char *prefix,
		      int verbosity, struct calibration **cal)
{
	struct calib_progress prog = {
		.prefix = prefix,
		.on = verbosity >= LOG_WARN && isatty(STDERR_FILENO),
	};
	struct collector_opts probe;
	int err;

	calibrate_plan(&probe);
	co->probe_opts = &probe;
	co->progress = calib_progress_show;
	co->progress_ctx = &prog;
	err = calibrate__run(co, cal);
	calib_progress_end(&prog);
	return err;
}

struct calibrate_run {
	struct calibrate_cli o;
	struct calibration *cal;
	struct output out;
};

static int calibrate_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct calibrate_run *r = ctx;
	int err = parse(argc, argv, &r->o);

	if (err) {
		free(r->o.want);
		r->o.want = NULL;
	}
	*verbosity = r->o.verbosity;
	return err;
}

static int calibrate_start(void *ctx, struct cmd_env *env)
{
	struct calibrate_run *r = ctx;
	struct calibrate_opts co = {
		.quick = r->o.quick,
		.want = r->o.want,
		.probe = r->o.probe,
	};

	(void)env;
	if (output_open(&r->out, r->o.out.output, stdout))
		return EXIT_FAIL;
	return cmd_calibrate_run(&co, cmd.prog, r->o.verbosity, &r->cal);
}

/* The report; then the calibration is saved for verdict. */
static int calibrate_report(void *ctx, struct cmd_env *env)
{
	struct calibrate_run *r = ctx;
	int err;

	(void)env;
	err = r->o.out.format == REPORT_JSON ?
		      calib_write_json(r->out.f, r->cal) :
		      calib_write_table(r->out.f, r->cal);
	if (err) {
		pr_err("cannot write the report: %s", strerror(-err));
		return EXIT_FAIL;
	}
	if (output_commit(&r->out))
		return EXIT_FAIL;
	if (r->o.save && calib_usable(r->cal) &&
	    !calib_cache_save(r->o.out.cache, r->cal))
		pr_info("saved as %s for scprof verdict", r->o.out.cache);
	return 0;
}

static void calibrate_teardown(void *ctx, int status)
{
	struct calibrate_run *r = ctx;

	(void)status;
	output_abort(&r->out);
	calibration__free(r->cal);
	free(r->o.want);
}

static const struct cmd_ops calibrate_ops = {
	.prog = "scprof calibrate",
	.signals = CMD_SIGNALS_NONE,
	.parse = calibrate_parse,
	.start = calibrate_start,
	.report = calibrate_report,
	.teardown = calibrate_teardown,
};

int cmd_calibrate(int argc, char **argv)
{
	struct calibrate_run r = {};

	return cmd_run(&calibrate_ops, &r, argc, argv);
}

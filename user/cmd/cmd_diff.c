// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof diff A B`: did the change help? Two runs compared. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "analyze/diff_input.h"
#include "analyze/diff_load.h"
#include "analyze/diff_stacks.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/run.h"
#include "render/diff_report.h"
#include "render/flamegraph.h"
#include "render/output.h"
#include "util/escape.h"
#include "util/log.h"

/* Exit status, as diff(1)'s. */
#define DIFF_EXIT_SAME 0
#define DIFF_EXIT_CHANGED 1
#define DIFF_EXIT_TROUBLE 2

static void usage(FILE *f)
{
	fputs("Usage: scprof diff [OPTIONS] A B\n"
	      "\n"
	      "Did the change help? Compare two runs of scprof, A (before) and B\n"
	      "(after): JSON reports (scprof --format json -o FILE), or interval\n"
	      "reports (scprof -i SECS --format json -o FILE: JSON lines). Per syscall,\n"
	      "and per group when both runs were made with the same --by keys:\n"
	      "  calls/s, errors/s   calls and failed calls per second of run\n"
	      "  mean, p50, p99      the latency of a call\n"
	      "  time/s              time inside the call per second of run\n"
	      "Figures are per second, so runs of different lengths compare.\n"
	      "\n"
	      "Each change is judged against the runs' own noise. With intervals (2\n"
	      "or more a side; a last one shorter than half the median is left out),\n"
	      "a change counts when |B - A| > 3 sqrt(seA^2 + seB^2), se being the\n"
	      "standard error of the values of the intervals, and when it is at least\n"
	      "--min-change; else it is ~, no change. A time figure (mean, p50, p99,\n"
	      "time/s) differs between reruns of the same work by more than its\n"
	      "intervals show: its se adds 4 times the spread of its intervals (se^2\n"
	      "= sd^2/n + (4 sd)^2); counts repeat, their se is the intervals' alone.\n"
	      "With intervals on one side only, that side's relative spread serves\n"
	      "for both. With none, the changes of at least --min-change are listed\n"
	      "unjudged (and count for the exit status), and a line says so. A\n"
	      "syscall only one run made is new or gone. The biggest changes come\n"
	      "first; the syscalls with no change are named in one list.\n"
	      "\n"
	      "A and B may instead be folded stack files (scprof --stacks --folded\n"
	      "FILE): the output is then one line per stack with both counts, STACK\n"
	      "COUNT_A COUNT_B (difffolded.pl's format); a stack changed when its\n"
	      "share of the samples moved by more than 3 standard errors of sampling\n"
	      "and by --min-change of its share in A.\n"
	      "\n"
	      "Options:\n"
	      "      --format FMT      table (default) or json: a list of {syscall,\n"
	      "                        fd_type?, abi?, group?, figure, a, b,\n"
	      "                        change_pct, threshold_pct, significant,\n"
	      "                        state} for every figure compared\n"
	      "                        (threshold_pct: the smallest change that\n"
	      "                        counts; it and significant null when the\n"
	      "                        noise is not known)\n"
	      "  -o, --output FILE     write to FILE (atomically) instead of stdout;\n"
	      "                        - is stdout (./- names a file called -)\n"
	      "      --flamegraph SVG  with folded stacks: a differential flame graph,\n"
	      "                        widths from B, red frames grew their share of\n"
	      "                        the samples, blue ones shrank (- : stdout,\n"
	      "                        with -o FILE)\n"
	      "      --min-change PCT  smaller changes are no change (default 5)\n"
	      "  -v, --verbose         list every figure: unchanged ones (~) and\n"
	      "                        changes seen in too few intervals to judge (?)\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit status, as diff's: 0 when nothing changed beyond noise, 1 when\n"
	      "something did, 2 on trouble (a file missing, not JSON, not a report of\n"
	      "scprof, or a report and a folded stack file).\n",
	      f);
}

enum {
	OPT_FLAMEGRAPH = CLI_OPT_OWN,
	OPT_MIN_CHANGE,
};

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
	{ "min-change", required_argument, NULL, OPT_MIN_CHANGE },
	CLI_COMMON_OPTIONS,
	{},
};

struct diff_cli {
	struct cli_calib_opts out;
	const char *flamegraph; /* --flamegraph FILE */
	double min_change_pct;
	int verbosity;
	char **files; /* A and B */
};

static int diff_option(void *ctx, int c, const char *arg);

static const struct cli_cmd cmd = {
	.prog = "scprof diff",
	.usage = usage,
	.short_opts = ":o:vqh",
	.long_opts = long_opts,
	.option = diff_option,
	.operands = 2,
	.operands_usage = "two files to compare: scprof diff A B",
};

static int diff_option(void *ctx, int c, const char *arg)
{
	struct diff_cli *o = ctx;

	switch (c) {
	case OPT_FLAMEGRAPH:
		return cli_file_option(&cmd, arg, "--flamegraph",
				       &o->flamegraph);
	case OPT_MIN_CHANGE:
		if (cli_parse_number(arg, 0, 1000, &o->min_change_pct))
			return cli_error(&cmd,
					 "invalid --min-change '%s': expected "
					 "a percentage from 0 to 1000",
					 arg);
		return 0;
	default:
		return -ENOENT;
	}
}

static int diff_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct diff_cli *o = ctx;
	const struct cli_shared sh = {
		.calib = &o->out,
		.verbosity = &o->verbosity,
		.operands = &o->files,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->verbosity = LOG_WARN;
	o->out.format = REPORT_TABLE;
	o->min_change_pct = DIFF_MIN_CHANGE_PCT;
	err = cli_parse(&cmd, argc, argv, o, &sh);
	*verbosity = o->verbosity;
	if (!err && output_is_stdout(o->flamegraph) &&
	    (!o->out.output || output_is_stdout(o->out.output)))
		return cli_error(&cmd, "--flamegraph - and the comparison both "
				       "go to standard output: give -o FILE");
	return err;
}

/* Both files, read, and what each holds. */
struct inputs {
	char *text[2];
	size_t len[2];
	enum diff_input kind[2];
};

static const char *kind_name(enum diff_input k)
{
	return k == DIFF_INPUT_JSON ? "a JSON report" : "folded stacks";
}

/* 0, or -EINVAL after saying why in one line. */
static int read_inputs(const struct diff_cli *o, struct inputs *in)
{
	for (int i = 0; i < 2; i++) {
		const char *f = o->files[i];
		char *e;

		if (diff_read_file(f, &in->text[i], &in->len[i]))
			return -EINVAL;
		in->kind[i] = diff_sniff(in->text[i], in->len[i]);
		if (in->kind[i] != DIFF_INPUT_OTHER)
			continue;
		e = esc_text(f, strlen(f));
		pr_err("%s: %s", e ? e : "?",
		       in->len[i] ? "neither a JSON report of scprof nor "
				    "folded stacks" :
				    "empty: not a report of scprof");
		free(e);
		return -EINVAL;
	}
	if (in->kind[0] != in->kind[1]) {
		char *a = esc_text(o->files[0], strlen(o->files[0])),
		     *b = esc_text(o->files[1], strlen(o->files[1]));

		pr_err("%s is %s and %s %s: give two of a kind", a ? a : "A",
		       kind_name(in->kind[0]), b ? b : "B",
		       kind_name(in->kind[1]));
		free(a);
		free(b);
		return -EINVAL;
	}
	return 0;
}

static int compare_reports(const struct diff_cli *o, const struct inputs *in,
			   struct output *out)
{
	struct diff_run *ra = NULL, *rb = NULL;
	struct diff_result *res = NULL;
	struct diff_opts dopts = { .min_change_pct = o->min_change_pct };
	struct diff_report_opts ropts = { .verbose = o->verbosity >= LOG_INFO };
	int err, status = DIFF_EXIT_TROUBLE;

	if (o->flamegraph) {
		pr_err("--flamegraph draws folded stacks (scprof --stacks "
		       "--folded FILE), not JSON reports");
		return status;
	}
	err = diff_run_parse(in->text[0], in->len[0], o->files[0], &ra) ?:
		      diff_run_parse(in->text[1], in->len[1], o->files[1], &rb);
	if (err)
		goto out;
	err = diff_compare(ra, rb, &dopts, &res);
	if (err) {
		pr_err("cannot compare: %s", strerror(-err));
		goto out;
	}
	if (output_open(out, o->out.output, stdout))
		goto out;
	if (o->out.format == REPORT_JSON) {
		if (o->verbosity >= LOG_WARN)
			diff_write_notes(stderr, res);
		err = diff_write_json(out->f, res);
	} else {
		err = diff_write_table(out->f, res, &ropts);
	}
	if (err)
		pr_err("cannot write the comparison: %s", strerror(-err));
	else if (!output_commit(out))
		status = res->changed ? DIFF_EXIT_CHANGED : DIFF_EXIT_SAME;
out:
	diff_result_free(res);
	diff_run_free(ra);
	diff_run_free(rb);
	return status;
}

/* "calls", "time", "blocked time": what a folded file's counts are. */
static const char *weighed_by(enum sc_stack_weighting by)
{
	return by == SC_STACKS_BY_TIME	  ? "time" :
	       by == SC_STACKS_BY_BLOCKED ? "blocked time" :
					    "calls";
}

static int compare_stacks(const struct diff_cli *o, const struct inputs *in,
			  struct output *out)
{
	struct folded_file fa = {}, fb = {};
	struct diff_opts dopts = { .min_change_pct = o->min_change_pct };
	struct stack_diff *d = NULL;
	struct output svg = {};
	char *title = NULL;
	int err, status = DIFF_EXIT_TROUBLE;

	if (o->out.format == REPORT_JSON) {
		pr_err("--format json compares reports; folded stacks compare "
		       "as folded lines (and --flamegraph)");
		return status;
	}
	err = folded_parse(in->text[0], in->len[0], o->files[0], &fa) ?:
		      folded_parse(in->text[1], in->len[1], o->files[1], &fb);
	if (err)
		goto out;
	if (fa.by != fb.by) {
		pr_err("%s is weighted by %s and %s by %s (--stacks-by): they "
		       "do not compare",
		       o->files[0], weighed_by(fa.by), o->files[1],
		       weighed_by(fb.by));
		goto out;
	}
	err = diff_stacks(&fa, &fb, &dopts, &d);
	if (err) {
		pr_err("cannot compare: %s", strerror(-err));
		goto out;
	}
	if (o->flamegraph) {
		if (asprintf(&title, "scprof diff: %s -> %s", o->files[0],
			     o->files[1]) < 0) {
			title = NULL;
			pr_err("out of memory");
			goto out;
		}
		if (output_open(&svg, o->flamegraph, NULL))
			goto out;
		err = flamegraph_diff_svg(svg.f, d, title);
		if (err) {
			pr_err("cannot write the flame graph: %s",
			       strerror(-err));
			goto out;
		}
		if (output_commit(&svg))
			goto out;
	}
	if (output_open(out, o->out.output, stdout))
		goto out;
	err = diff_write_folded(out->f, d);
	if (err)
		pr_err("cannot write the stacks: %s", strerror(-err));
	else if (!output_commit(out))
		status = d->changed ? DIFF_EXIT_CHANGED : DIFF_EXIT_SAME;
out:
	output_abort(&svg);
	free(title);
	stack_diff_free(d);
	folded_free(&fa);
	folded_free(&fb);
	return status;
}

static int diff_report(void *ctx, struct cmd_env *env)
{
	struct diff_cli *o = ctx;
	struct inputs in = {};
	struct output out = {};
	int status = DIFF_EXIT_TROUBLE;

	(void)env;
	if (!read_inputs(o, &in))
		status = in.kind[0] == DIFF_INPUT_JSON ?
				 compare_reports(o, &in, &out) :
				 compare_stacks(o, &in, &out);
	output_abort(&out);
	free(in.text[0]);
	free(in.text[1]);
	return status;
}

static void diff_teardown(void *ctx, int status)
{
	(void)ctx;
	(void)status;
}

/* Every phase returns an exit status of its own (never a negative
 * errno, which the skeleton would make 1: "changed").
 */
static const struct cmd_ops diff_ops = {
	.prog = "scprof diff",
	.signals = CMD_SIGNALS_NONE,
	.parse = diff_parse,
	.report = diff_report,
	.teardown = diff_teardown,
};

int cmd_diff(int argc, char **argv)
{
	struct diff_cli o;

	return cmd_run(&diff_ops, &o, argc, argv);
}

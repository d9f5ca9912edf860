// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `scprof features`: what this kernel offers the BPF programs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/run.h"
#include "collect/collector.h"
#include "render/facility_report.h"
#include "render/output.h"
#include "util/log.h"

struct features_cli {
	struct cli_calib_opts out;
	int verbosity;
};

static void usage(FILE *f)
{
	fputs("Usage: scprof features [--format table|json] [-o FILE]\n"
	      "\n"
	      "The kernel facilities scprof's BPF programs adapt to, whether this kernel\n"
	      "has each, how scprof tells, and what it does without it. Every feature of\n"
	      "scprof works on Linux 5.10 and later with BTF: on a kernel that lacks one of\n"
	      "the first four, scprof loads the legacy build of its programs, which does\n"
	      "without.\n"
	      "Needs no privileges: a probe that cannot load counts as missing, so run it\n"
	      "as root to see what scprof itself would find.\n"
	      "\n"
	      "  task_btf      bpf_get_current_task_btf() (Linux 5.11)\n"
	      "  task_storage  task local storage in tracing programs (5.11)\n"
	      "  cmpxchg       BPF compare-and-swap (5.12)\n"
	      "  task_regs     bpf_task_pt_regs() (5.15)\n"
	      "  tail_calls    tail calls from programs with subprograms (5.10; arm64:\n"
	      "                6.0); without, the default build runs still, and the\n"
	      "                daemon's and top's sampled mode counts with its timing\n"
	      "                program (5 ns more a call)\n"
	      "\n"
	      "SCPROF_WITHOUT=NAME[,NAME...] (or all) makes every scprof command run as\n"
	      "on a kernel without those facilities.\n"
	      "\n"
	      "Options:\n"
	      "      --format FMT      table (default) or json\n"
	      "  -o, --output FILE     write to FILE (atomically) instead of stdout;\n"
	      "                        - is stdout (./- names a file called -)\n"
	      "  -v, --verbose         more messages\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n",
	      f);
}

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	CLI_COMMON_OPTIONS,
	{},
};

static int features_option(void *ctx, int c, const char *arg)
{
	(void)ctx;
	(void)c;
	(void)arg;
	return -ENOENT;
}

static const struct cli_cmd cmd = {
	.prog = "scprof features",
	.usage = usage,
	.short_opts = ":o:vqh",
	.long_opts = long_opts,
	.option = features_option,
	.stray_hint = "scprof features takes no arguments",
};

static int features_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct features_cli *o = ctx;
	const struct cli_shared sh = {
		.calib = &o->out,
		.verbosity = &o->verbosity,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->verbosity = LOG_WARN;
	o->out.format = REPORT_TABLE;
	err = cli_parse(&cmd, argc, argv, o, &sh);
	*verbosity = o->verbosity;
	return err;
}

static int features_report(void *ctx, struct cmd_env *env)
{
	struct features_cli *o = ctx;
	struct sc_facilities fs;
	struct output out = {};
	int err;

	(void)env;
	collector__facilities(&fs);
	if (output_open(&out, o->out.output, stdout))
		return EXIT_FAIL;
	err = facility_report(out.f, &fs, o->out.format);
	if (err) {
		pr_err("cannot write the report: %s", strerror(-err));
		output_abort(&out);
		return EXIT_FAIL;
	}
	return output_commit(&out) ? EXIT_FAIL : EXIT_OK;
}

static void features_teardown(void *ctx, int status)
{
	(void)ctx;
	(void)status;
}

static const struct cmd_ops features_ops = {
	.prog = "scprof features",
	.signals = CMD_SIGNALS_NONE,
	.parse = features_parse,
	.report = features_report,
	.teardown = features_teardown,
};

int cmd_features(int argc, char **argv)
{
	struct features_cli o;

	return cmd_run(&features_ops, &o, argc, argv);
}

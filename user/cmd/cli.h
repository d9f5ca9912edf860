/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command-line parsing: strict numbers, one-line errors, --help texts. */
#ifndef SCPROF_CLI_H
#define SCPROF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/types.h>

#include "collect/target.h"
#include "render/report.h"

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_FAIL 1  /* runtime failure: privileges, kernel, target gone */
#define EXIT_USAGE 2 /* the command line is wrong */

/* Long option codes of the shared options; a subcommand numbers its own
 * from CLI_OPT_OWN up.
 */
enum {
	CLI_OPT_CGROUP = 0x100,
	CLI_OPT_MAX_ENTRIES,
	CLI_OPT_MAX_PROCS,
	CLI_OPT_FORMAT,
	CLI_OPT_CACHE,
	CLI_OPT_OWN,
};

/* The largest pid (and thread id) Linux hands out: PID_MAX_LIMIT. */
#define CLI_PID_MAX 4194304

/* For a subcommand's struct option table. */
#define CLI_TARGET_OPTIONS                                              \
	{ "pid", required_argument, NULL, 'p' },                        \
		{ "all", no_argument, NULL, 'a' },                      \
		{ "cgroup", required_argument, NULL, CLI_OPT_CGROUP },  \
		{ "follow", no_argument, NULL, 'f' },                   \
		{ "max-entries", required_argument, NULL,               \
		  CLI_OPT_MAX_ENTRIES },                                \
	{                                                               \
		"max-procs", required_argument, NULL, CLI_OPT_MAX_PROCS \
	}
#define CLI_COMMON_OPTIONS                           \
	{ "verbose", no_argument, NULL, 'v' },       \
		{ "quiet", no_argument, NULL, 'q' }, \
	{                                            \
		"help", no_argument, NULL, 'h'       \
	}

/* The report options of calibrate and verdict: --format table|json, -o
 * and --cache (where the calibration is saved).
 */
struct cli_calib_opts {
	enum report_format format; /* REPORT_TABLE or REPORT_JSON */
	const char *output;	   /* -o FILE; NULL: stdout */
	const char *cache; /* --cache FILE; the caller sets the default */
};

#define CLI_CALIB_OPTIONS                                       \
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },  \
		{ "output", required_argument, NULL, 'o' },     \
	{                                                       \
		"cache", required_argument, NULL, CLI_OPT_CACHE \
	}

/* A subcommand's command line: its options, its help and its messages. */
struct cli_cmd {
	const char *prog;	/* "scprof", "scprof top", ... */
	void (*usage)(FILE *f); /* --help text */
	const char *short_opts; /* its getopt string */
	const struct option *long_opts;
	/*
	 * Its own options, a plain switch: 0, 1 to stop with exit status 0
	 * (--version), EXIT_USAGE after a one-line error, or -ENOENT for an
	 * option left to the shared ones.
	 */
	int (*option)(void *ctx, int c, const char *arg);
	bool takes_command; /* a command to run is a target */
	/* How many arguments (files) it takes after the options; 0: none.
	 * A different count is an error: "expected OPERANDS_USAGE".
	 */
	int operands;
	const char *operands_usage;
	enum target_kind default_target; /* when none is given */
	const char *stray_hint;		 /* after "unexpected argument 'ARG'" */
};

/* Where the shared options of a command go; NULL: it has none of them. */
struct cli_shared {
	struct target_spec *target;   /* -p, -a, --cgroup, -f, --max-* */
	struct cli_calib_opts *calib; /* --format, -o, --cache */
	int *verbosity;		      /* -v, -q */
	char ***command;	      /* takes_command: the command to run */
	char ***operands;	      /* cmd->operands: the arguments */
};

/*
 * Parse a subcommand's argv (argv[0] is its name): each option goes to
 * cmd->option(ctx, ...), then to the shared options of sh; then the
 * arguments left are checked (a command to run, or an error) and the
 * target is completed (cmd->default_target, -f). 0 to run, 1 after
 * --help (exit 0), or EXIT_USAGE after a one-line error on stderr.
 */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, void *ctx,
	      const struct cli_shared *sh);

/* "PROG: MESSAGE (see PROG --help)" on stderr; returns EXIT_USAGE. */
int cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * --format, -o or --cache of calibrate and verdict into o: 0, EXIT_USAGE
 * after a one-line error, or -ENOENT when c is none of them.
 */
int cli_calib_option(const struct cli_cmd *cmd, int c, const char *arg,
		     struct cli_calib_opts *o);
/* --format: table, json and, when csv_ok, csv. 0 or EXIT_USAGE. */
int cli_format_option(const struct cli_cmd *cmd, const char *arg, bool csv_ok,
		      enum report_format *out);
/* -o FILE, --folded FILE...: a name ("what" file), not ""; "-" is
 * standard output (render/output). 0 or EXIT_USAGE.
 */
int cli_file_option(const struct cli_cmd *cmd, const char *arg,
		    const char *what, const char **out);
/* --cache FILE, --pidfile FILE: a file scprof keeps (reads back, locks),
 * neither "" nor "-". 0 or EXIT_USAGE.
 */
int cli_kept_file_option(const struct cli_cmd *cmd, const char *arg,
			 const char *opt, const char **out);
/* --slow DURATION (profile and daemon): 0, or EXIT_USAGE after a one-line
 * error.
 */
int cli_slow_option(const struct cli_cmd *cmd, const char *arg,
		    uint64_t *out_ns);
/* -d SECS: 0, or EXIT_USAGE after a one-line error. */
int cli_duration(const struct cli_cmd *cmd, const char *arg, double *out);
/* A ratio from 0 to 1 for option opt ("--latency-duty"): 0, or EXIT_USAGE
 * after a one-line error.
 */
int cli_ratio(const struct cli_cmd *cmd, const char *opt, const char *arg,
	      double *out);
void cli_target_free(struct target_spec *t);

/* Parse a whole decimal number in [min, max]; "10abc", "", "-1" (when min
 * is 0) and out-of-range values are errors. 0 or -EINVAL/-ERANGE.
 */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parse seconds: a positive finite decimal ("2", "0.5"). 0 or -EINVAL. */
int cli_parse_seconds(const char *s, double *out);
/* Parse a duration with its unit: "10ms", "1.5s", "200us" (or "200µs"),
 * "500ns", "2m"; from 1 ns. 0, -EINVAL (no unit, not a number) or -ERANGE.
 */
int cli_parse_duration_ns(const char *s, uint64_t *out);
/* Parse a decimal number in [min, max] ("0", "0.25", "1e-3"). 0 or
 * -EINVAL.
 */
int cli_parse_number(const char *s, double min, double max, double *out);
/* Parse "PID[,PID...]" into a new array. 0 or -EINVAL/-ENOMEM; on -EINVAL
 * *bad points at the offending item.
 */
int cli_parse_pids(const char *s, pid_t **pids, size_t *n, const char **bad);

#endif

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

/* The command being parsed, for its messages. */
struct cli_cmd {
	const char *prog;	/* "scprof", "scprof top", ... */
	void (*usage)(FILE *f); /* --help text */
	const char *short_opts; /* its getopt string */
	bool takes_command;	/* a command to run is a target */
};

/* "PROG: MESSAGE (see PROG --help)" on stderr; returns EXIT_USAGE. */
int cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Record the kind of target; two different kinds are a usage error. */
int cli_set_kind(const struct cli_cmd *cmd, struct target_spec *t,
		 enum target_kind k);
/*
 * An option every subcommand shares — the target options (when t is not
 * NULL), -v, -q, -h — or getopt's report of a missing value or an unknown
 * option. 0 when handled, 1 after --help, EXIT_USAGE after a one-line
 * error (an unknown option included).
 */
int cli_shared_option(const struct cli_cmd *cmd, int c, char **argv,
		      struct target_spec *t, int *verbosity);
/*
 * --format, -o or --cache of calibrate and verdict into o: 0, EXIT_USAGE
 * after a one-line error, or -ENOENT when c is none of them.
 */
int cli_calib_option(const struct cli_cmd *cmd, int c, const char *arg,
		     struct cli_calib_opts *o);
/* -d SECS: 0, or EXIT_USAGE after a one-line error. */
int cli_duration(const struct cli_cmd *cmd, const char *arg, double *out);
/* After parsing: default the kind, check -f. 0 or EXIT_USAGE. */
int cli_target_finish(const struct cli_cmd *cmd, struct target_spec *t,
		      enum target_kind dflt);
void cli_target_free(struct target_spec *t);

struct profile_opts {
	struct target_spec target;
	char **argv;	   /* TARGET_CMD: the command and its arguments */
	double duration_s; /* 0: until the target ends or Ctrl-C */
	double interval_s; /* -i: a report every interval_s seconds; 0: one */
	const char *output;
	struct report_opts report;
	bool cols_given;     /* -U was used */
	int verbosity;	     /* log level, LOG_WARN by default */
	uint32_t max_exited; /* exited processes reported one by one */
	bool count_only;     /* -C: calls, errors and bytes only; no times */
};

/* Parse a whole decimal number in [min, max]; "10abc", "", "-1" (when min
 * is 0) and out-of-range values are errors. 0 or -EINVAL/-ERANGE.
 */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parse seconds: a positive finite decimal ("2", "0.5"). 0 or -EINVAL. */
int cli_parse_seconds(const char *s, double *out);
/* Parse "PID[,PID...]" into a new array. 0 or -EINVAL/-ENOMEM; on -EINVAL
 * *bad points at the offending item.
 */
int cli_parse_pids(const char *s, pid_t **pids, size_t *n, const char **bad);

/*
 * Parse the profiler's command line (argv[0] is the program). Returns 0 to
 * run, 1 when --help or --version was printed (exit 0), or EXIT_USAGE
 * after a one-line error on stderr.
 */
int cli_parse_profile(int argc, char **argv, struct profile_opts *o);
void cli_free_profile(struct profile_opts *o);
void cli_usage_profile(FILE *f);

#endif

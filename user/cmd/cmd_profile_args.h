/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The profiler's command line: `scprof [OPTIONS] TARGET`. */
#ifndef SCPROF_CMD_PROFILE_ARGS_H
#define SCPROF_CMD_PROFILE_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/cli.h"
#include "collect/target.h"
#include "model/stacks.h"
#include "model/trace_set.h"
#include "render/report.h"

struct profile_opts {
	struct target_spec target;
	char **argv;	   /* TARGET_CMD: the command and its arguments */
	double duration_s; /* 0: until the target ends or Ctrl-C */
	double interval_s; /* -i: a report every interval_s seconds; 0: one */
	const char *output;
	/* The report as asked: profile_plan completes it (--count-only's
	 * defaults, -i's rate column) into the report's settings.
	 */
	struct report_opts report;
	bool cols_given;     /* -U was used */
	bool sort_given;     /* -S was used */
	int verbosity;	     /* log level, LOG_WARN by default */
	uint32_t max_exited; /* exited processes reported one by one */
	bool count_only;     /* -C: calls, errors and bytes only; no times */
	bool no_split;	     /* --no-split: no split of the calls' time */
	/* -e trace=SET (.on false: every call), and -z / -Z */
	struct trace_set trace;
	enum sc_status_filter status;
	/* --stacks[=N] (0: off), --folded FILE, --flamegraph FILE,
	 * --pprof FILE
	 */
	uint32_t stack_period;
	bool stack_period_given;	  /* --stacks=N */
	enum sc_stack_weighting stack_by; /* --stacks-by */
	const char *folded;
	const char *flamegraph;
	const char *pprof;
	bool raw_symbols; /* --no-demangle */
	/* --slow DURATION (0: off), --slow-out FILE, --trace-out FILE */
	uint64_t slow_ns;
	const char *slow_out;
	const char *trace_out;
};

/*
 * Parse the profiler's command line (argv[0] is the program). Returns 0 to
 * run, 1 when --help or --version was printed (exit 0), or EXIT_USAGE
 * after a one-line error on stderr.
 */
int cli_parse_profile(int argc, char **argv, struct profile_opts *o);
void cli_free_profile(struct profile_opts *o);
/* The files the profiler writes: -o, --folded, --flamegraph, --pprof,
 * --slow-out and --trace-out.
 */
#define PROFILE_OUTPUTS 6
/* Does an output go to standard output ("-", or the report of a target
 * other than a command with no -o)? Then a command's own standard output
 * goes to stderr, as with perf record -o -.
 */
bool profile_uses_stdout(const struct profile_opts *o);
void cli_usage_profile(FILE *f);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command-line parsing: strict numbers, one-line errors, --help texts. */
#ifndef SCPROF_CLI_H
#define SCPROF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "report.h"

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_FAIL 1  /* runtime failure: privileges, kernel, target gone */
#define EXIT_USAGE 2 /* the command line is wrong */

enum target_kind {
	TARGET_NONE,
	TARGET_CMD,
	TARGET_PIDS,
	TARGET_CGROUP,
	TARGET_ALL,
};

struct profile_opts {
	enum target_kind kind;
	pid_t *pids;
	size_t npids;
	const char *cgroup;
	char **argv; /* TARGET_CMD: the command and its arguments */
	bool follow;
	double duration_s; /* 0: until the target ends or Ctrl-C */
	double interval_s; /* -i: a report every interval_s seconds; 0: one */
	const char *output;
	struct report_opts report;
	bool cols_given; /* -U was used */
	int verbosity; /* log level, LOG_WARN by default */
	uint32_t max_stats;
	uint32_t max_procs;
	uint32_t max_exited; /* exited processes reported one by one */
	bool count_only; /* -C: calls, errors and bytes only; no times */
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One run of `scprof [OPTIONS] TARGET` (cmd_profile.c: parse, start, the
 * run's loop, teardown) and what it writes (cmd_profile_report.c): the
 * report at the end, or one every interval with -i; --folded,
 * --flamegraph and --pprof; --slow's calls as they come and
 * --trace-out's trace of them. Each writer says what failed (pr_err) and
 * returns 0 or -errno.
 */
#ifndef SCPROF_CMD_PROFILE_REPORT_H
#define SCPROF_CMD_PROFILE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/cmd_profile_args.h"
#include "collect/collector.h"
#include "collect/launch.h"
#include "collect/target.h"
#include "model/slowlog.h"
#include "render/output.h"
#include "render/report.h"

struct profile_run {
	struct profile_opts *parsed;  /* written by parse and freed: */
	const struct profile_opts *o; /* the same, as everything else sees it */
	struct target_found found;    /* the targets as found at start */
	struct report_opts report;    /* the plan's */
	struct collector *col;
	struct launch child;
	bool launched;
	bool released; /* the command was let go to exec */
	bool targets_exited;
	uint64_t t0, t1;
	struct output out;
	struct output folded, flame,
		pprof; /* --folded, --flamegraph, --pprof */
	/* -i */
	struct sc_model *prev; /* the snapshot at the last interval report */
	uint64_t t_prev;
	unsigned int reports;
	bool incomplete; /* a report was missing something */
	/* --slow: where the calls are printed (stderr, or --slow-out's
	 * file, ours to close), how many were and how many were lost; the
	 * calls kept for --trace-out
	 */
	FILE *slow_f;
	bool slow_f_own;
	uint64_t slow_printed, slow_lost;
	struct sc_slowlog trace;
	struct output trace_out;
};

/* "ls -l /tmp", "pid 12,34", ...: the target, for the report header and
 * messages (unescaped). NULL on ENOMEM.
 */
char *profile_describe(const struct profile_opts *o,
		       const struct target_found *found);

/* --slow: open where the calls go (r->slow_f). */
int profile_slow_open(struct profile_run *r);
/* --slow: print the slow calls seen since the last poll, and keep them
 * for --trace-out.
 */
int profile_slow_poll(struct profile_run *r);

/* -i: the report of what happened since the previous one (last: the run
 * ended; the collector is destroyed first).
 */
int profile_write_interval(struct profile_run *r, uint64_t now, bool last);
/* The report of the whole run, and the stack files (the collector is
 * destroyed first).
 */
int profile_write_report(struct profile_run *r);
/* --trace-out: the slow calls kept, as a Chrome trace. */
int profile_write_trace(struct profile_run *r);

#endif

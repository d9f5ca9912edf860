/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff's output (model/diff.h): the table of changes, the JSON
 * list of every figure compared, and two folded stack files merged into
 * one with two counts a line. The differential flame graph is in
 * flamegraph.h.
 */
#ifndef SCPROF_DIFF_REPORT_H
#define SCPROF_DIFF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model/diff.h"

struct diff_report_opts {
	bool verbose; /* list every figure: unchanged ones (~) and the
		       * changes not judged (?) too
		       */
};

/* What the comparison rests on: the runs, their noise, the groups; one
 * line each. Part of the table; on its own for JSON (to stderr).
 */
void diff_write_notes(FILE *f, const struct diff_result *r);
/* The notes, the changes (biggest first) and the syscalls unchanged.
 * 0 or -errno.
 */
int diff_write_table(FILE *f, const struct diff_result *r,
		     const struct diff_report_opts *o);
/* [{syscall, fd_type?, abi?, group?, figure, a, b, change_pct,
 * significant, state}] for every figure compared. 0 or -errno.
 */
int diff_write_json(FILE *f, const struct diff_result *r);
/* "FRAME;...;FRAME COUNT_A COUNT_B" a line (difffolded.pl's format).
 * 0 or -errno.
 */
int diff_write_folded(FILE *f, const struct stack_diff *d);

#endif

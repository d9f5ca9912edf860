/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every renderer of the record model shares: the report options
 * (the columns are columns.h's), rows with their derived figures (averages, percentiles)
 * sorted, totals, processes in order. Below the formats (table, JSON, CSV,
 * Prometheus), which use it and never each other; nothing here reads BPF
 * maps or writes output.
 */
#ifndef SCPROF_VIEW_H
#define SCPROF_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/group.h"
#include "model/model.h"
#include "model/names.h"
#include "render/columns.h"

enum report_format {
	REPORT_TABLE,
	REPORT_JSON,
	REPORT_CSV,
};

struct report_opts {
	enum report_format format;
	enum report_col sort;		 /* COL_NONE: by syscall number */
	enum report_col cols[COL_COUNT]; /* table columns, COL_NONE-ended */
	bool per_process;		 /* -P: a table per process */
	bool histograms;		 /* -H: latency bar charts */
	uint64_t rate_ns;		 /* COL_RATE: the interval's length */
	bool interval; /* -i: a report without calls is just "no calls" */
	/* --by (-T): a table, JSON group or CSV rows per group, of the
	 * model's entries (processes, or threads: meta.by_threads). What the
	 * rows hold (meta.fd_types) is the model's, as collected.
	 */
	struct group_by by;
};

/* What was profiled, for the report's header fields. */
struct report_meta {
	const char *mode;   /* "command", "pid", "cgroup", "all" */
	const char *target; /* human description, raw bytes: escaped on output */
	uint64_t duration_ns;
	bool targets_exited; /* every target process ended during the run */
	int exit_status;     /* the command's, -1 when none */
	/* -i: the interval's end on the wall clock ("2025-11-22T14:03:05.120
	 * +0100") and its number from 1; NULL and 0 for a one-shot report.
	 * JSON is then one line (JSON lines), CSV rows lead with both and
	 * only the first interval has the header.
	 */
	const char *interval_end;
	unsigned int interval;
};

void report_opts_default(struct report_opts *o);
/* Parse -S KEY. 0 or -EINVAL. */
int report_parse_sort(const char *s, enum report_col *out);
/* Parse -U COL[,COL...]; the name column is added if missing. 0 or -EINVAL;
 * on error *bad points at the offending name.
 */
int report_parse_cols(const char *s, enum report_col *cols, const char **bad);

/* A row's derived figures into v: the average of the calls that returned
 * and the percentiles (the one place they are computed, for the rows and
 * the table's total line alike).
 */
void view_figures(struct row_view *v, const struct sc_row *r);
/*
 * Derived views of rows, sorted by o->sort (ties by ABI then number). The
 * caller frees the array. NULL with n > 0 means out of memory.
 */
struct row_view *view_rows(const struct sc_row *rows, size_t n,
			   enum report_col sort);
/* The figure column c sorts by, in its own unit (ns, calls, bytes): a
 * time share by the time, a rate by the calls; 0 for the name.
 */
uint64_t view_value(const struct row_view *v, enum report_col c);
/* n events over ns nanoseconds, per second (0 when ns is 0). */
double view_per_sec(uint64_t n, uint64_t ns);
/* Derived view of a sum of rows (the "total" line). */
void view_total(const struct sc_row *rows, size_t n, uint32_t abi,
		struct sc_row *out);

/*
 * The heading of a --by group, escaped: "unit a.service", "tid 12
 * (worker), pid 10", "pid 10 (nginx)". Caller frees; NULL: no memory.
 */
char *view_group_heading(const struct sc_group *g, const struct group_by *by);

/* Processes ordered by pid (then start time); caller frees. NULL when
 * there are none or out of memory.
 */
const struct sc_proc **view_procs_by_pid(const struct sc_model *m);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The report's columns, one entry each, as strace keeps them: the names
 * -U and -S take, the table's header, width and number format, whether it
 * is a measured time (none under --count-only), and its JSON and CSV key.
 * The table, JSON and CSV renderers and the option checks look columns up
 * here; adding a column is adding an entry (see docs/HACKING.md).
 */
#ifndef SCPROF_COLUMNS_H
#define SCPROF_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "model/names.h"

/* Table columns; also the sort keys (-S takes a column name). Each one's
 * names, header, format and keys: columns[] in render/columns.c.
 */
enum report_col {
	COL_NONE = 0,
	COL_TIME_PCT,
	COL_TIME_TOTAL,
	COL_TIME_AVG,
	COL_CALLS,
	COL_ERRORS,
	COL_NAME,
	COL_TIME_MIN,
	COL_TIME_MAX,
	COL_P50,
	COL_P90,
	COL_P99,
	COL_BYTES,
	COL_RATE, /* calls per second over report_opts.rate_ns */
	COL_INTERRUPTED,
	COL_ON_CPU, /* the split of the time (include/sc_split.h) */
	COL_CPU_WAIT,
	COL_BLOCKED,
	COL_IO_WAIT,
	COL_COUNT,
};

/* A row with its derived figures (view_figures(), view.h), as renderers
 * print it.
 */
struct row_view {
	const struct sc_row *row;
	const char *name;
	char name_buf[SC_NAME_LEN + 16]; /* room for " (signalfd)" */
	uint64_t avg_ns, p50_ns, p90_ns, p99_ns;
	bool has_bytes; /* a read/write-family call: bytes is meaningful */
};

/* How a column's figure is printed in the table. */
enum col_format {
	CF_NONE,
	CF_PERCENT,	/* share of the table's time, "12.34" */
	CF_SECONDS,	/* ns as seconds, "0.001234" */
	CF_USECS_WHOLE, /* ns as whole microseconds, strace's usecs/call */
	CF_USECS,	/* ns as microseconds, "1.234" */
	CF_COUNT,	/* a number, "0" included */
	CF_COUNT_BLANK, /* a number, blank when 0 (strace's errors) */
	CF_NAME,	/* the syscall, left-aligned */
	CF_RATE,	/* per second over the report's interval, "12.3" */
};

struct column {
	const char *names; /* -U/-S names, space-separated, canonical first */
	const char *help;  /* for --help and the man page: what it is, NULL:
			    * its name says it
			    */
	const char *header;
	unsigned int min_width; /* strace's historical width where it has one */
	enum col_format format;
	bool timed;	     /* a measured time: refused with --count-only */
	bool only_some_rows; /* meaningful for read/write-family rows only:
			      * blank in the table, empty in CSV, null in JSON
			      */
	const char *key;     /* JSON and CSV key; NULL: the table only */
	bool csv;	     /* a CSV column too (JSON has every keyed one) */
	/* The figure, in its own unit (ns, calls, bytes); NULL: none. */
	uint64_t (*value)(const struct row_view *v);
};

/* The entry of column c (COL_NONE's for anything out of range). */
const struct column *column_of(enum report_col c);
/* The column one of its names (len bytes of s) names. 0 or -EINVAL. */
int column_lookup(const char *s, size_t len, enum report_col *out);
/* The keyed figures in JSON and CSV order, COL_NONE-ended. */
extern const enum report_col column_figures[];
/* Does row v have column c's figure (bytes only for I/O calls)? */
bool column_present(enum report_col c, const struct row_view *v);
/*
 * The names of the columns that are (timed) or are not measured times,
 * canonical names comma-separated with "or" before the last, into buf.
 */
const char *column_names_list(bool timed, char *buf, size_t size);

/*
 * The -U columns (or, sort: the -S keys) as --help lists them: canonical
 * names with their help in parentheses, comma-separated, "or" before the
 * last, wrapped at width with indent spaces before each line but the
 * first (which starts at column first).
 */
void column_help(FILE *f, bool sort, unsigned int first, unsigned int indent,
		 unsigned int width);
/* The canonical -U names (sort: -S keys), one a line (docs/gendocs.py's
 * completions).
 */
void column_list(FILE *f, bool sort);

/* What a table cell needs besides its row. */
struct cell_ctx {
	uint64_t table_ns; /* the table's total time, for shares */
	uint64_t rate_ns;  /* the interval, for rates */
};

/*
 * Column c of row v (is_total: the total line) as the table prints it,
 * without padding, into buf. Returns buf.
 */
const char *column_cell(char *buf, size_t size, enum report_col c,
			const struct row_view *v, bool is_total,
			const struct cell_ctx *ctx);

#endif

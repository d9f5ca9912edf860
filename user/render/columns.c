// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The report's columns (see columns.h): one entry per column. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/columns.h"

static uint64_t v_total(const struct row_view *v)
{
	return v->row->st.total_ns;
}

static uint64_t v_avg(const struct row_view *v)
{
	return v->avg_ns;
}

static uint64_t v_min(const struct row_view *v)
{
	return v->row->st.min_ns;
}

static uint64_t v_max(const struct row_view *v)
{
	return v->row->st.max_ns;
}

static uint64_t v_calls(const struct row_view *v)
{
	return v->row->st.calls;
}

static uint64_t v_errors(const struct row_view *v)
{
	return v->row->st.errors;
}

static uint64_t v_interrupted(const struct row_view *v)
{
	return v->row->st.interrupted;
}

/* Of the calls that returned (their split is known), the time on a CPU. */
static uint64_t v_on_cpu(const struct row_view *v)
{
	return stats_on_cpu_ns(&v->row->st, row_returned_ns(v->row));
}

static uint64_t v_cpu_wait(const struct row_view *v)
{
	return v->row->st.wait_ns;
}

static uint64_t v_blocked(const struct row_view *v)
{
	return v->row->st.blocked_ns;
}

static uint64_t v_io_wait(const struct row_view *v)
{
	return v->row->st.iowait_ns;
}

static uint64_t v_p50(const struct row_view *v)
{
	return v->p50_ns;
}

static uint64_t v_p90(const struct row_view *v)
{
	return v->p90_ns;
}

static uint64_t v_p99(const struct row_view *v)
{
	return v->p99_ns;
}

static uint64_t v_bytes(const struct row_view *v)
{
	return v->row->st.bytes;
}

/* Names: strace's -U/-S names and aliases first, then scprof's own. */
static const struct column columns[COL_COUNT] = {
	[COL_NONE] = {
		.names = "none nothing",
		.header = "",
		.min_width = 0,
		.format = CF_NONE,
	},
	[COL_TIME_PCT] = {
		.names = "time-percent time time_percent",
		.help = "share of the table's time",
		.header = "% time",
		.min_width = 6,
		.format = CF_PERCENT,
		.timed = true,
		.value = v_total,
	},
	[COL_TIME_TOTAL] = {
		.names = "total-time time_total time-total total_time seconds",
		.header = "seconds",
		.min_width = 11,
		.format = CF_SECONDS,
		.timed = true,
		.key = "total_ns",
		.csv = true,
		.value = v_total,
	},
	[COL_TIME_AVG] = {
		.names = "avg-time avg_time time_avg time-avg",
		.header = "usecs/call",
		.min_width = 11,
		.format = CF_USECS_WHOLE,
		.timed = true,
		.key = "avg_ns",
		.csv = true,
		.value = v_avg,
	},
	[COL_CALLS] = {
		.names = "calls count",
		.header = "calls",
		.min_width = 9,
		.format = CF_COUNT,
		.key = "calls",
		.csv = true,
		.value = v_calls,
	},
	[COL_ERRORS] = {
		.names = "errors error",
		.header = "errors",
		.min_width = 9,
		.format = CF_COUNT_BLANK,
		.key = "errors",
		.csv = true,
		.value = v_errors,
	},
	[COL_NAME] = {
		.names = "name syscall syscall_name syscall-name",
		.header = "syscall",
		.min_width = 16,
		.format = CF_NAME,
	},
	[COL_TIME_MIN] = {
		.names = "min-time min_time shortest time_min time-min",
		.header = "shortest",
		.min_width = 8,
		.format = CF_SECONDS,
		.timed = true,
		.key = "min_ns",
		.csv = true,
		.value = v_min,
	},
	[COL_TIME_MAX] = {
		.names = "max-time max_time longest time_max time-max",
		.header = "longest",
		.min_width = 7,
		.format = CF_SECONDS,
		.timed = true,
		.key = "max_ns",
		.csv = true,
		.value = v_max,
	},
	[COL_P50] = {
		.names = "p50",
		.header = "p50-usecs",
		.min_width = 9,
		.format = CF_USECS,
		.timed = true,
		.key = "p50_ns",
		.csv = true,
		.value = v_p50,
	},
	[COL_P90] = {
		.names = "p90",
		.header = "p90-usecs",
		.min_width = 9,
		.format = CF_USECS,
		.timed = true,
		.key = "p90_ns",
		.csv = true,
		.value = v_p90,
	},
	[COL_P99] = {
		.names = "p99",
		.header = "p99-usecs",
		.min_width = 9,
		.format = CF_USECS,
		.timed = true,
		.key = "p99_ns",
		.csv = true,
		.value = v_p99,
	},
	[COL_BYTES] = {
		.names = "bytes",
		.help = "moved by read/write calls",
		.header = "bytes",
		.min_width = 11,
		.format = CF_COUNT,
		.only_some_rows = true,
		.key = "bytes",
		.csv = true,
		.value = v_bytes,
	},
	[COL_RATE] = {
		.names = "rate calls/s",
		.help = "calls/s",
		.header = "calls/s",
		.min_width = 9,
		.format = CF_RATE,
		.value = v_calls,
	},
	/* calls a signal ended before they returned: not in CSV */
	[COL_INTERRUPTED] = {
		.names = "interrupted",
		.help = "calls a signal ended",
		.header = "interrupted",
		.min_width = 11,
		.format = CF_COUNT,
		.key = "interrupted",
		.value = v_interrupted,
	},
	/* The split of the returned calls' time: on a CPU, waiting for
	 * one (runnable), blocked (asleep), and of blocked in I/O wait.
	 */
	[COL_ON_CPU] = {
		.names = "on-cpu on_cpu oncpu",
		.help = "time on a CPU",
		.header = "on-cpu",
		.min_width = 9,
		.format = CF_SECONDS,
		.timed = true,
		.key = "on_cpu_ns",
		.csv = true,
		.value = v_on_cpu,
	},
	[COL_CPU_WAIT] = {
		.names = "cpu-wait cpu_wait wait runq",
		.help = "time runnable, waiting for a CPU",
		.header = "cpu-wait",
		.min_width = 9,
		.format = CF_SECONDS,
		.timed = true,
		.key = "cpu_wait_ns",
		.csv = true,
		.value = v_cpu_wait,
	},
	[COL_BLOCKED] = {
		.names = "blocked sleep",
		.help = "time asleep",
		.header = "blocked",
		.min_width = 9,
		.format = CF_SECONDS,
		.timed = true,
		.key = "blocked_ns",
		.csv = true,
		.value = v_blocked,
	},
	[COL_IO_WAIT] = {
		.names = "io-wait io_wait iowait",
		.help = "of blocked, in I/O wait",
		.header = "io-wait",
		.min_width = 9,
		.format = CF_SECONDS,
		.timed = true,
		.key = "io_wait_ns",
		.csv = true,
		.value = v_io_wait,
	},
};

const enum report_col column_figures[] = {
	COL_CALLS,    COL_ERRORS,   COL_INTERRUPTED, COL_TIME_TOTAL,
	COL_TIME_MIN, COL_TIME_MAX, COL_TIME_AVG,    COL_P50,
	COL_P90,      COL_P99,	    COL_BYTES,	     COL_ON_CPU,
	COL_CPU_WAIT, COL_BLOCKED,  COL_IO_WAIT,     COL_NONE,
};

/* Print word-wrapped text at *col: a new line of indent spaces before a
 * word that would pass width.
 */
static void wrapped(FILE *f, const char *text, unsigned int *col,
		    unsigned int indent, unsigned int width)
{
	for (const char *p = text; *p;) {
		size_t wl = strcspn(p, " ");

		if (*col + 1 + wl > width && *col > indent) {
			fprintf(f, "\n%*s", (int)indent, "");
			*col = indent;
		} else if (p != text || *col > indent) {
			fputc(' ', f);
			(*col)++;
		}
		fprintf(f, "%.*s", (int)wl, p);
		*col += (unsigned int)wl;
		p += wl;
		p += *p == ' ';
	}
}

void column_help(FILE *f, bool sort, unsigned int first, unsigned int indent,
		 unsigned int width)
{
	int order[COL_COUNT + 1], n = 0;
	unsigned int col = first;

	for (int c = 1; c < COL_COUNT; c++)
		order[n++] = c;
	if (sort)
		order[n++] = COL_NONE; /* "nothing", last */
	for (int i = 0; i < n; i++) {
		const struct column *c = &columns[order[i]];
		const char *name = order[i] == COL_NONE ? "nothing" : c->names;
		char item[160];

		snprintf(item, sizeof(item), "%.*s%s%s%s%s",
			 (int)strcspn(name, " "), name, c->help ? " (" : "",
			 c->help ? c->help : "", c->help ? ")" : "",
			 i + 1 == n ? "" :
			 i + 2 == n ? " or" :
				      ",");
		/* the first word at first; the rest after a space */
		if (!i && col == first && first > indent) {
			wrapped(f, item, &col, indent, width);
			continue;
		}
		wrapped(f, item, &col, indent, width);
	}
	fputc('\n', f);
}

void column_list(FILE *f, bool sort)
{
	for (int c = 1; c < COL_COUNT; c++)
		fprintf(f, "%.*s\n", (int)strcspn(columns[c].names, " "),
			columns[c].names);
	if (sort)
		fputs("nothing\n", f);
}

const struct column *column_of(enum report_col c)
{
	return &columns[(unsigned int)c < COL_COUNT ? c : COL_NONE];
}

/* Does the space-separated list hold the len bytes at s? */
static bool names_hold(const char *names, const char *s, size_t len)
{
	const char *p = names;

	while (*p) {
		size_t n = strcspn(p, " ");

		if (n == len && !strncmp(p, s, len))
			return true;
		p += n;
		p += *p == ' ';
	}
	return false;
}

int column_lookup(const char *s, size_t len, enum report_col *out)
{
	for (int c = 0; c < COL_COUNT; c++) {
		if (names_hold(columns[c].names, s, len)) {
			*out = (enum report_col)c;
			return 0;
		}
	}
	return -EINVAL;
}

bool column_present(enum report_col c, const struct row_view *v)
{
	return !column_of(c)->only_some_rows || v->has_bytes;
}

const char *column_names_list(bool timed, char *buf, size_t size)
{
	const char *pick[COL_COUNT];
	size_t n = 0, used = 0;

	for (int c = 1; c < COL_COUNT; c++)
		if (columns[c].timed == timed && c != COL_INTERRUPTED)
			pick[n++] = columns[c].names;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		const char *sep = !i ? "" : i + 1 == n ? " or " : ", ";
		int w = snprintf(buf + used, size - used, "%s%.*s", sep,
				 (int)strcspn(pick[i], " "), pick[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

const char *column_cell(char *buf, size_t size, enum report_col c,
			const struct row_view *v, bool is_total,
			const struct cell_ctx *ctx)
{
	const struct column *col = column_of(c);
	uint64_t x = col->value ? col->value(v) : 0;

	buf[0] = '\0';
	if (!is_total && !column_present(c, v))
		return buf;
	switch (col->format) {
	case CF_PERCENT:
		snprintf(buf, size, "%.2f",
			 is_total ? 100.0 :
			 x	  ? 100.0 * (double)x / (double)ctx->table_ns :
				    0.0);
		break;
	case CF_SECONDS:
		snprintf(buf, size, "%.6f", (double)x / 1e9);
		break;
	case CF_USECS_WHOLE:
		snprintf(buf, size, "%" PRIu64, x / 1000);
		break;
	case CF_USECS:
		snprintf(buf, size, "%.3f", (double)x / 1e3);
		break;
	case CF_COUNT:
		snprintf(buf, size, "%" PRIu64, x);
		break;
	case CF_COUNT_BLANK:
		snprintf(buf, size, "%.0" PRIu64, x);
		break;
	case CF_NAME:
		snprintf(buf, size, "%s", is_total ? "total" : v->name);
		break;
	case CF_RATE:
		/* per second; 0 for an interval of no length */
		snprintf(buf, size, "%.1f",
			 ctx->rate_ns ? (double)x * 1e9 / (double)ctx->rate_ns :
					0.0);
		break;
	default:
		break;
	}
	return buf;
}

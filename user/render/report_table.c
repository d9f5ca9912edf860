// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The strace -c table: same header, widths, number formats and total line,
 * so that scripts written for strace -c read scprof's output unchanged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/callsites.h"
#include "render/why_table.h"
#include "render/columns.h"
#include "render/drops.h"
#include "render/report_table.h"
#include "model/hist.h"
#include "util/escape.h"

static unsigned int max_u(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

/* A cell is at most a syscall name with its fd kind, or a number. */
#define CELL_LEN (SC_NAME_LEN + 32)

/* The total line as a row: the figures of a row, the name "total". */
static void view_of_total(struct row_view *tv, const struct sc_row *tot)
{
	memset(tv, 0, sizeof(*tv));
	tv->row = tot;
	tv->name = "total";
	view_figures(tv, tot);
	tv->has_bytes = true;
}

/* One ABI's table: its rows, its total line and the widths they need. */
struct table {
	struct row_view *all; /* this ABI's rows first, sorted */
	size_t nv;
	struct sc_row tot;
	struct row_view tv; /* the total line, a view of tot */
	unsigned int w[COL_COUNT];
	size_t ncols;
};

/* The rows of one ABI, sorted, and their total. 0 or -ENOMEM. */
static int table_collect(struct table *t, const struct sc_row *rows, size_t n,
			 uint32_t abi, enum report_col sort)
{
	uint64_t bytes = 0;

	t->all = view_rows(rows, n, sort);
	if (n && !t->all)
		return -ENOMEM;
	/* Keep this ABI's rows, in sorted order, at the front. */
	for (size_t i = 0; i < n; i++) {
		struct row_view *all = t->all;

		if (!(all[i].row->abi == abi && row_seen(all[i].row)))
			continue;
		all[t->nv] = all[i];
		/* An unknown number's name lives in name_buf: follow it, as
		 * the copied-from slot may be overwritten by a later row.
		 */
		if (all[i].name == all[i].name_buf)
			all[t->nv].name = all[t->nv].name_buf;
		t->nv++;
	}
	view_total(rows, n, abi, &t->tot);
	/* bytes of the total line: read/write-family rows only */
	for (size_t i = 0; i < t->nv; i++)
		if (t->all[i].has_bytes)
			bytes += t->all[i].row->st.bytes;
	t->tot.st.bytes = bytes;
	view_of_total(&t->tv, &t->tot);
	return 0;
}

static struct cell_ctx table_ctx(const struct table *t,
				 const struct report_opts *o)
{
	return (struct cell_ctx){ .table_ns = t->tot.st.total_ns,
				  .rate_ns = o->rate_ns };
}

/* Each column as wide as its header, its widest cell and strace's width;
 * the name column one more than its longest name.
 */
static void table_widths(struct table *t, const struct report_opts *o)
{
	struct cell_ctx ctx = table_ctx(t, o);
	char buf[CELL_LEN];

	while (t->ncols < COL_COUNT && o->cols[t->ncols] != COL_NONE)
		t->ncols++;
	for (size_t i = 0; i < t->ncols; i++) {
		enum report_col c = o->cols[i];
		const struct column *col = column_of(c);
		unsigned int need = (unsigned int)strlen(
			column_cell(buf, sizeof(buf), c, &t->tv, true, &ctx));

		for (size_t j = 0; j < t->nv; j++)
			need = max_u(need, (unsigned int)strlen(column_cell(
						   buf, sizeof(buf), c,
						   &t->all[j], false, &ctx)));
		if (col->format == CF_NAME)
			need++;
		t->w[c] = max_u(col->min_width, need);
		t->w[c] = max_u(t->w[c], (unsigned int)strlen(col->header));
	}
}

/* Numbers right-aligned, the name left-aligned and, last, unpadded. */
static void put_padded(FILE *f, const struct column *col, unsigned int w,
		       bool last, const char *text)
{
	if (col->format == CF_NAME && last)
		fputs(text, f);
	else if (col->format == CF_NAME)
		fprintf(f, "%-*s", w, text);
	else
		fprintf(f, "%*s", w, text);
}

static void print_header(FILE *f, const struct table *t,
			 const enum report_col *cols)
{
	for (size_t i = 0; i < t->ncols; i++) {
		enum report_col c = cols[i];

		if (i)
			fputc(' ', f);
		put_padded(f, column_of(c), t->w[c], i == t->ncols - 1,
			   column_of(c)->header);
	}
	fputc('\n', f);
}

/* The dashed rule under the header and above the total line. */
static void print_rule(FILE *f, const struct table *t,
		       const enum report_col *cols)
{
	for (size_t i = 0; i < t->ncols; i++) {
		if (i)
			fputc(' ', f);
		for (unsigned int j = 0; j < t->w[cols[i]]; j++)
			fputc('-', f);
	}
	fputc('\n', f);
}

/* One line: a row, or the total line with v NULL. */
static void print_line(FILE *f, const struct table *t,
		       const struct report_opts *o, const struct row_view *v)
{
	struct cell_ctx ctx = table_ctx(t, o);
	char buf[CELL_LEN];

	for (size_t i = 0; i < t->ncols; i++) {
		enum report_col c = o->cols[i];

		if (i)
			fputc(' ', f);
		put_padded(f, column_of(c), t->w[c], i == t->ncols - 1,
			   column_cell(buf, sizeof(buf), c, v ? v : &t->tv, !v,
				       &ctx));
	}
	fputc('\n', f);
}

int report_table_abi(FILE *f, const struct sc_row *rows, size_t n, uint32_t abi,
		     const struct report_opts *o)
{
	struct table t = {};
	int err;

	err = table_collect(&t, rows, n, abi, o->sort);
	if (err)
		return err;
	table_widths(&t, o);
	print_header(f, &t, o->cols);
	print_rule(f, &t, o->cols);
	for (size_t r = 0; r < t.nv; r++)
		print_line(f, &t, o, &t.all[r]);
	print_rule(f, &t, o->cols);
	print_line(f, &t, o, NULL);
	free(t.all);
	return 0;
}

/* All ABIs of a row set, strace style: native first, others titled. */
static int table_rows(FILE *f, const struct sc_row *rows, size_t n,
		      const struct report_opts *o)
{
	bool printed = false;
	int err;

	for (uint32_t abi = 0; abi < SC_ABI_COUNT; abi++) {
		const char *title = names_abi_title(abi);

		if (!model_abi_seen(rows, n, abi))
			continue;
		if (title)
			fprintf(f, "System call usage summary for %s mode:\n",
				title);
		err = report_table_abi(f, rows, n, abi, o);
		if (err)
			return err;
		printed = true;
	}
	/* Nothing seen: an empty table says so more clearly than silence. */
	if (!printed)
		return report_table_abi(f, rows, n, SC_ABI_NATIVE, o);
	return 0;
}

static void bar(FILE *f, uint64_t v, uint64_t max, unsigned int width)
{
	unsigned int stars = max ? (unsigned int)(v * width / max) : 0;

	if (v && !stars)
		stars = 1;
	fputc('|', f);
	for (unsigned int i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
	fputc('|', f);
}

/* bcc-style log2 bar chart of one row (sub-buckets merged per power). */
static void histogram(FILE *f, const struct sc_model *m,
		      const struct row_view *v)
{
	uint64_t pow2[SC_HIST_MAX_LOG2 + 2] = {}, max = 0;
	int first = -1, last = -1;
	const struct sc_stats *st = &v->row->st;

	for (uint32_t i = 0; i < SC_HIST_BUCKETS; i++) {
		uint64_t lo = sc_hist_lower(i);
		uint32_t k = lo ? sc_log2(lo) + 1 :
				  0; /* 0: [0,1], k: (2^(k-1), 2^k] */

		pow2[k] += st->hist[i];
	}
	for (int k = 0; k < SC_HIST_MAX_LOG2 + 2; k++) {
		if (!pow2[k])
			continue;
		if (first < 0)
			first = k;
		last = k;
		if (pow2[k] > max)
			max = pow2[k];
	}
	fprintf(f, "\n%s%s%s: %" PRIu64 " calls", v->name,
		v->row->abi ? " " : "",
		v->row->abi ? names_abi(v->row->abi) : "", (uint64_t)st->calls);
	if (st->errors)
		fprintf(f, ", %" PRIu64 " errors", (uint64_t)st->errors);
	fputc('\n', f);
	for (size_t i = 0; i < m->nerrnos; i++) {
		const struct sc_errno_row *e = &m->errnos[i];
		const char *en = names_errno((int)e->err);

		if (e->abi != v->row->abi || e->nr != v->row->nr ||
		    e->fd_type != v->row->fd_type)
			continue;
		if (en)
			fprintf(f, "    %-22s : %" PRIu64 "\n", en, e->count);
		else
			fprintf(f, "    errno %-16u : %" PRIu64 "\n", e->err,
				e->count);
	}
	if (first < 0)
		return;
	fprintf(f, "%20s%12s: count     distribution\n", "nsecs", "");
	for (int k = first; k <= last; k++) {
		uint64_t lo = k ? (1ULL << (k - 1)) + 1 : 0;
		uint64_t hi = k ? 1ULL << k : 1;

		fprintf(f, "%14" PRIu64 " -> %-14" PRIu64 ": %-9" PRIu64 " ",
			lo, hi, pow2[k]);
		bar(f, pow2[k], max, 40);
		fputc('\n', f);
	}
}

static int histograms(FILE *f, const struct sc_model *m,
		      const struct report_opts *o)
{
	struct row_view *v = view_rows(m->total, m->ntotal, o->sort);

	if (m->ntotal && !v)
		return -ENOMEM;
	fputs("\nLatency histograms (wall time inside each call):\n", f);
	for (size_t i = 0; i < m->ntotal; i++)
		histogram(f, m, &v[i]);
	free(v);
	return 0;
}

/*
 * The calls still in flight, one line per syscall: how many, and the
 * longest of them. Their time so far is in the table above; they are
 * counted when they return. when: "stop", or "interval end" for -i.
 */
int report_table_flights(FILE *f, const struct sc_flight_call *fl, size_t n,
			 const char *when)
{
	bool *done;

	if (!n)
		return 0;
	done = calloc(n, sizeof(*done));
	if (!done)
		return -ENOMEM;
	/* longest first: the first of each syscall is its longest */
	for (size_t i = 0; i < n; i++) {
		char buf[SC_NAME_LEN];
		size_t same = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++) {
			if (!done[j] && fl[j].abi == fl[i].abi &&
			    fl[j].nr == fl[i].nr) {
				done[j] = true;
				same++;
			}
		}
		fprintf(f,
			"in flight at %s: %s%s%s x%zu (pid %u tid %u, %.2f s "
			"so far%s)\n",
			when,
			names_syscall_fmt(fl[i].abi, fl[i].nr, buf,
					  sizeof(buf)),
			fl[i].abi ? " " : "",
			fl[i].abi ? names_abi(fl[i].abi) : "", same, fl[i].pid,
			fl[i].tid, (double)fl[i].ns / 1e9,
			fl[i].before_attach ? ", started before attach" : "");
	}
	free(done);
	return 0;
}

/* Calls returned, or time spent in calls still in flight. */
static bool report_has_calls(const struct sc_model *m)
{
	for (uint32_t abi = 0; abi < SC_ABI_COUNT; abi++) {
		if (model_abi_seen(m->total, m->ntotal, abi))
			return true;
	}
	return false;
}

/* The first line of an incomplete report: what is missing, and why. */
static void incomplete_line(FILE *f, const struct sc_model *m)
{
	if (!model_incomplete(m))
		return;
	fputs("scprof: the counts are incomplete: ", f);
	drops_sentence(f, &m->meta);
	fputc('\n', f);
}

/* --by: one table per group, largest first, under its heading. */
static int group_tables(FILE *f, const struct sc_model *m,
			const struct report_opts *o)
{
	struct sc_group *g;
	size_t n;
	int err = group_model(m, &o->by, m->meta.by_threads, &g, &n);

	for (size_t i = 0; !err && i < n; i++) {
		char *head;

		if (!g[i].calls && !g[i].total_ns)
			continue; /* nothing in this interval */
		head = view_group_heading(&g[i], &o->by);

		if (!head) {
			err = -ENOMEM;
			break;
		}
		fprintf(f, "\n%s:\n", head);
		free(head);
		err = table_rows(f, g[i].sum.rows, g[i].sum.nrows, o);
	}
	group_free(g, n);
	return err;
}

int report_table(FILE *f, const struct sc_model *m, const struct report_opts *o,
		 const struct report_meta *meta)
{
	int err;

	(void)meta;
	incomplete_line(f, m);
	if (o->interval && !report_has_calls(m)) {
		/* An interval that saw nothing: no table of zeros. */
		fputs("no calls\n", f);
		return 0;
	}
	err = table_rows(f, m->total, m->ntotal, o);
	if (err)
		return err;
	if (o->by.n) {
		err = group_tables(f, m, o);
		if (err)
			return err;
	} else if (o->per_process) {
		const struct sc_proc **by_pid = view_procs_by_pid(m);

		if (m->nprocs && !by_pid)
			return -ENOMEM;
		for (size_t i = 0; i < m->nprocs; i++) {
			const struct sc_proc *p = by_pid[i];
			char *comm = esc_text(
				p->comm, esc_strnlen(p->comm, SC_COMM_LEN));

			if (!comm) {
				free(by_pid);
				return -ENOMEM;
			}
			if (!p->pid)
				fprintf(f,
					"\n%u more exited processes, merged:\n",
					p->merged);
			else
				fprintf(f, "\nProcess %u (%s)%s:\n", p->pid,
					comm, p->exited ? ", exited" : "");
			free(comm);
			err = table_rows(f, p->rows, p->nrows, o);
			if (err)
				break;
		}
		free(by_pid);
		if (err)
			return err;
	}
	err = report_table_flights(f, m->flights, m->nflights,
				   o->interval ? "interval end" : "stop");
	if (err)
		return err;
	if (m->meta.count_only)
		fputs("(--count-only: calls, errors and bytes; no times were "
		      "measured)\n",
		      f);
	if (m->meta.slow_ns)
		fprintf(f,
			"slow calls (%.3f ms or longer): %" PRIu64
			" reported, %" PRIu64 " lost%s\n",
			(double)m->meta.slow_ns / 1e6, m->meta.slow_reported,
			m->meta.slow_lost,
			m->meta.slow_lost ? " (the ring buffer or the list of "
					    "calls to print was full)" :
					    "");
	err = why_table(f, m);
	err = err ?: callsites_table(f, m);
	if (err)
		return err;
	if (o->histograms)
		return histograms(f, m, o);
	return 0;
}

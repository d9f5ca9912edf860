// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/view.h"
#include "render/columns.h"
#include "model/hist.h"
#include "util/escape.h"
#include "util/strlist.h"

void report_opts_default(struct report_opts *o)
{
	static const enum report_col strace_cols[] = {
		COL_TIME_PCT, COL_TIME_TOTAL, COL_TIME_AVG,
		COL_CALLS,    COL_ERRORS,     COL_NAME,
	};

	memset(o, 0, sizeof(*o));
	o->format = REPORT_TABLE;
	o->sort = COL_TIME_TOTAL;
	memcpy(o->cols, strace_cols, sizeof(strace_cols));
}

int report_parse_sort(const char *s, enum report_col *out)
{
	enum report_col c;

	if (column_lookup(s, strlen(s), &c))
		return -EINVAL;
	/* Sorting by share of time is sorting by time. */
	*out = c == COL_TIME_PCT ? COL_TIME_TOTAL : c;
	return 0;
}

int report_parse_cols(const char *s, enum report_col *cols, const char **bad)
{
	const char *pos = s, *item;
	bool seen[COL_COUNT] = {};
	size_t n = 0, len;

	while (strlist_next(&pos, &item, &len)) {
		enum report_col c;

		if (column_lookup(item, len, &c) || c == COL_NONE || seen[c]) {
			*bad = item;
			return -EINVAL;
		}
		seen[c] = true;
		cols[n++] = c;
	}
	if (!seen[COL_NAME])
		cols[n++] = COL_NAME;
	while (n < COL_COUNT)
		cols[n++] = COL_NONE;
	return 0;
}

void view_figures(struct row_view *v, const struct sc_row *r)
{
	const struct sc_stats *st = &r->st;

	/* calls still in flight have time but are not calls yet */
	v->avg_ns = st->calls ? row_returned_ns(r) / st->calls : 0;
	v->p50_ns = hist_quantile(st, 0.50);
	v->p90_ns = hist_quantile(st, 0.90);
	v->p99_ns = hist_quantile(st, 0.99);
}

static void view_fill(struct row_view *v, const struct sc_row *r)
{
	v->row = r;
	v->name = names_syscall_fmt(r->abi, r->nr, v->name_buf,
				    sizeof(v->name_buf));
	if (names_fd_type(r->fd_type)) {
		/* "read (socket)": the name may be name_buf itself */
		char base[SC_NAME_LEN];

		snprintf(base, sizeof(base), "%s", v->name);
		snprintf(v->name_buf, sizeof(v->name_buf), "%s (%s)", base,
			 names_fd_type(r->fd_type));
		v->name = v->name_buf;
	}
	view_figures(v, r);
	v->has_bytes = names_is_io(names_syscall(r->abi, r->nr));
}

static const char *view_name(const struct row_view *v)
{
	const char *n = names_syscall(v->row->abi, v->row->nr);

	return n && !names_fd_type(v->row->fd_type) ? n : v->name_buf;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

uint64_t view_value(const struct row_view *v, enum report_col c)
{
	const struct column *col = column_of(c);

	return col->value ? col->value(v) : 0;
}

static int view_cmp(const void *pa, const void *pb, void *arg)
{
	const struct row_view *a = pa, *b = pb;
	enum report_col sort_key = *(const enum report_col *)arg;
	int c;

	if (sort_key == COL_NAME)
		c = strcmp(view_name(a), view_name(b));
	else
		c = cmp_u64_desc(view_value(a, sort_key),
				 view_value(b, sort_key));
	if (c)
		return c;
	if (a->row->abi != b->row->abi)
		return a->row->abi < b->row->abi ? -1 : 1;
	if (a->row->nr != b->row->nr)
		return a->row->nr < b->row->nr ? -1 : 1;
	return a->row->fd_type < b->row->fd_type ?
		       -1 :
		       a->row->fd_type > b->row->fd_type;
}

struct row_view *view_rows(const struct sc_row *rows, size_t n,
			   enum report_col sort)
{
	struct row_view *v;

	if (!n)
		return NULL;
	v = calloc(n, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		view_fill(&v[i], &rows[i]);
	qsort_r(v, n, sizeof(*v), view_cmp, &sort);
	/* name_buf moved with the struct: re-point names into it. */
	for (size_t i = 0; i < n; i++)
		v[i].name = view_name(&v[i]);
	return v;
}

double view_per_sec(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0.0;
}

void view_total(const struct sc_row *rows, size_t n, uint32_t abi,
		struct sc_row *out)
{
	memset(out, 0, sizeof(*out));
	out->abi = abi;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi != abi)
			continue;
		row_add(out, &rows[i]);
	}
}

static int proc_pid_cmp(const void *pa, const void *pb)
{
	const struct sc_proc *a = *(const struct sc_proc *const *)pa;
	const struct sc_proc *b = *(const struct sc_proc *const *)pb;

	/* pid 0, the merged exited processes, comes last */
	if (a->pid != b->pid)
		return !a->pid ? 1 : !b->pid ? -1 : a->pid < b->pid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->cgtag < b->cgtag ? -1 : a->cgtag > b->cgtag;
}

const struct sc_proc **view_procs_by_pid(const struct sc_model *m)
{
	const struct sc_proc **v;

	if (!m->nprocs)
		return NULL;
	v = malloc(m->nprocs * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->nprocs; i++)
		v[i] = &m->procs[i];
	qsort(v, m->nprocs, sizeof(*v), proc_pid_cmp);
	return v;
}

/* "KEY VALUE", the value escaped; an empty one is "(none)". */
static int heading_part(FILE *f, const char *sep, const char *key,
			const char *val)
{
	char *e;

	if (!val[0]) {
		fprintf(f, "%s%s (none)", sep, key);
		return 0;
	}
	e = esc_text(val, strlen(val));
	if (!e)
		return -ENOMEM;
	fprintf(f, "%s%s %s", sep, key, e);
	free(e);
	return 0;
}

char *view_group_heading(const struct sc_group *g, const struct group_by *by)
{
	char *out = NULL, *comm = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	const char *sep = "";
	int err = f ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < by->n; i++) {
		enum group_key k = by->keys[i];

		err = heading_part(f, sep, group_key_name(k), g->val[k]);
		sep = ", ";
		/* the name of a pid or a tid, beside it */
		if (!err && g->has_ids && !group_has(by, GROUP_COMM) &&
		    (k == GROUP_TID ||
		     (k == GROUP_PID && !group_has(by, GROUP_TID)))) {
			comm = esc_text(g->comm,
					esc_strnlen(g->comm, SC_COMM_LEN));
			if (!comm)
				err = -ENOMEM;
			else if (!g->pid)
				fputs(" (exited processes, merged)", f);
			else
				fprintf(f, " (%s)", comm);
			free(comm);
		}
	}
	if (!err && g->tid && !group_has(by, GROUP_PID))
		fprintf(f, "%spid %u", sep, g->pid);
	if (f && fclose(f))
		err = -ENOMEM;
	if (err) {
		free(out);
		return NULL;
	}
	return out;
}

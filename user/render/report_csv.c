// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The CSV report: a header, then one row per (process, syscall). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "render/columns.h"
#include "render/report_csv.h"
#include "util/escape.h"

/* nr and the figures (render/columns.c), after the row's names. */
static void csv_figures(FILE *f, const struct row_view *v)
{
	fprintf(f, "%u", v->row->nr);
	for (const enum report_col *c = column_figures; *c; c++) {
		const struct column *col = column_of(*c);

		if (!col->csv)
			continue;
		fputc(',', f);
		if (column_present(*c, v))
			fprintf(f, "%" PRIu64, col->value(v));
	}
	fputc('\n', f);
}

/* -i: each row leads with its interval's number and end. */
static void csv_lead(FILE *f, const struct report_meta *meta)
{
	if (meta->interval_end)
		fprintf(f, "%u,%s,", meta->interval, meta->interval_end);
}

/* The header, only once: -i prints it before the first interval. */
static bool csv_header(FILE *f, const struct report_meta *meta)
{
	if (meta->interval_end && meta->interval > 1)
		return false;
	if (meta->interval_end)
		fputs("interval,interval_end,", f);
	return true;
}

/* The header's figure keys, after nr. */
static void csv_figure_keys(FILE *f)
{
	fputs("nr", f);
	for (const enum report_col *c = column_figures; *c; c++)
		if (column_of(*c)->csv)
			fprintf(f, ",%s", column_of(*c)->key);
	fputc('\n', f);
}

static int proc_rows(FILE *f, const struct sc_proc *p, bool fd_types,
		     const struct report_opts *o,
		     const struct report_meta *meta)
{
	struct row_view *v = view_rows(p->rows, p->nrows, o->sort);
	char *comm;

	if (p->nrows && !v)
		return -ENOMEM;
	comm = esc_csv(p->comm, esc_strnlen(p->comm, SC_COMM_LEN));
	if (!comm) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nrows; i++) {
		const char *kind = names_fd_type(v[i].row->fd_type);
		char buf[SC_NAME_LEN];

		csv_lead(f, meta);
		if (fd_types) {
			/* the syscall's own name, its kind in a column */
			fprintf(f, "%u,%s,%s,%s,%s,", p->pid, comm,
				names_abi(v[i].row->abi),
				names_syscall_fmt(v[i].row->abi, v[i].row->nr,
						  buf, sizeof(buf)),
				kind ? kind : "");
			csv_figures(f, &v[i]);
			continue;
		}
		fprintf(f, "%u,%s,%s,%s,", p->pid, comm,
			names_abi(v[i].row->abi), v[i].name);
		csv_figures(f, &v[i]);
	}
	free(comm);
	free(v);
	return 0;
}

/* --by: the key columns (pid,tid,comm of pid and tid groups, then the
 * others), then a row's figures.
 */
static bool csv_col(const struct report_opts *o, enum group_key k)
{
	bool ids = group_has(&o->by, GROUP_PID) || group_has(&o->by, GROUP_TID);

	if (k == GROUP_PID || k == GROUP_COMM)
		return ids || group_has(&o->by, k);
	if (k == GROUP_TID)
		return group_has(&o->by, GROUP_TID);
	return group_has(&o->by, k);
}

static int group_rows(FILE *f, const struct sc_group *g, bool fd_types,
		      const struct report_opts *o,
		      const struct report_meta *meta)
{
	struct row_view *v = view_rows(g->sum.rows, g->sum.nrows, o->sort);
	char *cols = NULL;
	size_t len = 0;
	FILE *c;
	int err = 0;

	if (g->sum.nrows && !v)
		return -ENOMEM;
	c = open_memstream(&cols, &len);
	if (!c) {
		free(v);
		return -ENOMEM;
	}
	for (int k = 0; k < GROUP_KEY_COUNT && !err; k++) {
		char num[16];
		const char *val = g->val[k];
		char *e;

		if (!csv_col(o, k))
			continue;
		if (k == GROUP_PID || k == GROUP_TID) {
			snprintf(num, sizeof(num), "%u",
				 k == GROUP_PID ? g->pid : g->tid);
			val = num;
		} else if (k == GROUP_COMM && !val) {
			val = g->comm;
		}
		e = esc_csv(val,
			    esc_strnlen(val,
					k == GROUP_COMM ? SC_COMM_LEN : 4096));
		if (!e)
			err = -ENOMEM;
		else
			fprintf(c, "%s,", e);
		free(e);
	}
	if (fclose(c))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < g->sum.nrows; i++) {
		const char *kind = names_fd_type(v[i].row->fd_type);
		char buf[SC_NAME_LEN];

		csv_lead(f, meta);
		fprintf(f, "%s%s,%s,", cols, names_abi(v[i].row->abi),
			names_syscall_fmt(v[i].row->abi, v[i].row->nr, buf,
					  sizeof(buf)));
		if (fd_types)
			fprintf(f, "%s,", kind ? kind : "");
		csv_figures(f, &v[i]);
	}
	free(cols);
	free(v);
	return err;
}

static int report_csv_groups(FILE *f, const struct sc_model *m,
			     const struct report_opts *o,
			     const struct report_meta *meta)
{
	struct sc_group *g;
	size_t n;
	int err = group_model(m, &o->by, m->meta.by_threads, &g, &n);

	if (err)
		return err;
	if (csv_header(f, meta)) {
		for (int k = 0; k < GROUP_KEY_COUNT; k++)
			if (csv_col(o, k))
				fprintf(f, "%s,", group_key_name(k));
		fprintf(f, "abi,syscall,%s",
			m->meta.fd_types ? "fd_type," : "");
		csv_figure_keys(f);
	}
	for (size_t i = 0; i < n && !err; i++)
		err = group_rows(f, &g[i], m->meta.fd_types, o, meta);
	group_free(g, n);
	return err;
}

int report_csv(FILE *f, const struct sc_model *m, const struct report_opts *o,
	       const struct report_meta *meta)
{
	const struct sc_proc **by_pid = view_procs_by_pid(m);
	int err = 0;

	if (o->by.n) {
		free(by_pid);
		return report_csv_groups(f, m, o, meta);
	}
	if (m->nprocs && !by_pid)
		return -ENOMEM;
	if (csv_header(f, meta)) {
		fprintf(f, "pid,comm,abi,syscall,%s",
			m->meta.fd_types ? "fd_type," : "");
		csv_figure_keys(f);
	}
	for (size_t i = 0; i < m->nprocs && !err; i++)
		err = proc_rows(f, by_pid[i], m->meta.fd_types, o, meta);
	free(by_pid);
	return err;
}

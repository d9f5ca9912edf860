// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof top's frames: built from an interval delta, sorted, as text. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/top_frame.h"
#include "render/drops.h"
#include "model/hist.h"
#include "render/view.h"
#include "util/escape.h"

static const struct {
	const char *name;  /* -s value */
	const char *title; /* as the title line says it */
	int key;	   /* interactive key */
} sorts[TOP_SORT_COUNT] = {
	[TOP_SORT_CALLS] = { "calls", "calls/s", 'c' },
	[TOP_SORT_ERRORS] = { "errors", "errors/s", 'e' },
	[TOP_SORT_P99] = { "p99", "p99 latency", 'p' },
	[TOP_SORT_TIME] = { "time", "time in syscalls", 't' },
};

int top_sort_parse(const char *s, enum top_sort *out)
{
	for (int i = 0; i < TOP_SORT_COUNT; i++) {
		if (!strcmp(s, sorts[i].name)) {
			*out = (enum top_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

int top_sort_by_key(int ch, enum top_sort *out)
{
	for (int i = 0; i < TOP_SORT_COUNT; i++) {
		if (ch == sorts[i].key) {
			*out = (enum top_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const label_titles[TOP_GROUP_COUNT] = {
	[TOP_GROUP_COMM] = "COMM", [TOP_GROUP_CGROUP] = "CGROUP",
	[TOP_GROUP_UNIT] = "UNIT", [TOP_GROUP_CONTAINER] = "CONTAINER",
	[TOP_GROUP_POD] = "POD",   [TOP_GROUP_QOS] = "QOS",
};

/* Each grouping and the --by key it is, then the old names. */
static const struct {
	const char *name;
	enum top_group group;
	enum group_key key;
} group_names[] = {
	{ "pid", TOP_GROUP_PROCESS, GROUP_PID },
	{ "tid", TOP_GROUP_THREAD, GROUP_TID },
	{ "comm", TOP_GROUP_COMM, GROUP_COMM },
	{ "cgroup", TOP_GROUP_CGROUP, GROUP_CGROUP },
	{ "unit", TOP_GROUP_UNIT, GROUP_UNIT },
	{ "container", TOP_GROUP_CONTAINER, GROUP_CONTAINER },
	{ "pod", TOP_GROUP_POD, GROUP_POD },
	{ "qos", TOP_GROUP_QOS, GROUP_QOS },
	{ "process", TOP_GROUP_PROCESS, GROUP_PID },
	{ "thread", TOP_GROUP_THREAD, GROUP_TID },
};

int top_group_parse(const char *s, enum top_group *out)
{
	for (size_t i = 0; i < sizeof(group_names) / sizeof(group_names[0]);
	     i++) {
		if (!strcmp(s, group_names[i].name)) {
			*out = group_names[i].group;
			return 0;
		}
	}
	return -EINVAL;
}

const char *top_group_name(enum top_group g)
{
	return g < TOP_GROUP_COUNT ? group_names[g].name : "?";
}

bool top_group_is_label(enum top_group g)
{
	return g != TOP_GROUP_PROCESS && g != TOP_GROUP_THREAD;
}

bool top_group_needs_cgroups(enum top_group g)
{
	return g == TOP_GROUP_CGROUP || g == TOP_GROUP_UNIT ||
	       g == TOP_GROUP_CONTAINER || g == TOP_GROUP_POD ||
	       g == TOP_GROUP_QOS;
}

static int cmp_double_desc(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int proc_cmp(const void *pa, const void *pb, void *arg)
{
	const struct top_proc *a = pa, *b = pb;
	int c = 0;

	switch (*(const enum top_sort *)arg) {
	case TOP_SORT_ERRORS:
		c = cmp_double_desc(a->errors_s, b->errors_s);
		break;
	case TOP_SORT_P99:
		c = a->p99_ns < b->p99_ns ? 1 : a->p99_ns > b->p99_ns ? -1 : 0;
		break;
	case TOP_SORT_TIME:
		c = cmp_double_desc(a->busy_pct, b->busy_pct);
		break;
	default:
		break;
	}
	if (!c)
		c = cmp_double_desc(a->calls_s, b->calls_s);
	if (!c)
		c = a->pid < b->pid ? -1 : a->pid > b->pid;
	return c;
}

void top_frame_sort(struct top_frame *fr, enum top_sort sort)
{
	if (fr->nprocs > 1) /* procs is NULL before the first frame */
		qsort_r(fr->procs, fr->nprocs, sizeof(*fr->procs), proc_cmp,
			&sort);
}

/* The TOP_NTOP rows of p with the most calls. */
static void top_syscalls(struct top_proc *tp, const struct sc_proc *p,
			 uint64_t ns)
{
	const struct sc_row *best[TOP_NTOP] = {};

	for (size_t i = 0; i < p->nrows; i++) {
		const struct sc_row *r = &p->rows[i];

		for (int k = 0; k < TOP_NTOP; k++) {
			if (best[k] && best[k]->st.calls >= r->st.calls)
				continue;
			memmove(&best[k + 1], &best[k],
				(TOP_NTOP - k - 1) * sizeof(best[0]));
			best[k] = r;
			break;
		}
	}
	for (int k = 0; k < TOP_NTOP && best[k]; k++) {
		tp->top[k].name = names_syscall_fmt(best[k]->abi, best[k]->nr,
						    tp->top[k].buf,
						    sizeof(tp->top[k].buf));
		tp->top[k].calls_s = view_per_sec(best[k]->st.calls, ns);
		tp->ntop = k + 1;
	}
}

/* The calls p is blocked in now (d's flights are longest first). */
static void flights_of(struct top_proc *tp, const struct sc_model *d,
		       const struct sc_proc *p, bool threads)
{
	for (size_t i = 0; i < d->nflights; i++) {
		const struct sc_flight_call *f = &d->flights[i];

		if ((threads ? f->tid : f->pid) != p->pid ||
		    f->proc_start_ns != p->start_ns || f->cgtag != p->cgtag)
			continue;
		if (!tp->in_flight++) {
			char buf[SC_NAME_LEN];

			snprintf(tp->flight_name, sizeof(tp->flight_name), "%s",
				 names_syscall_fmt(f->abi, f->nr, buf,
						   sizeof(buf)));
			tp->flight_ns = f->ns;
		}
	}
}

/* The split of p's calls that returned (their time, split measured). */
static void split_of(struct top_proc *tp, const struct sc_proc *p,
		     const struct sc_stats *sum, bool measured)
{
	uint64_t returned = 0;

	for (size_t i = 0; i < p->nrows; i++)
		returned += row_returned_ns(&p->rows[i]);
	tp->split = measured && returned > 0;
	if (!tp->split)
		return;
	tp->wait_pct = 100.0 * (double)sum->wait_ns / (double)returned;
	tp->blk_pct = 100.0 * (double)sum->blocked_ns / (double)returned;
	if (tp->wait_pct > 100)
		tp->wait_pct = 100;
	if (tp->blk_pct > 100)
		tp->blk_pct = 100;
}

/* A row's figures from its rows (sum: scratch); split: measured. */
static void fill(struct top_proc *tp, const struct sc_proc *p,
		 const struct sc_stats *sum, uint64_t ns, bool split)
{
	tp->calls_s = view_per_sec(sum->calls, ns);
	tp->errors_s = view_per_sec(sum->errors, ns);
	tp->err_pct = sum->calls ?
			      100.0 * (double)sum->errors / (double)sum->calls :
			      0;
	tp->p99_ns = hist_quantile(sum, 0.99);
	tp->busy_pct = ns ? 100.0 * (double)sum->total_ns / (double)ns : 0;
	split_of(tp, p, sum, split);
	top_syscalls(tp, p, ns);
}

/* Per comm, cgroup, unit or container: a row per group of the delta's
 * processes.
 */
static int build_groups(const struct sc_model *d, uint64_t ns,
			enum top_group group, struct top_frame *fr,
			struct sc_stats *sum)
{
	struct group_by by = { .n = 1 };
	struct sc_group *g;
	size_t n;
	int err;

	by.keys[0] = group_names[group].key;
	err = group_model(d, &by, false, &g, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n && fr->nprocs < d->nprocs; i++) {
		struct top_proc *tp;

		memset(sum, 0, sizeof(*sum));
		for (size_t j = 0; j < g[i].sum.nrows; j++)
			stats_add(sum, &g[i].sum.rows[j].st);
		if (!sum->calls && !sum->total_ns)
			continue;
		tp = &fr->procs[fr->nprocs++];
		snprintf(tp->label, sizeof(tp->label), "%s",
			 g[i].val[by.keys[0]]);
		fill(tp, &g[i].sum, sum, ns, d->meta.split);
	}
	group_free(g, n);
	return 0;
}

int top_frame_build(const struct sc_model *d, uint64_t ns, enum top_sort sort,
		    struct top_frame *fr)
{
	return top_frame_build_by(d, ns, sort, TOP_GROUP_PROCESS, fr);
}

int top_frame_build_by(const struct sc_model *d, uint64_t ns,
		       enum top_sort sort, enum top_group group,
		       struct top_frame *fr)
{
	struct sc_stats *sum = malloc(sizeof(*sum));
	uint64_t calls = 0, errors = 0;

	memset(fr, 0, sizeof(*fr));
	fr->interval_ns = ns;
	fr->timed_share = 1;
	fr->procs = calloc(d->nprocs ? d->nprocs : 1, sizeof(*fr->procs));
	if (!fr->procs || !sum) {
		free(sum);
		free(fr->procs);
		fr->procs = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->ntotal; i++) {
		calls += d->total[i].st.calls;
		errors += d->total[i].st.errors;
	}
	fr->calls_s = view_per_sec(calls, ns);
	fr->errors_s = view_per_sec(errors, ns);
	fr->dropped = d->meta.drops[SC_DROP_CALLS];
	if (model_incomplete(d)) {
		size_t len = 0;
		FILE *f = open_memstream(&fr->lost, &len);

		if (f) {
			drops_sentence(f, &d->meta);
			fclose(f);
		}
	}
	fr->group = group;
	if (top_group_is_label(group)) {
		int err = build_groups(d, ns, group, fr, sum);

		fr->in_flight = d->nflights;
		free(sum);
		if (err) {
			top_frame_free(fr);
			return err;
		}
		top_frame_sort(fr, sort);
		return 0;
	}
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct sc_proc *p = &d->procs[i];
		struct top_proc *tp;

		if (!p->pid || !p->nrows)
			continue; /* pid 0: what exited processes left */
		memset(sum, 0, sizeof(*sum));
		for (size_t j = 0; j < p->nrows; j++)
			stats_add(sum, &p->rows[j].st);
		if (!sum->calls && !sum->total_ns)
			continue;
		tp = &fr->procs[fr->nprocs++];
		tp->pid = p->pid;
		memcpy(tp->comm, p->comm, sizeof(tp->comm));
		tp->exited = p->exited;
		fill(tp, p, sum, ns, d->meta.split);
		flights_of(tp, d, p, group == TOP_GROUP_THREAD);
	}
	fr->in_flight = d->nflights;
	free(sum);
	top_frame_sort(fr, sort);
	return 0;
}

int top_frame_build_timed(const struct sc_model *d, uint64_t ns,
			  uint64_t timed_ns, enum top_sort sort,
			  enum top_group group, struct top_frame *fr)
{
	int err = top_frame_build_by(d, ns, sort, group, fr);

	if (err || timed_ns >= ns)
		return err;
	/* IN-SYS% as a share of the time calls were timed in */
	fr->timed_share = ns ? (double)timed_ns / (double)ns : 0;
	for (size_t i = 0; i < fr->nprocs; i++)
		fr->procs[i].busy_pct = timed_ns ? fr->procs[i].busy_pct *
							   (double)ns /
							   (double)timed_ns :
						   0;
	top_frame_sort(fr, sort);
	return 0;
}

void top_frame_free(struct top_frame *fr)
{
	free(fr->procs);
	fr->procs = NULL;
	fr->nprocs = 0;
	free(fr->lost);
	fr->lost = NULL;
}

static int push_line(char ***lines, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int push_line(char ***lines, size_t *n, const char *fmt, ...)
{
	char **tmp = realloc(*lines, (*n + 1) * sizeof(**lines));
	va_list ap;
	int r;

	if (!tmp)
		return -ENOMEM;
	*lines = tmp;
	va_start(ap, fmt);
	r = vasprintf(&(*lines)[*n], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* WAIT% and BLK%: "  12.5  80.0", or dashes when not known. */
static void split_cols(const struct top_proc *p, char *buf, size_t len)
{
	if (p->split)
		snprintf(buf, len, "%6.1f %5.1f", p->wait_pct, p->blk_pct);
	else
		snprintf(buf, len, "%6s %5s", "-", "-");
}

/* One process: pid, name (escaped), figures and its top syscalls. */
static int push_proc(char ***lines, size_t *n, const struct top_proc *p)
{
	char tops[128], split[32], *comm;
	size_t off = 0;
	int err;

	split_cols(p, split, sizeof(split));

	tops[0] = '\0';
	for (int k = 0; k < p->ntop && off < sizeof(tops); k++)
		off += (size_t)snprintf(tops + off, sizeof(tops) - off,
					"%s%s %.0f", k ? ", " : "",
					p->top[k].name, p->top[k].calls_s);
	if (p->in_flight && off < sizeof(tops))
		snprintf(tops + off, sizeof(tops) - off,
			 "%s[%u in a syscall now, longest %s %.1f s]",
			 off ? "  " : "", p->in_flight, p->flight_name,
			 (double)p->flight_ns / 1e9);
	if (!p->pid) { /* a unit or a container */
		comm = esc_text(p->label, strlen(p->label));
		if (!comm)
			return -ENOMEM;
		err = push_line(lines, n,
				"%-24.*s %10.1f %9.1f %6.1f %9.1f %7.1f %s  %s",
				comm[0] ? 64 : 6, comm[0] ? comm : "(none)",
				p->calls_s, p->errors_s, p->err_pct,
				(double)p->p99_ns / 1e3, p->busy_pct, split,
				tops);
		free(comm);
		return err;
	}
	comm = esc_text(p->comm, esc_strnlen(p->comm, SC_COMM_LEN));
	if (!comm)
		return -ENOMEM;
	err = push_line(lines, n,
			"%7u %-16s %10.1f %9.1f %6.1f %9.1f %7.1f %s  %s",
			p->pid, comm, p->calls_s, p->errors_s, p->err_pct,
			(double)p->p99_ns / 1e3, p->busy_pct, split, tops);
	free(comm);
	return err;
}

int top_frame_lines(const struct top_frame *fr, enum top_sort sort,
		    unsigned int max_rows, bool interactive, char ***lines,
		    size_t *n)
{
	char stamp[16];
	time_t t = time(NULL);
	char sampled[96] = "";
	struct tm tm;
	int err;

	*lines = NULL;
	*n = 0;
	if (fr->timed_share < 1)
		snprintf(sampled, sizeof(sampled),
			 "; P99, IN-SYS%%, WAIT%% and BLK%% from the %.1f%% of "
			 "the time timed",
			 100 * fr->timed_share);
	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	err = push_line(
		lines, n, "scprof top - %s, every %.1f s, by %s%s%s%s%s", stamp,
		(double)fr->interval_ns / 1e9, sorts[sort].title,
		fr->group ? ", per " : "",
		fr->group ? top_group_name(fr->group) : "",
		fr->targets_gone ? " - the targets have exited" : "",
		interactive ? "   keys: c e p t sort, g group, q quit" : "");
	err = err   ?:
		      push_line(lines, n,
				"%zu processes active, %.1f calls/s, %.1f "
				"errors/s, %llu calls dropped, %zu threads "
				"in a syscall now%s%s%s",
				fr->nprocs, fr->calls_s, fr->errors_s,
				(unsigned long long)fr->dropped, fr->in_flight,
				sampled, fr->lost ? "; incomplete: " : "",
				fr->lost ? fr->lost : "");
	if (top_group_is_label(fr->group))
		err = err   ?:
			      push_line(
				      lines, n,
				      "%-24s %10s %9s %6s %9s %7s %6s %5s  %s",
				      label_titles[fr->group], "CALLS/s",
				      "ERRORS/s", "ERR%", "P99-us", "IN-SYS%",
				      "WAIT%", "BLK%",
				      "TOP SYSCALLS (calls/s)");
	else
		err = err   ?:
			      push_line(
				      lines, n,
				      "%7s %-16s %10s %9s %6s %9s %7s %6s %5s  %s",
				      fr->group == TOP_GROUP_THREAD ? "TID" :
								      "PID",
				      "COMM", "CALLS/s", "ERRORS/s", "ERR%",
				      "P99-us", "IN-SYS%", "WAIT%", "BLK%",
				      "TOP SYSCALLS (calls/s)");
	for (size_t i = 0; !err && i < fr->nprocs; i++) {
		if (max_rows && i >= max_rows)
			break;
		err = push_proc(lines, n, &fr->procs[i]);
	}
	return err;
}

void top_frame_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

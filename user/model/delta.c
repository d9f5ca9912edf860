// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/delta.h"

void stats_delta(struct sc_stats *dst, const struct sc_stats *cur,
		 const struct sc_stats *prev)
{
	static const struct sc_stats none;
	int lo = -1, hi = -1;

	if (!prev)
		prev = &none;
	memset(dst, 0, sizeof(*dst));
	dst->calls = delta_u64(cur->calls, prev->calls);
	dst->errors = delta_u64(cur->errors, prev->errors);
	dst->interrupted = delta_u64(cur->interrupted, prev->interrupted);
	dst->total_ns = delta_u64(cur->total_ns, prev->total_ns);
	dst->bytes = delta_u64(cur->bytes, prev->bytes);
	dst->wait_ns = delta_u64(cur->wait_ns, prev->wait_ns);
	dst->blocked_ns = delta_u64(cur->blocked_ns, prev->blocked_ns);
	dst->iowait_ns = delta_u64(cur->iowait_ns, prev->iowait_ns);
	for (int i = 0; i < (int)SC_HIST_BUCKETS; i++) {
		dst->hist[i] = delta_u64(cur->hist[i], prev->hist[i]);
		if (!dst->hist[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
	}
	if (lo < 0)
		return;
	/* A bucket holds (lower, upper]: its smallest value is lower + 1. */
	dst->min_ns = sc_hist_lower((__u32)lo) + 1;
	dst->max_ns = hi + 1 < (int)SC_HIST_BUCKETS ? sc_hist_upper((__u32)hi) :
						      cur->max_ns;
	if (cur->min_ns > dst->min_ns)
		dst->min_ns = cur->min_ns;
	if (cur->max_ns && cur->max_ns < dst->max_ns)
		dst->max_ns = cur->max_ns;
	if (dst->min_ns > dst->max_ns)
		dst->min_ns = dst->max_ns;
	if (!dst->min_ns)
		dst->min_ns = 1; /* 0 means "no timed call" */
}

static const struct sc_row *row_find(const struct sc_row *rows, size_t n,
				     uint32_t abi, uint32_t nr,
				     uint32_t fd_type)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi == abi && rows[i].nr == nr &&
		    rows[i].fd_type == fd_type)
			return &rows[i];
	}
	return NULL;
}

/* Add to out the rows of cur that grew since prev (NULL: nothing). */
static int rows_delta(struct sc_proc *out, const struct sc_row *cur,
		      size_t ncur, const struct sc_row *prev, size_t nprev)
{
	for (size_t i = 0; i < ncur; i++) {
		const struct sc_row *p = row_find(prev, nprev, cur[i].abi,
						  cur[i].nr, cur[i].fd_type);
		struct sc_stats st;
		uint64_t ret;
		int64_t flight;

		stats_delta(&st, &cur[i].st, p ? &p->st : NULL);
		/* Time in flight at either end: the interval has what was
		 * spent in it (the totals include it), its returned calls
		 * their whole time (for the averages).
		 */
		ret = delta_u64(row_returned_ns(&cur[i]),
				p ? row_returned_ns(p) : 0);
		flight = (int64_t)st.total_ns - (int64_t)ret;
		if (!st.calls && !st.total_ns)
			continue;
		if (model_proc_add_fd(out, cur[i].abi, cur[i].nr,
				      cur[i].fd_type, &st) ||
		    model_proc_add_flight(out, cur[i].abi, cur[i].nr,
					  cur[i].fd_type, 0,
					  cur[i].flight_calls))
			return -ENOMEM;
		out->rows[out->nrows - 1].flight_ns = flight;
	}
	return 0;
}

/* Process c in d, with the rows of tmp (taken, leaving tmp empty); not
 * added when tmp has none. p: c in the previous snapshot, or NULL.
 */
static int proc_take(struct sc_model *d, const struct sc_proc *c,
		     const struct sc_proc *p, struct sc_proc *tmp)
{
	struct sc_proc *dp;

	if (!tmp->nrows)
		return 0;
	dp = model_proc(d, c->pid, c->start_ns, c->cgtag);
	if (!dp)
		return -ENOMEM;
	dp->rows = tmp->rows;
	dp->nrows = tmp->nrows;
	dp->cap = tmp->cap;
	memset(tmp, 0, sizeof(*tmp));
	dp->ppid = c->ppid;
	dp->tgid = c->tgid;
	dp->cgid = c->cgid;
	memcpy(dp->comm, c->comm, sizeof(dp->comm));
	dp->exited = c->exited;
	dp->exit_code = c->exit_code;
	dp->merged = delta_u64(c->merged, p ? p->merged : 0);
	return 0;
}

static uint64_t errno_count(const struct sc_model *m,
			    const struct sc_errno_row *e)
{
	for (size_t i = 0; m && i < m->nerrnos; i++) {
		const struct sc_errno_row *x = &m->errnos[i];

		if (x->abi == e->abi && x->nr == e->nr && x->err == e->err &&
		    x->fd_type == e->fd_type)
			return x->count;
	}
	return 0;
}

struct sc_model *model_delta(const struct sc_model *cur,
			     const struct sc_model *prev)
{
	struct sc_model *d = model_new();
	struct sc_proc total = {}, known = {}, tmp = {};
	const struct sc_proc *agg = NULL, *p;

	if (!d)
		return NULL;
	if (model_cgroups_copy(d, cur)) {
		model_free(d);
		return NULL;
	}
	for (size_t i = 0; i < cur->nprocs && !agg; i++) {
		if (!cur->procs[i].pid)
			agg = &cur->procs[i];
	}
	for (size_t i = 0; i < cur->nprocs; i++) {
		const struct sc_proc *c = &cur->procs[i];

		if (c == agg)
			continue;
		p = prev ? model_find_proc(prev, c->pid, c->start_ns,
					   c->cgtag) :
			   NULL;
		if (rows_delta(&tmp, c->rows, c->nrows, p ? p->rows : NULL,
			       p ? p->nrows : 0) ||
		    (agg && model_proc_merge(&known, &tmp)) ||
		    proc_take(d, c, p, &tmp))
			goto err;
	}
	if (rows_delta(&total, cur->total, cur->ntotal,
		       prev ? prev->total : NULL, prev ? prev->ntotal : 0))
		goto err;
	/* The aggregate grows by whole processes, their earlier intervals
	 * included, as they are merged into it: its share of this interval
	 * is what no process above accounts for.
	 */
	if (agg) {
		p = prev ? model_find_proc(prev, agg->pid, agg->start_ns,
					   agg->cgtag) :
			   NULL;
		if (rows_delta(&tmp, total.rows, total.nrows, known.rows,
			       known.nrows) ||
		    proc_take(d, agg, p, &tmp))
			goto err;
	}
	d->total = total.rows;
	d->ntotal = total.nrows;
	total.rows = NULL;
	for (size_t i = 0; i < cur->nerrnos; i++) {
		const struct sc_errno_row *e = &cur->errnos[i];
		uint64_t n = delta_u64(e->count, errno_count(prev, e));

		if (n &&
		    model_errno_add_fd(d, e->abi, e->nr, e->fd_type, e->err, n))
			goto err;
	}
	model_meta_delta(&d->meta, &cur->meta, prev ? &prev->meta : NULL);
	if (whys_delta(&d->why, &cur->why, prev ? &prev->why : NULL))
		goto err;
	for (size_t i = 0; i < cur->nflights; i++) {
		if (model_flight_add(d, &cur->flights[i]))
			goto err;
	}
	free(known.rows);
	return d;
err:
	free(total.rows);
	free(known.rows);
	free(tmp.rows);
	model_free(d);
	return NULL;
}

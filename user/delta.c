// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void stats_delta(struct sc_stats *dst, const struct sc_stats *cur,
		 const struct sc_stats *prev)
{
	static const struct sc_stats none;
	int lo = -1, hi = -1;

	if (!prev)
		prev = &none;
	memset(dst, 0, sizeof(*dst));
	dst->calls = sub(cur->calls, prev->calls);
	dst->errors = sub(cur->errors, prev->errors);
	dst->interrupted = sub(cur->interrupted, prev->interrupted);
	dst->total_ns = sub(cur->total_ns, prev->total_ns);
	dst->bytes = sub(cur->bytes, prev->bytes);
	for (int i = 0; i < (int)SC_HIST_BUCKETS; i++) {
		dst->hist[i] = sub(cur->hist[i], prev->hist[i]);
		if (!dst->hist[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
	}
	if (lo < 0)
		return;
	dst->min_ns = sc_hist_lower((__u32)lo);
	dst->max_ns = hi + 1 < (int)SC_HIST_BUCKETS ?
			      sc_hist_lower((__u32)hi + 1) - 1 :
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
				     uint32_t abi, uint32_t nr)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi == abi && rows[i].nr == nr)
			return &rows[i];
	}
	return NULL;
}

/* The rows of cur that grew since prev, into dst's rows. */
static int rows_delta(struct sc_row **dst, size_t *ndst, size_t *cap,
		      const struct sc_row *cur, size_t ncur,
		      const struct sc_row *prev, size_t nprev)
{
	for (size_t i = 0; i < ncur; i++) {
		const struct sc_row *p =
			row_find(prev, nprev, cur[i].abi, cur[i].nr);
		struct sc_row r = { .abi = cur[i].abi, .nr = cur[i].nr };

		stats_delta(&r.st, &cur[i].st, p ? &p->st : NULL);
		if (!r.st.calls)
			continue;
		if (*ndst == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			struct sc_row *tmp = realloc(*dst, ncap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			*dst = tmp;
			*cap = ncap;
		}
		(*dst)[(*ndst)++] = r;
	}
	return 0;
}

static uint64_t errno_count(const struct sc_model *m,
			    const struct sc_errno_row *e)
{
	for (size_t i = 0; m && i < m->nerrnos; i++) {
		const struct sc_errno_row *x = &m->errnos[i];

		if (x->abi == e->abi && x->nr == e->nr && x->err == e->err)
			return x->count;
	}
	return 0;
}

struct sc_model *model_delta(const struct sc_model *cur,
			     const struct sc_model *prev)
{
	struct sc_model *d = model_new();
	size_t tcap = 0;

	if (!d)
		return NULL;
	for (size_t i = 0; i < cur->nprocs; i++) {
		const struct sc_proc *c = &cur->procs[i];
		const struct sc_proc *p =
			prev ? model_find_proc(prev, c->pid, c->start_ns) :
			       NULL;
		struct sc_row *rows = NULL;
		size_t n = 0, cap = 0;
		struct sc_proc *dp;

		if (rows_delta(&rows, &n, &cap, c->rows, c->nrows,
			       p ? p->rows : NULL, p ? p->nrows : 0)) {
			free(rows);
			goto err;
		}
		if (!n) {
			free(rows);
			continue;
		}
		dp = model_proc(d, c->pid, c->start_ns);
		if (!dp) {
			free(rows);
			goto err;
		}
		dp->rows = rows;
		dp->nrows = n;
		dp->cap = cap;
		dp->ppid = c->ppid;
		memcpy(dp->comm, c->comm, sizeof(dp->comm));
		dp->exited = c->exited;
		dp->exit_code = c->exit_code;
	}
	if (rows_delta(&d->total, &d->ntotal, &tcap, cur->total, cur->ntotal,
		       prev ? prev->total : NULL, prev ? prev->ntotal : 0))
		goto err;
	for (size_t i = 0; i < cur->nerrnos; i++) {
		const struct sc_errno_row *e = &cur->errnos[i];
		uint64_t n = sub(e->count, errno_count(prev, e));

		if (n && model_errno_add(d, e->abi, e->nr, e->err, n))
			goto err;
	}
	for (int i = 0; i < SC_DROP_COUNT; i++)
		d->drops[i] = sub(cur->drops[i], prev ? prev->drops[i] : 0);
	return d;
err:
	model_free(d);
	return NULL;
}

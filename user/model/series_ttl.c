// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Idle syscall rows left out of what is exported (series_ttl.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/series_ttl.h"

/* A row as last seen. */
struct seen_row {
	uint32_t nr, abi, fd_type;
	uint64_t calls;
	uint64_t grew_ns; /* when its calls were last seen to grow */
};

struct series_ttl {
	uint64_t ttl_ns;
	struct seen_row *v; /* sorted by (abi, nr, fd_type) */
	size_t n;
	size_t hidden;
};

struct series_ttl *series_ttl__new(uint64_t ttl_ns)
{
	struct series_ttl *t = calloc(1, sizeof(*t));

	if (t)
		t->ttl_ns = ttl_ns;
	return t;
}

void series_ttl__free(struct series_ttl *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

static int seen_cmp(const struct seen_row *a, const struct seen_row *b)
{
	if (a->abi != b->abi)
		return a->abi < b->abi ? -1 : 1;
	if (a->nr != b->nr)
		return a->nr < b->nr ? -1 : 1;
	if (a->fd_type != b->fd_type)
		return a->fd_type < b->fd_type ? -1 : 1;
	return 0;
}

static int seen_qsort(const void *a, const void *b)
{
	return seen_cmp(a, b);
}

static const struct seen_row *seen_find(const struct series_ttl *t,
					const struct seen_row *key)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = seen_cmp(&t->v[mid], key);

		if (!c)
			return &t->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int series_ttl__apply(struct series_ttl *t, struct sc_model *m, uint64_t now_ns)
{
	struct seen_row *next;
	size_t kept = 0;

	if (!t->ttl_ns || !m->ntotal) {
		t->hidden = 0;
		return 0;
	}
	next = calloc(m->ntotal, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < m->ntotal; i++) {
		const struct sc_row *r = &m->total[i];
		struct seen_row *now = &next[i];
		const struct seen_row *last;

		now->nr = r->nr;
		now->abi = r->abi;
		now->fd_type = r->fd_type;
		now->calls = r->st.calls;
		now->grew_ns = now_ns;
		last = seen_find(t, now);
		if (last && last->calls == now->calls)
			now->grew_ns = last->grew_ns;
	}
	/* next[i] is m->total[i]'s until the rows are compacted */
	for (size_t i = 0; i < m->ntotal; i++) {
		if (now_ns > next[i].grew_ns &&
		    now_ns - next[i].grew_ns > t->ttl_ns)
			continue;
		if (kept != i)
			m->total[kept] = m->total[i];
		kept++;
	}
	t->hidden = m->ntotal - kept;
	m->ntotal = kept;
	qsort(next, m->ntotal + t->hidden, sizeof(*next), seen_qsort);
	free(t->v);
	t->v = next;
	t->n = kept + t->hidden;
	return 0;
}

size_t series_ttl__hidden(const struct series_ttl *t)
{
	return t->hidden;
}

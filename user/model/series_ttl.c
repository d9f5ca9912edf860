// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Idle syscall rows left out of what is exported (series_ttl.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/row_key.h"
#include "model/series_ttl.h"

/* A row as last seen. */
struct seen_row {
	struct row_key key; /* first: the table is sorted by it */
	uint64_t calls;
	uint64_t grew_ns; /* when its calls were last seen to grow */
};

struct series_ttl {
	uint64_t ttl_ns;
	struct seen_row *v; /* sorted by key */
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

static const struct seen_row *seen_find(const struct series_ttl *t,
					const struct row_key *key)
{
	return t->n ? bsearch(key, t->v, t->n, sizeof(*t->v), row_key_cmp) :
		      NULL;
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

		now->key = row_key_of(r);
		now->calls = r->st.calls;
		now->grew_ns = now_ns;
		last = seen_find(t, &now->key);
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
	qsort(next, m->ntotal + t->hidden, sizeof(*next), row_key_cmp);
	free(t->v);
	t->v = next;
	t->n = kept + t->hidden;
	return 0;
}

size_t series_ttl__hidden(const struct series_ttl *t)
{
	return t->hidden;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where calls slept, who woke them, what ran instead (why.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/why.h"

void whys_free(struct sc_whys *w)
{
	free(w->v);
	memset(w, 0, sizeof(*w));
}

int whys_copy(struct sc_whys *dst, const struct sc_whys *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->n)
		return 0;
	dst->v = malloc(src->n * sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	dst->n = dst->cap = src->n;
	dst->sorted = src->sorted;
	return 0;
}

/* The same row and the same what (the figures aside). */
static bool same(const struct sc_why *a, const struct sc_why *b)
{
	return a->pid == b->pid && a->start_ns == b->start_ns &&
	       a->cgtag == b->cgtag && a->abi == b->abi && a->nr == b->nr &&
	       a->fd_type == b->fd_type && a->kind == b->kind &&
	       a->waker == b->waker && a->lock == b->lock &&
	       a->opid == b->opid && a->otid == b->otid &&
	       !strncmp(a->name, b->name, SC_WHY_NAME_LEN);
}

static struct sc_why *find(const struct sc_whys *w, const struct sc_why *e)
{
	for (size_t i = 0; i < w->n; i++)
		if (same(&w->v[i], e))
			return &w->v[i];
	return NULL;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* An order of rows and whats, for finding entries again by bsearch. */
static int by_key(const void *a, const void *b)
{
	const struct sc_why *x = a, *y = b;
	int d = cmp_u64(x->pid, y->pid);

	d = d ?: cmp_u64(x->start_ns, y->start_ns);
	d = d ?: cmp_u64(x->cgtag, y->cgtag);
	d = d ?: cmp_u64(x->abi, y->abi);
	d = d ?: cmp_u64(x->nr, y->nr);
	d = d ?: cmp_u64(x->fd_type, y->fd_type);
	d = d ?: cmp_u64(x->kind, y->kind);
	d = d ?: cmp_u64(x->waker, y->waker);
	d = d ?: cmp_u64(x->lock, y->lock);
	d = d ?: cmp_u64(x->opid, y->opid);
	d = d ?: cmp_u64(x->otid, y->otid);
	return d ?: strncmp(x->name, y->name, SC_WHY_NAME_LEN);
}

int whys_add(struct sc_whys *w, const struct sc_why *e)
{
	struct sc_why *d = find(w, e);

	if (!d) {
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 16;
			struct sc_why *v = realloc(w->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			w->v = v;
			w->cap = cap;
		}
		d = &w->v[w->n++];
		*d = *e;
		d->ns = d->samples = 0;
		w->sorted = false;
	}
	d->ns += e->ns;
	d->samples += e->samples;
	return 0;
}

void whys_sort(struct sc_whys *w)
{
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), by_key);
	w->sorted = true;
}

/* The first entry of process (pid, start_ns, cgtag) in sorted w, or n. */
static size_t first_of(const struct sc_whys *w, uint32_t pid, uint64_t start_ns,
		       uint32_t cgtag)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct sc_why *e = &w->v[mid];
		int d = cmp_u64(e->pid, pid);

		d = d ?: cmp_u64(e->start_ns, start_ns);
		d = d ?: cmp_u64(e->cgtag, cgtag);
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int whys_add_process(struct sc_whys *dst, const struct sc_whys *src,
		     uint32_t pid, uint64_t start_ns, uint32_t cgtag)
{
	size_t i = src->sorted ? first_of(src, pid, start_ns, cgtag) : 0;

	for (; i < src->n; i++) {
		struct sc_why e = src->v[i];

		if (e.pid != pid || e.start_ns != start_ns ||
		    e.cgtag != cgtag) {
			if (src->sorted)
				break;
			continue;
		}
		e.pid = e.cgtag = 0;
		e.start_ns = 0;
		if (whys_add(dst, &e))
			return -ENOMEM;
	}
	return 0;
}

int whys_add_anonymous(struct sc_whys *dst, const struct sc_whys *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct sc_why e = src->v[i];

		e.pid = e.cgtag = 0;
		e.start_ns = 0;
		if (whys_add(dst, &e))
			return -ENOMEM;
	}
	return 0;
}

int whys_delta(struct sc_whys *dst, const struct sc_whys *cur,
	       const struct sc_whys *prev)
{
	struct sc_whys p = { 0 };

	memset(dst, 0, sizeof(*dst));
	if (prev && whys_copy(&p, prev))
		return -ENOMEM;
	if (p.n)
		qsort(p.v, p.n, sizeof(*p.v), by_key);
	for (size_t i = 0; i < cur->n; i++) {
		struct sc_why e = cur->v[i];
		const struct sc_why *old =
			p.n ? bsearch(&e, p.v, p.n, sizeof(*p.v), by_key) :
			      NULL;

		if (old) {
			e.ns = e.ns > old->ns ? e.ns - old->ns : 0;
			e.samples = e.samples > old->samples ?
					    e.samples - old->samples :
					    0;
		}
		if (!e.samples)
			continue;
		/* (cur's entries are distinct: a plain append) */
		if (dst->n == dst->cap) {
			size_t cap = dst->cap ? dst->cap * 2 : 16;
			struct sc_why *v = realloc(dst->v, cap * sizeof(*v));

			if (!v) {
				whys_free(dst);
				whys_free(&p);
				return -ENOMEM;
			}
			dst->v = v;
			dst->cap = cap;
		}
		dst->v[dst->n++] = e;
	}
	dst->sorted = cur->sorted;
	whys_free(&p);
	return 0;
}

static int by_ns(const void *a, const void *b)
{
	const struct sc_why *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strncmp(x->name, y->name, SC_WHY_NAME_LEN);
}

struct sc_why *whys_of_row(const struct sc_whys *w, uint32_t abi, uint32_t nr,
			   uint32_t fd_type, enum sc_why_kind kind,
			   uint64_t part, size_t *n)
{
	struct sc_whys out = { 0 };
	uint64_t total = 0;

	*n = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct sc_why e = w->v[i];

		if (e.abi != abi || e.nr != nr || e.fd_type != fd_type ||
		    e.kind != kind)
			continue;
		e.pid = e.cgtag = 0;
		e.start_ns = 0;
		if (whys_add(&out, &e)) {
			whys_free(&out);
			*n = SIZE_MAX;
			return NULL;
		}
		total += e.ns;
	}
	/* the samples' shares of what the row measured */
	for (size_t i = 0; i < out.n; i++)
		out.v[i].ns = (uint64_t)((double)part * (double)out.v[i].ns /
					 (double)total);
	if (out.n)
		qsort(out.v, out.n, sizeof(*out.v), by_ns);
	*n = out.n;
	return out.v;
}

const char *why_waker_name(unsigned int waker)
{
	switch (waker) {
	case SC_WAKER_INTERRUPT:
		return "interrupt";
	case SC_WAKER_TIMER:
		return "timer";
	default:
		return "task";
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An open-addressed table with linear probing, at most half full. An
 * entry taken out makes the entries after it in its run shift back, so no
 * tombstones build up under churn (Knuth's algorithm R).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/proc_counts.h"
#include "model/model.h"

struct slot {
	struct sc_proc_key k;
	struct sc_counts c;
	bool used;
};

struct proc_counts {
	struct slot *v;
	size_t cap, n; /* cap: a power of two, 0 when empty */
};

static void counts_add(struct sc_counts *d, const struct sc_counts *a)
{
	d->calls += a->calls;
	d->errors += a->errors;
	d->interrupted += a->interrupted;
	d->bytes += a->bytes;
	d->total_ns += a->total_ns;
	d->wait_ns += a->wait_ns;
	d->blocked_ns += a->blocked_ns;
	d->iowait_ns += a->iowait_ns;
}

static size_t home_of(const struct proc_counts *t, const struct sc_proc_key *k)
{
	return model_proc_hash(k->tgid, k->start_ns, k->cgtag) & (t->cap - 1);
}

static bool key_is(const struct sc_proc_key *a, const struct sc_proc_key *b)
{
	return a->tgid == b->tgid && a->start_ns == b->start_ns &&
	       a->cgtag == b->cgtag;
}

/* The slot of k, or the free one it would take. */
static size_t slot_at(const struct proc_counts *t, const struct sc_proc_key *k)
{
	size_t i = home_of(t, k);

	while (t->v[i].used && !key_is(&t->v[i].k, k))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct proc_counts *t)
{
	struct proc_counts big = { .cap = t->cap ? t->cap * 2 : 64 };

	big.v = calloc(big.cap, sizeof(*big.v));
	if (!big.v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->v[i].used)
			big.v[slot_at(&big, &t->v[i].k)] = t->v[i];
	}
	big.n = t->n;
	free(t->v);
	*t = big;
	return 0;
}

struct proc_counts *proc_counts__new(void)
{
	return calloc(1, sizeof(struct proc_counts));
}

void proc_counts__free(struct proc_counts *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

int proc_counts__add(struct proc_counts *t, const struct sc_proc_key *k,
		     const struct sc_counts *c)
{
	struct slot *e;

	if ((t->n + 1) * 2 > t->cap && grow(t))
		return -ENOMEM;
	e = &t->v[slot_at(t, k)];
	if (!e->used) {
		memset(e, 0, sizeof(*e));
		e->k = *k;
		e->used = true;
		t->n++;
	}
	counts_add(&e->c, c);
	return 0;
}

bool proc_counts__take(struct proc_counts *t, const struct sc_proc_key *k,
		       struct sc_counts *c)
{
	size_t i, j, mask = t->cap - 1;

	if (!t->n)
		return false;
	i = slot_at(t, k);
	if (!t->v[i].used)
		return false;
	*c = t->v[i].c;
	/* the hole at i: each later entry of the run whose home is not
	 * cyclically in (i, j] moves into it, and leaves its own
	 */
	for (j = (i + 1) & mask; t->v[j].used; j = (j + 1) & mask) {
		size_t h = home_of(t, &t->v[j].k);

		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->v[i] = t->v[j];
		i = j;
	}
	t->v[i].used = false;
	t->n--;
	return true;
}

int proc_counts__each(const struct proc_counts *t,
		      int (*fn)(void *ctx, const struct sc_proc_key *k,
				const struct sc_counts *c),
		      void *ctx)
{
	for (size_t i = 0; i < t->cap; i++) {
		int err = t->v[i].used ? fn(ctx, &t->v[i].k, &t->v[i].c) : 0;

		if (err)
			return err;
	}
	return 0;
}

size_t proc_counts__n(const struct proc_counts *t)
{
	return t->n;
}

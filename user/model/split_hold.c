// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The split's counters held from going back (split_hold.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/row_key.h"
#include "model/split_hold.h"

/* A row's figures as last given. */
struct held {
	struct row_key key; /* first: the table is sorted by it */
	uint64_t total, wait, blocked, iowait;
};

struct split_hold {
	struct held *v; /* sorted by key */
	size_t n;
};

static const struct held never; /* a row not given before */

struct split_hold *split_hold__new(void)
{
	return calloc(1, sizeof(struct split_hold));
}

void split_hold__free(struct split_hold *h)
{
	if (!h)
		return;
	free(h->v);
	free(h);
}

static const struct held *held_find(const struct split_hold *h,
				    const struct row_key *key)
{
	return h->n ? bsearch(key, h->v, h->n, sizeof(*h->v), row_key_cmp) :
		      NULL;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * now's parts, as close to what was read as they can be without any of
 * the four going back from last (zero: never given): each part at least
 * its last, their growth together at most the total's (shared in
 * proportion to each part's growth), I/O wait within blocked.
 */
static void hold(const struct held *last, struct held *now)
{
	uint64_t wait = max_u64(now->wait, last->wait);
	uint64_t blocked = max_u64(now->blocked, last->blocked);
	uint64_t total = max_u64(now->total, last->total);
	uint64_t dw = wait - last->wait, db = blocked - last->blocked;
	uint64_t room = total - last->total;

	if (dw + db > room) {
		/* (a part's growth in ns times room fits 64 bits for
		 * centuries of calls between two snapshots)
		 */
		uint64_t w =
			(uint64_t)((unsigned __int128)dw * room / (dw + db));

		dw = w;
		db = room - w;
	}
	now->wait = last->wait + dw;
	now->blocked = last->blocked + db;
	now->iowait = min_u64(max_u64(now->iowait, last->iowait), now->blocked);
}

int split_hold__apply(struct split_hold *h, struct sc_model *m)
{
	struct held *next = NULL;
	size_t n = 0;

	if (m->ntotal) {
		next = calloc(m->ntotal, sizeof(*next));
		if (!next)
			return -ENOMEM;
	}
	for (size_t i = 0; i < m->ntotal; i++) {
		struct sc_row *r = &m->total[i];
		struct held now = {
			.key = row_key_of(r),
			.total = r->st.total_ns,
			.wait = r->st.wait_ns,
			.blocked = r->st.blocked_ns,
			.iowait = r->st.iowait_ns,
		};
		const struct held *last = held_find(h, &now.key);

		hold(last ? last : &never, &now);
		r->st.wait_ns = now.wait;
		r->st.blocked_ns = now.blocked;
		r->st.iowait_ns = now.iowait;
		next[n++] = now;
	}
	/* (the rows of a cumulative snapshot never go: the last ones are
	 * the next one's past)
	 */
	if (n) /* next is NULL for none: qsort's first argument is nonnull */
		qsort(next, n, sizeof(*next), row_key_cmp);
	free(h->v);
	h->v = next;
	h->n = n;
	return 0;
}

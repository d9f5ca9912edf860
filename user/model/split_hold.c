// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The split's counters held from going back (split_hold.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/split_hold.h"

/* A row's figures as last given. */
struct held {
	uint32_t nr, abi, fd_type;
	uint64_t total, wait, blocked, iowait;
};

struct split_hold {
	struct held *v; /* sorted by (abi, nr, fd_type) */
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

static int held_cmp(const struct held *a, const struct held *b)
{
	if (a->abi != b->abi)
		return a->abi < b->abi ? -1 : 1;
	if (a->nr != b->nr)
		return a->nr < b->nr ? -1 : 1;
	if (a->fd_type != b->fd_type)
		return a->fd_type < b->fd_type ? -1 : 1;
	return 0;
}

static int held_qsort(const void *a, const void *b)
{
	return held_cmp(a, b);
}

static struct held *held_find(const struct split_hold *h,
			      const struct held *key)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = held_cmp(&h->v[mid], key);

		if (!c)
			return &h->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
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
			.nr = r->nr,
			.abi = r->abi,
			.fd_type = r->fd_type,
			.total = r->st.total_ns,
			.wait = r->st.wait_ns,
			.blocked = r->st.blocked_ns,
			.iowait = r->st.iowait_ns,
		};
		const struct held *last = held_find(h, &now);

		hold(last ? last : &never, &now);
		r->st.wait_ns = now.wait;
		r->st.blocked_ns = now.blocked;
		r->st.iowait_ns = now.iowait;
		next[n++] = now;
	}
	/* (the rows of a cumulative snapshot never go: the last ones are
	 * the next one's past)
	 */
	qsort(next, n, sizeof(*next), held_qsort);
	free(h->v);
	h->v = next;
	h->n = n;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/comm_series.h"
#include "model/delta.h"
#include "util/escape.h"

/* What is remembered of one live process: its figures when last seen. */
struct seen {
	uint32_t pid;
	bool used;
	uint64_t start_ns;
	uint32_t cgtag;
	struct comm_counts c;
};

struct seen_set {
	struct seen *slots;
	size_t cap; /* a power of two, 0 when empty */
	size_t n;
};

/* Growth of one name since the last update. */
struct pending {
	char label[COMM_LABEL_LEN];
	bool used;
	bool settled; /* already given to its series */
	struct comm_counts c;
};

/* Names sent straight to other since the last update (the pending table
 * was full): each is counted folded once, however many processes bear it.
 */
struct label_slot {
	bool used;
	char label[COMM_LABEL_LEN];
};

struct label_set {
	struct label_slot *slots;
	size_t cap; /* a power of two, 0 when empty */
	size_t n;
};

struct comm_series {
	struct comm_series_opts o;
	struct seen_set seen;
	struct pending *pend;
	size_t pend_cap, npend;
	struct label_set overflow;
	bool *grew; /* per series: credited outside settle since the last */
	struct pending **cand; /* settle's, max_pending of them */
	/* series [0, nseries), then other at [nseries] */
	struct comm_series_row *rows;
	size_t nseries;
	uint64_t folded, evicted;
	uint64_t settled_ns; /* the last settle's now_ns; 0: none yet */
};

static size_t hash_label(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (size_t)h;
}

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;

	while (c < n)
		c *= 2;
	return c;
}

static void label_set_insert(struct label_set *set, const char *label)
{
	for (size_t i = hash_label(label);; i++) {
		struct label_slot *e = &set->slots[i & (set->cap - 1)];

		if (!e->used) {
			e->used = true;
			memcpy(e->label, label, sizeof(e->label));
			set->n++;
			return;
		}
		if (!strcmp(e->label, label))
			return;
	}
}

/* Whether label is new to set, which then remembers it. */
static bool label_set_add(struct label_set *set, const char *label)
{
	for (size_t i = hash_label(label); set->cap; i++) {
		const struct label_slot *e = &set->slots[i & (set->cap - 1)];

		if (!e->used)
			break;
		if (!strcmp(e->label, label))
			return false;
	}
	if ((set->n + 1) * 2 > set->cap) {
		struct label_set big = { .cap = pow2_at_least((set->n + 1) *
							      2) };

		big.slots = calloc(big.cap, sizeof(*big.slots));
		if (!big.slots)
			return true; /* out of memory: it may count again */
		for (size_t i = 0; i < set->cap; i++) {
			if (set->slots[i].used)
				label_set_insert(&big, set->slots[i].label);
		}
		free(set->slots);
		*set = big;
	}
	label_set_insert(set, label);
	return true;
}

static void label_set_clear(struct label_set *set)
{
	free(set->slots);
	memset(set, 0, sizeof(*set));
}

int comm_series__new(struct comm_series **out,
		     const struct comm_series_opts *opts)
{
	struct comm_series *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->o = *opts;
	if (!s->o.max_pending)
		s->o.max_pending =
			s->o.max_series * 4 > 256 ? s->o.max_series * 4 : 256;
	s->pend_cap = pow2_at_least((size_t)s->o.max_pending * 2);
	s->pend = calloc(s->pend_cap, sizeof(*s->pend));
	s->cand = calloc(s->o.max_pending, sizeof(*s->cand));
	s->rows = calloc((size_t)s->o.max_series + 1, sizeof(*s->rows));
	s->grew = calloc((size_t)s->o.max_series + 1, sizeof(*s->grew));
	if (!s->pend || !s->cand || !s->rows || !s->grew) {
		comm_series__free(s);
		return -ENOMEM;
	}
	s->rows[0].other = true;
	*out = s;
	return 0;
}

void comm_series__free(struct comm_series *s)
{
	if (!s)
		return;
	free(s->seen.slots);
	free(s->pend);
	free(s->cand);
	free(s->rows);
	free(s->grew);
	label_set_clear(&s->overflow);
	free(s);
}

static bool seen_is(const struct seen *e, const struct sc_proc *p)
{
	return e->pid == p->pid && e->start_ns == p->start_ns &&
	       e->cgtag == p->cgtag;
}

static size_t seen_hash(const struct sc_proc *p)
{
	return model_proc_hash(p->pid, p->start_ns, p->cgtag);
}

static struct seen *seen_find(const struct seen_set *set,
			      const struct sc_proc *p)
{
	if (!set->cap)
		return NULL;
	for (size_t i = seen_hash(p);; i++) {
		struct seen *e = &set->slots[i & (set->cap - 1)];

		if (!e->used)
			return NULL;
		if (seen_is(e, p))
			return e;
	}
}

/* Into a set sized for it beforehand: never full. */
static void seen_put(struct seen_set *set, const struct sc_proc *p,
		     const struct comm_counts *c)
{
	for (size_t i = seen_hash(p);; i++) {
		struct seen *e = &set->slots[i & (set->cap - 1)];

		if (e->used && !seen_is(e, p))
			continue;
		if (!e->used)
			set->n++;
		e->used = true;
		e->pid = p->pid;
		e->start_ns = p->start_ns;
		e->cgtag = p->cgtag;
		e->c = *c;
		return;
	}
}

static void proc_counts(const struct sc_proc *p, struct comm_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sc_stats *st = &p->rows[i].st;

		c->calls += st->calls;
		c->errors += st->errors;
		c->total_ns += st->total_ns;
		c->bytes += st->bytes;
		c->on_cpu_ns += stats_on_cpu_ns(st, st->total_ns);
		c->wait_ns += st->wait_ns;
		c->blocked_ns += st->blocked_ns;
		c->iowait_ns += st->iowait_ns;
	}
}

#define COUNTS_WORDS (sizeof(struct comm_counts) / sizeof(uint64_t))
_Static_assert(sizeof(struct comm_counts) % sizeof(uint64_t) == 0,
	       "struct comm_counts holds uint64_t counters only");

/* The counters of c one by one. */
static uint64_t count_at(const struct comm_counts *c, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)c + i * sizeof(v), sizeof(v));
	return v;
}

static void count_set(struct comm_counts *c, size_t i, uint64_t v)
{
	memcpy((char *)c + i * sizeof(v), &v, sizeof(v));
}

static void counts_sub(struct comm_counts *d, const struct comm_counts *a,
		       const struct comm_counts *b)
{
	for (size_t i = 0; i < COUNTS_WORDS; i++)
		count_set(d, i, delta_u64(count_at(a, i), count_at(b, i)));
}

static void counts_add(struct comm_counts *d, const struct comm_counts *a)
{
	for (size_t i = 0; i < COUNTS_WORDS; i++)
		count_set(d, i, count_at(d, i) + count_at(a, i));
}

/* Each counter of d at least a's. */
static void counts_max(struct comm_counts *d, const struct comm_counts *a)
{
	for (size_t i = 0; i < COUNTS_WORDS; i++)
		if (count_at(a, i) > count_at(d, i))
			count_set(d, i, count_at(a, i));
}

static bool counts_zero(const struct comm_counts *c)
{
	for (size_t i = 0; i < COUNTS_WORDS; i++)
		if (count_at(c, i))
			return false;
	return true;
}

static struct comm_series_row *other(struct comm_series *s)
{
	return &s->rows[s->nseries];
}

/* Credit d to the name comm (its bytes up to the NUL, invalid UTF-8
 * replaced: the label). Cannot fail, so an update is all or nothing.
 */
static int series_find(const struct comm_series *s, const char *label);

/* Too many names at once for the pending table: a name with a series
 * still gets its growth; any other goes straight to other, counted folded
 * once per name until the next update.
 */
static void pending_full(struct comm_series *s, const char *label,
			 const struct comm_counts *d)
{
	int k = series_find(s, label);

	if (k >= 0) {
		counts_add(&s->rows[k].c, d);
		if (d->calls)
			s->grew[k] = true;
		return;
	}
	counts_add(&other(s)->c, d);
	if (label_set_add(&s->overflow, label))
		s->folded++;
}

/* The label of p: its comm, or its --labels values (see COMM_LABEL_LEN). */
static void label_of(const struct comm_series *s, const struct sc_model *m,
		     const struct sc_proc *p, char *label, size_t len)
{
	const struct group_by *by = s->o.labels;
	char val[4096];
	size_t off = 0;

	if (!by || !by->n) {
		esc_utf8_buf(p->comm, esc_strnlen(p->comm, SC_COMM_LEN), label,
			     len);
		return;
	}
	label[0] = '\0';
	for (size_t i = 0; i < by->n && off + 2 < len; i++) {
		const char *v =
			group_value(m, p, false, by->keys[i], val, sizeof(val));
		size_t room = (len - off) / (by->n - i);

		if (i)
			label[off++] = COMM_LABEL_SEP;
		off += esc_utf8_buf(v, strlen(v), label + off,
				    room > 1 ? room : 1);
	}
}

static void pending_add(struct comm_series *s, const char *label,
			const struct comm_counts *d)
{
	if (counts_zero(d))
		return;
	for (size_t i = hash_label(label);; i++) {
		struct pending *e = &s->pend[i & (s->pend_cap - 1)];

		if (e->used && strcmp(e->label, label))
			continue;
		if (!e->used) {
			if (s->npend >= s->o.max_pending) {
				pending_full(s, label, d);
				return;
			}
			memset(e, 0, sizeof(*e));
			memcpy(e->label, label, sizeof(e->label));
			e->used = true;
			s->npend++;
		}
		counts_add(&e->c, d);
		return;
	}
}

/* Credit to p's current name what it did since it was last seen (all of
 * it when never seen); *now gets its figures, which it is next seen at:
 * each counter no lower than it was seen at (on a CPU, read lower than
 * before when its parts were read grown before its total, is credited
 * only once it has grown past what was credited).
 */
static void credit(struct comm_series *s, const struct sc_model *m,
		   const struct sc_proc *p, struct comm_counts *now)
{
	struct seen *e = seen_find(&s->seen, p);
	struct comm_counts d;
	char label[COMM_LABEL_LEN];

	proc_counts(p, now);
	if (e) {
		counts_sub(&d, now, &e->c);
		counts_max(now, &e->c);
		e->c = *now;
	} else {
		d = *now;
	}
	label_of(s, m, p, label, sizeof(label));
	pending_add(s, label, &d);
}

void comm_series__fold(struct comm_series *s, const struct sc_model *exited)
{
	struct comm_counts now;

	for (size_t i = 0; i < exited->nprocs; i++) {
		if (exited->procs[i].pid)
			credit(s, exited, &exited->procs[i], &now);
	}
}

static int series_find(const struct comm_series *s, const char *label)
{
	for (size_t i = 0; i < s->nseries; i++) {
		if (!strcmp(s->rows[i].label, label))
			return (int)i;
	}
	return -1;
}

static void series_remove(struct comm_series *s, size_t i)
{
	s->rows[i] = s->rows[s->nseries - 1];
	s->rows[s->nseries - 1] = s->rows[s->nseries];
	s->nseries--;
}

static void series_append(struct comm_series *s, const struct pending *p,
			  uint64_t now_ns)
{
	struct comm_series_row *r;

	s->rows[s->nseries + 1] = s->rows[s->nseries]; /* other moves up */
	r = &s->rows[s->nseries++];
	memset(r, 0, sizeof(*r));
	memcpy(r->label, p->label, sizeof(r->label));
	r->c = p->c;
	r->changed_ns = now_ns;
	/* its first counts grew since the last settle */
	r->born_ns = s->settled_ns;
}

static int pending_cmp(const void *pa, const void *pb)
{
	const struct pending *a = *(const struct pending *const *)pa;
	const struct pending *b = *(const struct pending *const *)pb;

	if (a->c.calls != b->c.calls)
		return a->c.calls < b->c.calls ? 1 : -1;
	return strcmp(a->label, b->label);
}

/* Give the growth of each name to its series, free the slots of idle
 * series, then give free slots to the busiest names without one.
 */
static void settle(struct comm_series *s, uint64_t now_ns)
{
	struct pending **cand = s->cand;
	size_t ncand = 0;

	for (size_t i = 0; i < s->pend_cap; i++) {
		struct pending *e = &s->pend[i];
		int k;

		if (!e->used)
			continue;
		k = series_find(s, e->label);
		if (k < 0)
			continue;
		counts_add(&s->rows[k].c, &e->c);
		if (e->c.calls)
			s->rows[k].changed_ns = now_ns;
		e->settled = true;
	}
	for (size_t i = 0; i < s->nseries; i++) {
		if (s->grew[i])
			s->rows[i].changed_ns = now_ns;
		s->grew[i] = false;
	}
	for (size_t i = 0; i < s->nseries;) {
		if (s->o.idle_ns &&
		    now_ns - s->rows[i].changed_ns > s->o.idle_ns) {
			series_remove(s, i);
			s->evicted++;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < s->pend_cap; i++) {
		if (s->pend[i].used && !s->pend[i].settled)
			cand[ncand++] = &s->pend[i];
	}
	qsort(cand, ncand, sizeof(*cand), pending_cmp);
	for (size_t i = 0; i < ncand; i++) {
		if (s->nseries < s->o.max_series) {
			series_append(s, cand[i], now_ns);
		} else {
			counts_add(&other(s)->c, &cand[i]->c);
			s->folded++;
		}
	}
	memset(s->pend, 0, s->pend_cap * sizeof(*s->pend));
	s->npend = 0;
	label_set_clear(&s->overflow);
	s->settled_ns = now_ns;
}

int comm_series__update(struct comm_series *s, const struct sc_model *snap,
			uint64_t now_ns)
{
	struct seen_set next = {};

	next.cap = pow2_at_least(snap->nprocs * 2 + 1);
	next.slots = calloc(next.cap, sizeof(*next.slots));
	if (!next.slots)
		return -ENOMEM;
	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct sc_proc *p = &snap->procs[i];
		struct comm_counts now;

		if (!p->pid)
			continue;
		credit(s, snap, p, &now);
		seen_put(&next, p, &now);
	}
	/* Whoever is not in the snapshot any more is forgotten. */
	free(s->seen.slots);
	s->seen = next;
	settle(s, now_ns);
	return 0;
}

const struct comm_series_row *comm_series__rows(const struct comm_series *s,
						size_t *n)
{
	*n = s->nseries + 1;
	return s->rows;
}

uint64_t comm_series__folded(const struct comm_series *s)
{
	return s->folded;
}

uint64_t comm_series__evicted(const struct comm_series *s)
{
	return s->evicted;
}

size_t comm_series__tracked(const struct comm_series *s)
{
	return s->seen.n;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The entries are an array; an open-addressing table (linear probing, at
 * most half full) finds an id's entry. Each entry carries the tick of its
 * last use; the one to evict is found by a scan of the array, done only
 * when a new id comes into a full cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/idcache.h"

struct idcache_entry {
	uint64_t id;
	char *val;
	uint64_t used; /* the tick of its last get or set */
};

struct idcache {
	struct idcache_entry *e;
	size_t n, cap;
	size_t *slot; /* entry index + 1; 0: empty */
	size_t mask;  /* slots - 1, slots a power of two >= 2 * cap */
	uint64_t tick;
	uint64_t evicted;
};

static size_t hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id;
}

struct idcache *idcache_new(size_t cap)
{
	struct idcache *c = calloc(1, sizeof(*c));
	size_t slots = 2;

	if (!c)
		return NULL;
	c->cap = cap ? cap : 1;
	while (slots < 2 * c->cap)
		slots *= 2;
	c->mask = slots - 1;
	c->e = calloc(c->cap, sizeof(*c->e));
	c->slot = calloc(slots, sizeof(*c->slot));
	if (!c->e || !c->slot) {
		idcache_free(c);
		return NULL;
	}
	return c;
}

void idcache_free(struct idcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].val);
	free(c->e);
	free(c->slot);
	free(c);
}

/* The slot that holds id, or the empty one where it would go. */
static size_t find(const struct idcache *c, uint64_t id)
{
	size_t s = hash(id) & c->mask;

	while (c->slot[s] && c->e[c->slot[s] - 1].id != id)
		s = (s + 1) & c->mask;
	return s;
}

/* Empty slot s, moving back the entries after it that it would hide. */
static void slot_clear(struct idcache *c, size_t s)
{
	size_t next = s;

	c->slot[s] = 0;
	for (;;) {
		size_t home;

		next = (next + 1) & c->mask;
		if (!c->slot[next])
			return;
		home = hash(c->e[c->slot[next] - 1].id) & c->mask;
		/* stays unless its home is cyclically outside (s, next] */
		if (s <= next ? (s < home && home <= next) :
				(s < home || home <= next))
			continue;
		c->slot[s] = c->slot[next];
		c->slot[next] = 0;
		s = next;
	}
}

/* Drop the least recently used entry; the last one takes its place. */
static void evict(struct idcache *c)
{
	size_t old = 0, last = c->n - 1;

	for (size_t i = 1; i < c->n; i++)
		if (c->e[i].used < c->e[old].used)
			old = i;
	slot_clear(c, find(c, c->e[old].id));
	free(c->e[old].val);
	if (old != last) {
		c->e[old] = c->e[last];
		c->slot[find(c, c->e[old].id)] = old + 1;
	}
	c->n--;
	c->evicted++;
}

bool idcache_get(struct idcache *c, uint64_t id, const char **val)
{
	size_t s = find(c, id);
	struct idcache_entry *e;

	if (!c->slot[s])
		return false;
	e = &c->e[c->slot[s] - 1];
	e->used = ++c->tick;
	*val = e->val;
	return true;
}

int idcache_set(struct idcache *c, uint64_t id, const char *val)
{
	char *copy = NULL;
	size_t s = find(c, id);
	struct idcache_entry *e;

	if (val && !(copy = strdup(val)))
		return -ENOMEM;
	if (!c->slot[s]) {
		if (c->n == c->cap) {
			evict(c);
			s = find(c, id);
		}
		c->e[c->n] = (struct idcache_entry){ .id = id };
		c->slot[s] = ++c->n;
	}
	e = &c->e[c->slot[s] - 1];
	free(e->val);
	e->val = copy;
	e->used = ++c->tick;
	return 0;
}

size_t idcache_len(const struct idcache *c)
{
	return c->n;
}

uint64_t idcache_evicted(const struct idcache *c)
{
	return c->evicted;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interning tables (intern.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int strtab_grow(struct strtab *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	size_t *slot = calloc(nslots, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = hash_bytes(t->v[i], strlen(t->v[i])) & (nslots - 1);

		while (slot[h])
			h = (h + 1) & (nslots - 1);
		slot[h] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	return 0;
}

/* The index of s (taken: freed if already there, or on failure), or
 * -ENOMEM.
 */
int64_t strtab_take(struct strtab *t, char *s)
{
	size_t h;

	if (!s)
		return -ENOMEM;
	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t)) {
		free(s);
		return -ENOMEM;
	}
	h = hash_bytes(s, strlen(s)) & (t->nslots - 1);
	for (; t->slot[h]; h = (h + 1) & (t->nslots - 1)) {
		if (!strcmp(t->v[t->slot[h] - 1], s)) {
			free(s);
			return (int64_t)(t->slot[h] - 1);
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			free(s);
			return -ENOMEM;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = s;
	t->slot[h] = ++t->n;
	return (int64_t)(t->n - 1);
}

int64_t strtab_find(const struct strtab *t, const char *s)
{
	size_t h;

	if (!t->nslots)
		return -1;
	h = hash_bytes(s, strlen(s)) & (t->nslots - 1);
	for (; t->slot[h]; h = (h + 1) & (t->nslots - 1))
		if (!strcmp(t->v[t->slot[h] - 1], s))
			return (int64_t)(t->slot[h] - 1);
	return -1;
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slot);
}

static int idtab_grow(struct idtab *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	struct idkey *keys = calloc(nslots, sizeof(*keys));
	uint64_t *ids = calloc(nslots, sizeof(*ids));

	if (!keys || !ids) {
		free(keys);
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nslots; i++) {
		size_t h;

		if (!t->ids[i])
			continue;
		h = hash_bytes(&t->keys[i], sizeof(t->keys[i])) & (nslots - 1);
		while (ids[h])
			h = (h + 1) & (nslots - 1);
		keys[h] = t->keys[i];
		ids[h] = t->ids[i];
	}
	free(t->keys);
	free(t->ids);
	t->keys = keys;
	t->ids = ids;
	t->nslots = nslots;
	return 0;
}

/* The id of k, or 0 with *slot where it goes. -ENOMEM as -1 in *slot. */
uint64_t idtab_find(struct idtab *t, const struct idkey *k, ssize_t *slot)
{
	size_t h;

	*slot = -1;
	if ((t->n + 1) * 2 > t->nslots && idtab_grow(t))
		return 0;
	h = hash_bytes(k, sizeof(*k)) & (t->nslots - 1);
	for (; t->ids[h]; h = (h + 1) & (t->nslots - 1))
		if (!memcmp(&t->keys[h], k, sizeof(*k)))
			return t->ids[h];
	*slot = (ssize_t)h;
	return 0;
}

void idtab_set(struct idtab *t, size_t slot, const struct idkey *k, uint64_t id)
{
	t->keys[slot] = *k;
	t->ids[slot] = id;
	t->n++;
}

void idtab_free(struct idtab *t)
{
	free(t->keys);
	free(t->ids);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interning tables: strings to their index, and keys of four numbers to
 * ids (open addressing, growing by doubling). A pprof profile's string
 * table, functions, mappings and locations are built on them, and scprof
 * diff's lookup of a run's syscalls and groups.
 */
#ifndef SCPROF_UTIL_INTERN_H
#define SCPROF_UTIL_INTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strtab {
	char **v; /* by index, in the order taken */
	size_t n, cap;
	size_t *slot; /* index + 1; 0: empty */
	size_t nslots;
};

struct idkey {
	uint64_t k[4];
};

/* key -> id (ids from 1: 0 is an empty slot) */
struct idtab {
	struct idkey *keys;
	uint64_t *ids;
	size_t nslots, n;
};

/* The index of s (taken: freed if already there, or on failure), or
 * -ENOMEM. Index 0 is the first string taken.
 */
int64_t strtab_take(struct strtab *t, char *s);
/* The index of s, or -1 when t does not hold it. */
int64_t strtab_find(const struct strtab *t, const char *s);
void strtab_free(struct strtab *t);
/* The id of k, or 0 with *slot where it goes. -ENOMEM as -1 in *slot. */
uint64_t idtab_find(struct idtab *t, const struct idkey *k, ssize_t *slot);
/* Give k, not found at slot (idtab_find's), its id. */
void idtab_set(struct idtab *t, size_t slot, const struct idkey *k,
	       uint64_t id);
void idtab_free(struct idtab *t);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A bounded map from 64-bit ids to strings: when it is full, the entry
 * least recently looked up or set makes room for a new one.
 */
#ifndef SCPROF_IDCACHE_H
#define SCPROF_IDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idcache;

/* An empty cache of at most cap entries (at least 1), or NULL. */
struct idcache *idcache_new(size_t cap);
void idcache_free(struct idcache *c);
/* Is id in c? Then *val is its string (a copy of c's, valid until c
 * changes), or NULL when it was set to none; and it is now the most
 * recently used entry.
 */
bool idcache_get(struct idcache *c, uint64_t id, const char **val);
/* Set id's string (val copied; NULL: none), in place of what id had, the
 * least recently used entry going when c is full. 0 or -ENOMEM (c as it
 * was).
 */
int idcache_set(struct idcache *c, uint64_t id, const char *val);
/* Entries in c, and entries that went to make room, so far. */
size_t idcache_len(const struct idcache *c);
uint64_t idcache_evicted(const struct idcache *c);

#endif

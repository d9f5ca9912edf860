/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A syscall row's identity, (ABI, number, fd kind), for tables of rows
 * kept from one snapshot to the next (series_ttl.c, split_hold.c): an
 * entry begins with its key, the table is sorted by it (qsort with
 * row_key_cmp) and searched with bsearch and the same.
 */
#ifndef SCPROF_ROW_KEY_H
#define SCPROF_ROW_KEY_H

#include <stdint.h>

#include "model/model.h"

struct row_key {
	uint32_t abi, nr, fd_type;
};

static inline struct row_key row_key_of(const struct sc_row *r)
{
	return (struct row_key){ .abi = r->abi,
				 .nr = r->nr,
				 .fd_type = r->fd_type };
}

/* For qsort and bsearch over entries that begin with a struct row_key. */
static inline int row_key_cmp(const void *pa, const void *pb)
{
	const struct row_key *a = pa, *b = pb;

	if (a->abi != b->abi)
		return a->abi < b->abi ? -1 : 1;
	if (a->nr != b->nr)
		return a->nr < b->nr ? -1 : 1;
	if (a->fd_type != b->fd_type)
		return a->fd_type < b->fd_type ? -1 : 1;
	return 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counts by process (struct sc_proc_key to struct sc_counts): what dead
 * threads left until their process exits (tslots.c). Taking a process out
 * costs what it holds, not what the table holds, so a fold under churn
 * costs what exited.
 */
#ifndef SCPROF_PROC_COUNTS_H
#define SCPROF_PROC_COUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "scprof.h"

struct proc_counts;

/* NULL when out of memory. */
struct proc_counts *proc_counts__new(void);
void proc_counts__free(struct proc_counts *t);
/* Add c to k's counts. 0 or -ENOMEM (nothing added). */
int proc_counts__add(struct proc_counts *t, const struct sc_proc_key *k,
		     const struct sc_counts *c);
/* Take k's counts out of t into *c; false when it has none. */
bool proc_counts__take(struct proc_counts *t, const struct sc_proc_key *k,
		       struct sc_counts *c);
/* fn for each process, in no order, until it returns nonzero: that. */
int proc_counts__each(const struct proc_counts *t,
		      int (*fn)(void *ctx, const struct sc_proc_key *k,
				const struct sc_counts *c),
		      void *ctx);
size_t proc_counts__n(const struct proc_counts *t);

#endif

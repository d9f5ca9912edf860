/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which syscall rows of a cumulative snapshot a long-running consumer (the
 * daemon's /metrics and OTLP push) still exports: a row whose calls have
 * not grown for ttl_ns is left out, as Prometheus exporters drop stale
 * series, until its calls grow again. A node's series are then bounded by
 * the syscalls it made in the last ttl_ns, not by every syscall it ever
 * made.
 *
 * The kernel's counters go on meanwhile, so a row that comes back carries
 * on from its count: nothing is lost or counted twice, and Prometheus'
 * increase() over a window that spans the gap counts exactly the calls
 * made in it (a counter restarted at zero would be taken for no reset at
 * all when it came back at or above its old value). For OTLP it is the
 * same cumulative stream, with its start time, seen again after a gap.
 *
 * What is remembered of each row is its calls and when they last grew.
 */
#ifndef SCPROF_SERIES_TTL_H
#define SCPROF_SERIES_TTL_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct series_ttl;

/* ttl_ns 0: rows are never left out. NULL on allocation failure. */
struct series_ttl *series_ttl__new(uint64_t ttl_ns);
void series_ttl__free(struct series_ttl *t);
/*
 * Note which rows of m->total grew since the last call (a row not seen
 * before grew), then leave out of m->total those whose calls last grew
 * more than ttl_ns before now_ns. Rows of a cumulative snapshot never go,
 * so what this remembers is the last snapshot's rows. 0, or -ENOMEM with
 * m unchanged.
 */
int series_ttl__apply(struct series_ttl *t, struct sc_model *m,
		      uint64_t now_ns);
/* Rows left out by the last apply. */
size_t series_ttl__hidden(const struct series_ttl *t);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the BPF side could not keep, and why: one list of reasons for the
 * table's first line, the warning of a JSON or CSV run, JSON's "dropped",
 * Prometheus' scprof_dropped_total and top. Each reason is a consequence
 * (calls lost, processes without a name...), explained by the failed
 * updates of its map: "full" only when the map said so (-E2BIG), any other
 * errno by its name.
 */
#ifndef SCPROF_DROPS_H
#define SCPROF_DROPS_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

enum drop_reason_id {
	DROP_CALLS, /* enum sc_drop's, in their order */
	DROP_UNTIMED,
	DROP_PROC_INFO,
	DROP_ERRNO_DETAIL,
	DROP_CGROUP_MOVE,
	DROP_UNATTRIBUTED, /* meta.unattributed */
	DROP_CGROUP_NAMES, /* meta.cgroups_unnamed */
	DROP_REASONS,
};

/* The key of a reason: JSON's "dropped" member, Prometheus' label. */
const char *drop_key(enum drop_reason_id r);
/* How many a model lost for a reason. */
uint64_t drop_count(const struct sc_model_meta *m, enum drop_reason_id r);
/*
 * "2 processes have no name (process map full: raise --max-procs); ..."
 * for every reason with a count, and the failed updates of maps that no
 * reason explains. Empty when nothing was lost.
 */
void drops_sentence(FILE *f, const struct sc_model_meta *m);
/* The map's name in a metric label ("procs"). */
const char *drop_map_name(uint32_t map);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <inttypes.h>
#include <stdbool.h>

#include "render/drops.h"
#include "model/names.h"

/* E2BIG: what a BPF hash map answers when it is full. */
#define ERR_FULL 7

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct {
	const char *key;
	const char *what; /* after the count */
	int maps[2];	  /* the maps whose failures explain it, -1: none */
	const char *full; /* why, when they were full (or said nothing) */
} reasons[DROP_REASONS] = {
	[DROP_CALLS] = { "calls",
			 "calls were not recorded",
			 { SC_MAP_MERGED, -1 },
			 "no cell left for their syscall" },
	[DROP_UNTIMED] = { "untimed_calls",
			   "calls were not timed or counted",
			   { SC_MAP_THREADS, -1 },
			   "no task storage" },
	[DROP_PROC_INFO] = { "process_info",
			     "processes have no name",
			     { SC_MAP_PROCS, -1 },
			     "process map full: raise --max-procs" },
	[DROP_ERRNO_DETAIL] = { "errno_detail",
				"errors have no errno",
				{ SC_MAP_ERRNOS, -1 },
				"errno map full" },
	[DROP_CGROUP_MOVE] = { "cgroup_moves",
			       "moves of threads to another cgroup were not "
			       "followed (their calls stay under the cgroup "
			       "before)",
			       { SC_MAP_CGTAGS, -1 },
			       "cgroup tag map full, or a process of more "
			       "than " STR(SC_CGTAG_THREADS) " threads "
							     "moved" },
	[DROP_UNATTRIBUTED] = { "unattributed_calls",
				"calls are counted in the merged processes, "
				"not in their own",
				{ SC_MAP_STATS, -1 },
				"stats map full: raise --max-entries" },
	[DROP_CGROUP_NAMES] = { "cgroup_names",
				"cgroups are named by their id only",
				{ -1, -1 },
				"removed before their path was kept" },
};

const char *drop_key(enum drop_reason_id r)
{
	return reasons[r].key;
}

const char *drop_map_name(uint32_t map)
{
	return names_map(map);
}

uint64_t drop_count(const struct sc_model_meta *m, enum drop_reason_id r)
{
	if (r == DROP_UNATTRIBUTED)
		return m->unattributed;
	if (r == DROP_CGROUP_NAMES)
		return m->cgroups_unnamed;
	return m->drops[r];
}

static bool explains(enum drop_reason_id r, uint32_t map)
{
	return reasons[r].maps[0] == (int)map || reasons[r].maps[1] == (int)map;
}

/* "EBUSY x3, ENOMEM x1": the failures of the maps r explains (or of those
 * no reason with a count explains, for r < 0) that are not "full".
 */
static void other_errors(FILE *f, const struct sc_model_meta *m, int r,
			 const bool *told)
{
	const char *sep = "";

	for (uint32_t i = 0; i < m->nfails; i++) {
		const struct sc_map_fail *x = &m->fails[i];
		const char *name =
			x->err == ERR_FULL ? "full" : names_errno((int)x->err);

		if ((r >= 0 && (x->err == ERR_FULL || !explains(r, x->map))) ||
		    (r < 0 && told[x->map]))
			continue;
		if (r < 0)
			fprintf(f, "%s%s map: ", sep, drop_map_name(x->map));
		if (name)
			fprintf(f, "%s%s x%" PRIu64, r < 0 ? "" : sep, name,
				x->count);
		else
			fprintf(f, "%serrno %u x%" PRIu64, r < 0 ? "" : sep,
				x->err, x->count);
		sep = ", ";
	}
}

static bool any_other(const struct sc_model_meta *m, enum drop_reason_id r)
{
	for (uint32_t i = 0; i < m->nfails; i++)
		if (explains(r, m->fails[i].map) && m->fails[i].err != ERR_FULL)
			return true;
	return false;
}

void drops_sentence(FILE *f, const struct sc_model_meta *m)
{
	bool told[SC_MAP_COUNT] = {}, rest = false;
	const char *sep = "";

	for (int r = 0; r < DROP_REASONS; r++) {
		uint64_t n = drop_count(m, r);

		if (!n)
			continue;
		for (int k = 0; k < 2; k++)
			if (reasons[r].maps[k] >= 0)
				told[reasons[r].maps[k]] = true;
		fprintf(f, "%s%" PRIu64 " %s (", sep, n, reasons[r].what);
		if (any_other(m, r)) {
			fprintf(f, "adding to the %s map failed: ",
				names_map((uint32_t)reasons[r].maps[0]));
			other_errors(f, m, r, told);
		} else {
			fputs(reasons[r].full, f);
		}
		fputc(')', f);
		if (r == DROP_UNATTRIBUTED)
			fputs("; the totals are exact", f);
		sep = "; ";
	}
	/* failed updates whose loss no count above says */
	for (uint32_t i = 0; i < m->nfails; i++)
		rest |= !told[m->fails[i].map];
	if (!rest)
		return;
	fprintf(f, "%smap updates failed (", sep);
	other_errors(f, m, -1, told);
	fputc(')', f);
}

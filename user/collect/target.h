/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Whom to profile: turning -p/--cgroup/-a into collector settings. Shared
 * by the profiler, top and the daemon.
 */
#ifndef SCPROF_TARGET_H
#define SCPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "scprof.h"

enum target_kind {
	TARGET_NONE,
	TARGET_CMD,
	TARGET_PIDS,
	TARGET_CGROUP,
	TARGET_ALL,
};

/* Whom to watch: what -p/--cgroup/-a/-f/--max-* of the profiler, top and
 * the daemon ask for.
 */
struct target_spec {
	enum target_kind kind;
	pid_t *pids;
	size_t npids;
	const char *cgroup;
	bool follow;
	uint32_t max_stats; /* --max-entries; 0: the collector's default */
	uint32_t max_procs; /* --max-procs; 0: the collector's default */
};

/* The targets as found on the system when the run starts (target_find). */
struct target_found {
	pid_t *pids; /* distinct live processes (-p's, resolved) */
	size_t npids;
	pid_t only_tid; /* -p TID of one thread alone (strace -p), or 0 */
};

/*
 * Find t's processes: -p's ids become distinct live process ids, a
 * thread's id its process's. With thread_alone, a single -p TID of a
 * thread that is not its process's leader profiles that thread only
 * (strace -p): out->only_tid, and a line on stderr says so. 0, or
 * -ESRCH/-errno after a one-line error naming the pid.
 */
int target_find(const struct target_spec *t, bool thread_alone,
		struct target_found *out);
void target_found_free(struct target_found *f);
/*
 * Turn pids (thread ids allowed) into distinct live process ids, in place.
 * 0, or -ESRCH/-errno after a one-line error naming the pid.
 */
int target_resolve_pids(pid_t *pids, size_t *n);
/* The BPF filter mode of a kind of target. */
enum sc_filter_mode target_filter(enum target_kind k);
/* The collector settings of a target: filter, cgroup, -f, map sizes. */
void target_collector_opts(const struct target_spec *t,
			   struct collector_opts *copts);
/*
 * Where the cells of t's calls live: the arrays of the one target when t
 * is one process (its calls not split by thread or cgroup); else the
 * aggregate when no per-process rows are wanted; else per process.
 */
enum sc_cells target_cells(const struct target_spec *t, size_t npids,
			   bool rows_wanted, const struct collector_opts *co);
/*
 * Open a collector with copts (the plan's), add the found pids and attach:
 * top's and the daemon's start. 0 or -errno, the reason reported; *out is
 * for collector__destroy either way.
 */
int target_attach(const struct target_found *found,
		  const struct collector_opts *copts, struct collector **out);

#endif

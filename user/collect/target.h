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

/*
 * Turn pids (thread ids allowed) into distinct live process ids, in place.
 * 0, or -ESRCH/-errno after a one-line error naming the pid.
 */
int target_resolve_pids(pid_t *pids, size_t *n);
/*
 * -p TID of one thread that is not its process's leader: that thread only
 * (strace -p): *only_tid is the thread, t's pid its process, and a line
 * on stderr says so. Otherwise *only_tid is 0 and t unchanged. 0.
 */
int target_resolve_thread(struct target_spec *t, pid_t *only_tid);
/* The BPF filter mode of a kind of target. */
enum sc_filter_mode target_filter(enum target_kind k);
/* The collector settings of a target: filter, cgroup, -f, map sizes. */
void target_collector_opts(const struct target_spec *t,
			   struct collector_opts *copts);
/*
 * Open a collector with copts (the fields above filled in from t), add
 * t's pids (resolved) and attach: top's and the daemon's start. 0 or
 * -errno, the reason reported; *out is for collector__destroy either way.
 */
int target_attach(const struct target_spec *t, struct collector_opts *copts,
		  struct collector **out);

#endif

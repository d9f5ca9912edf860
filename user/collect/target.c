// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/target.h"
#include "util/log.h"
#include "util/procfs.h"

int target_resolve_pids(pid_t *pids, size_t *npids)
{
	size_t n = 0;

	for (size_t i = 0; i < *npids; i++) {
		int tgid = procfs_tgid(pids[i]);
		bool dup = false;

		if (tgid < 0) {
			pr_err("cannot profile pid %d: %s", pids[i],
			       tgid == -ESRCH ? "no such process" :
						strerror(-tgid));
			return tgid;
		}
		if (tgid != pids[i])
			pr_info("pid %d is a thread of process %d: profiling "
				"the whole process",
				pids[i], tgid);
		for (size_t j = 0; j < n; j++)
			dup |= pids[j] == tgid;
		if (!dup)
			pids[n++] = tgid;
	}
	*npids = n;
	return 0;
}

int target_resolve_thread(struct target_spec *t, pid_t *only_tid)
{
	int tgid;

	*only_tid = 0;
	if (t->kind != TARGET_PIDS || t->npids != 1)
		return 0;
	tgid = procfs_tgid(t->pids[0]);
	if (tgid < 0 || tgid == t->pids[0])
		return 0; /* target_resolve_pids says why, or nothing to do */
	pr_warn("pid %d is a thread of process %d: profiling that thread "
		"only, as strace -p does (-p %d for the whole process)",
		t->pids[0], tgid, tgid);
	*only_tid = t->pids[0];
	t->pids[0] = tgid;
	return 0;
}

enum sc_filter_mode target_filter(enum target_kind k)
{
	switch (k) {
	case TARGET_CMD:
	case TARGET_PIDS:
		return SC_FILTER_TGID;
	case TARGET_CGROUP:
		return SC_FILTER_CGROUP;
	default:
		return SC_FILTER_ALL;
	}
}

void target_collector_opts(const struct target_spec *t,
			   struct collector_opts *copts)
{
	copts->mode = target_filter(t->kind);
	copts->cgroup_path = t->cgroup;
	copts->follow = t->follow;
	copts->max_stats = t->max_stats;
	copts->max_procs = t->max_procs;
}

int target_attach(const struct target_spec *t, struct collector_opts *copts,
		  struct collector **out)
{
	int err;

	target_collector_opts(t, copts);
	err = collector__open(out, copts);
	if (err)
		return err;
	for (size_t i = 0; i < t->npids; i++) {
		err = collector__add_target(*out, t->pids[i]);
		if (err)
			return err;
	}
	return collector__attach(*out);
}

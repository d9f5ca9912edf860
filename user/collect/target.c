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

int target_find(const struct target_spec *t, bool thread_alone,
		struct target_found *out)
{
	int tgid;

	memset(out, 0, sizeof(*out));
	if (t->kind != TARGET_PIDS || !t->npids)
		return 0;
	out->pids = malloc(t->npids * sizeof(*out->pids));
	if (!out->pids)
		return -ENOMEM;
	memcpy(out->pids, t->pids, t->npids * sizeof(*out->pids));
	out->npids = t->npids;
	if (thread_alone && t->npids == 1) {
		tgid = procfs_tgid(t->pids[0]);
		if (tgid > 0 && tgid != t->pids[0]) {
			pr_warn("pid %d is a thread of process %d: profiling "
				"that thread only, as strace -p does (-p %d for "
				"the whole process)",
				t->pids[0], tgid, tgid);
			out->only_tid = t->pids[0];
			out->pids[0] = tgid;
		}
	}
	return target_resolve_pids(out->pids, &out->npids);
}

void target_found_free(struct target_found *f)
{
	free(f->pids);
	memset(f, 0, sizeof(*f));
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

enum sc_cells target_cells(const struct target_spec *t, size_t npids,
			   bool rows_wanted, const struct collector_opts *co)
{
	bool one = t->kind == TARGET_CMD ||
		   (t->kind == TARGET_PIDS && npids == 1);

	if (one && !t->follow && co->key_kind == SC_KEY_PROCESS &&
	    !co->read_cgid)
		return SC_CELLS_ONE_TARGET;
	return rows_wanted ? SC_CELLS_PER_PROCESS : SC_CELLS_AGGREGATE;
}

int target_attach(const struct target_found *found,
		  const struct collector_opts *copts, struct collector **out)
{
	int err;

	err = collector__open(out, copts);
	if (err)
		return err;
	for (size_t i = 0; i < found->npids; i++) {
		err = collector__add_target(*out, found->pids[i]);
		if (err)
			return err;
	}
	return collector__attach(*out);
}

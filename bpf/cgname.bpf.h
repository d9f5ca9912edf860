/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cgroup names (read_cgid: --by cgroup, unit, container, pod, qos, the
 * daemon's --labels of those, top -g of those). Userspace names a cgroup
 * id by finding its directory under the cgroup2 mount, which a cgroup
 * removed before that no longer has: a container that exits between two
 * folds, as a batch job's, a CI step's or a Kubernetes Job's does, and
 * its runtime removes its cgroup at once. So each cgroup v2 removed while
 * scprof runs is sent with its path, from cgroup_rmdir, to the
 * cgname_events ring buffer, which userspace reads before it names
 * (user/collect/cgroups.c). The program runs on removals only, never on
 * a call.
 *
 * A removal the ring has no room for, or whose path the tracepoint cut
 * (SC_CGPATH_LEN), is counted in cgname_lost.
 */
#ifndef SCPROF_CGNAME_BPF_H
#define SCPROF_CGNAME_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "task.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SC_CGNAME_RINGBUF); /* userspace may resize */
} cgname_events SEC(".maps");

/* The event is filled here (too large for the stack), then sent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_cgname_event);
} cgname_scratch SEC(".maps");

__u64 cgname_lost = 0;

/* cgroup_rmdir: cgrp, at path, is being removed. */
static __always_inline void cgname_removed(struct cgroup *cgrp,
					   const char *path)
{
	struct task_struct *task = current_task();
	struct sc_cgname_event *e;
	__u32 zero = 0;
	long len;

	/* a cgroup v1 hierarchy's: not one a cgroup id names */
	if (BPF_CORE_READ(cgrp, root) !=
	    BPF_CORE_READ(task, cgroups, dfl_cgrp, root))
		return;
	e = bpf_map_lookup_elem(&cgname_scratch, &zero);
	if (!e)
		return;
	e->id = BPF_CORE_READ(cgrp, kn, id);
	len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	/* a path of the whole buffer may have been cut: not sent */
	if (len <= 1 || len >= (long)sizeof(e->path)) {
		__sync_fetch_and_add(&cgname_lost, 1);
		return;
	}
	if (bpf_ringbuf_output(&cgname_events, e,
			       offsetof(struct sc_cgname_event, path) + len,
			       BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&cgname_lost, 1);
}

#endif /* SCPROF_CGNAME_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Processes: the key that tells a process from a reused pid, and its entry
 * in procs (name, parent, exit), written once per process and cell
 * creation, at exec and at exit, never on the hot path.
 *
 * Uses the globals and maps scprof.bpf.c defines before it includes this
 * file: one_ready, one_start_ns, procs_used, procs, nameless, and
 * count_drop().
 */
#ifndef SCPROF_PROC_BPF_H
#define SCPROF_PROC_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "maps.bpf.h"
#include "task.bpf.h"

/* Direct loads from the BTF pointer: BPF_CORE_READ would be a helper call
 * (bpf_probe_read_kernel), several times dearer, and this is on the hot
 * path of the hash cells.
 */
static __always_inline void proc_key_of(struct task_struct *task,
					struct sc_proc_key *key)
{
	if (key_kind == SC_KEY_THREAD) { /* --by tid */
		key->tgid = task_tid(task);
		key->pad = 0;
		key->start_ns = task_start_ns(task);
		return;
	}
	key->tgid = task_tgid(task);
	key->pad = 0;
	key->start_ns = task_proc_start_ns(task);
}

/* The process's name (its group leader's), or with --by tid the thread's. */
static __always_inline void read_leader_comm(struct task_struct *task,
					     char *comm)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	if (key_kind == SC_KEY_THREAD)
		leader = task;
	bpf_probe_read_kernel_str(comm, SC_COMM_LEN, &leader->comm);
}

/* Make the process known (name, parent); once per process and cell
 * creation, never on the hot path.
 */
static __always_inline void proc_init(struct task_struct *task,
				      const struct sc_proc_key *key)
{
	struct sc_proc_info info = {};
	static const __u8 one = 1;
	int err;

	read_leader_comm(task, info.comm);
	info.ppid = task_ppid(task);
	info.tgid = task_tgid(task);
	if (read_cgid) /* proc_init runs in the task's own calls */
		info.cgid = bpf_get_current_cgroup_id();
	err = map_update(SC_MAP_PROCS, &procs, key, &info, BPF_NOEXIST);
	if (!err) {
		__sync_fetch_and_add(&procs_used, 1);
		return;
	}
	if (err == -17 /* EEXIST: another thread got there first */)
		return;
	map_failed(SC_MAP_PROCS, err);
	if (!map_update(SC_MAP_COUNT, &nameless, key, &one, BPF_NOEXIST))
		count_drop(SC_DROP_PROC_INFO);
}

/* The one target's first recorded call: its identity and its name. */
static __always_inline void one_init(struct task_struct *task)
{
	struct sc_proc_key key;

	proc_key_of(task, &key);
	one_start_ns = key.start_ns;
	proc_init(task, &key);
	one_ready = 1;
}

/* The known process of task, its name read again (exec changes it);
 * NULL when it is not known.
 */
static __always_inline struct sc_proc_info *proc_renamed(struct task_struct *p)
{
	struct sc_proc_info *info;
	struct sc_proc_key key;

	proc_key_of(p, &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (info)
		read_leader_comm(p, info->comm);
	return info;
}

#endif /* SCPROF_PROC_BPF_H */

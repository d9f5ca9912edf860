/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Processes: the key that tells a process from a reused pid, and its entry
 * in procs (name, parent, exit), written once per process and cell
 * creation, at exec and at exit, never on the hot path.
 *
 * With cgroup tags (cgtag.bpf.h), a process has an entry per tag its
 * threads made calls under: each names the cgroup of its first call. The
 * exit of the process marks one of them exited, and userspace the others.
 *
 * Uses the settings key_kind, read_cgid (settings.bpf.h), and the one
 * target's identity (one_start_ns, one_ready: filter.bpf.h).
 */
#ifndef SCPROF_PROC_BPF_H
#define SCPROF_PROC_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "cgtag.bpf.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "settings.bpf.h"
#include "task.bpf.h"

/* Entries created in procs, less those deleted (userspace takes off what
 * it folds): how full the map is, so userspace folds early.
 */
__s64 procs_used = 0;
/* Processes in procs marked exited, less those userspace folded. */
__s64 procs_exited = 0;

/* The processes that have cells: name, parent, exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, struct sc_proc_info);
} procs SEC(".maps");

/* Processes that found procs full: their drop is counted once, not once
 * per cell. LRU: never full itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sc_proc_key);
	__type(value, __u8);
} nameless SEC(".maps");

/* read_cgid: for a process whose calls were made under a cgroup tag, one
 * such tag (key: the process's key with tag 0), for proc_exited to find
 * an entry of the process by (cgtag.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct sc_proc_key);
	__type(value, __u32);
} moved_procs SEC(".maps");

/* The key of task's calls made under cgroup tag cgtag. Direct loads from
 * the BTF pointer: BPF_CORE_READ would be a helper call
 * (bpf_probe_read_kernel), several times dearer, and this is on the hot
 * path of the hash cells.
 */
static __always_inline void proc_key_of(struct task_struct *task, __u32 cgtag,
					struct sc_proc_key *key)
{
	key->cgtag = cgtag;
	if (settings.key_kind == SC_KEY_THREAD) { /* --by tid */
		key->tgid = task_tid(task);
		key->start_ns = task_start_ns(task);
		return;
	}
	key->tgid = task_tgid(task);
	key->start_ns = task_proc_start_ns(task);
}

/* A key with a tag is made: keep one of its process's tagged keys, for
 * proc_exited to find an entry of the process by.
 */
static __always_inline void proc_tag_noted(const struct sc_proc_key *key)
{
	struct sc_proc_key first = *key;
	__u32 tag = key->cgtag;
	int err;

	if (!settings.read_cgid || !tag)
		return;
	first.cgtag = 0;
	err = map_update(SC_MAP_CGTAGS, &moved_procs, &first, &tag, BPF_ANY);
	if (err) {
		map_failed(SC_MAP_CGTAGS, err);
		count_drop(SC_DROP_CGROUP_MOVE);
	}
}

/* The process's name (its group leader's), or with --by tid the thread's. */
static __always_inline void read_leader_comm(struct task_struct *task,
					     char *comm)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	if (settings.key_kind == SC_KEY_THREAD)
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
	if (settings.read_cgid) /* proc_init runs in the task's own calls */
		info.cgid = bpf_get_current_cgroup_id();
	err = map_update(SC_MAP_PROCS, &procs, key, &info, BPF_NOEXIST);
	if (!err) {
		__sync_fetch_and_add(&procs_used, 1);
		proc_tag_noted(key);
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

	proc_key_of(task, 0, &key);
	one_start_ns = key.start_ns;
	proc_init(task, &key);
	one_ready = 1;
}

/* The known process of task under its cgroup tag, its name read again
 * (exec changes it); NULL when it is not known.
 */
static __always_inline struct sc_proc_info *proc_renamed(struct task_struct *p)
{
	struct sc_proc_info *info;
	struct sc_proc_key key;

	proc_key_of(p, cgtag_of(p), &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (info)
		read_leader_comm(p, info->comm);
	return info;
}

/*
 * sched_process_exec: p (old_tid before: a thread that execs takes its
 * process's id) runs a new program, alone in its process. Its cgroup tag
 * is read again (cgtag.bpf.h): 0 when its cgroup is that of its key with
 * tag 0, or when it has no tag and there is no such key yet (its next call
 * makes it); else its cgroup's. Then its entry gets the new name.
 */
static __always_inline void proc_exec(struct task_struct *p, __u32 old_tid)
{
	struct sc_proc_info *first;
	struct sc_proc_key key;
	__u32 tid, tag;
	__u64 cg;

	if (settings.read_cgid) {
		tid = task_tid(p);
		tag = cgtag_of_tid(old_tid);
		if (old_tid != tid)
			cgtag_set(old_tid, 0);
		cg = task_cgid(p);
		proc_key_of(p, 0, &key);
		first = bpf_map_lookup_elem(&procs, &key);
		if (first)
			tag = first->cgid == cg ? 0 : cgtag_of_id(cg);
		else if (tag)
			tag = cgtag_of_id(cg);
		cgtag_set(tid, tag);
	}
	proc_renamed(p);
}

/*
 * The process of p ends (with --by tid, the thread p): mark its entry
 * exited, the one of its last cgroup tag, or else (it made no call under
 * that tag) its first (tag 0), or else one with a tag (moved_procs).
 * Userspace marks its other entries, which have the same pid and start.
 */
static __always_inline void proc_exited(struct task_struct *p)
{
	struct sc_proc_info *info;
	struct sc_proc_key key;
	__u32 *tag;

	info = proc_renamed(p);
	if (settings.read_cgid) {
		proc_key_of(p, 0, &key);
		if (!info)
			info = bpf_map_lookup_elem(&procs, &key);
		tag = bpf_map_lookup_elem(&moved_procs, &key);
		if (!info && tag) {
			key.cgtag = *tag;
			info = bpf_map_lookup_elem(&procs, &key);
		}
		if (tag) {
			key.cgtag = 0;
			bpf_map_delete_elem(&moved_procs, &key);
		}
	}
	if (!info)
		return;
	info->exit_code = TASK_GET(p, p->exit_code, exit_code);
	if (!info->exited)
		__sync_fetch_and_add(&procs_exited, 1);
	info->exited = 1;
}

#endif /* SCPROF_PROC_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cgroup tags (read_cgid: --by cgroup, unit, container, the daemon's
 * --labels of those, top -g of those): calls are filed under the cgroup v2
 * their thread was in, also when it changes cgroup while scprof runs, as
 * runc, containerd and systemd start every program (fork, move the child,
 * exec), without reading a cgroup on the hot path.
 *
 * A thread's tag is part of its process key (struct sc_proc_key), so a
 * thread that gets a new tag makes calls into new cells, whose entry in
 * procs names the cgroup it was in at their first call. Tag 0 is the
 * process's first cgroup: the one its first call (its key with tag 0)
 * found. A thread gets a tag, the number of the cgroup it is in (its id
 * folded into 32 bits), when:
 *  - it is moved (cgroup_attach_task, after the move: a write of its tid
 *    to cgroup.threads, or of its pid to cgroup.procs, which moves every
 *    thread of the process and is traced once, for the leader);
 *  - it is a new thread of a thread with a tag, or born in another cgroup
 *    than its creator's (sched_process_fork). A new process starts at 0:
 *    born where its first call finds it (clone3's CLONE_INTO_CGROUP too);
 *  - it execs (sched_process_exec): its tag is read again, 0 when its
 *    cgroup is its process's first one, else the cgroup's, which catches
 *    a move no trace saw (proc_exec);
 *  - at attach, it is in another cgroup than its process's leader (a
 *    process whose threads were already in threaded cgroups: cgtag_seed).
 * Every thread with tag 0 is so in its process's first cgroup, and every
 * thread with a tag in the cgroup it stands for.
 *
 * The hot path reads the tag without a helper call: a slot of cgtags, the
 * table by thread id (its size a power of two), holds (tid << 32 | tag).
 * Tids that share a slot (pid_max beyond the table) find theirs in the
 * hash cgtag_tids, which holds every tag; a slot once taken is never free
 * again while another thread may need the hash (SC_CGTAG_DEAD).
 *
 * Reading the tag again at exec, and a process's exit, need its entries in
 * procs: proc.bpf.h has them (proc_exec, proc_exited).
 *
 * Uses the settings read_cgid, cgtag_slots, cgtag_exact (settings.bpf.h).
 */
#ifndef SCPROF_CGTAG_BPF_H
#define SCPROF_CGTAG_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "maps.bpf.h"
#include "settings.bpf.h"
#include "task.bpf.h"

/* The table by thread id: cgtag_slots of (tid << 32 | tag), sized by
 * userspace (one entry when not in use).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cgtags SEC(".maps");

/* Every tag, by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SC_CGTAG_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} cgtag_tids SEC(".maps");

/* The cgroup v2 id of a task (its directory's inode number). */
static __always_inline __u64 task_cgid(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* The tag of a cgroup id: never 0, which stands for the first cgroup. */
static __always_inline __u32 cgtag_of_id(__u64 id)
{
	__u32 tag = (__u32)id ^ (__u32)(id >> 32);

	return tag ? tag : 1;
}

static __always_inline __u64 *cgtag_slot(__u32 tid)
{
	__u32 idx = tid & (settings.cgtag_slots - 1);

	return bpf_map_lookup_elem(&cgtags, &idx);
}

/* The tag of thread tid (hot path: one load for most threads). */
static __always_inline __u32 cgtag_of_tid(__u32 tid)
{
	__u64 *slot, v;
	__u32 *tag;

	if (!settings.read_cgid)
		return 0;
	slot = cgtag_slot(tid);
	if (!slot)
		return 0;
	v = *slot;
	if (!v) /* never taken: no thread of this slot has a tag */
		return 0;
	if ((__u32)(v >> 32) == tid)
		return (__u32)v;
	tag = bpf_map_lookup_elem(&cgtag_tids, &tid);
	return tag ? *tag : 0;
}

static __always_inline __u32 cgtag_of(struct task_struct *t)
{
	if (!settings.read_cgid)
		return 0;
	return cgtag_of_tid(task_tid(t));
}

/* Thread tid's tag is now tag (0: none). Off the hot path. */
static __always_inline void cgtag_set(__u32 tid, __u32 tag)
{
	__u64 *slot = cgtag_slot(tid);
	int err;

	if (!slot || !tid)
		return;
	if (!tag) {
		if (*slot)
			bpf_map_delete_elem(&cgtag_tids, &tid);
		if ((__u32)(*slot >> 32) == tid)
			*slot = settings.cgtag_exact ? 0 : SC_CGTAG_DEAD;
		return;
	}
	/* The hash first: a thread whose slot this one takes over reads
	 * its tag there.
	 */
	err = map_update(SC_MAP_CGTAGS, &cgtag_tids, &tid, &tag, BPF_ANY);
	if (err) {
		map_failed(SC_MAP_CGTAGS, err);
		if (*slot && (__u32)(*slot >> 32) != tid) {
			count_drop(SC_DROP_CGROUP_MOVE);
			return;
		}
	}
	*slot = (__u64)tid << 32 | tag;
}

/*
 * One thread of a process moved whole: a global function, which the
 * verifier checks once, not in every turn of the loop over the threads
 * (inlined, the loop is too long a sequence of jumps for it).
 */
__noinline int cgtag_set_moved(__u32 tid, __u32 tag)
{
	cgtag_set(tid, tag);
	return 0;
}

/* A thread exits: its tag goes, before its tid is reused. */
static __always_inline void cgtag_forget(struct task_struct *t)
{
	if (settings.read_cgid)
		cgtag_set(task_tid(t), 0);
}

/*
 * cgroup_attach_task: task (a thread, or with threadgroup its process's
 * leader) was moved to dst. Moves in cgroup v1 hierarchies are not ours:
 * dst is in the task's cgroup v2 hierarchy (the leader's cgroup itself
 * may not be dst: an exited leader is not moved).
 */
static __always_inline void
cgtag_moved(struct cgroup *dst, struct task_struct *task, bool threadgroup)
{
	struct signal_struct *sig;
	__u64 head, pos, node_off;
	__u32 tag;
	int i;

	if (!settings.read_cgid ||
	    BPF_CORE_READ(task, cgroups, dfl_cgrp, root) !=
		    BPF_CORE_READ(dst, root))
		return;
	tag = cgtag_of_id(BPF_CORE_READ(dst, kn, id));
	if (!threadgroup) {
		cgtag_set(task_tid(task), tag);
		return;
	}
	/* Every thread of the process: the list at signal->thread_head,
	 * which the move holds still (cgroup_threadgroup_rwsem).
	 */
	sig = BPF_CORE_READ(task, signal);
	head = (__u64)sig +
	       bpf_core_field_offset(struct signal_struct, thread_head);
	node_off = bpf_core_field_offset(struct task_struct, thread_node);
	pos = (__u64)BPF_CORE_READ(sig, thread_head.next);
	/* (a failed read gives 0: the rest of the turns do nothing) */
	for (i = 0; i < SC_CGTAG_THREADS; i++) {
		struct task_struct *t = (struct task_struct *)(pos - node_off);

		if (pos == head)
			return;
		cgtag_set_moved(BPF_CORE_READ(t, pid), tag);
		pos = (__u64)BPF_CORE_READ((struct list_head *)pos, next);
	}
	if (pos != head)
		count_drop(SC_DROP_CGROUP_MOVE);
}

/* sched_process_fork of a new thread, child, made by parent. */
static __always_inline void cgtag_thread_born(struct task_struct *parent,
					      struct task_struct *child)
{
	__u64 cg;

	if (!settings.read_cgid)
		return;
	cg = task_cgid(child);
	if (cgtag_of(parent) || cg != task_cgid(parent))
		cgtag_set(task_tid(child), cgtag_of_id(cg));
}

/* At attach (a task iterator): a thread already in another cgroup than
 * its process's leader (threaded cgroups) gets that cgroup's tag.
 */
static __always_inline void cgtag_seed(struct task_struct *t)
{
	__u64 cg = task_cgid(t);

	if (cg != task_cgid(BPF_CORE_READ(t, group_leader)))
		cgtag_set(task_tid(t), cgtag_of_id(cg));
}

#endif /* SCPROF_CGTAG_BPF_H */

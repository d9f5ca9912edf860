/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --by tid (-T): each thread is an entry of procs (proc.bpf.h keys it by
 * tid and its own start time), named by its own comm. A thread's entry is
 * closed when the thread exits, not with its process, and follows its
 * renames (a worker naming itself after its first calls).
 *
 * Uses the setting key_kind (settings.bpf.h) and the map procs
 * (proc.bpf.h).
 */
#ifndef SCPROF_GROUP_BPF_H
#define SCPROF_GROUP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "proc.bpf.h"
#include "settings.bpf.h"

/* A thread other than its process's last one exits: close its entry. */
static __always_inline void thread_exited(struct task_struct *p)
{
	if (settings.key_kind == SC_KEY_THREAD)
		proc_exited(p);
}

/* The thread is renamed (before the new name is set): keep the new one. */
static __always_inline void thread_renamed(struct task_struct *task,
					   const char *comm)
{
	struct sc_proc_info *info;
	struct sc_proc_key key;

	if (settings.key_kind != SC_KEY_THREAD)
		return;
	proc_key_of(task, cgtag_of(task), &key);
	info = bpf_map_lookup_elem(&procs, &key);
	if (info)
		bpf_probe_read_kernel_str(info->comm, SC_COMM_LEN, comm);
}

#endif /* SCPROF_GROUP_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --slow: each call that took slow_ns or longer is sent to userspace at its
 * return, on the stacks' ring buffer (stacks.bpf.h), as a struct
 * sc_stack_event flagged SC_STACK_F_SLOW: who made it, its time, what it
 * returned, its user stack, and what its fd was: the kind, the inode
 * (userspace reads the path from /proc and checks it is the same file) and
 * a socket's addresses, read here because a connection is often closed
 * before userspace could look it up. A call the ring has no room for is
 * counted in slow_lost.
 *
 * A call under the threshold costs one compare (slow_ns is rodata: 0
 * removes the code). The fd is read at the call's return, not at its
 * entry, so that fast calls pay nothing for it; with --fd-types the kind
 * read at entry is used (a close has freed its fd by its return).
 *
 * With the split on, the call's split and its longest sleep (where it
 * slept, who woke it: split.bpf.h, sleep_on) go with it.
 *
 * Uses the settings slow_ns, split_on (settings.bpf.h), and the helpers
 * flags_of (syscall.bpf.h), fd_file, file_kind, fd_arg (fdkind.bpf.h),
 * split_sleep (split.bpf.h), stack_fill, stack_new_maps,
 * stack_unwindable, stack_sleep, stack_events (stacks.bpf.h).
 */
#ifndef SCPROF_SLOW_BPF_H
#define SCPROF_SLOW_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "scprof.h"
#include "sc_stack.h"
#include "fdkind.bpf.h"
#include "settings.bpf.h"
#include "split.bpf.h"
#include "stacks.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"

/* Slow calls the ring buffer had no room for. */
__u64 slow_lost = 0;

#define SC_AF_UNIX 1
#define SC_AF_INET 2
#define SC_AF_INET6 10

/*
 * A file's path, walked up from its dentry as d_path does: at the root of
 * a mount, on from the dentry it is mounted on in the parent mount; the
 * root mount's root ends it. One part per step, an empty one where the
 * step crossed a mount (one counter: the verifier sees few states). The
 * process's own root ends it too, so that a chrooted or containerised
 * process's paths read as it sees them (and as /proc shows them).
 * Without locks: a rename on the way may give a mixed path (userspace
 * prefers /proc's when this one is not whole).
 */
static __always_inline void slow_path(struct file *file,
				      struct sc_stack_event *e)
{
	struct vfsmount *vfs = BPF_CORE_READ(file, f_path.mnt);
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct task_struct *task = (void *)bpf_get_current_task();
	struct dentry *root = BPF_CORE_READ(task, fs, root.dentry);
	struct vfsmount *root_mnt = BPF_CORE_READ(task, fs, root.mnt);
	struct dentry *parent;
	struct mount *mnt, *up;
	__u32 i;

	if (!vfs || !d)
		return;
	mnt = (void *)vfs - bpf_core_field_offset(struct mount, mnt);
	for (i = 0; i < SC_SLOW_PARTS; i++) {
		char *part = &e->name[i * SC_SLOW_PART_LEN];

		if (d == root &&
		    (void *)mnt + bpf_core_field_offset(struct mount, mnt) ==
			    (void *)root_mnt)
			break;
		parent = BPF_CORE_READ(d, d_parent);
		if (d != BPF_CORE_READ(mnt, mnt.mnt_root) && d != parent) {
			bpf_probe_read_kernel_str(part, SC_SLOW_PART_LEN,
						  BPF_CORE_READ(d,
								d_name.name));
			d = parent;
			continue;
		}
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (up == mnt || !up)
			break;
		part[0] = '\0'; /* a mount crossed */
		d = BPF_CORE_READ(mnt, mnt_mountpoint);
		mnt = up;
	}
	if (i == 0) {
		/* at the top at once: a file with no directory (a pipe, an
		 * anonymous inode) has its name there
		 */
		bpf_probe_read_kernel_str(e->name, SC_SLOW_PART_LEN,
					  BPF_CORE_READ(d, d_name.name));
		e->name_flags = SC_SLOW_PSEUDO;
		e->name_parts = 1;
		return;
	}
	e->name_flags = i < SC_SLOW_PARTS ? SC_SLOW_ROOT : 0;
	e->name_parts = i;
}

/* A unix socket's path (sun_path, len bytes; abstract: a NUL first) into
 * e->name at off.
 */
static __always_inline __u16 slow_unix_addr(struct sock *sk,
					    struct sc_stack_event *e, __u32 off)
{
	struct unix_address *a;
	int len;

	if (!sk)
		return 0;
	a = BPF_CORE_READ((struct unix_sock *)sk, addr);
	if (!a)
		return 0;
	len = BPF_CORE_READ(a, len) - 2; /* less sun_family */
	if (len <= 0)
		return 0;
	if (len > SC_SLOW_UNIX_LEN)
		len = SC_SLOW_UNIX_LEN;
	if (bpf_probe_read_kernel(
		    &e->name[off & SC_SLOW_UNIX_PEER], SC_SLOW_UNIX_LEN,
		    (void *)a +
			    bpf_core_field_offset(struct unix_address, name) +
			    2))
		return 0;
	return (__u16)len;
}

/* A socket's protocol and addresses (AF_INET, AF_INET6). */
static __always_inline void slow_sock(struct file *file,
				      struct sc_stack_event *e)
{
	struct socket *sock =
		(struct socket *)BPF_CORE_READ(file, private_data);
	struct sock *sk = sock ? BPF_CORE_READ(sock, sk) : NULL;
	__u32 a4;

	if (!sk)
		return;
	e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	e->protocol = BPF_CORE_READ(sk, sk_protocol);
	if (e->family == SC_AF_UNIX) {
		e->name_len[0] = slow_unix_addr(sk, e, 0);
		e->name_len[1] = slow_unix_addr(
			BPF_CORE_READ((struct unix_sock *)sk, peer), e,
			SC_SLOW_UNIX_PEER);
		return;
	}
	if (e->family != SC_AF_INET && e->family != SC_AF_INET6)
		return;
	e->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (e->family == SC_AF_INET) {
		a4 = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		__builtin_memcpy(e->laddr, &a4, sizeof(a4));
		a4 = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		__builtin_memcpy(e->raddr, &a4, sizeof(a4));
		return;
	}
	BPF_CORE_READ_INTO(&e->laddr, sk, __sk_common.skc_v6_rcv_saddr);
	BPF_CORE_READ_INTO(&e->raddr, sk, __sk_common.skc_v6_daddr);
}

/* The call's fd, as it is at its return (the kind: at entry if known). */
static __always_inline void slow_fd(struct task_struct *task,
				    struct pt_regs *regs,
				    const struct ended_call *c,
				    struct sc_stack_event *e)
{
	struct file *file;
	struct inode *inode;

	e->fd = -1;
	e->fd_type = SC_FD_NONE;
	e->ino = 0;
	e->family = e->protocol = e->lport = e->rport = 0;
	e->name_len[0] = e->name_len[1] = 0;
	e->name_flags = e->name_parts = 0;
	__builtin_memset(e->laddr, 0, sizeof(e->laddr));
	__builtin_memset(e->raddr, 0, sizeof(e->raddr));
	if (!(flags_of(c->nr, c->abi) & SC_NR_FD))
		return;
	e->fd = (__s32)fd_arg(regs, c->abi);
	file = fd_file(task, (__u32)e->fd);
	e->fd_type = c->fd_type != SC_FD_NONE ? c->fd_type : file_kind(file);
	inode = file ? BPF_CORE_READ(file, f_inode) : NULL;
	if (!inode)
		return;
	e->ino = BPF_CORE_READ(inode, i_ino);
	if ((BPF_CORE_READ(inode, i_mode) & SC_S_IFMT) == SC_S_IFSOCK)
		slow_sock(file, e);
	else
		slow_path(file, e);
}

/* Send a call that took c->delta_ns >= slow_ns. */
static __always_inline void slow_emit(struct task_struct *task,
				      struct pt_regs *regs,
				      const struct ended_call *c, long ret)
{
	bool copy = stack_unwindable(c->nr, c->abi);
	bool new_maps = copy && stack_new_maps(task);
	struct sc_stack_event *e;

	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&slow_lost, 1);
		return;
	}
	stack_fill(e, task, regs, copy, new_maps);
	e->flags |= SC_STACK_F_SLOW;
	e->nr = c->nr;
	e->abi = c->abi;
	e->weight = 0;
	e->end_ns = bpf_ktime_get_ns();
	e->delta_ns = c->delta_ns;
	e->ret = ret;
	/* its split (claimed before: split_claim), its longest sleep */
	if (settings.split_on) {
		e->flags |= SC_STACK_F_SPLIT;
		e->split_wait_ns = c->wait_ns;
		e->split_blocked_ns = c->blocked_ns;
		e->split_iowait_ns = c->iowait_ns;
	}
	stack_sleep(e, split_sleep(task));
	slow_fd(task, regs, c, e);
	/* at once: its fd is looked up in /proc while the process lives */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* At a timed call's return: one compare, unless it was slow. */
static __always_inline void slow_check(struct task_struct *task,
				       struct pt_regs *regs,
				       const struct ended_call *c, long ret)
{
	if (settings.slow_ns && c->delta_ns >= settings.slow_ns)
		slow_emit(task ?: current_task(), regs, c, ret);
}

#endif

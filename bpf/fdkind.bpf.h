/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --fd-types: what kind of file the fd in a call's first argument is, read
 * when the call starts (close frees it before the call returns). The fd is
 * looked up in the caller's fd table, then its inode's type bits tell a
 * file, directory, socket, pipe or FIFO, character or block device apart.
 * pidfs (pidfds since Linux 6.9) is told by its superblock: its inodes
 * are regular ones (6.18) or have no type. Other anonymous inodes have no
 * type bits and are told by the name the kernel gave their
 * dentry ("[eventfd]", "inotify"...), the names /proc/PID/fd shows after
 * "anon_inode:". Their file_operations symbols would be cheaper to compare,
 * but kernels without CONFIG_KALLSYMS_ALL (like the test machine's) do
 * not export data symbols.
 *
 * Uses the setting fd_types (settings.bpf.h).
 */
#ifndef SCPROF_FDKIND_BPF_H
#define SCPROF_FDKIND_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "settings.bpf.h"

#define SC_S_IFMT 00170000
#define SC_S_IFSOCK 0140000
#define SC_S_IFLNK 0120000
#define SC_S_IFREG 0100000
#define SC_S_IFBLK 0060000
#define SC_S_IFDIR 0040000
#define SC_S_IFCHR 0020000
#define SC_S_IFIFO 0010000

#define SC_PID_FS_MAGIC 0x50494446U /* include/uapi/linux/magic.h */

/* The first argument of the call, as the fd it is (an unsigned int in
 * the kernel's prototypes).
 */
static __always_inline __u32 fd_arg(const struct pt_regs *regs, __u32 abi)
{
#if defined(__TARGET_ARCH_x86)
	if (abi == SC_ABI_COMPAT)
		return (__u32)regs->bx;
	return (__u32)regs->di;
#elif defined(__TARGET_ARCH_arm64)
	return (__u32)regs->regs[0];
#else
#error "scprof: first argument register unknown for this architecture"
#endif
}

/* Does the name start with the NUL-ended string s (at most 12 bytes)? */
static __always_inline bool name_is(const char *name, const char *s)
{
	for (int i = 0; i < 12; i++) {
		if (name[i] != s[i])
			return false;
		if (!s[i])
			return true;
	}
	return false;
}

/* An anonymous inode's kind, from its dentry name. */
static __always_inline __u32 anon_kind(struct file *file)
{
	const unsigned char *np =
		BPF_CORE_READ(file, f_path.dentry, d_name.name);
	char name[16] = {};

	if (bpf_probe_read_kernel_str(name, sizeof(name), np) < 0)
		return SC_FD_ANON;
	if (name_is(name, "[eventfd]"))
		return SC_FD_EVENTFD;
	if (name_is(name, "[timerfd]"))
		return SC_FD_TIMERFD;
	if (name_is(name, "[signalfd]"))
		return SC_FD_SIGNALFD;
	if (name_is(name, "[eventpoll]"))
		return SC_FD_EPOLL;
	if (name_is(name, "inotify"))
		return SC_FD_INOTIFY;
	if (name_is(name, "[pidfd]"))
		return SC_FD_PIDFD;
	return SC_FD_ANON;
}

/* The open file of fd in the task's fd table, or NULL. */
static __always_inline struct file *fd_file(struct task_struct *task, __u32 fd)
{
	struct fdtable *fdt;
	struct file **fds;
	struct file *file = NULL;
	__u32 max_fds;

	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt)
		return NULL;
	max_fds = BPF_CORE_READ(fdt, max_fds);
	if (fd >= max_fds)
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]))
		return NULL;
	return file;
}

/* What kind of file it is (NULL: SC_FD_BAD). */
static __always_inline __u32 file_kind(struct file *file)
{
	struct inode *inode;
	__u16 mode;

	if (!file)
		return SC_FD_BAD;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return SC_FD_BAD;
	mode = BPF_CORE_READ(inode, i_mode) & SC_S_IFMT;
	switch (mode) {
	case SC_S_IFREG:
		/* pidfs gives pidfds regular inodes on some kernels */
		if (BPF_CORE_READ(inode, i_sb, s_magic) == SC_PID_FS_MAGIC)
			return SC_FD_PIDFD;
		return SC_FD_FILE;
	case SC_S_IFLNK:
		return SC_FD_FILE;
	case SC_S_IFDIR:
		return SC_FD_DIR;
	case SC_S_IFSOCK:
		return SC_FD_SOCKET;
	case SC_S_IFIFO:
		return SC_FD_PIPE;
	case SC_S_IFCHR:
		return SC_FD_CHR;
	case SC_S_IFBLK:
		return SC_FD_BLK;
	}
	if (BPF_CORE_READ(inode, i_sb, s_magic) == SC_PID_FS_MAGIC)
		return SC_FD_PIDFD;
	return anon_kind(file);
}

/* The kind of the fd the call gets as its first argument. */
static __always_inline __u32 fd_kind(struct task_struct *task,
				     const struct pt_regs *regs, __u32 abi)
{
	return file_kind(fd_file(task, fd_arg(regs, abi)));
}

#endif /* SCPROF_FDKIND_BPF_H */

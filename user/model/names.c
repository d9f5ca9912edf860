// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>

#include "model/names.h"
#include "scprof.h"

/* From the generated syscall_names.c and errno_names.c. */
extern const char *const sc_names_native[];
extern const unsigned int sc_names_native_len;
extern const char *const sc_names_compat[];
extern const unsigned int sc_names_compat_len;
extern const char *const sc_names_x32[];
extern const unsigned int sc_names_x32_len;
extern const char *const sc_errno_names[];
extern const unsigned int sc_errno_names_len;

static const struct {
	const char *const *names;
	const unsigned int *len;
	const char *label;
	const char *title;
} tables[SC_ABI_COUNT] = {
	[SC_ABI_NATIVE] = { sc_names_native, &sc_names_native_len, "64", NULL },
	[SC_ABI_COMPAT] = { sc_names_compat, &sc_names_compat_len, "32",
			    "32 bit" },
	[SC_ABI_X32] = { sc_names_x32, &sc_names_x32_len, "x32", "x32" },
};

const char *names_syscall(unsigned int abi, unsigned int nr)
{
	if (abi >= SC_ABI_COUNT || nr >= *tables[abi].len)
		return NULL;
	return tables[abi].names[nr];
}

const char *names_syscall_fmt(unsigned int abi, unsigned int nr, char *buf,
			      size_t len)
{
	const char *name = names_syscall(abi, nr);

	if (name)
		return name;
	snprintf(buf, len, "syscall_%#x", nr);
	return buf;
}

int names_syscall_nr(unsigned int abi, const char *name)
{
	if (abi >= SC_ABI_COUNT)
		return -1;
	for (unsigned int i = 0; i < *tables[abi].len; i++) {
		if (tables[abi].names[i] && !strcmp(tables[abi].names[i], name))
			return (int)i;
	}
	return -1;
}

unsigned int names_syscall_count(unsigned int abi)
{
	return abi < SC_ABI_COUNT ? *tables[abi].len : 0;
}

const char *names_abi(unsigned int abi)
{
	return abi < SC_ABI_COUNT ? tables[abi].label : "?";
}

const char *names_abi_title(unsigned int abi)
{
	return abi < SC_ABI_COUNT ? tables[abi].title : "unknown";
}

bool names_in_list(const char *const *list, const char *name)
{
	if (!name)
		return false;
	for (; *list; list++) {
		if (!strcmp(*list, name))
			return true;
	}
	return false;
}

/* The read/write family: calls whose return value is a byte count.
 * "send" and "recv" are syscalls only on architectures other than x86.
 */
static const char *const io_calls[] = {
	"read",
	"write",
	"pread64",
	"pwrite64",
	"readv",
	"writev",
	"preadv",
	"pwritev",
	"preadv2",
	"pwritev2",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendfile",
	"sendfile64",
	"splice",
	"tee",
	"vmsplice",
	"copy_file_range",
	"process_vm_readv",
	"process_vm_writev",
	"send",
	"recv",
	NULL,
};

const char *const *names_io_list(void)
{
	return io_calls;
}

bool names_is_io(const char *name)
{
	return names_in_list(io_calls, name);
}

bool names_is_noreturn(const char *name)
{
	static const char *const nr[] = { "exit", "exit_group", NULL };

	return names_in_list(nr, name);
}

bool names_is_fork(const char *name)
{
	static const char *const f[] = { "fork", "vfork", "clone", "clone3",
					 NULL };

	return names_in_list(f, name);
}

/* Calls whose first argument is the fd they work on. The *at calls are
 * not: theirs is a directory to resolve a path from (often AT_FDCWD).
 */
static const char *const fd_calls[] = {
	"read",
	"write",
	"pread64",
	"pwrite64",
	"readv",
	"writev",
	"preadv",
	"pwritev",
	"preadv2",
	"pwritev2",
	"sendfile",
	"sendfile64",
	"recvfrom",
	"sendto",
	"recvmsg",
	"sendmsg",
	"recvmmsg",
	"sendmmsg",
	"recvmmsg_time64",
	"recv",
	"send",
	"accept",
	"accept4",
	"bind",
	"connect",
	"listen",
	"shutdown",
	"getsockname",
	"getpeername",
	"setsockopt",
	"getsockopt",
	"close",
	"fstat",
	"fstat64",
	"newfstat",
	"fstatfs",
	"fstatfs64",
	"lseek",
	"_llseek",
	"llseek",
	"ioctl",
	"fcntl",
	"fcntl64",
	"flock",
	"fsync",
	"fdatasync",
	"syncfs",
	"sync_file_range",
	"sync_file_range2",
	"ftruncate",
	"ftruncate64",
	"fallocate",
	"fadvise64",
	"fadvise64_64",
	"readahead",
	"fchmod",
	"fchown",
	"fchown32",
	"fchdir",
	"getdents",
	"getdents64",
	"readdir",
	"fgetxattr",
	"fsetxattr",
	"flistxattr",
	"fremovexattr",
	"dup",
	"dup2",
	"dup3",
	"splice",
	"tee",
	"vmsplice",
	"copy_file_range",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"epoll_pwait2",
	"timerfd_settime",
	"timerfd_gettime",
	"timerfd_settime64",
	"timerfd_gettime64",
	"inotify_add_watch",
	"inotify_rm_watch",
	"pidfd_send_signal",
	"pidfd_getfd",
	"process_madvise",
	"io_uring_enter",
	"io_uring_register",
	"fanotify_mark",
	"setns",
	"finit_module",
	NULL,
};

bool names_is_fd_call(const char *name)
{
	return names_in_list(fd_calls, name);
}

const char *names_fd_type(unsigned int fd_type)
{
	static const char *const n[SC_FD_COUNT] = {
		[SC_FD_FILE] = "file",	       [SC_FD_DIR] = "dir",
		[SC_FD_SOCKET] = "socket",     [SC_FD_PIPE] = "pipe",
		[SC_FD_CHR] = "chr",	       [SC_FD_BLK] = "blk",
		[SC_FD_EVENTFD] = "eventfd",   [SC_FD_TIMERFD] = "timerfd",
		[SC_FD_SIGNALFD] = "signalfd", [SC_FD_EPOLL] = "epoll",
		[SC_FD_INOTIFY] = "inotify",   [SC_FD_PIDFD] = "pidfd",
		[SC_FD_ANON] = "anon",	       [SC_FD_BAD] = "bad",
	};

	return fd_type < SC_FD_COUNT ? n[fd_type] : NULL;
}

bool names_is_exec(const char *name)
{
	static const char *const f[] = { "execve", "execveat", NULL };

	return names_in_list(f, name);
}

const char *names_errno(int err)
{
	if (err <= 0 || (unsigned int)err >= sc_errno_names_len)
		return NULL;
	return sc_errno_names[err];
}

int names_errno_parse(const char *name)
{
	for (int e = 1; e < 4096; e++) {
		const char *n = names_errno(e);

		if (n && !strcmp(n, name))
			return e;
	}
	return -1;
}

static const char *const map_names[SC_MAP_COUNT] = {
	[SC_MAP_STATS] = "stats",     [SC_MAP_MERGED] = "merged",
	[SC_MAP_PROCS] = "procs",     [SC_MAP_ERRNOS] = "errnos",
	[SC_MAP_THREADS] = "threads", [SC_MAP_CGTAGS] = "cgtags",
};

const char *names_map(uint32_t map)
{
	return map < SC_MAP_COUNT ? map_names[map] : "?";
}

int names_map_parse(const char *name, size_t len)
{
	for (int i = 0; i < SC_MAP_COUNT; i++)
		if (strlen(map_names[i]) == len &&
		    !strncmp(map_names[i], name, len))
			return i;
	return -1;
}

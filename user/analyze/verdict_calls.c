// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which calls are which, for the verdict's rules (verdict_calls.h). */
#include <string.h>

#include "analyze/verdict_calls.h"

bool verdict_is_read(const char *name)
{
	static const char *const l[] = { "read",    "pread64", "readv",
					 "preadv",  "preadv2", "recvfrom",
					 "recvmsg", "recv",    NULL };

	return names_in_list(l, name);
}

bool verdict_is_write(const char *name)
{
	static const char *const l[] = { "write",   "pwrite64", "writev",
					 "pwritev", "pwritev2", "sendto",
					 "sendmsg", "send",	NULL };

	return names_in_list(l, name);
}

bool verdict_is_open(const char *name)
{
	static const char *const l[] = { "open", "openat", "openat2", "creat",
					 NULL };

	return names_in_list(l, name);
}

bool verdict_is_close(const char *name)
{
	return !strcmp(name, "close");
}

bool verdict_is_accept(const char *name)
{
	return !strcmp(name, "accept") || !strcmp(name, "accept4");
}

bool verdict_is_wait(const char *name)
{
	static const char *const l[] = {
		"nanosleep",	 "clock_nanosleep",
		"epoll_wait",	 "epoll_pwait",
		"epoll_pwait2",	 "poll",
		"ppoll",	 "select",
		"pselect6",	 "_newselect",
		"futex",	 "futex_waitv",
		"wait4",	 "waitid",
		"waitpid",	 "pause",
		"rt_sigsuspend", "rt_sigtimedwait",
		"accept",	 "accept4",
		"msgrcv",	 "semop",
		"semtimedop",	 "io_getevents",
		"io_pgetevents", "io_uring_enter",
		"flock",	 NULL,
	};

	return names_in_list(l, name);
}

bool verdict_is_sleep(const char *name)
{
	return !strcmp(name, "nanosleep") || !strcmp(name, "clock_nanosleep") ||
	       !strcmp(name, "pause");
}

bool verdict_is_stat_path(const char *name)
{
	static const char *const l[] = {
		"newfstatat", "fstatat64",  "statx",	"stat",	      "lstat",
		"newstat",    "newlstat",   "stat64",	"lstat64",    "access",
		"faccessat",  "faccessat2", "readlink", "readlinkat", NULL,
	};

	return names_in_list(l, name);
}

static bool is_id_call(const char *name)
{
	static const char *const l[] = {
		"getpid",    "getppid",	    "gettid",  "getuid",  "geteuid",
		"getgid",    "getegid",	    "getpgrp", "getpgid", "getsid",
		"getresuid", "getresgid",   "uname",   "getcwd",  "getrlimit",
		"prlimit64", "getpriority", "sysinfo", NULL,
	};

	return names_in_list(l, name);
}

static bool is_clock_call(const char *name)
{
	static const char *const l[] = { "clock_gettime", "gettimeofday",
					 "time",	  "getcpu",
					 "clock_getres",  NULL };

	return names_in_list(l, name);
}

enum verdict_call verdict_cheap_call(const char *name)
{
	if (is_id_call(name))
		return VERDICT_CALL_ID;
	if (is_clock_call(name))
		return VERDICT_CALL_CLOCK;
	if (!strcmp(name, "sched_yield"))
		return VERDICT_CALL_YIELD;
	return VERDICT_CALL_OTHER;
}

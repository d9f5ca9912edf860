/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What /proc says about a process: CPU times, threads and start time from
 * /proc/PID/stat, its threads' run-queue waits from schedstat, and which
 * process a thread id belongs to.
 */
#ifndef SCPROF_PROCFS_H
#define SCPROF_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_COMM_LEN 64

struct proc_stat {
	pid_t pid;
	char comm[PROCFS_COMM_LEN]; /* raw bytes, NUL-ended: escape to print */
	char state;
	pid_t ppid;
	uint64_t utime_ticks; /* user CPU time, in clock ticks */
	uint64_t stime_ticks; /* system CPU time, in clock ticks */
	uint64_t num_threads;
	uint64_t starttime_ticks; /* since boot: with pid, the identity */
};

/*
 * Parse the text of a /proc/PID/stat file. The name sits between the first
 * '(' and the last ')', and may itself hold spaces and parentheses.
 * 0 or -EINVAL.
 */
int procfs_parse_stat(const char *text, struct proc_stat *out);
/* Read and parse /proc/PID/stat. 0, -ESRCH (no such process) or -errno. */
int procfs_read_stat(pid_t pid, struct proc_stat *out);
/* The process (thread group) a pid or thread id belongs to, or -ESRCH. */
int procfs_tgid(pid_t pid);
/* One thread's time waiting on a run queue (/proc/PID/task/TID/schedstat). */
struct task_wait {
	pid_t tid;
	uint64_t wait_ns;
};

/* Parse a schedstat line "RUN_NS WAIT_NS SLICES". 0 or -EINVAL. */
int procfs_parse_schedstat(const char *text, uint64_t *run_ns,
			   uint64_t *wait_ns);
/* Every thread's run-queue wait, in a new array the caller frees.
 * 0, -ESRCH or -errno (-ENOENT: the kernel keeps no schedstat).
 */
int procfs_task_waits(pid_t pid, struct task_wait **out, size_t *n);
/* Run-queue wait between two readings: threads new in b count whole,
 * threads gone from b are lost (their wait is unknown).
 */
uint64_t procfs_waits_delta(const struct task_wait *a, size_t na,
			    const struct task_wait *b, size_t nb);

/* Clock ticks per second of the tick fields above. */
long procfs_ticks_per_s(void);

/* The first line of a small file, without its newline, malloc'd; NULL if
 * unreadable (errno set).
 */
char *procfs_read_line(const char *path);
/* This boot's id (/proc/sys/kernel/random/boot_id) into buf. 0, -ERANGE
 * when it does not fit, or -errno.
 */
int procfs_boot_id(char *buf, size_t len);

/* This process's CPU time, user and system, in ns; 0 if unknown. */
uint64_t procfs_self_cpu_ns(void);
/* This process's resident memory (/proc/self/statm), 0 if unknown. */
uint64_t procfs_self_rss_bytes(void);
/* The most it ever held resident (/proc/self/status VmHWM), 0 if unknown. */
uint64_t procfs_self_peak_rss_bytes(void);

#endif

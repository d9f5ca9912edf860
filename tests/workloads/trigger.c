// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A workload that makes known syscalls when told to, so a test can attach
 * scprof to it (-p, --cgroup, -a) first:
 *   trigger FIFO N_THREADS N_CALLS
 * opens FIFO (read-write, so it never sees end of file), writes "ready\n"
 * to stdout and then reads one command byte at a time from the FIFO:
 *   'c'  make the calls, then write "k" to stdout (the acknowledgement)
 *   'f'  fork(2) a child that makes the calls and exits, wait4 for it,
 *        then write "k"
 *   'x'  make the calls, then exit_group(0)
 *   'q'  exit_group(0)
 * With FIFO "-" it makes the calls once and exits: the same workload run as
 * a command.
 *
 * The calls: with N_THREADS 0 the main thread makes N_CALLS getppid.
 * Otherwise N_THREADS (at most 5) threads are started; thread i makes
 * (i + 1) * N_CALLS calls of its own syscall, getppid, getuid, getgid,
 * geteuid and getegid in turn, and they are joined. Every call is a raw
 * syscall(2), so libc caches nothing. Nothing else is called between the
 * command byte and the acknowledgement but what pthread_create and
 * pthread_join need (clone3, mmap, mprotect, futex, ...).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAX_THREADS 5

static const long thread_nr[MAX_THREADS] = {
	SYS_getppid, SYS_getuid, SYS_getgid, SYS_geteuid, SYS_getegid,
};

static long n_threads, n_calls;

struct job {
	pthread_t tid;
	long nr;
	long count;
};

static long arg(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > max) {
		fprintf(stderr, "trigger: bad count '%s'\n", s);
		exit(2);
	}
	return v;
}

static void *thread_main(void *p)
{
	struct job *j = p;

	for (long i = 0; i < j->count; i++)
		syscall(j->nr);
	return NULL;
}

static void make_calls(void)
{
	struct job jobs[MAX_THREADS];

	if (!n_threads) {
		for (long i = 0; i < n_calls; i++)
			syscall(SYS_getppid);
		return;
	}
	for (long t = 0; t < n_threads; t++) {
		jobs[t].nr = thread_nr[t];
		jobs[t].count = (t + 1) * n_calls;
		if (pthread_create(&jobs[t].tid, NULL, thread_main, &jobs[t])) {
			fprintf(stderr, "trigger: pthread_create failed\n");
			exit(1);
		}
	}
	for (long t = 0; t < n_threads; t++)
		pthread_join(jobs[t].tid, NULL);
}

/* The child makes raw syscalls only: nothing of libc's after a raw fork. */
static void fork_calls(void)
{
	long pid = syscall(SYS_fork);
	int status;

	if (pid < 0)
		syscall(SYS_exit_group, 1);
	if (pid == 0) {
		for (long i = 0; i < n_calls; i++)
			syscall(SYS_getppid);
		syscall(SYS_exit_group, 0);
	}
	syscall(SYS_wait4, pid, &status, 0, NULL);
}

static void put(const char *s)
{
	size_t len = strlen(s);

	if (syscall(SYS_write, 1, s, len) != (long)len)
		syscall(SYS_exit_group, 1);
}

int main(int argc, char **argv)
{
	int fd;
	char c;

	if (argc != 4) {
		fprintf(stderr, "usage: trigger FIFO|- N_THREADS N_CALLS\n");
		return 2;
	}
	n_threads = arg(argv[2], MAX_THREADS);
	n_calls = arg(argv[3], 100000000);
	if (!strcmp(argv[1], "-")) {
		make_calls();
		return 0;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	put("ready\n");
	for (;;) {
		long n = syscall(SYS_read, fd, &c, 1);

		if (n <= 0)
			syscall(SYS_exit_group, 1);
		switch (c) {
		case 'c':
			make_calls();
			put("k");
			break;
		case 'f':
			fork_calls();
			put("k");
			break;
		case 'x':
			make_calls();
			syscall(SYS_exit_group, 0);
			break;
		case 'q':
			syscall(SYS_exit_group, 0);
			break;
		default:
			break;
		}
	}
}

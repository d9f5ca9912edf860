// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A workload with a known syscall count, for checking scprof's counts:
 *   groundtruth N_GETPPID N_BADOPEN N_READ1 N_SLEEP N_CHILD_GETPPID
 * makes N_GETPPID getppid calls, N_BADOPEN openat calls that fail with
 * ENOENT, N_READ1 one-byte reads from /dev/zero, N_SLEEP 2 ms nanosleeps,
 * and forks one child (fork, or clone where there is no fork: arm64) that
 * makes N_CHILD_GETPPID getppid calls (through syscall(2), so no libc
 * caching) before it exits.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long arg(char **argv, int i)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (*end || v < 0) {
		fprintf(stderr, "groundtruth: bad count '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 2000000 };
	long n_getppid, n_badopen, n_read1, n_sleep, n_child;
	char c;
	int fd, status;
	pid_t pid;

	if (argc != 6) {
		fprintf(stderr, "usage: groundtruth N_GETPPID N_BADOPEN "
				"N_READ1 N_SLEEP N_CHILD_GETPPID\n");
		return 2;
	}
	n_getppid = arg(argv, 1);
	n_badopen = arg(argv, 2);
	n_read1 = arg(argv, 3);
	n_sleep = arg(argv, 4);
	n_child = arg(argv, 5);

	for (long i = 0; i < n_getppid; i++)
		syscall(SYS_getppid);
	for (long i = 0; i < n_badopen; i++)
		syscall(SYS_openat, AT_FDCWD, "/nonexistent/scprof-groundtruth",
			O_RDONLY);
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY);
	if (fd < 0)
		return 1;
	for (long i = 0; i < n_read1; i++)
		syscall(SYS_read, fd, &c, 1);
	syscall(SYS_close, fd);
	for (long i = 0; i < n_sleep; i++)
		syscall(SYS_nanosleep, &ts, NULL);

#ifdef SYS_fork
	pid = (pid_t)syscall(SYS_fork);
#else
	/* asm-generic (arm64) has no fork: clone(SIGCHLD) is glibc's fork */
	pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
#endif
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (long i = 0; i < n_child; i++)
			syscall(SYS_getppid);
		syscall(SYS_exit_group, 0);
	}
	syscall(SYS_wait4, pid, &status, 0, NULL);
	return 0;
}

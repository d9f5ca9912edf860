// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process churn, for checking that long-running collection stays bounded:
 *   churn N_PROCS N_GETPPID
 * forks N_PROCS short-lived children one after the other; each makes
 * N_GETPPID getppid calls, one openat that fails with ENOENT and one
 * one-byte read of /dev/zero, then exits. The parent waits for each.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long arg(char **argv, int i)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (*end || v < 0) {
		fprintf(stderr, "churn: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long n_procs, n_getppid;

	if (argc != 3) {
		fprintf(stderr, "usage: churn N_PROCS N_GETPPID\n");
		return 2;
	}
	n_procs = arg(argv, 1);
	n_getppid = arg(argv, 2);
	for (long p = 0; p < n_procs; p++) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("churn: fork");
			return 1;
		}
		if (pid == 0) {
			char c;
			long fd;

			for (long i = 0; i < n_getppid; i++)
				syscall(SYS_getppid);
			syscall(SYS_openat, AT_FDCWD, "/nonexistent/scprof-churn",
				O_RDONLY);
			fd = syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY);
			if (fd >= 0)
				syscall(SYS_read, fd, &c, 1);
			syscall(SYS_exit_group, 0);
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("churn: waitpid");
			return 1;
		}
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Two processes with the same pid, one after the other:
 *   pidreuse N1 N2
 * forks a child that makes N1 getppid and exits, reaps it, sets
 * /proc/sys/kernel/ns_last_pid so the next pid is the same again, forks a
 * second child that makes N2 getppid and exits, and reaps it. Exits 0 if
 * both children had the same pid, 75 (EX_TEMPFAIL: try again) if another
 * process took the pid in between, 1 on errors. Needs CAP_SYS_ADMIN (or
 * CAP_CHECKPOINT_RESTORE) for ns_last_pid.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long n_calls[2];

static long child(int which)
{
	long pid = syscall(SYS_fork);
	int status;

	if (pid < 0)
		exit(1);
	if (pid == 0) {
		for (long i = 0; i < n_calls[which]; i++)
			syscall(SYS_getppid);
		syscall(SYS_exit_group, 0);
	}
	if (syscall(SYS_wait4, pid, &status, 0, NULL) != pid)
		exit(1);
	return pid;
}

int main(int argc, char **argv)
{
	char buf[32];
	long first, second;
	int fd, len;

	if (argc != 3) {
		fprintf(stderr, "usage: pidreuse N1 N2\n");
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		char *end;

		n_calls[i] = strtol(argv[i + 1], &end, 10);
		if (!*argv[i + 1] || *end || n_calls[i] < 0) {
			fprintf(stderr, "pidreuse: bad count '%s'\n",
				argv[i + 1]);
			return 2;
		}
	}
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0) {
		perror("ns_last_pid");
		return 1;
	}
	first = child(0);
	len = snprintf(buf, sizeof(buf), "%ld", first - 1);
	if (write(fd, buf, (size_t)len) != len) {
		perror("ns_last_pid");
		return 1;
	}
	second = child(1);
	close(fd);
	return second == first ? 0 : 75;
}

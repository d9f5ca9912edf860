// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A child born in a cgroup, as clone3's CLONE_INTO_CGROUP makes it (no
 * move, so no cgroup_attach_task for it):
 *   cgclone CGROUP_DIR PROGRAM [ARG...]
 * clone3()s a child into the cgroup v2 directory CGROUP_DIR; the child
 * execs PROGRAM with its ARGs. Prints the child's pid, waits for it and
 * exits with its status.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct clone_args args;
	int status;
	long pid;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: cgclone CGROUP_DIR PROGRAM [ARG...]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		perror("clone3");
		return 1;
	}
	if (pid == 0) {
		execv(argv[2], argv + 2);
		_exit(127);
	}
	printf("%ld\n", pid);
	fflush(stdout);
	if (waitpid((pid_t)pid, &status, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

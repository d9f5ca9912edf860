/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Starting the command of `scprof -- CMD`: the child is forked and stops
 * itself before exec; the profiler attaches, then lets it go, so its very
 * first syscall (execve) is seen and none of scprof's own are.
 */
#ifndef SCPROF_LAUNCH_H
#define SCPROF_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int err_pipe; /* read end: the child's exec errno, if exec failed */
	bool reaped;
	int status; /* wait status once reaped */
};

/*
 * Resolve argv[0] on PATH, fork, and return once the child is stopped
 * just before its execve. child_mask is the signal mask the command gets;
 * with stdout_to_stderr its standard output is scprof's stderr (scprof
 * writes a report to stdout, which the command's output would corrupt).
 * On failure reports the reason in one line and returns -errno; ENOENT and
 * EACCES mean the command was not found or not executable.
 */
int launch_start(struct launch *l, char *const argv[],
		 const sigset_t *child_mask, bool stdout_to_stderr);
/* Let the stopped child exec. */
int launch_release(struct launch *l);
/* Kill and reap a child that was never released. */
void launch_kill(struct launch *l);
/* Reap the child if it has exited; true when it has. */
bool launch_poll(struct launch *l);
/* If exec failed, report why and return the errno, else 0. */
int launch_exec_error(struct launch *l);
/* Shell-style exit status of the reaped child: code, or 128 + signal. */
int launch_exit_status(const struct launch *l);

#endif

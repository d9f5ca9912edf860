/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The skeleton every subcommand runs on: parse -> log setup -> signal
 * setup -> start (open, attach) -> loop -> report -> teardown, with one
 * rule for the exit status.
 */
#ifndef SCPROF_RUN_H
#define SCPROF_RUN_H

#include <signal.h>

/* When the stop signals (SIGINT, SIGTERM, SIGHUP) are blocked. */
enum cmd_signals {
	CMD_SIGNALS_NONE,  /* never: they end the process (calibrate) */
	CMD_SIGNALS_FIRST, /* before parsing, for sigtimedwait: one that
			    * comes while the programs load ends the run
			    * cleanly (profile)
			    */
	CMD_SIGNALS_FD,	   /* after parsing, read from env->sigfd (top,
			    * daemon)
			    */
	CMD_SIGNALS_LOOP,  /* after start, for sigtimedwait, until the end
			    * (verdict: a signal during its calibration
			    * still ends the process)
			    */
};

/* What the skeleton set up for the command. */
struct cmd_env {
	sigset_t mask;	  /* the blocked stop signals (and extra_signal) */
	sigset_t oldmask; /* the mask before them */
	int sigfd;	  /* CMD_SIGNALS_FD: readable on a stop signal */
};

/*
 * A subcommand. parse returns 0 to run, 1 to end with status 0 (--help),
 * or EXIT_USAGE after a one-line error, and leaves nothing to free unless
 * it returns 0; *verbosity is the log level asked for. Each later phase
 * (NULL: none) returns 0 to go on, a negative errno for a failure already
 * reported (status EXIT_FAIL), or a positive exit status to end with; the
 * last phase's 0 is EXIT_OK. teardown runs after any of them, given the
 * exit status.
 */
struct cmd_ops {
	const char *prog; /* the prefix of its messages */
	enum cmd_signals signals;
	int extra_signal; /* blocked with the stop signals; 0: none */
	int (*parse)(void *ctx, int argc, char **argv, int *verbosity);
	int (*start)(void *ctx, struct cmd_env *env);
	int (*loop)(void *ctx, struct cmd_env *env);
	int (*report)(void *ctx, struct cmd_env *env);
	void (*teardown)(void *ctx, int status);
};

/* Run a subcommand on ctx, its state; returns the exit status. */
int cmd_run(const struct cmd_ops *ops, void *ctx, int argc, char **argv);

#endif

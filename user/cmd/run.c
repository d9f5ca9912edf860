// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cmd/run.h"
#include "cmd/cli.h"
#include "util/log.h"
#include "util/signals.h"

/* Run a phase (NULL: none) and turn its return into an exit status. */
static int phase(int (*fn)(void *ctx, struct cmd_env *env), void *ctx,
		 struct cmd_env *env)
{
	int err = fn ? fn(ctx, env) : 0;

	return err < 0 ? EXIT_FAIL : err;
}

/* start, loop and report, each if the one before went on. */
static int run_phases(const struct cmd_ops *ops, void *ctx, struct cmd_env *env,
		      bool *blocked)
{
	int status = phase(ops->start, ctx, env);

	if (!status && ops->signals == CMD_SIGNALS_LOOP) {
		signals_block_stop(&env->mask, ops->extra_signal,
				   &env->oldmask);
		*blocked = true;
	}
	if (!status)
		status = phase(ops->loop, ctx, env);
	if (!status)
		status = phase(ops->report, ctx, env);
	return status;
}

int cmd_run(const struct cmd_ops *ops, void *ctx, int argc, char **argv)
{
	struct cmd_env env = { .sigfd = -1 };
	struct log_ctx lctx = { .prog = ops->prog };
	bool blocked = false;
	int status = EXIT_FAIL, err;

	if (ops->signals == CMD_SIGNALS_FIRST)
		signals_block_stop(&env.mask, ops->extra_signal, &env.oldmask);
	err = ops->parse(ctx, argc, argv, &lctx.level);
	if (err)
		return err == 1 ? EXIT_OK : err;
	log_init(&lctx);
	libbpf_set_print(log_libbpf);
	if (ops->signals == CMD_SIGNALS_FD) {
		signals_block_stop(&env.mask, ops->extra_signal, NULL);
		env.sigfd = signals_fd(&env.mask);
		if (env.sigfd < 0)
			pr_err("cannot set up signals: %s",
			       strerror(-env.sigfd));
	}
	if (env.sigfd >= 0 || ops->signals != CMD_SIGNALS_FD)
		status = run_phases(ops, ctx, &env, &blocked);
	ops->teardown(ctx, status);
	if (env.sigfd >= 0)
		close(env.sigfd);
	/* CMD_SIGNALS_LOOP gives them back (one pending now ends the process). */
	if (blocked)
		sigprocmask(SIG_SETMASK, &env.oldmask, NULL);
	return status;
}

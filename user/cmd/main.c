// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof: a live syscall profiler. Dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

/* `scprof NAME ...` runs a subcommand; anything else is the profiler's own
 * command line (so `scprof ls` profiles ls, as `strace -c ls` would). A
 * program named like a subcommand is run with `scprof -- NAME`.
 */
static const struct cmd cmds[] = {
	{ "profile", cmd_profile }, { "daemon", cmd_daemon },
	{ "top", cmd_top },	    { "calibrate", cmd_calibrate },
	{ "verdict", cmd_verdict }, { "features", cmd_features },
	{ "diff", cmd_diff },
};

int main(int argc, char **argv)
{
	if (argc > 1) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	return cmd_profile(argc, argv);
}

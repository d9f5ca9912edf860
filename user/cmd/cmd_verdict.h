/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `scprof verdict -p PID`: its command line. */
#ifndef SCPROF_CMD_VERDICT_H
#define SCPROF_CMD_VERDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmd/cli.h"

struct verdict_opts {
	pid_t pid;
	double duration_s;
	bool recalibrate;
	uint32_t stack_period; /* --stacks=N, 0: --no-stacks */
	bool raw_symbols;      /* --no-demangle */
	struct cli_calib_opts out;
	int verbosity;
};

#endif

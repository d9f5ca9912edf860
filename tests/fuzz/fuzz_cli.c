// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the profiler's command line: NUL-separated
 * arguments. Whatever the arguments, parsing returns run/help/usage-error
 * and a "run" result is a consistent set of options.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_profile_args.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	struct profile_opts o;
	int argc = 1, ret;
	size_t start = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "scprof";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (i == size || buf[i] == '\0') {
			buf[i] = '\0';
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;

	ret = cli_parse_profile(argc, argv, &o);
	if (ret != 0 && ret != 1 && ret != EXIT_USAGE)
		abort();
	if (ret == 0) {
		if (o.target.kind == TARGET_NONE)
			abort();
		if (o.target.kind == TARGET_CMD && (!o.argv || !o.argv[0]))
			abort();
		if (o.target.kind == TARGET_PIDS && !o.target.npids)
			abort();
		if (o.target.kind == TARGET_CGROUP && !o.target.cgroup)
			abort();
		if (o.duration_s < 0)
			abort();
		for (size_t i = 0; i < o.target.npids; i++) {
			if (o.target.pids[i] <= 0)
				abort();
		}
	}
	cli_free_profile(&o);
	free(buf);
	return 0;
}

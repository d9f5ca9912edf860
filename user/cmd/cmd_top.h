/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `scprof top`: the busiest processes by syscall rate, refreshed every
 * interval, full-screen (ncurses) or as plain-text frames (--batch). A
 * frame (render/top_frame.h) is built from the delta of two cumulative
 * snapshots, then turned into lines of text shared by both outputs.
 */
#ifndef SCPROF_TOP_H
#define SCPROF_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cmd/cli.h"
#include "render/top_frame.h"

struct top_opts {
	struct target_spec target; /* TARGET_ALL unless -p or --cgroup */
	double interval_s;
	double duration_s;    /* 0: until q, Ctrl-C or SIGTERM */
	unsigned long frames; /* 0: no limit */
	bool batch;
	unsigned int rows; /* processes per frame (batch; 0: all) */
	enum top_sort sort;
	double latency_duty; /* [0, 1]; negative: every call timed */
	int verbosity;
	enum group_key group; /* -g: rows per process, thread, unit... */
};

/* argv[0] is "top". 0 to run, 1 after --help, or EXIT_USAGE. */
int top_parse_args(int argc, char **argv, struct top_opts *o);
void top_free_opts(struct top_opts *o);

#endif

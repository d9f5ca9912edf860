/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `scprof top`: the busiest processes by syscall rate, refreshed every
 * interval, full-screen (ncurses) or as plain-text frames (--batch). A
 * frame is built from the delta of two cumulative snapshots, then turned
 * into lines of text shared by both outputs.
 */
#ifndef SCPROF_TOP_H
#define SCPROF_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cmd/cli.h"
#include "model/model.h"
#include "model/names.h"

enum top_sort {
	TOP_SORT_CALLS,	 /* calls/s */
	TOP_SORT_ERRORS, /* errors/s */
	TOP_SORT_P99,	 /* p99 latency in the interval */
	TOP_SORT_TIME,	 /* time inside syscalls */
	TOP_SORT_COUNT,
};

struct top_opts {
	struct target_spec target; /* TARGET_ALL unless -p or --cgroup */
	double interval_s;
	double duration_s;    /* 0: until q, Ctrl-C or SIGTERM */
	unsigned long frames; /* 0: no limit */
	bool batch;
	unsigned int rows; /* processes per frame (batch; 0: all) */
	enum top_sort sort;
	int verbosity;
};

#define TOP_NTOP 3 /* syscalls named per process */

struct top_proc {
	uint32_t pid;
	char comm[SC_COMM_LEN];
	bool exited;
	double calls_s, errors_s;
	double err_pct;
	uint64_t p99_ns;
	double busy_pct; /* wall time inside syscalls / interval, all threads */
	struct {
		const char *name;
		char buf[SC_NAME_LEN];
		double calls_s;
	} top[TOP_NTOP];
	int ntop;
};

struct top_frame {
	uint64_t interval_ns;
	double calls_s, errors_s; /* everything, exited processes included */
	uint64_t dropped;	  /* calls lost to a full map in the interval */
	struct top_proc *procs;	  /* those with calls in the interval, sorted */
	size_t nprocs;
	bool targets_gone;
};

/* Build a frame from an interval delta (model_delta). 0 or -ENOMEM. */
int top_frame_build(const struct sc_model *delta, uint64_t interval_ns,
		    enum top_sort sort, struct top_frame *out);
void top_frame_sort(struct top_frame *fr, enum top_sort sort);
void top_frame_free(struct top_frame *fr);
/* The frame as text lines: title, summary, column header, then one line
 * per process (at most max_rows, 0: all). Each line is NUL-terminated
 * without a newline, printable (names escaped). 0 or -ENOMEM; the caller
 * frees each line and the array.
 */
int top_frame_lines(const struct top_frame *fr, enum top_sort sort,
		    unsigned int max_rows, bool interactive, char ***lines,
		    size_t *n);

/* argv[0] is "top". 0 to run, 1 after --help, or EXIT_USAGE. */
int top_parse_args(int argc, char **argv, struct top_opts *o);
void top_free_opts(struct top_opts *o);

#endif

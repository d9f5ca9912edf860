/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff's reports: a JSON report of scprof (one object, or JSON
 * lines from -i, one object per interval) read into a diff_run. Every
 * failure is reported in one line naming the file (diff_input.h) and
 * returned as -EINVAL (not a report, not JSON, a key missing) or -ENOMEM.
 * Folded stack files are diff_stacks.h's.
 */
#ifndef SCPROF_DIFF_LOAD_H
#define SCPROF_DIFF_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/diff.h"

/* One syscall's figures in one interval (or the whole one-shot run). */
struct diff_cell {
	size_t iv; /* the interval, from 0 in the file's order */
	double calls, errors, total_ns, avg_ns, p50_ns, p99_ns;
};

/* One syscall, of the totals or of one group, through a run. */
struct diff_series {
	char *name, *fd_type, *abi; /* raw; fd_type NULL without one */
	int group;		    /* index into run->groups; -1: totals */
	struct diff_cell *cells;    /* the intervals it was seen in, in order */
	size_t n, cap;
};

struct diff_run {
	char *path;
	bool intervals; /* JSON lines from -i */
	size_t nint;	/* objects read: intervals, or 1 */
	double *dur_s;	/* each one's duration_ns, in seconds */
	bool count_only;
	uint64_t dropped; /* calls lost ("dropped"."calls"), summed */
	bool by;	  /* made with --by: groups rather than processes */
	char *by_keys;	  /* its groups' keys, "comm,pid"; NULL: no group */
	struct diff_group *groups;
	size_t ngroups;
	struct diff_series *s;
	size_t ns;
	/* series and groups by key (diff_load.c) */
	struct diff_index *index;
};

/* A report read from text (name: the file, for messages). 0 or -errno. */
int diff_run_parse(const char *text, size_t len, const char *name,
		   struct diff_run **out);
void diff_run_free(struct diff_run *r);
/* The series of (group, name, fd_type, abi) in r, or -1. */
long diff_run_find(const struct diff_run *r, int group, const char *name,
		   const char *fd_type, const char *abi);
/* The group of r with g's keys and values, in order, or -1. */
int diff_run_find_group(const struct diff_run *r, const struct diff_group *g);

#endif

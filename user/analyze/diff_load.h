/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff's inputs: a JSON report of scprof (one object, or JSON
 * lines from -i, one object per interval) read into a diff_run, and a
 * folded stack file (--folded) into a list of stacks. Every failure is
 * reported in one line naming the file (pr_err) and returned as -EINVAL
 * (not a report, not JSON, a key missing), -ENOMEM or the -errno of
 * reading the file.
 */
#ifndef SCPROF_DIFF_LOAD_H
#define SCPROF_DIFF_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/diff.h"
#include "model/stacks.h"

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
	/* lookup of series and groups by key (diff_load.c) */
	struct diff_index *index;
};

/* A file's contents, NUL-terminated (len without the NUL). 0 or -errno,
 * reported.
 */
int diff_read_file(const char *path, char **text, size_t *len);
/* What a file holds, from its first line. */
enum diff_input {
	DIFF_INPUT_JSON,   /* its first non-blank byte is { or [ */
	DIFF_INPUT_FOLDED, /* its first line ends in a blank and a count */
	DIFF_INPUT_OTHER,  /* neither (or empty) */
};

enum diff_input diff_sniff(const char *text, size_t len);

/* A report read from text (name: the file, for messages). 0 or -errno. */
int diff_run_parse(const char *text, size_t len, const char *name,
		   struct diff_run **out);
void diff_run_free(struct diff_run *r);
/* The series of (group, name, fd_type, abi) in r, or -1. */
long diff_run_find(const struct diff_run *r, int group, const char *name,
		   const char *fd_type, const char *abi);
/* The group of r with g's keys and values, in order, or -1. */
int diff_run_find_group(const struct diff_run *r, const struct diff_group *g);

/* A folded stack file: lines "FRAME;FRAME;... COUNT". */
struct folded_stack {
	char **frames; /* raw (\\xNN decoded), root first */
	size_t nframes;
	uint64_t count;
};

struct folded_file {
	struct folded_stack *v;
	size_t n;
	/* "# scprof --stacks-by time" (or blocked): counts are µs */
	enum sc_stack_weighting by;
};

/* Folded stacks read from text. 0 or -errno (reported). */
int folded_parse(const char *text, size_t len, const char *name,
		 struct folded_file *out);
void folded_free(struct folded_file *f);

#endif

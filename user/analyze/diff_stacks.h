/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff of two folded stack files (--folded's, or any tool's
 * "FRAME;FRAME;... COUNT" lines): each read into a list of stacks (errors
 * reported in one line naming the file, see diff_input.h), then merged
 * stack by stack with each change of a stack's share of the samples
 * judged against sampling noise. render/diff_report prints the result.
 */
#ifndef SCPROF_DIFF_STACKS_H
#define SCPROF_DIFF_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/diff.h"
#include "model/diff.h"
#include "model/stacks.h"

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

/* Folded stacks read from text (name: the file, for messages). 0 or
 * -errno (reported).
 */
int folded_parse(const char *text, size_t len, const char *name,
		 struct folded_file *out);
void folded_free(struct folded_file *f);

/*
 * Merge two folded stack files: one line per distinct stack with both
 * counts, sorted by frames; a line is significant when its share of the
 * samples changed by more than 3 standard errors of two binomial
 * samples, and by at least min_change_pct of its share in A. 0 or
 * -ENOMEM.
 */
int diff_stacks(const struct folded_file *a, const struct folded_file *b,
		const struct diff_opts *o, struct stack_diff **out);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --pprof: the sampled stacks (model/stacks.h) as a pprof profile
 * (profile.proto, gzip-compressed), for go tool pprof and the tools that
 * read its format.
 *
 * One sample per stack, its locations leaf first: the syscall (a function
 * named after it), then the user frames innermost first. Two values:
 * calls (the stack's samples times the sampling period) and
 * syscall-nanoseconds, an estimate: those calls times the mean latency of
 * the syscall over the run (the model's total time over its calls timed,
 * which in the daemon's sampled mode are fewer than its calls; 0 in
 * --count-only). String labels: "comm" (the process name), and the keys
 * of labels (the daemon's --labels: unit, cgroup, container, pod, qos)
 * with the values the daemon's /metrics series have, from the cgroup the
 * stacks were kept by (sc_stack.cgroup; "" unknown); no pid. Functions,
 * locations, mappings (a frame's module) and strings are each written
 * once; ids start at 1, string_table[0] is "".
 */
#ifndef SCPROF_PPROF_H
#define SCPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct group_by;

struct pprof_opts {
	int64_t time_ns;    /* when collection started, ns since the epoch
			     * (0: unknown)
			     */
	const char *target; /* raw: what was profiled (a comment); or NULL */
	const char *note;   /* raw: one more comment (how the stacks were
			     * sampled: the daemon's windows); or NULL
			     */
	/* A label per key (comm always); NULL or none: comm only. */
	const struct group_by *labels;
	/* Served over HTTP: every mapping says its functions are named, as
	 * nobody can name its unnamed frames better (the process may be
	 * gone), so that a reader asks the server for no symbols (Debian
	 * 12's go tool pprof POSTs the addresses to /debug/pprof/symbol
	 * otherwise, and fails on its 405).
	 */
	bool served;
};

/* The profile, serialized (not compressed), into a new buffer *buf of
 * *len bytes that the caller frees. -EINVAL without m->stacks; 0 or
 * -errno.
 */
int pprof_encode(const struct sc_model *m, const struct pprof_opts *o,
		 uint8_t **buf, size_t *len);
/* The profile, gzip-compressed, to f. 0 or -errno. */
int pprof_write(FILE *f, const struct sc_model *m, const struct pprof_opts *o);

#endif

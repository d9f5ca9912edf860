/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --slow: the slow calls, one at a time as they come (an strace-like line,
 * or a JSON object on one line), and all of them as a Chrome / Perfetto
 * trace (Trace Event Format: one complete "X" event per call). Names and
 * paths are escaped: any process chooses them.
 */
#ifndef SCPROF_SLOWCALLS_H
#define SCPROF_SLOWCALLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/slowlog.h"

/*
 * One call as a line, without the newline:
 * "12:03:05.120431 reader[1234/1234] read(3</tmp/x>) = 4096 <15.203 ms>
 *  parse_header <- main (conf.c:41)". A new string; NULL: no memory.
 */
char *slowcall_text(const struct sc_slow_call *c);
/* One call on one line of f: slowcall_text, or with json a JSON object
 * (JSON lines). 0 or -errno.
 */
int slowcall_print(FILE *f, const struct sc_slow_call *c, bool json);

struct slowtrace_opts {
	const char *target; /* what was profiled, raw */
	uint64_t slow_ns;   /* the threshold */
	uint64_t left_out;  /* calls reported but not in the list */
	uint64_t lost;	    /* calls not reported */
};

/* The calls of l as a Trace Event Format JSON object. 0 or -errno. */
int slowcalls_trace(FILE *f, const struct sc_slowlog *l,
		    const struct slowtrace_opts *o);

#endif

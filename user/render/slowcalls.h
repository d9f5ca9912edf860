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
 *  on-cpu 0.100 ms, cpu-wait 0.003 ms, blocked 15.100 ms (io-wait 15.100
 *  ms); slept in folio_wait_bit_common, woken by interrupt  parse_header
 *  <- main (conf.c:41)" (the split when known, where the longest sleep
 * slept and who woke it when it slept). A new string; NULL: no memory.
 */
char *slowcall_text(const struct sc_slow_call *c);
/* One call on one line of f: slowcall_text, or with json a JSON object
 * (JSON lines: the split as on_cpu_ns, cpu_wait_ns, blocked_ns,
 * io_wait_ns; sleep_ns, slept_in, woken_by {kind, comm, pid, tid}). 0 or
 * -errno.
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

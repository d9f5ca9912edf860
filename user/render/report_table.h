/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The strace -c tables: per ABI, per process, with -H histograms. */
#ifndef SCPROF_REPORT_TABLE_H
#define SCPROF_REPORT_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "render/view.h"

int report_table(FILE *f, const struct sc_model *m, const struct report_opts *o,
		 const struct report_meta *meta);
/* One strace -c style table of the rows of one ABI. */
int report_table_abi(FILE *f, const struct sc_row *rows, size_t n, uint32_t abi,
		     const struct report_opts *o);
/* The calls in flight (longest first), one line per syscall: "in flight
 * at stop: read x2 (pid P tid T, 3.00 s so far)" with the longest. 0 or
 * -ENOMEM.
 */
int report_table_flights(FILE *f, const struct sc_flight_call *fl, size_t n,
			 const char *when);

#endif

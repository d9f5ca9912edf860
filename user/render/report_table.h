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

#endif

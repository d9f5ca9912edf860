/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CSV report: a header line, then a line per (process, syscall). */
#ifndef SCPROF_REPORT_CSV_H
#define SCPROF_REPORT_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "render/view.h"

int report_csv(FILE *f, const struct sc_model *m, const struct report_opts *o,
	       const struct report_meta *meta);

#endif

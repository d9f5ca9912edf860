/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The JSON report: one object with the rows, processes and drops. */
#ifndef SCPROF_REPORT_JSON_H
#define SCPROF_REPORT_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "render/view.h"

int report_json(FILE *f, const struct sc_model *m, const struct report_opts *o,
		const struct report_meta *meta);

#endif

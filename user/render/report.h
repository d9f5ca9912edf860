/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place that chooses the format of a report (table, JSON or CSV).
 * The formats share render/view.h and know nothing of each other.
 */
#ifndef SCPROF_REPORT_H
#define SCPROF_REPORT_H

#include <stdio.h>

#include "render/view.h"

/* Render m in o->format. 0 or -errno (write errors included). */
int report_write(FILE *f, const struct sc_model *m, const struct report_opts *o,
		 const struct report_meta *meta);

/* Renderers, one per format. */
int report_table(FILE *f, const struct sc_model *m, const struct report_opts *o,
		 const struct report_meta *meta);
int report_json(FILE *f, const struct sc_model *m, const struct report_opts *o,
		const struct report_meta *meta);
int report_csv(FILE *f, const struct sc_model *m, const struct report_opts *o,
	       const struct report_meta *meta);

#endif

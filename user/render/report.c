// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The format dispatcher. */
#include <errno.h>

#include "render/report.h"
#include "render/report_csv.h"
#include "render/report_json.h"
#include "render/report_table.h"

int report_write(FILE *f, const struct sc_model *m, const struct report_opts *o,
		 const struct report_meta *meta)
{
	int err;

	switch (o->format) {
	case REPORT_JSON:
		err = report_json(f, m, o, meta);
		break;
	case REPORT_CSV:
		err = report_csv(f, m, o, meta);
		break;
	default:
		err = report_table(f, m, o, meta);
		break;
	}
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}

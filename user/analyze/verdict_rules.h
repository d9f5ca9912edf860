/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verdict's findings and its rules on the calls made, for
 * analyze/verdict.c and the other rules (verdict_waits.h): open-close
 * churn, short connections, small I/O, a high rate of cheap calls.
 */
#ifndef SCPROF_VERDICT_RULES_H
#define SCPROF_VERDICT_RULES_H

#include "analyze/verdict_input.h"
#include "model/verdict.h"

static inline double verdict_clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Of its CPU time, what calls crossings at the floor cost, in [0, 1]. */
double verdict_crossing_cpu(const struct verdict *v, double calls);

/* A new finding of v, zeroed (no bytes), in *out; cap: the room of v's
 * findings. 0 or -ENOMEM.
 */
int verdict_add_finding(struct verdict *v, size_t *cap,
			struct verdict_finding **out);
/* A finding of kind about row r: its name and figures. */
void verdict_fill_finding(struct verdict_finding *f, const struct verdict *v,
			  enum verdict_kind kind, const struct verdict_row *r);

/* The findings of the rules on the calls made, appended to v. 0 or
 * -ENOMEM.
 */
int verdict_call_rules(struct verdict *v, size_t *cap,
		       const struct verdict_input *in);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The verdict's rules, for analyze/verdict.c only. */
#ifndef SCPROF_VERDICT_RULES_H
#define SCPROF_VERDICT_RULES_H

#include "analyze/verdict.h"

static inline double verdict_clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Of its CPU time, what calls crossings at the floor cost, in [0, 1]. */
double verdict_crossing_cpu(const struct verdict *v, double calls);
/* Every rule's findings into v, largest share first. 0 or -ENOMEM. */
int verdict_apply_rules(struct verdict *v, const struct verdict_input *in);

#endif

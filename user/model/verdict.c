// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A verdict's names and teardown. */
#include <stdlib.h>

#include "model/verdict.h"

static const char *const kind_names[] = {
	[VERDICT_SMALL_IO] = "small-io",
	[VERDICT_OPEN_CLOSE_CHURN] = "open-close-churn",
	[VERDICT_HIGH_RATE] = "high-rate",
	[VERDICT_BLOCKING] = "blocking",
	[VERDICT_SHORT_CONNECTIONS] = "short-connections",
	[VERDICT_CPU_WAIT] = "cpu-wait",
	[VERDICT_IO_WAIT] = "io-wait",
	[VERDICT_LOCK_WAIT] = "lock-wait",
	[VERDICT_CPU_QUOTA] = "cpu-quota",
};

const char *verdict_kind_name(enum verdict_kind k)
{
	return (unsigned int)k < sizeof(kind_names) / sizeof(kind_names[0]) ?
		       kind_names[k] :
		       "?";
}

void verdict_free(struct verdict *v)
{
	if (!v)
		return;
	free(v->rows);
	free(v->findings);
	free(v);
}

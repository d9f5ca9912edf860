/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verdict's rules on where the calls' time went, for
 * analyze/verdict.c only: blocking (and the old rule, for rows whose
 * split is not known), waiting for a CPU, I/O wait, waiting for a lock,
 * each named with its evidence (where the calls slept, who woke them,
 * what ran instead), and the cgroup's CPU quota.
 */
#ifndef SCPROF_VERDICT_WAITS_H
#define SCPROF_VERDICT_WAITS_H

#include "analyze/verdict_rules.h"

/* Their findings appended to v (cap: its findings' room). 0 or -ENOMEM. */
int verdict_wait_rules(struct verdict *v, size_t *cap,
		       const struct verdict_input *in);

#endif

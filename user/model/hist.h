/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the log-linear latency histograms of include/scprof_hist.h. */
#ifndef SCPROF_HIST_USER_H
#define SCPROF_HIST_USER_H

#include <stdint.h>

#include "scprof.h"

/* Number of timed calls in a histogram. */
uint64_t hist_count(const __u64 *hist);
/*
 * The q-quantile (0 < q <= 1) in ns, interpolated inside its bucket and
 * kept within [min_ns, max_ns] when those are known; 0 with no samples.
 */
uint64_t hist_quantile(const struct sc_stats *st, double q);

#endif

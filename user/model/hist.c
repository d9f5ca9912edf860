// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "model/hist.h"

uint64_t hist_count(const __u64 *hist)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < SC_HIST_BUCKETS; i++)
		n += hist[i];
	return n;
}

uint64_t hist_quantile(const struct sc_stats *st, double q)
{
	uint64_t n = hist_count(st->hist), cum = 0;
	double rank, v = 0;

	if (!n)
		return 0;
	rank = q * (double)n;
	if (rank < 1)
		rank = 1;
	for (unsigned int i = 0; i < SC_HIST_BUCKETS; i++) {
		double lo, hi;

		if (!st->hist[i] || (double)(cum + st->hist[i]) < rank) {
			cum += st->hist[i];
			continue;
		}
		lo = (double)sc_hist_lower(i);
		hi = (double)sc_hist_lower(i + 1);
		v = lo + (hi - lo) * (rank - (double)cum) / (double)st->hist[i];
		break;
	}
	if (st->max_ns && v > (double)st->max_ns)
		v = (double)st->max_ns;
	if (st->min_ns && v < (double)st->min_ns)
		v = (double)st->min_ns;
	/* A bucket holds (lo, hi]: round up into it, never down to lo. */
	if ((double)(uint64_t)v < v)
		return (uint64_t)v + 1;
	return (uint64_t)v;
}

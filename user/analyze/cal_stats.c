// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "analyze/cal_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void cal_stats_compute(double *v, size_t n, struct cal_stats *out)
{
	qsort(v, n, sizeof(*v), cmp_double);
	out->min = v[0];
	out->max = v[n - 1];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t cal_scale_iters(uint64_t iters, uint64_t elapsed_ns,
			 uint64_t target_ns)
{
	double want;

	if (!iters)
		iters = 1;
	if (!elapsed_ns)
		return iters > UINT64_MAX / 1000 ? UINT64_MAX : iters * 1000;
	want = (double)iters * (double)target_ns / (double)elapsed_ns;
	if (want > (double)iters * 1000)
		want = (double)iters * 1000;
	if (want > 1e15)
		want = 1e15;
	return want < 1 ? 1 : (uint64_t)want;
}

double cal_per_call(uint64_t elapsed_ns, uint64_t iters, double overhead_ns)
{
	double v =
		(double)elapsed_ns / (double)(iters ? iters : 1) - overhead_ns;

	return v > 0 ? v : 0;
}

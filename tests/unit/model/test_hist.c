// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * include/scprof_hist.h (the bucket layout the BPF side fills) and
 * user/model/hist.c (percentiles read back from it).
 */
#include <math.h>

#include "model/hist.h"
#include "unit.h"

/* floor(log2(v)) the slow, obvious way. */
static uint32_t ref_log2(uint64_t v)
{
	uint32_t r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void check_log2(uint64_t v)
{
	uint32_t got = sc_log2(v), want = ref_log2(v);

	CHECK(got == want, "sc_log2(%" PRIu64 ") = %u, want %u", v, got, want);
}

static void test_log2_powers_and_neighbours(void **state)
{
	(void)state;
	for (unsigned int k = 0; k < 64; k++) {
		uint64_t p = 1ULL << k;

		check_log2(p);
		check_log2(p + 1);
		if (p > 1)
			check_log2(p - 1);
		check_log2(p | (p >> 1));
	}
	check_log2(UINT64_MAX);
	check_log2(UINT64_MAX - 1);
	check_log2(0xffffffffULL);
	check_log2(0x100000000ULL);
}

static void test_log2_random(void **state)
{
	uint64_t seed = 42;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t v = unit_rand(&seed) >> (unit_rand(&seed) % 64);

		if (v)
			check_log2(v);
	}
}

/*
 * Values to sweep: every value up to 70000, then a geometric sweep with
 * each power of two and its neighbours, up to 2^64 - 1.
 */
static size_t sweep_values(uint64_t **out)
{
	size_t cap = 200000, n = 0;
	uint64_t *v = malloc(cap * sizeof(*v));

	assert_non_null(v);
	for (uint64_t x = 0; x < 70000; x++)
		v[n++] = x;
	for (uint64_t x = 70000; x < UINT64_MAX / 2; x += x / 97 + 1)
		v[n++] = x;
	for (unsigned int k = 16; k < 64; k++) {
		v[n++] = (1ULL << k) - 1;
		v[n++] = 1ULL << k;
		v[n++] = (1ULL << k) + 1;
	}
	v[n++] = UINT64_MAX;
	assert_true(n <= cap);
	*out = v;
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_bucket_monotonic(void **state)
{
	uint64_t *v;
	size_t n = sweep_values(&v);
	uint32_t prev = 0;

	(void)state;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		uint32_t b = sc_hist_bucket(v[i]);

		CHECK(b < SC_HIST_BUCKETS,
		      "bucket %u of %" PRIu64 " out of range", b, v[i]);
		CHECK(b >= prev,
		      "bucket of %" PRIu64 " is %u, below %u of a "
		      "smaller value",
		      v[i], b, prev);
		prev = b;
	}
	CHECK(sc_hist_bucket(UINT64_MAX) == SC_HIST_BUCKETS - 1,
	      "the largest value is in the last bucket");
	free(v);
}

/* Every value lies in (lower(b), upper(b)] of its bucket b (0 in bucket 0). */
static void test_bucket_bounds_contain_value(void **state)
{
	uint64_t *v;
	size_t n = sweep_values(&v);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		uint32_t b = sc_hist_bucket(v[i]);

		CHECK(sc_hist_lower(b) < v[i] || (b == 0 && v[i] == 0),
		      "%" PRIu64
		      " is not above its bucket %u's lower bound %" PRIu64,
		      v[i], b, sc_hist_lower(b));
		if (b < SC_HIST_BUCKETS - 1)
			CHECK(v[i] <= sc_hist_upper(b),
			      "%" PRIu64
			      " is above bucket %u's upper bound %" PRIu64,
			      v[i], b, sc_hist_upper(b));
	}
	free(v);
}

/* Each bucket's upper bound falls in that very bucket and the next value
 * in the next one: none is empty, and a bound is counted `le` (<=).
 */
static void test_bucket_upper_roundtrip(void **state)
{
	(void)state;
	for (uint32_t b = 0; b < SC_HIST_BUCKETS - 1; b++) {
		uint64_t hi = sc_hist_upper(b);

		CHECK(sc_hist_bucket(hi) == b,
		      "upper(%u) = %" PRIu64 " lies in bucket %u", b, hi,
		      sc_hist_bucket(hi));
		CHECK(sc_hist_bucket(hi + 1) == b + 1,
		      "upper(%u) + 1 lies in bucket %u", b,
		      sc_hist_bucket(hi + 1));
	}
	CHECK(sc_hist_bucket(0) == 0 && sc_hist_bucket(1) == 0 &&
		      sc_hist_bucket(2) == 1 && sc_hist_bucket(4) == 3 &&
		      sc_hist_bucket(5) == 4,
	      "0 and 1 share bucket 0, 2..5 ns have a bucket each");
	/* exactly 2^k ns is in the bucket that ends at 2^k, 2^k + 1 above */
	for (int k = 3; k <= SC_HIST_MAX_LOG2; k++) {
		uint64_t p = 1ULL << k;

		CHECK(sc_hist_upper(sc_hist_bucket(p)) == p,
		      "2^%d ns is in the bucket ending at it", k);
		CHECK(sc_hist_lower(sc_hist_bucket(p + 1)) == p,
		      "2^%d + 1 ns is in the bucket starting above it", k);
	}
	CHECK(sc_hist_upper(SC_HIST_BUCKETS - 1) ==
		      1ULL << (SC_HIST_MAX_LOG2 + 1),
	      "the last bucket starts its open end above 2^%d",
	      SC_HIST_MAX_LOG2 + 1);
}

/* A bucket is at most 25% wide relative to its lower bound (v >= 4). */
static void test_bucket_relative_width(void **state)
{
	(void)state;
	for (uint32_t b = 0; b < SC_HIST_BUCKETS - 1; b++) {
		uint64_t lo = sc_hist_lower(b), hi = sc_hist_lower(b + 1);

		CHECK(hi > lo, "bucket %u is empty", b);
		if (lo < 4)
			continue;
		CHECK((hi - lo) * 4 <= lo,
		      "bucket %u [%" PRIu64 ", %" PRIu64 ") is wider than 25%%",
		      b, lo, hi);
	}
}

/* ---- hist_quantile ------------------------------------------------------- */

/* Record one timed call the way bpf/scprof.bpf.c does. */
static void stats_put(struct sc_stats *st, uint64_t v)
{
	st->calls++;
	st->total_ns += v;
	st->hist[sc_hist_bucket(v)]++;
	if (!st->min_ns || v < st->min_ns)
		st->min_ns = v;
	if (v > st->max_ns)
		st->max_ns = v;
}

/* The exact q-quantile of sorted samples: the ceil(q * n)-th smallest. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static const double qs[] = { 0.01, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99, 1.0 };

/*
 * Check p = hist_quantile() of samples for every q against the exact
 * quantile within tol (relative), and within [min, max].
 */
static void check_quantiles(const char *what, uint64_t *samples, size_t n,
			    double tol)
{
	struct sc_stats *st = calloc(1, sizeof(*st));

	assert_non_null(st);
	for (size_t i = 0; i < n; i++)
		stats_put(st, samples[i]);
	qsort(samples, n, sizeof(*samples), cmp_u64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t got = hist_quantile(st, qs[i]);
		uint64_t want = exact_quantile(samples, n, qs[i]);
		double err = fabs((double)got - (double)want) / (double)want;

		CHECK(err <= tol,
		      "%s: p%g = %" PRIu64 ", exact %" PRIu64
		      " (error %.1f%% > %.0f%%)",
		      what, qs[i] * 100, got, want, err * 100, tol * 100);
		CHECK(got >= samples[0] && got <= samples[n - 1],
		      "%s: p%g = %" PRIu64 " outside [%" PRIu64 ", %" PRIu64
		      "]",
		      what, qs[i] * 100, got, samples[0], samples[n - 1]);
	}
	free(st);
}

static void test_quantile_constant(void **state)
{
	static uint64_t s[1000];

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		s[i] = 1000;
	/* min == max == 1000: every quantile is exactly it. */
	check_quantiles("constant 1000 ns", s, 1000, 0.0);
}

static void test_quantile_single_sample(void **state)
{
	uint64_t s[1] = { 12345 };

	(void)state;
	check_quantiles("one sample", s, 1, 0.0);
}

static void test_quantile_uniform(void **state)
{
	static uint64_t s[100000];

	(void)state;
	for (size_t i = 0; i < 100000; i++)
		s[i] = 100 + i;
	check_quantiles("uniform 100..100099 ns", s, 100000, 0.12);
}

static void test_quantile_log_uniform(void **state)
{
	static uint64_t s[50000];
	uint64_t seed = 7;

	(void)state;
	/* 100 ns .. 10 ms, evenly spread on a log scale. */
	for (size_t i = 0; i < 50000; i++) {
		double u =
			(double)(unit_rand(&seed) >> 11) / 9007199254740992.0;

		s[i] = (uint64_t)(100.0 * pow(1e5, u));
	}
	check_quantiles("log-uniform 100 ns..10 ms", s, 50000, 0.12);
}

static void test_quantile_bimodal(void **state)
{
	static uint64_t s[10000];
	uint64_t seed = 99;

	(void)state;
	/* 85% fast calls around 500 ns, 15% slow ones around 2 ms. */
	for (size_t i = 0; i < 10000; i++) {
		uint64_t r = unit_rand(&seed);

		s[i] = i % 20 < 17 ? 400 + r % 200 : 1900000 + r % 200000;
	}
	check_quantiles("bimodal 500 ns / 2 ms", s, 10000, 0.20);
	/* The median is a fast call, p99 a slow one. */
	{
		struct sc_stats *st = calloc(1, sizeof(*st));

		assert_non_null(st);
		for (size_t i = 0; i < 10000; i++)
			stats_put(st, s[i]);
		CHECK(hist_quantile(st, 0.5) < 700, "p50 in the fast mode");
		CHECK(hist_quantile(st, 0.99) > 1500000,
		      "p99 in the slow mode");
		free(st);
	}
}

static void test_quantile_no_samples(void **state)
{
	struct sc_stats *st = calloc(1, sizeof(*st));

	(void)state;
	assert_non_null(st);
	CHECK(hist_quantile(st, 0.5) == 0, "no samples: 0");
	CHECK(hist_quantile(st, 0.99) == 0, "no samples: 0");
	/* Calls without a latency (exit_group) have no samples either. */
	st->calls = 5;
	CHECK(hist_quantile(st, 0.5) == 0, "untimed calls: 0");
	CHECK(hist_count(st->hist) == 0, "hist_count of an empty histogram");
	free(st);
}

/* Interpolation inside a bucket is clamped to the known min and max. */
static void test_quantile_clamped(void **state)
{
	struct sc_stats *st = calloc(1, sizeof(*st));
	uint32_t b = sc_hist_bucket(1000);
	uint64_t lo = sc_hist_lower(b), hi = sc_hist_lower(b + 1);

	(void)state;
	assert_non_null(st);
	st->hist[b] = 100;
	st->calls = 100;
	/* No min/max known: interpolated across the bucket. */
	CHECK(hist_quantile(st, 0.01) >= lo &&
		      hist_quantile(st, 0.01) < lo + 10,
	      "p1 near the bucket's start %" PRIu64 ", got %" PRIu64, lo,
	      hist_quantile(st, 0.01));
	CHECK(hist_quantile(st, 1.0) == hi,
	      "p100 at the bucket's end %" PRIu64 ", got %" PRIu64, hi,
	      hist_quantile(st, 1.0));
	/* Known min and max bound the estimate. */
	st->min_ns = 990;
	st->max_ns = 1000;
	CHECK(hist_quantile(st, 0.01) == 990, "p1 clamped to min, got %" PRIu64,
	      hist_quantile(st, 0.01));
	CHECK(hist_quantile(st, 0.99) == 1000,
	      "p99 clamped to max, got %" PRIu64, hist_quantile(st, 0.99));
	CHECK(hist_count(st->hist) == 100, "hist_count");
	free(st);
}

/* Latencies of 2 to 4 ns have a bucket each. */
static void test_quantile_tiny_values(void **state)
{
	struct sc_stats *st = calloc(1, sizeof(*st));

	(void)state;
	assert_non_null(st);
	for (int i = 0; i < 50; i++)
		stats_put(st, 1);
	for (int i = 0; i < 50; i++)
		stats_put(st, 3);
	CHECK(hist_count(st->hist) == 100, "100 samples");
	CHECK(hist_quantile(st, 0.25) == 1,
	      "p25 of {1 x50, 3 x50} is 1, got %" PRIu64,
	      hist_quantile(st, 0.25));
	CHECK(hist_quantile(st, 0.99) == 3,
	      "p99 of {1 x50, 3 x50} is 3, got %" PRIu64,
	      hist_quantile(st, 0.99));
	free(st);
}

/* Values past 2^40 ns share the last bucket; p100 stays at max. */
static void test_quantile_huge_values(void **state)
{
	struct sc_stats *st = calloc(1, sizeof(*st));
	uint64_t big = 5000ULL * 1000000000ULL; /* 5000 s */

	(void)state;
	assert_non_null(st);
	stats_put(st, big);
	stats_put(st, big);
	CHECK(hist_quantile(st, 0.5) == big,
	      "p50 of two equal huge values, got %" PRIu64,
	      hist_quantile(st, 0.5));
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2_powers_and_neighbours),
		cmocka_unit_test(test_log2_random),
		cmocka_unit_test(test_bucket_monotonic),
		cmocka_unit_test(test_bucket_bounds_contain_value),
		cmocka_unit_test(test_bucket_upper_roundtrip),
		cmocka_unit_test(test_bucket_relative_width),
		cmocka_unit_test(test_quantile_constant),
		cmocka_unit_test(test_quantile_single_sample),
		cmocka_unit_test(test_quantile_uniform),
		cmocka_unit_test(test_quantile_log_uniform),
		cmocka_unit_test(test_quantile_bimodal),
		cmocka_unit_test(test_quantile_no_samples),
		cmocka_unit_test(test_quantile_clamped),
		cmocka_unit_test(test_quantile_tiny_values),
		cmocka_unit_test(test_quantile_huge_values),
	};

	unit_init();
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}

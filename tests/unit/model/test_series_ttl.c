// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Idle syscall rows left out of what the daemon exports
 * (model/series_ttl.h): a row whose calls have not grown for the TTL goes,
 * comes back with its cumulative figures when they grow again, and the
 * rows exported at any time are those that grew within the TTL, however
 * many distinct syscalls came and went before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/series_ttl.h"
#include "unit.h"

#define S 1000000000ULL

struct cell {
	uint32_t abi, nr;
	uint64_t calls;
};

/* A cumulative snapshot: one row per cell (the aggregate, pid 0). */
static struct sc_model *snapshot(const struct cell *c, size_t n)
{
	struct sc_model *m = model_new();
	struct sc_proc *p;

	assert_non_null(m);
	p = model_proc(m, 0, 0, 0);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		struct sc_stats st = { .calls = c[i].calls,
				       .errors = c[i].calls / 2,
				       .total_ns = c[i].calls * 100 };

		st.hist[3] = c[i].calls;
		assert_int_equal(model_proc_add(p, c[i].abi, c[i].nr, &st), 0);
	}
	assert_int_equal(model_finalize(m), 0);
	return m;
}

static const struct sc_row *find(const struct sc_model *m, uint32_t abi,
				 uint32_t nr)
{
	for (size_t i = 0; i < m->ntotal; i++)
		if (m->total[i].abi == abi && m->total[i].nr == nr)
			return &m->total[i];
	return NULL;
}

/* Apply t to a snapshot of c at now; the rows it leaves, checked whole. */
static size_t exported(struct series_ttl *t, const struct cell *c, size_t n,
		       uint64_t now, bool *shown)
{
	struct sc_model *m = snapshot(c, n);
	size_t kept;

	assert_int_equal(series_ttl__apply(t, m, now), 0);
	kept = m->ntotal;
	assert_int_equal(kept + series_ttl__hidden(t), n);
	for (size_t i = 0; i < n; i++) {
		const struct sc_row *r = find(m, c[i].abi, c[i].nr);

		shown[i] = r != NULL;
		if (!r)
			continue;
		/* the row as it was, every figure: nothing subtracted */
		CHECK(r->st.calls == c[i].calls &&
			      r->st.errors == c[i].calls / 2 &&
			      r->st.total_ns == c[i].calls * 100 &&
			      r->st.hist[3] == c[i].calls,
		      "row %u/%u changed", c[i].abi, c[i].nr);
	}
	model_free(m);
	return kept;
}

static void test_idle_row_goes_and_comes_back(void **state)
{
	struct series_ttl *t = series_ttl__new(10 * S);
	struct cell c[] = { { 0, 39, 100 }, { 1, 20, 3 } }; /* getpid, i386 */
	bool shown[2];

	(void)state;
	assert_non_null(t);
	assert_int_equal(exported(t, c, 2, 100 * S, shown), 2);
	/* the rare 32-bit row stops; the busy one goes on */
	c[0].calls = 200;
	assert_int_equal(exported(t, c, 2, 105 * S, shown), 2);
	c[0].calls = 300;
	assert_int_equal(exported(t, c, 2, 110 * S, shown), 2);
	CHECK(shown[1], "idle for exactly the TTL: still there");
	c[0].calls = 400;
	assert_int_equal(exported(t, c, 2, 110 * S + 1, shown), 1);
	CHECK(shown[0] && !shown[1], "idle past the TTL: left out");
	assert_int_equal(exported(t, c, 2, 500 * S, shown), 0);
	/* called again: back with its cumulative count (3 + 2) */
	c[1].calls = 5;
	assert_int_equal(exported(t, c, 2, 501 * S, shown), 1);
	CHECK(shown[1] && !shown[0], "the row that grew is back");
	/* and idle again, from its return */
	assert_int_equal(exported(t, c, 2, 511 * S, shown), 1);
	assert_int_equal(exported(t, c, 2, 512 * S, shown), 0);
	series_ttl__free(t);
}

static void test_ttl_0_keeps_every_row(void **state)
{
	struct series_ttl *t = series_ttl__new(0);
	struct cell c[] = { { 0, 1, 1 }, { 0, 2, 1 } };
	bool shown[2];

	(void)state;
	assert_int_equal(exported(t, c, 2, 1 * S, shown), 2);
	assert_int_equal(exported(t, c, 2, 100000 * S, shown), 2);
	series_ttl__free(t);
}

/* A row first seen idle-looking (a snapshot taken long after it was
 * made) still counts as new: it grew since it was last seen (never).
 */
static void test_new_row_is_shown(void **state)
{
	struct series_ttl *t = series_ttl__new(5 * S);
	struct cell a[] = { { 0, 1, 7 } };
	struct cell b[] = { { 0, 1, 7 }, { 0, 2, 1 } };
	bool shown[2];

	(void)state;
	assert_int_equal(exported(t, a, 1, 1 * S, shown), 1);
	assert_int_equal(exported(t, b, 2, 100 * S, shown), 1);
	CHECK(!shown[0] && shown[1], "the old row idle, the new one shown");
	series_ttl__free(t);
}

/*
 * Churn: a new syscall every second, each called once, for 400 seconds
 * (the rows of every ABI a test suite leaves behind). The rows exported
 * at any time are the TTL's worth: at most ttl / 1 s + 1, never all.
 */
static void test_churn_stays_bounded(void **state)
{
	enum { N = 400, TTL_S = 30 };
	struct series_ttl *t = series_ttl__new(TTL_S * S);
	struct cell *c = calloc(N, sizeof(*c));
	bool *shown = calloc(N, sizeof(*shown));
	size_t most = 0;

	(void)state;
	assert_non_null(c);
	assert_non_null(shown);
	for (size_t k = 0; k < N; k++) {
		size_t kept;

		c[k].abi = (uint32_t)(k % 2);
		c[k].nr = (uint32_t)(k / 2);
		c[k].calls = 1;
		kept = exported(t, c, k + 1, (1000 + k) * S, shown);
		if (kept > most)
			most = kept;
		/* exactly the rows called in the last TTL_S seconds */
		for (size_t i = 0; i <= k; i++)
			CHECK(shown[i] == (k - i <= TTL_S),
			      "row %zu at second %zu: shown %d", i, k,
			      shown[i]);
	}
	CHECK(most == TTL_S + 1, "at most %d rows, %zu exported", TTL_S + 1,
	      most);
	free(c);
	free(shown);
	series_ttl__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_row_goes_and_comes_back),
		cmocka_unit_test(test_ttl_0_keeps_every_row),
		cmocka_unit_test(test_new_row_is_shown),
		cmocka_unit_test(test_churn_stays_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

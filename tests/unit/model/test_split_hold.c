// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The split's counters held from going back between cumulative snapshots
 * (model/split_hold.h): each part, and on a CPU (the total less the
 * parts), never lower than at the snapshot before, and the parts always
 * within the total, whatever order a racy read saw them grow in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/split_hold.h"

struct figures {
	uint64_t total, wait, blocked, iowait;
};

/* A snapshot with one row of (abi 0, nr) per entry of f. */
static struct sc_model *snapshot(const uint32_t *nrs, const struct figures *f,
				 size_t n)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 0, 0, 0);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		struct sc_stats st = { .calls = 1,
				       .total_ns = f[i].total,
				       .wait_ns = f[i].wait,
				       .blocked_ns = f[i].blocked,
				       .iowait_ns = f[i].iowait };

		assert_int_equal(model_proc_add(p, 0, nrs[i], &st), 0);
	}
	assert_int_equal(model_finalize(m), 0);
	return m;
}

static const struct sc_row *row_of(const struct sc_model *m, uint32_t nr)
{
	for (size_t i = 0; i < m->ntotal; i++)
		if (m->total[i].nr == nr)
			return &m->total[i];
	fail_msg("no row %u", nr);
	return NULL;
}

static uint64_t on_cpu(const struct sc_row *r)
{
	return r->st.total_ns - r->st.wait_ns - r->st.blocked_ns;
}

/* The parts within the total, I/O wait within blocked. */
static void check_sane(const struct sc_row *r)
{
	assert_true(r->st.wait_ns + r->st.blocked_ns <= r->st.total_ns);
	assert_true(r->st.iowait_ns <= r->st.blocked_ns);
}

/* A wait read before the total of its call: held back, then given once
 * the total has it.
 */
static void test_a_part_read_early_waits_for_its_total(void **state)
{
	static const uint32_t nr[] = { 0 };
	static const struct figures seen[] = {
		{ 1000, 100, 200, 50 },
		{ 1000, 400, 200, 50 }, /* a call's wait, its time not yet */
		{ 1300, 400, 200, 50 }, /* its time now */
	};
	static const struct figures want[] = {
		{ 1000, 100, 200, 50 },
		{ 1000, 100, 200, 50 },
		{ 1300, 400, 200, 50 },
	};
	struct split_hold *h = split_hold__new();

	(void)state;
	assert_non_null(h);
	for (size_t i = 0; i < 3; i++) {
		struct sc_model *m = snapshot(nr, &seen[i], 1);
		const struct sc_row *r;

		assert_int_equal(split_hold__apply(h, m), 0);
		r = row_of(m, 0);
		assert_int_equal(r->st.total_ns, want[i].total);
		assert_int_equal(r->st.wait_ns, want[i].wait);
		assert_int_equal(r->st.blocked_ns, want[i].blocked);
		assert_int_equal(r->st.iowait_ns, want[i].iowait);
		model_free(m);
	}
	split_hold__free(h);
}

/* A total read before its call's parts: on a CPU reads high, which
 * cannot be taken back. The parts' growth is then shared out within the
 * total's (on a CPU stays), until time on a CPU has made up for it.
 */
static void test_a_total_read_early_keeps_on_cpu(void **state)
{
	static const uint32_t nr[] = { 0 };
	static const struct figures seen[] = {
		{ 1300, 100, 200, 0 },	 /* a call's 300 ns, its wait not yet */
		{ 1300, 400, 200, 0 },	 /* its wait: on a CPU would go back */
		{ 1500, 400, 300, 100 }, /* 200 ns more, all parts */
		{ 2000, 400, 300, 100 }, /* 500 ns on a CPU */
	};
	static const uint64_t want[][4] = {
		/* on a CPU, waiting, blocked, I/O wait */
		{ 1000, 100, 200, 0 },
		{ 1000, 100, 200, 0 },
		{ 1000, 250, 250, 100 }, /* 300 and 100 ns, shared in 200 */
		{ 1300, 400, 300, 100 }, /* made up for: the true figures */
	};
	struct split_hold *h = split_hold__new();

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		struct sc_model *m = snapshot(nr, &seen[i], 1);
		const struct sc_row *r;
		uint64_t now[4];

		assert_int_equal(split_hold__apply(h, m), 0);
		r = row_of(m, 0);
		check_sane(r);
		now[0] = on_cpu(r);
		now[1] = r->st.wait_ns;
		now[2] = r->st.blocked_ns;
		now[3] = r->st.iowait_ns;
		for (int k = 0; k < 4; k++)
			assert_int_equal(now[k], want[i][k]);
		model_free(m);
	}
	split_hold__free(h);
}

/* Racy reads of three rows, some new on the way: every counter of every
 * row goes up or stays, the parts within the total, and once the reads
 * are whole again and calls have run on a CPU for longer than any one
 * call, the figures are the true ones.
 */
static void test_racy_reads_never_go_back(void **state)
{
	static const uint32_t nrs[] = { 0, 1, 39 };
	struct figures truth[3] = {};
	uint64_t last[3][4] = {};
	struct split_hold *h = split_hold__new();
	unsigned int seed = 41;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		struct figures seen[3];
		size_t n = round < 50 ? 1 : round < 100 ? 2 : 3;
		bool whole = round == 1999;
		struct sc_model *m;

		for (size_t i = 0; i < n; i++) {
			/* calls end: each a time split into parts (the
			 * last all on a CPU)
			 */
			uint64_t t = whole ? 5000 :
					     (uint64_t)rand_r(&seed) % 1000;
			uint64_t w = t && !whole ?
					     (uint64_t)rand_r(&seed) % (t + 1) :
					     0;
			uint64_t b =
				t - w ? (uint64_t)rand_r(&seed) % (t - w + 1) :
					0;
			uint64_t io = b ? (uint64_t)rand_r(&seed) % (b + 1) : 0;
			struct figures before = truth[i];

			truth[i].total += t;
			truth[i].wait += w;
			truth[i].blocked += b;
			truth[i].iowait += io;
			/* the read saw some of the last call, not all */
			seen[i] = truth[i];
			if (!whole && rand_r(&seed) % 2)
				seen[i].total = before.total;
			if (!whole && rand_r(&seed) % 2)
				seen[i].wait = before.wait;
			if (!whole && rand_r(&seed) % 2) {
				seen[i].blocked = before.blocked;
				seen[i].iowait = before.iowait;
			}
		}
		m = snapshot(nrs, seen, n);
		assert_int_equal(split_hold__apply(h, m), 0);
		for (size_t i = 0; i < n; i++) {
			const struct sc_row *r = row_of(m, nrs[i]);
			uint64_t now[4] = { on_cpu(r), r->st.wait_ns,
					    r->st.blocked_ns, r->st.iowait_ns };

			check_sane(r);
			for (int k = 0; k < 4; k++) {
				if (now[k] < last[i][k])
					fail_msg("row %u part %d went from "
						 "%lu to %lu in round %d",
						 nrs[i], k,
						 (unsigned long)last[i][k],
						 (unsigned long)now[k], round);
			}
			memcpy(last[i], now, sizeof(now));
			if (whole) {
				assert_int_equal(r->st.wait_ns, truth[i].wait);
				assert_int_equal(r->st.blocked_ns,
						 truth[i].blocked);
			}
		}
		model_free(m);
	}
	split_hold__free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_part_read_early_waits_for_its_total),
		cmocka_unit_test(test_a_total_read_early_keeps_on_cpu),
		cmocka_unit_test(test_racy_reads_never_go_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

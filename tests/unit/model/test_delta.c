// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interval deltas between two cumulative snapshots (-i, top). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/delta.h"

static void timed(struct sc_stats *st, uint64_t ns, uint64_t n)
{
	st->calls += n;
	st->total_ns += ns * n;
	st->hist[sc_hist_bucket(ns)] += n;
	if (!st->min_ns || ns < st->min_ns)
		st->min_ns = ns;
	if (ns > st->max_ns)
		st->max_ns = ns;
}

static void test_stats_delta(void **state)
{
	struct sc_stats prev = {}, cur, d;

	(void)state;
	timed(&prev, 100, 10);
	prev.errors = 3;
	prev.bytes = 50;
	cur = prev;
	timed(&cur, 5000, 4);
	cur.errors = 4;
	cur.bytes = 90;
	stats_delta(&d, &cur, &prev);
	assert_int_equal(d.calls, 4);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.bytes, 40);
	assert_int_equal(d.total_ns, 20000);
	assert_int_equal(d.hist[sc_hist_bucket(5000)], 4);
	assert_int_equal(d.hist[sc_hist_bucket(100)], 0);
	/* the interval's extremes: the bucket of 5000 ns, not the 100 ns
	 * of an earlier interval
	 */
	assert_true(d.min_ns <= 5000 && d.min_ns >= 4096);
	assert_int_equal(d.max_ns, 5000);
	/* nothing new: an empty delta */
	stats_delta(&d, &cur, &cur);
	assert_int_equal(d.calls, 0);
	assert_int_equal(d.min_ns, 0);
	assert_int_equal(d.max_ns, 0);
}

static struct sc_proc *proc(struct sc_model *m, uint32_t pid, uint64_t calls)
{
	struct sc_proc *p = model_proc(m, pid, 1, 0);
	struct sc_stats st = {};

	timed(&st, 200, calls);
	assert_int_equal(model_proc_add(p, 0, 110, &st), 0);
	return p;
}

/* A process folded into the pid-0 aggregate between two snapshots is
 * counted once: the totals are differences of totals.
 */
static void test_folded_process_counted_once(void **state)
{
	struct sc_model *prev = model_new(), *cur = model_new(), *d;

	(void)state;
	proc(prev, 42, 100); /* live, 100 calls so far */
	proc(prev, 43, 7);
	model_finalize(prev);
	proc(cur, 0, 120); /* 42 exited at 120 calls, folded */
	proc(cur, 43, 9);
	model_finalize(cur);
	d = model_delta(cur, prev);
	assert_non_null(d);
	assert_int_equal(d->ntotal, 1);
	assert_int_equal(d->total[0].st.calls, 20 + 2);
	assert_null(model_find_proc(d, 42, 1, 0));
	assert_int_equal(model_find_proc(d, 43, 1, 0)->rows[0].st.calls, 2);
	model_free(d);
	/* against nothing: everything */
	d = model_delta(cur, NULL);
	assert_int_equal(d->total[0].st.calls, 129);
	model_free(d);
	model_free(prev);
	model_free(cur);
}

/* With -P, exited processes beyond --max-exited are merged into the pid-0
 * aggregate when they are folded. Its share of an interval is what the
 * merged processes did in it, not their whole history: the per-process
 * deltas add up to the totals.
 */
static void test_merged_aggregate_gets_its_interval_share(void **state)
{
	struct sc_model *prev = model_new(), *cur = model_new(), *d;
	const struct sc_proc *agg;
	struct sc_proc *p;
	uint64_t sum = 0;

	(void)state;
	p = proc(prev, 0, 50); /* one merged earlier, with 50 calls */
	p->merged = 1;
	p->exited = true;
	proc(prev, 42, 100); /* live, 100 calls so far */
	proc(prev, 43, 7);
	model_finalize(prev);
	p = proc(cur, 0, 50 + 120); /* 42 exited at 120 calls, merged */
	p->merged = 2;
	p->exited = true;
	proc(cur, 43, 9);
	proc(cur, 44, 5); /* born in the interval */
	model_finalize(cur);
	d = model_delta(cur, prev);
	assert_non_null(d);
	assert_int_equal(d->total[0].st.calls, 20 + 2 + 5);
	agg = model_find_proc(d, 0, 1, 0);
	assert_non_null(agg);
	assert_int_equal(agg->nrows, 1);
	assert_int_equal(agg->rows[0].st.calls, 20);
	assert_int_equal(agg->rows[0].st.hist[sc_hist_bucket(200)], 20);
	assert_int_equal(agg->merged, 1); /* merged in this interval */
	assert_true(agg->exited);
	for (size_t i = 0; i < d->nprocs; i++)
		sum += d->procs[i].rows[0].st.calls;
	assert_int_equal(sum, d->total[0].st.calls);
	model_free(d);
	/* nothing merged in an interval: no aggregate row */
	d = model_delta(cur, cur);
	assert_null(model_find_proc(d, 0, 1, 0));
	model_free(d);
	model_free(prev);
	model_free(cur);
}

static void test_idle_rows_left_out(void **state)
{
	struct sc_model *prev = model_new(), *cur, *d;

	(void)state;
	proc(prev, 5, 10);
	model_errno_add(prev, 0, 2, 2, 4);
	prev->meta.drops[SC_DROP_CALLS] = 1;
	model_finalize(prev);
	cur = model_clone(prev);
	model_errno_add(cur, 0, 2, 2, 3);
	cur->meta.drops[SC_DROP_CALLS] = 6;
	model_finalize(cur);
	d = model_delta(cur, prev);
	assert_int_equal(d->nprocs, 0);
	assert_int_equal(d->ntotal, 0);
	assert_int_equal(d->nerrnos, 1);
	assert_int_equal(d->errnos[0].count, 3);
	assert_int_equal(d->meta.drops[SC_DROP_CALLS], 5);
	model_free(d);
	model_free(prev);
	model_free(cur);
}

/*
 * A call in flight across three snapshots: each interval gets the time it
 * spent there, the one where it returns the rest; the returned calls'
 * time (for averages) is the whole latency, in the interval it returned.
 */
static void test_call_in_flight_split(void **state)
{
	struct sc_model *s[4], *d;
	/* snapshots at 1000, 2000, 3000 ns; a read started at 500 ns,
	 * returned at 2500 ns; a getppid of 10 ns returned before 1000
	 */
	const uint64_t flight[3] = { 500, 1500, 0 };
	const uint64_t want_total[3] = { 510, 1000, 500 };
	/* in the last, the read's time there less its whole latency */
	const int64_t want_flight[3] = { 500, 1000, -1500 };
	const uint64_t want_calls[3] = { 1, 0, 1 };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct sc_proc *p;
		struct sc_stats st = {};

		s[i] = model_new();
		assert_non_null(s[i]);
		p = model_proc(s[i], 7, 1, 0);
		assert_non_null(p);
		timed(&st, 10, 1);
		assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, 110, &st), 0);
		if (flight[i]) {
			assert_int_equal(model_proc_add_flight(p, SC_ABI_NATIVE,
							       0, SC_FD_NONE,
							       flight[i], 1),
					 0);
		} else {
			struct sc_stats rd = {};

			timed(&rd, 2000, 1);
			assert_int_equal(
				model_proc_add(p, SC_ABI_NATIVE, 0, &rd), 0);
		}
		assert_int_equal(model_finalize(s[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		uint64_t total = 0, calls = 0;
		int64_t fl = 0;

		d = model_delta(s[i], i ? s[i - 1] : NULL);
		assert_non_null(d);
		for (size_t j = 0; j < d->ntotal; j++) {
			total += d->total[j].st.total_ns;
			fl += d->total[j].flight_ns;
			calls += d->total[j].st.calls;
			if (d->total[j].nr == 0 && i == 2) {
				/* the read's whole latency, for its average */
				assert_int_equal(row_returned_ns(&d->total[j]),
						 2000);
			}
		}
		assert_int_equal(total, want_total[i]);
		assert_int_equal(fl, want_flight[i]);
		assert_int_equal(calls, want_calls[i]);
		model_free(d);
	}
	for (int i = 0; i < 3; i++)
		model_free(s[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_delta),
		cmocka_unit_test(test_folded_process_counted_once),
		cmocka_unit_test(test_merged_aggregate_gets_its_interval_share),
		cmocka_unit_test(test_idle_rows_left_out),
		cmocka_unit_test(test_call_in_flight_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

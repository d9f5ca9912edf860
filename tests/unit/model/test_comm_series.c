// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-comm series: exact attribution across renames and exits, counters
 * that never go backwards, the top-K/other bound and bounded memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/comm_series.h"

/* A process in a snapshot: calls of getppid, errors, ns, bytes. */
static struct sc_proc *put(struct sc_model *m, uint32_t pid, const char *comm,
			   uint64_t calls)
{
	struct sc_proc *p = model_proc(m, pid, 1000 + pid, 0);
	struct sc_stats st = { .calls = calls,
			       .errors = calls / 5,
			       .total_ns = calls * 100,
			       .bytes = calls * 2 };

	assert_non_null(p);
	memset(p->comm, 0, sizeof(p->comm));
	strncpy(p->comm, comm, SC_COMM_LEN - 1);
	assert_int_equal(model_proc_add(p, 0, 110, &st), 0);
	return p;
}

static const struct comm_series_row *row(struct comm_series *s,
					 const char *label)
{
	size_t n;
	const struct comm_series_row *r = comm_series__rows(s, &n);

	for (size_t i = 0; i < n; i++) {
		if (label ? (!r[i].other && !strcmp(r[i].label, label)) :
			    r[i].other)
			return &r[i];
	}
	return NULL;
}

static uint64_t calls_of(struct comm_series *s, const char *label)
{
	const struct comm_series_row *r = row(s, label);

	return r ? r->c.calls : 0;
}

static uint64_t sum_calls(struct comm_series *s)
{
	size_t n;
	const struct comm_series_row *r = comm_series__rows(s, &n);
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += r[i].c.calls;
	return t;
}

static void test_rename_does_not_go_backwards(void **state)
{
	struct comm_series_opts o = { .max_series = 10 };
	struct comm_series *s;
	struct sc_model *a = model_new(), *b = model_new();

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	/* a shell's child before exec: 10 calls as "bash" */
	put(a, 7, "bash", 10);
	assert_int_equal(comm_series__update(s, a, 1), 0);
	assert_int_equal(calls_of(s, "bash"), 10);
	/* it execs "ls": 15 calls in all now, named "ls" */
	put(b, 7, "ls", 15);
	assert_int_equal(comm_series__update(s, b, 2), 0);
	assert_int_equal(calls_of(s, "bash"), 10); /* not back to 0 */
	assert_int_equal(calls_of(s, "ls"), 5);
	assert_int_equal(sum_calls(s), 15);
	assert_int_equal(row(s, "ls")->c.errors, 1); /* 15/5 - 10/5 */
	comm_series__free(s);
	model_free(a);
	model_free(b);
}

/* On a CPU is a counter of its own: when a process's parts are read
 * grown before its total is (a call ending on another CPU while the
 * snapshot is taken), the series' on-CPU time does not go back; the
 * parts and the total keep their own figures.
 */
static void test_on_cpu_never_goes_back(void **state)
{
	struct comm_series_opts o = { .max_series = 10 };
	struct comm_series *s;
	static const struct {
		uint64_t total, wait, blocked, iowait;
	} snaps[] = {
		{ 1000, 100, 200, 50 }, /* on a CPU: 700 */
		{ 1000, 400, 200, 50 }, /* a wait read before its call: 400 */
		{ 1600, 400, 300, 60 }, /* the total catches up: 900 */
	};
	uint64_t last = 0;

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	for (size_t i = 0; i < sizeof(snaps) / sizeof(snaps[0]); i++) {
		struct sc_model *m = model_new();
		struct sc_proc *p = model_proc(m, 7, 1007, 0);
		struct sc_stats st = { .calls = 10 + i,
				       .total_ns = snaps[i].total,
				       .wait_ns = snaps[i].wait,
				       .blocked_ns = snaps[i].blocked,
				       .iowait_ns = snaps[i].iowait };
		const struct comm_series_row *r;

		strcpy(p->comm, "w");
		assert_int_equal(model_proc_add(p, 0, 0, &st), 0);
		assert_int_equal(comm_series__update(s, m, i + 1), 0);
		r = row(s, "w");
		assert_non_null(r);
		assert_true(r->c.on_cpu_ns >= last);
		last = r->c.on_cpu_ns;
		assert_int_equal(r->c.total_ns, snaps[i].total);
		assert_int_equal(r->c.wait_ns, snaps[i].wait);
		assert_int_equal(r->c.blocked_ns, snaps[i].blocked);
		assert_int_equal(r->c.iowait_ns, snaps[i].iowait);
		model_free(m);
	}
	/* 700, held at 700 (not credited twice), then 900 */
	assert_int_equal(last, 900);
	comm_series__free(s);
}

static void test_exit_is_attributed_once(void **state)
{
	struct comm_series_opts o = { .max_series = 10 };
	struct comm_series *s;
	struct sc_model *a = model_new(), *ex = model_new(),
			*empty = model_new();

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	put(a, 7, "worker", 100);
	put(a, 8, "worker", 50);
	assert_int_equal(comm_series__update(s, a, 1), 0);
	assert_int_equal(calls_of(s, "worker"), 150);
	assert_int_equal(comm_series__tracked(s), 2);
	/* pid 7 exits having made 130 calls; pid 9 was born and died
	 * between two scrapes with 20
	 */
	put(ex, 7, "worker", 130);
	put(ex, 9, "worker", 20);
	comm_series__fold(s, ex);
	/* the next snapshot has pid 8 only, grown to 60 */
	put(empty, 8, "worker", 60);
	assert_int_equal(comm_series__update(s, empty, 2), 0);
	assert_int_equal(calls_of(s, "worker"), 130 + 20 + 60);
	/* pid 7 is forgotten: memory follows the live processes */
	assert_int_equal(comm_series__tracked(s), 1);
	comm_series__free(s);
	model_free(a);
	model_free(ex);
	model_free(empty);
}

static void test_top_k_and_other(void **state)
{
	struct comm_series_opts o = { .max_series = 2 };
	struct comm_series *s;
	struct sc_model *a = model_new(), *b = model_new();
	size_t n;

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	put(a, 1, "small", 10);
	put(a, 2, "big", 100);
	put(a, 3, "mid", 50);
	put(a, 4, "tiny", 1);
	assert_int_equal(comm_series__update(s, a, 1), 0);
	comm_series__rows(s, &n);
	assert_int_equal(n, 3); /* two series and other */
	assert_int_equal(calls_of(s, "big"), 100);
	assert_int_equal(calls_of(s, "mid"), 50);
	assert_null(row(s, "small"));
	assert_int_equal(calls_of(s, NULL), 11);
	assert_int_equal(comm_series__folded(s), 2);
	/* "small" gets busy: no free slot, so it stays in other, and other
	 * only grows
	 */
	put(b, 1, "small", 1010);
	put(b, 2, "big", 100);
	put(b, 3, "mid", 51);
	put(b, 4, "tiny", 1);
	assert_int_equal(comm_series__update(s, b, 2), 0);
	assert_int_equal(calls_of(s, NULL), 1011);
	assert_int_equal(sum_calls(s), 1010 + 100 + 51 + 1);
	comm_series__free(s);
	model_free(a);
	model_free(b);
}

static void test_idle_series_give_their_slot_up(void **state)
{
	struct comm_series_opts o = { .max_series = 1, .idle_ns = 100 };
	struct comm_series *s;
	struct sc_model *a = model_new(), *b = model_new(), *c = model_new();

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	put(a, 1, "early", 10);
	assert_int_equal(comm_series__update(s, a, 1000), 0);
	assert_int_equal(calls_of(s, "early"), 10);
	/* early stops; late starts: within idle_ns nothing changes */
	put(b, 1, "early", 10);
	put(b, 2, "late", 5);
	assert_int_equal(comm_series__update(s, b, 1050), 0);
	assert_non_null(row(s, "early"));
	assert_int_equal(calls_of(s, NULL), 5);
	/* past idle_ns: early's slot goes to the busiest newcomer */
	put(c, 1, "early", 10);
	put(c, 2, "late", 25);
	assert_int_equal(comm_series__update(s, c, 1200), 0);
	assert_null(row(s, "early"));
	assert_int_equal(calls_of(s, "late"), 20); /* from its promotion */
	assert_int_equal(comm_series__evicted(s), 1);
	comm_series__free(s);
	model_free(a);
	model_free(b);
	model_free(c);
}

static void test_too_many_names_at_once(void **state)
{
	struct comm_series_opts o = { .max_series = 2, .max_pending = 3 };
	struct comm_series *s;
	struct sc_model *a = model_new();
	char name[16];

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	for (uint32_t i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		put(a, 100 + i, name, 1 + i);
	}
	assert_int_equal(comm_series__update(s, a, 1), 0);
	/* nothing lost, at most two series */
	assert_int_equal(sum_calls(s), 50 * 51 / 2);
	{
		size_t n;

		comm_series__rows(s, &n);
		assert_int_equal(n, 3);
	}
	/* 3 names fit the pending table, one of them folded at settle;
	 * the other 47 went straight to other: one count each
	 */
	assert_int_equal(comm_series__folded(s), 48);
	comm_series__free(s);
	model_free(a);
}

/* More names than the pending table holds, each borne by several live
 * and exited processes: folded counts names, not processes, once per
 * update; a name that has a series keeps getting its growth.
 */
static void test_folded_counts_names_once(void **state)
{
	struct comm_series_opts o = { .max_series = 1, .max_pending = 2 };
	struct comm_series *s;
	struct sc_model *a = model_new(), *ex = model_new(), *b = model_new();
	char name[16];
	uint32_t pid = 100;

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	/* update 1: "keep" gets the one series */
	put(a, 1, "keep", 1000);
	assert_int_equal(comm_series__update(s, a, 1), 0);
	assert_int_equal(calls_of(s, "keep"), 1000);
	assert_int_equal(comm_series__folded(s), 0);
	/* between updates: 10 names on 4 exited processes each */
	for (uint32_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		for (int j = 0; j < 4; j++)
			put(ex, pid++, name, 1);
	}
	comm_series__fold(s, ex);
	/* update 2: the same 10 names on 3 live processes each, after the
	 * pending table is full; "keep" grew by 5 and comes last
	 */
	for (uint32_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		for (int j = 0; j < 3; j++)
			put(b, pid++, name, 1);
	}
	put(b, 1, "keep", 1005);
	assert_int_equal(comm_series__update(s, b, 2), 0);
	/* n0 and n1 took the pending slots and were folded at settle, n2..n9
	 * went straight to other: 10 names, however many processes
	 */
	assert_int_equal(comm_series__folded(s), 10);
	assert_int_equal(calls_of(s, "keep"), 1005);
	assert_int_equal(calls_of(s, NULL), 10 * 7);
	assert_int_equal(sum_calls(s), 1005 + 70);
	/* update 3: the same names again are counted again, once each */
	model_free(b);
	b = model_new();
	pid = 100 + 40;
	for (uint32_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		for (int j = 0; j < 3; j++)
			put(b, pid++, name, 2);
	}
	assert_int_equal(comm_series__update(s, b, 3), 0);
	assert_int_equal(comm_series__folded(s), 20);
	assert_int_equal(sum_calls(s), 1005 + 70 + 30);
	comm_series__free(s);
	model_free(a);
	model_free(ex);
	model_free(b);
}

/* Many updates with churn: counters only grow, memory follows the live. */
static void test_monotonic_under_churn(void **state)
{
	struct comm_series_opts o = { .max_series = 3, .idle_ns = 5 };
	struct comm_series *s;
	uint64_t last_other = 0, expect_total = 0;
	static const char *names[] = { "a", "b", "c", "d", "e" };

	(void)state;
	assert_int_equal(comm_series__new(&s, &o), 0);
	for (uint32_t round = 1; round <= 200; round++) {
		struct sc_model *snap = model_new(), *ex = model_new();
		const struct comm_series_row *r;
		size_t n;

		/* two live processes per round, one of them new; the
		 * previous round's new one exits with 3 more calls
		 */
		if (round > 1) {
			put(ex, round - 1, names[(round - 1) % 5], round + 2);
			expect_total += 3;
			comm_series__fold(s, ex);
		}
		put(snap, 100000, "steady", round * 2);
		put(snap, round, names[round % 5], round);
		expect_total += 2 + round;
		assert_int_equal(comm_series__update(s, snap, round), 0);
		assert_int_equal(sum_calls(s), expect_total - 0);
		r = comm_series__rows(s, &n);
		assert_true(n <= 4);
		assert_true(r[n - 1].other);
		assert_true(r[n - 1].c.calls >= last_other);
		last_other = r[n - 1].c.calls;
		assert_true(comm_series__tracked(s) <= 2);
		model_free(snap);
		model_free(ex);
	}
	comm_series__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rename_does_not_go_backwards),
		cmocka_unit_test(test_on_cpu_never_goes_back),
		cmocka_unit_test(test_exit_is_attributed_once),
		cmocka_unit_test(test_top_k_and_other),
		cmocka_unit_test(test_idle_series_give_their_slot_up),
		cmocka_unit_test(test_too_many_names_at_once),
		cmocka_unit_test(test_folded_counts_names_once),
		cmocka_unit_test(test_monotonic_under_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

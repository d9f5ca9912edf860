// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counts by process (collect/proc_counts.c), against a plain array: adds
 * to a process sum, a process taken out gives its sums and is gone, and
 * every other one stays findable with its own, through growth and many
 * takes in a random order (each take shifts its run back).
 */
#include "collect/proc_counts.h"
#include "unit.h"

#define NPROCS 3000

struct ref {
	struct sc_proc_key k;
	uint64_t calls, bytes;
	bool gone;
};

static struct sc_proc_key key_of(unsigned int i)
{
	/* pids reused: the same tgid under several start times and tags */
	struct sc_proc_key k = { .tgid = 100 + i % 700,
				 .cgtag = i % 3,
				 .start_ns = 1000000ULL * (i / 700) };

	return k;
}

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static int visit(void *ctx, const struct sc_proc_key *k,
		 const struct sc_counts *c)
{
	struct ref *r = ctx;

	for (unsigned int i = 0; i < NPROCS; i++) {
		if (r[i].k.tgid == k->tgid && r[i].k.cgtag == k->cgtag &&
		    r[i].k.start_ns == k->start_ns) {
			CHECK(!r[i].gone, "process %u visited once, not taken",
			      i);
			CHECK(c->calls == r[i].calls && c->bytes == r[i].bytes,
			      "process %u's sums", i);
			r[i].gone = true; /* (visited) */
			return 0;
		}
	}
	fail_msg("a process never added visited");
	return -1;
}

static void test_add_take(void **state)
{
	struct proc_counts *t = proc_counts__new();
	struct ref *r = calloc(NPROCS, sizeof(*r));
	unsigned int seed = 7, left = NPROCS;
	struct sc_counts c;

	(void)state;
	assert_non_null(t);
	assert_non_null(r);
	for (unsigned int n = 0; n < 4 * NPROCS; n++) {
		unsigned int i = n < NPROCS ? n : rnd(&seed) % NPROCS;
		struct sc_counts add = { .calls = 1 + n % 5, .bytes = n };

		r[i].k = key_of(i);
		r[i].calls += add.calls;
		r[i].bytes += add.bytes;
		assert_int_equal(proc_counts__add(t, &r[i].k, &add), 0);
	}
	CHECK(proc_counts__n(t) == NPROCS, "%zu processes", proc_counts__n(t));
	/* two thirds taken out, in a random order */
	for (unsigned int n = 0; n < 2 * NPROCS; n++) {
		unsigned int i = rnd(&seed) % NPROCS;
		bool had = proc_counts__take(t, &r[i].k, &c);

		CHECK(had == !r[i].gone, "process %u: taken once", i);
		if (had) {
			CHECK(c.calls == r[i].calls && c.bytes == r[i].bytes,
			      "process %u's sums taken", i);
			r[i].gone = true;
			left--;
		}
	}
	CHECK(proc_counts__n(t) == left, "%zu left, not %u", proc_counts__n(t),
	      left);
	for (unsigned int i = 0; i < NPROCS; i++) {
		struct sc_counts z = { 0 };

		if (r[i].gone)
			continue;
		/* findable: a zero add keeps the count of processes */
		assert_int_equal(proc_counts__add(t, &r[i].k, &z), 0);
	}
	CHECK(proc_counts__n(t) == left, "every one left still found");
	/* each visited once with its sums (the taken ones marked gone) */
	assert_int_equal(proc_counts__each(t, visit, r), 0);
	for (unsigned int i = 0; i < NPROCS; i++)
		CHECK(r[i].gone, "process %u visited or taken", i);
	proc_counts__free(t);
	free(r);
}

static void test_empty(void **state)
{
	struct proc_counts *t = proc_counts__new();
	struct sc_proc_key k = { .tgid = 1 };
	struct sc_counts c;

	(void)state;
	assert_non_null(t);
	CHECK(!proc_counts__take(t, &k, &c), "nothing to take");
	CHECK(proc_counts__n(t) == 0, "empty");
	proc_counts__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_take),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

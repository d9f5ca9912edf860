// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What was lost and why (render/drops.c, issue #19): "full" only when the
 * map said so (E2BIG), any other errno by its name; the same words in the
 * table's first line and the warning; JSON's and Prometheus' keys; the
 * failures' interval deltas.
 */
#include "unit.h"

#include <errno.h>

#include "model/model.h"
#include "render/drops.h"

static char *sentence(const struct sc_model_meta *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	drops_sentence(f, m);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void check_sentence(const struct sc_model_meta *m, const char *want,
			   int line)
{
	char *got = sentence(m);

	if (strcmp(got, want))
		fail_msg("line %d: got\n  %s\nwant\n  %s", line, got, want);
	free(got);
}

static void test_full_is_full(void **state)
{
	struct sc_model_meta m = {};

	(void)state;
	m.drops[SC_DROP_PROC_INFO] = 2;
	model_map_fail_add(&m, SC_MAP_PROCS, E2BIG, 2);
	check_sentence(&m,
		       "2 processes have no name (process map full: raise "
		       "--max-procs)",
		       __LINE__);
}

static void test_other_errno_is_not_full(void **state)
{
	struct sc_model_meta m = {};

	(void)state;
	m.drops[SC_DROP_PROC_INFO] = 2;
	model_map_fail_add(&m, SC_MAP_PROCS, EBUSY, 3);
	model_map_fail_add(&m, SC_MAP_PROCS, ENOMEM, 1);
	check_sentence(&m,
		       "2 processes have no name (adding to the procs map "
		       "failed: EBUSY x3, ENOMEM x1)",
		       __LINE__);
	m.unattributed = 5;
	model_map_fail_add(&m, SC_MAP_STATS, ENOMEM, 5);
	check_sentence(&m,
		       "2 processes have no name (adding to the procs map "
		       "failed: EBUSY x3, ENOMEM x1); 5 calls are counted in "
		       "the merged processes, not in their own (adding to the "
		       "stats map failed: ENOMEM x5); the totals are exact",
		       __LINE__);
}

static void test_failures_without_a_loss_are_said(void **state)
{
	struct sc_model_meta m = {};
	struct sc_model *model = model_new();

	(void)state;
	model_map_fail_add(&m, SC_MAP_THREADS, ENOMEM, 4);
	check_sentence(&m, "map updates failed (threads map: ENOMEM x4)",
		       __LINE__);
	model->meta = m;
	CHECK(model_incomplete(model), "a failed update makes it incomplete");
	model_free(model);
}

/* Issue 42: a cgroup whose path was not kept is named by its id. */
static void test_unnamed_cgroups(void **state)
{
	struct sc_model_meta prev = {}, cur = {}, d;
	struct sc_model *model = model_new();

	(void)state;
	cur.cgroups_unnamed = 2;
	check_sentence(&cur,
		       "2 cgroups are named by their id only (removed before "
		       "their path was kept)",
		       __LINE__);
	model->meta = cur;
	CHECK(model_incomplete(model), "an unnamed cgroup is a loss");
	model_free(model);
	prev.cgroups_unnamed = 2;
	cur.cgroups_unnamed = 5;
	model_meta_delta(&d, &cur, &prev);
	CHECK(d.cgroups_unnamed == 3, "interval delta: %" PRIu64,
	      d.cgroups_unnamed);
}

static void test_nothing_lost_says_nothing(void **state)
{
	struct sc_model_meta m = {};
	char *s = sentence(&m);

	(void)state;
	CHECK(!*s, "empty, not '%s'", s);
	free(s);
}

static void test_keys_and_counts(void **state)
{
	static const char *const keys[DROP_REASONS] = {
		"calls",	"untimed_calls", "process_info",
		"errno_detail", "cgroup_moves",	 "unattributed_calls",
		"cgroup_names"
	};
	struct sc_model_meta m = {};

	(void)state;
	for (int i = 0; i < SC_DROP_COUNT; i++)
		m.drops[i] = 10 + (uint64_t)i;
	m.unattributed = 99;
	m.cgroups_unnamed = 3;
	for (int r = 0; r < DROP_REASONS; r++)
		assert_string_equal(drop_key(r), keys[r]);
	assert_int_equal(drop_count(&m, DROP_CALLS), 10);
	assert_int_equal(drop_count(&m, DROP_ERRNO_DETAIL), 13);
	assert_int_equal(drop_count(&m, DROP_CGROUP_MOVE), 14);
	assert_int_equal(drop_count(&m, DROP_UNATTRIBUTED), 99);
	assert_int_equal(drop_count(&m, DROP_CGROUP_NAMES), 3);
	assert_string_equal(drop_map_name(SC_MAP_PROCS), "procs");
}

static void test_fail_table_and_delta(void **state)
{
	struct sc_model_meta prev = {}, cur = {}, d;

	(void)state;
	model_map_fail_add(&prev, SC_MAP_STATS, EBUSY, 2);
	model_map_fail_add(&cur, SC_MAP_STATS, EBUSY, 5);
	model_map_fail_add(&cur, SC_MAP_PROCS, E2BIG, 1);
	model_map_fail_add(&cur, SC_MAP_STATS, EBUSY, 1); /* same kind: adds */
	assert_int_equal(cur.nfails, 2);
	cur.count_only = true;
	cur.duration_ns = 5;
	model_meta_delta(&d, &cur, &prev);
	assert_int_equal(d.nfails, 2);
	CHECK(d.fails[0].map == SC_MAP_STATS && d.fails[0].err == EBUSY &&
		      d.fails[0].count == 4,
	      "stats EBUSY: 6 - 2");
	CHECK(d.fails[1].map == SC_MAP_PROCS && d.fails[1].count == 1,
	      "procs E2BIG: new");
	CHECK(d.count_only && d.duration_ns == 5, "the rest is cur's");
	/* more kinds than slots: the last slot takes the rest */
	for (uint32_t e = 1; e <= SC_MAP_FAILS_MAX + 5; e++)
		model_map_fail_add(&d, SC_MAP_ERRNOS, e, 1);
	assert_int_equal(d.nfails, SC_MAP_FAILS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_is_full),
		cmocka_unit_test(test_other_errno_is_not_full),
		cmocka_unit_test(test_failures_without_a_loss_are_said),
		cmocka_unit_test(test_unnamed_cgroups),
		cmocka_unit_test(test_nothing_lost_says_nothing),
		cmocka_unit_test(test_keys_and_counts),
		cmocka_unit_test(test_fail_table_and_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

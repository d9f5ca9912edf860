// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/intern.c: strings to their index (pprof's string table, scprof
 * diff's syscalls and groups by key).
 */
#include "unit.h"
#include "util/intern.h"

static void test_take_and_find(void **state)
{
	struct strtab t = {};

	(void)state;
	CHECK(strtab_find(&t, "a") == -1, "empty: not found");
	CHECK(strtab_take(&t, strdup("a")) == 0, "the first is 0");
	CHECK(strtab_take(&t, strdup("b")) == 1, "the next is 1");
	CHECK(strtab_take(&t, strdup("a")) == 0, "again: its index");
	CHECK(t.n == 2, "two strings: %zu", t.n);
	CHECK(strtab_find(&t, "a") == 0 && strtab_find(&t, "b") == 1,
	      "found at their indexes");
	CHECK(strtab_find(&t, "c") == -1 && strtab_find(&t, "") == -1,
	      "others not found");
	CHECK(strtab_take(&t, NULL) < 0, "a failed copy: -ENOMEM");
	strtab_free(&t);
}

/* Enough strings to grow the table several times: each keeps its index. */
static void test_grows(void **state)
{
	enum { N = 5000 };
	struct strtab t = {};
	char buf[32];

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "key %d", i);
		CHECK(strtab_take(&t, strdup(buf)) == i, "new %d", i);
	}
	for (int i = N - 1; i >= 0; i--) {
		snprintf(buf, sizeof(buf), "key %d", i);
		CHECK(strtab_find(&t, buf) == i, "found %d", i);
		CHECK(strtab_take(&t, strdup(buf)) == i, "taken again %d", i);
	}
	CHECK(t.n == N, "no string twice: %zu", t.n);
	strtab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_and_find),
		cmocka_unit_test(test_grows),
	};

	unit_init();
	return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}

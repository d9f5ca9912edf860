// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The column table (render/columns.c, issue #22): every column complete,
 * names unique, cells formatted as strace prints them, --count-only's
 * list of untimed columns read from the table.
 */
#include "unit.h"

#include <errno.h>
#include <string.h>

#include "render/columns.h"

/* Every name of every column finds that column, and only it. */
static void test_names_find_their_column(void **state)
{
	(void)state;
	for (int c = 0; c < COL_COUNT; c++) {
		const char *p = column_of(c)->names;

		assert_non_null(p);
		while (*p) {
			size_t len = strcspn(p, " ");
			enum report_col got = COL_COUNT;

			assert_int_equal(column_lookup(p, len, &got), 0);
			if ((int)got != c)
				fail_msg("'%.*s' finds column %d, not %d",
					 (int)len, p, got, c);
			p += len + (p[len] == ' ');
		}
	}
	enum report_col c;

	assert_int_equal(column_lookup("seconds", 7, &c), 0);
	assert_int_equal(c, COL_TIME_TOTAL);
	assert_int_equal(column_lookup("second", 6, &c), -EINVAL);
	assert_int_equal(column_lookup("", 0, &c), -EINVAL);
}

/* A column with a header has a format; a keyed or timed one a figure. */
static void test_every_column_is_complete(void **state)
{
	(void)state;
	for (int c = 1; c < COL_COUNT; c++) {
		const struct column *col = column_of(c);

		if (!col->header[0] || col->format == CF_NONE)
			fail_msg("column %d: no header or format", c);
		if ((col->key || col->timed) && !col->value)
			fail_msg("column %d: keyed or timed without a figure",
				 c);
		if (col->csv && !col->key)
			fail_msg("column %d: a CSV column without a key", c);
	}
	/* the JSON/CSV figures are keyed, each once */
	for (const enum report_col *a = column_figures; *a; a++) {
		assert_non_null(column_of(*a)->key);
		for (const enum report_col *b = a + 1; *b; b++)
			assert_int_not_equal(*a, *b);
	}
	assert_ptr_equal(column_of(COL_COUNT + 3), column_of(COL_NONE));
}

static void test_cells_as_strace_prints_them(void **state)
{
	struct sc_row r = { .nr = 0 };
	struct row_view v = { .row = &r, .name = "read" };
	struct cell_ctx ctx = { .table_ns = 4000000, .rate_ns = 2000000000 };
	char buf[64];

	(void)state;
	r.st.calls = 10;
	r.st.errors = 0;
	r.st.total_ns = 1000000;
	r.st.bytes = 4096;
	v.avg_ns = 100000;
	v.p99_ns = 1234567;
	assert_string_equal(column_cell(buf, sizeof(buf), COL_TIME_PCT, &v,
					false, &ctx),
			    "25.00");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_TIME_PCT, &v,
					true, &ctx),
			    "100.00");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_TIME_TOTAL, &v,
					false, &ctx),
			    "0.001000");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_TIME_AVG, &v,
					false, &ctx),
			    "100");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_P99, &v, false,
					&ctx),
			    "1234.567");
	/* strace leaves no errors blank */
	assert_string_equal(
		column_cell(buf, sizeof(buf), COL_ERRORS, &v, false, &ctx), "");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_RATE, &v, false,
					&ctx),
			    "5.0");
	assert_string_equal(column_cell(buf, sizeof(buf), COL_NAME, &v, true,
					&ctx),
			    "total");
	/* bytes only where a return value counts bytes; always in totals */
	assert_string_equal(
		column_cell(buf, sizeof(buf), COL_BYTES, &v, false, &ctx), "");
	v.has_bytes = true;
	assert_string_equal(column_cell(buf, sizeof(buf), COL_BYTES, &v, false,
					&ctx),
			    "4096");
	assert_int_equal(view_value(&v, COL_RATE), 10);
}

static void test_untimed_names_for_count_only(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(column_names_list(false, buf, sizeof(buf)),
			    "calls, errors, name, bytes or rate");
	assert_non_null(
		strstr(column_names_list(true, buf, sizeof(buf)), "avg-time"));
	assert_null(strstr(buf, "calls"));
	/* a short buffer is cut, never overrun */
	assert_true(strlen(column_names_list(false, buf, 8)) < 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_find_their_column),
		cmocka_unit_test(test_every_column_is_complete),
		cmocka_unit_test(test_cells_as_strace_prints_them),
		cmocka_unit_test(test_untimed_names_for_count_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

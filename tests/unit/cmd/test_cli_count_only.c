// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* -C/--count-only on the command line: its default table, and the options
 * that need times, refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/cmd_profile_args.h"
#include "render/report.h"

#define PARSE(o, ...)                                                          \
	({                                                                     \
		char *argv_[] = { "scprof", __VA_ARGS__, NULL };               \
		cli_parse_profile((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, \
				  argv_, (o));                                 \
	})

static void test_default_table(void **state)
{
	struct profile_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-C", "--", "true"), 0);
	assert_true(o.count_only);
	assert_int_equal(o.report.sort, COL_CALLS);
	assert_int_equal(o.report.cols[0], COL_CALLS);
	assert_int_equal(o.report.cols[1], COL_ERRORS);
	assert_int_equal(o.report.cols[2], COL_NAME);
	assert_int_equal(o.report.cols[3], COL_NONE);
	cli_free_profile(&o);
}

static void test_long_option_and_choices_kept(void **state)
{
	struct profile_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--count-only", "-U", "bytes,calls", "-S",
			       "errors", "-p", "1"),
			 0);
	assert_true(o.count_only);
	assert_int_equal(o.report.sort, COL_ERRORS);
	assert_int_equal(o.report.cols[0], COL_BYTES);
	assert_int_equal(o.report.cols[1], COL_CALLS);
	cli_free_profile(&o);
}

static void test_without_count_only_unchanged(void **state)
{
	struct profile_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--", "true"), 0);
	assert_false(o.count_only);
	assert_int_equal(o.report.sort, COL_TIME_TOTAL);
	assert_int_equal(o.report.cols[0], COL_TIME_PCT);
	cli_free_profile(&o);
}

static void test_timed_options_refused(void **state)
{
	struct profile_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-C", "-H", "true"), EXIT_USAGE);
	cli_free_profile(&o);
	assert_int_equal(PARSE(&o, "-C", "-U", "calls,p99", "true"),
			 EXIT_USAGE);
	cli_free_profile(&o);
	assert_int_equal(PARSE(&o, "-C", "-U", "total-time", "true"),
			 EXIT_USAGE);
	cli_free_profile(&o);
	assert_int_equal(PARSE(&o, "-C", "-S", "time", "true"), EXIT_USAGE);
	cli_free_profile(&o);
	assert_int_equal(PARSE(&o, "-S", "max-time", "-C", "true"), EXIT_USAGE);
	cli_free_profile(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_table),
		cmocka_unit_test(test_long_option_and_choices_kept),
		cmocka_unit_test(test_without_count_only_unchanged),
		cmocka_unit_test(test_timed_options_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

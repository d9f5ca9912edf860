// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* -C/--count-only on the command line: the options that need times,
 * refused (its default table is the plan's: test_plan.c).
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
		cmocka_unit_test(test_timed_options_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Demangling (util/demangle.c, issue #20): C++, Rust legacy and v0 names
 * as people read them, without parameters or Rust's hash; C and Go names
 * and what only looks mangled are left alone.
 */
#include "unit.h"

#include "util/demangle.h"

static void check(const char *sym, const char *want, int line)
{
	char *got = demangle(sym);

	if (!want && got)
		fail_msg("line %d: %s became %s", line, sym, got);
	if (want && (!got || strcmp(got, want)))
		fail_msg("line %d: %s became %s, not %s", line, sym,
			 got ? got : "(nothing)", want);
	free(got);
}

#define CHECK_DM(sym, want) check(sym, want, __LINE__)

static void test_cxx(void **state)
{
	(void)state;
	CHECK_DM("_ZN4shop6LedgerIlE10post_entryEl",
		 "shop::Ledger<long>::post_entry");
	/* a clone made by the optimizer: its function's name */
	CHECK_DM("_ZN4shop6LedgerIlE10post_entryEl.isra.0",
		 "shop::Ledger<long>::post_entry");
	CHECK_DM("_ZNSt6vectorIiSaIiEE9push_backERKi",
		 "std::vector<int, std::allocator<int> >::push_back");
	CHECK_DM("_Z3fooi", "foo");
}

static void test_rust(void **state)
{
	(void)state;
	/* legacy: the hash goes */
	CHECK_DM("_ZN4core3fmt5write17h9f2d8e1fd7e1f7c6E", "core::fmt::write");
	CHECK_DM("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$"
		 "17h4e5d0f3b1a2c3d4eE",
		 "std::rt::lang_start::{{closure}}");
	/* v0 */
	CHECK_DM("_RNvCskwGfYPst2Cb_3foo16example_function",
		 "foo::example_function");
}

static void test_left_alone(void **state)
{
	(void)state;
	CHECK_DM("main", NULL);
	CHECK_DM("write", NULL);
	CHECK_DM("main.coldWrite", NULL); /* Go */
	CHECK_DM("JS:^hotWriterJs", NULL);
	CHECK_DM("_Zgarbage", NULL);
	CHECK_DM("_R", NULL);
	CHECK_DM("", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/strlist.c: the comma lists of -p, -U and --loops. */
#include <errno.h>

#include "unit.h"
#include "util/strlist.h"

/* The items of s joined by '|', each as "[item]". */
static void walk(const char *s, char *out, size_t size)
{
	const char *pos = s, *item;
	size_t len, off = 0;

	out[0] = '\0';
	while (strlist_next(&pos, &item, &len))
		off += (size_t)snprintf(out + off, size - off, "%s[%.*s]",
					off ? "|" : "", (int)len, item);
}

static void test_items(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "a", "[a]" },
		{ "a,bc,def", "[a]|[bc]|[def]" },
		{ "", "[]" },
		{ ",", "[]|[]" },
		{ "a,,b", "[a]|[]|[b]" },
		{ "a,", "[a]|[]" },
		{ ",a", "[]|[a]" },
		{ " a , b", "[ a ]|[ b]" },
	};
	char got[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		walk(cases[i].in, got, sizeof(got));
		CHECK_STR(got, cases[i].want, cases[i].in);
	}
}

static void test_item_pointers(void **state)
{
	const char *s = "12,345", *pos = s, *item;
	size_t len;

	(void)state;
	CHECK(strlist_next(&pos, &item, &len) && item == s && len == 2,
	      "first item");
	CHECK(strlist_len(item) == 2, "strlist_len of the first");
	CHECK(strlist_next(&pos, &item, &len) && item == s + 3 && len == 3,
	      "second item");
	CHECK(!strlist_next(&pos, &item, &len), "no third item");
	CHECK(!strlist_next(&pos, &item, &len), "still none");
}

static void test_copy(void **state)
{
	char buf[4] = "xyz";

	(void)state;
	CHECK(strlist_copy("abc,d", 3, buf, sizeof(buf)) == 0 &&
		      !strcmp(buf, "abc"),
	      "fits exactly");
	CHECK(strlist_copy("abcd", 4, buf, sizeof(buf)) == -ERANGE &&
		      !strcmp(buf, "abc"),
	      "too long: buf untouched");
	CHECK(strlist_copy("", 0, buf, sizeof(buf)) == 0 && !*buf, "empty");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_item_pointers),
		cmocka_unit_test(test_copy),
	};

	unit_init();
	return cmocka_run_group_tests_name("strlist", tests, NULL, NULL);
}

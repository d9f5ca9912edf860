// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/model/trace_set.c: strace's -e trace=SET forms, spot-checked
 * against strace 6.1's tables (the e2e tests compare whole classes with
 * strace itself), and the errors of bad sets.
 */
#include <errno.h>

#include "model/names.h"
#include "model/trace_set.h"
#include "scprof.h"
#include "unit.h"

static struct trace_set set;
static char err[256];

static void parse_ok_at(int line, const char *spec)
{
	int rc = trace_set_parse(&set, spec, err, sizeof(err));

	CHECK_AT(line, rc == 0, "'%s' rejected: %s", spec, err);
}
#define parse_ok(s) parse_ok_at(__LINE__, s)

static bool has(unsigned int abi, const char *name)
{
	int nr = names_syscall_nr(abi, name);

	return nr >= 0 && trace_set_has(&set, abi, (unsigned int)nr);
}

static unsigned int members(unsigned int abi)
{
	unsigned int n = 0;

	for (unsigned int nr = 0; nr < SC_NR_MAX; nr++)
		n += trace_set_has(&set, abi, nr);
	return n;
}

static void test_names_and_numbers(void **state)
{
	(void)state;
	parse_ok("read,write");
	CHECK(set.on && !set.beyond, "a filter on");
	CHECK(has(SC_ABI_NATIVE, "read") && has(SC_ABI_NATIVE, "write"),
	      "read and write");
	CHECK(has(SC_ABI_COMPAT, "read") && has(SC_ABI_X32, "read"),
	      "every ABI by name");
	CHECK(members(SC_ABI_NATIVE) == 2, "only those: %u",
	      members(SC_ABI_NATIVE));
	parse_ok("39");
	CHECK(has(SC_ABI_NATIVE, "getpid") && has(SC_ABI_COMPAT, "mkdir"),
	      "a number in every ABI (39: getpid, and mkdir in i386)");
	parse_ok("getpid@32");
	CHECK(has(SC_ABI_COMPAT, "getpid") && !has(SC_ABI_NATIVE, "getpid"),
	      "@32: the 32-bit table only");
	parse_ok("?nosuchcall,read");
	CHECK(members(SC_ABI_NATIVE) == 1, "? ignores what matches nothing");
}

static void test_classes(void **state)
{
	(void)state;
	parse_ok("%network");
	CHECK(has(SC_ABI_NATIVE, "socket") && has(SC_ABI_NATIVE, "sendmsg") &&
		      !has(SC_ABI_NATIVE, "read"),
	      "%%network");
	parse_ok("%%stat");
	CHECK(has(SC_ABI_NATIVE, "stat") && has(SC_ABI_NATIVE, "newfstatat") &&
		      has(SC_ABI_NATIVE, "statx") &&
		      has(SC_ABI_COMPAT, "stat64") &&
		      !has(SC_ABI_NATIVE, "statfs"),
	      "%%%%stat: every stat-like call");
	parse_ok("%stat");
	CHECK(has(SC_ABI_NATIVE, "stat") && !has(SC_ABI_NATIVE, "newfstatat"),
	      "%%stat is stat only");
	parse_ok("%pure");
	CHECK(has(SC_ABI_NATIVE, "getpid") && has(SC_ABI_NATIVE, "getppid") &&
		      !has(SC_ABI_NATIVE, "read"),
	      "%%pure");
	parse_ok("%clock");
	CHECK(has(SC_ABI_NATIVE, "clock_gettime") &&
		      has(SC_ABI_COMPAT, "clock_gettime64"),
	      "%%clock");
	parse_ok("%FILE");
	CHECK(has(SC_ABI_NATIVE, "openat") && !has(SC_ABI_NATIVE, "read"),
	      "classes ignore case, as strace's");
	parse_ok("file");
	CHECK(has(SC_ABI_NATIVE, "openat"), "legacy class names");
}

static void test_regex_and_negation(void **state)
{
	(void)state;
	parse_ok("/^(open|close)$");
	CHECK(has(SC_ABI_NATIVE, "open") && has(SC_ABI_NATIVE, "close") &&
		      !has(SC_ABI_NATIVE, "openat") &&
		      members(SC_ABI_NATIVE) == 2,
	      "an anchored regex");
	parse_ok("!read");
	CHECK(set.on && set.beyond && !has(SC_ABI_NATIVE, "read") &&
		      has(SC_ABI_NATIVE, "write") &&
		      members(SC_ABI_NATIVE) == SC_NR_MAX - 1,
	      "! negates the whole set, unknown numbers too");
	parse_ok("!!read");
	CHECK(members(SC_ABI_NATIVE) == 1, "two ! cancel");
	parse_ok("all");
	CHECK(!set.on, "all needs no filter");
	parse_ok("!none");
	CHECK(!set.on, "!none is all");
	parse_ok("none");
	CHECK(set.on && members(SC_ABI_NATIVE) == 0 && !set.beyond, "none");
}

static void bad_at(int line, const char *spec, const char *msg)
{
	int rc = trace_set_parse(&set, spec, err, sizeof(err));

	CHECK_AT(line, rc == -EINVAL && strstr(err, msg),
		 "'%s': rc %d, '%s', want '%s'", spec, rc, err, msg);
	CHECK_AT(line, !strchr(err, '\n'), "one line: '%s'", err);
}
#define bad(s, m) bad_at(__LINE__, s, m)

static void test_errors(void **state)
{
	(void)state;
	bad("nosuch", "invalid system call 'nosuch'");
	bad("read,nosuch", "invalid system call 'nosuch'");
	bad("%bogus", "invalid system call '%bogus'");
	bad("/a(b", "invalid regex 'a(b'");
	bad("read@128", "incorrect personality designator '128'");
	bad("", "empty syscall set");
	bad("!", "empty syscall set");
	bad("read,", "empty syscall in");
	bad(",read", "empty syscall in");
	bad("read,,write", "empty syscall in");
	bad("99999", "invalid system call '99999'");
}

static void test_exit_bits(void **state)
{
	uint32_t out[SC_ABI_COUNT][SC_TRACE_WORDS];
	int ex32 = names_syscall_nr(SC_ABI_COMPAT, "execve");
	int rd32 = names_syscall_nr(SC_ABI_COMPAT, "read");

	(void)state;
	parse_ok("execve@64");
	trace_set_exit_bits(&set, out);
	CHECK(out[SC_ABI_COMPAT][ex32 / 32] & (1U << (ex32 % 32)),
	      "an exec may return into the 32-bit ABI");
	CHECK(!(out[SC_ABI_COMPAT][rd32 / 32] & (1U << (rd32 % 32))),
	      "nothing else is added");
	parse_ok("read");
	trace_set_exit_bits(&set, out);
	CHECK(!(out[SC_ABI_COMPAT][ex32 / 32] & (1U << (ex32 % 32))),
	      "no exec in the set: the set itself");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_numbers),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_regex_and_negation),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_exit_bits),
	};

	unit_init();
	return cmocka_run_group_tests_name("trace_set", tests, NULL, NULL);
}

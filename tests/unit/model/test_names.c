// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/model/names.c and the tables user/model/gen_names.sh generates from the system
 * headers: spot checks against numbers fixed by the kernel ABI, and round
 * trips over every entry.
 */
#include <errno.h>

#include "model/names.h"
#include "scprof.h"
#include "unit.h"

static void check_name_at(int line, unsigned int abi, unsigned int nr,
			  const char *want)
{
	const char *got = names_syscall(abi, nr);

	CHECK_AT(line, got && !strcmp(got, want),
		 "ABI %u syscall %u is '%s', want '%s'", abi, nr,
		 got ? got : "(null)", want);
}
#define check_name(...) check_name_at(__LINE__, __VA_ARGS__)

static void test_native_table(void **state)
{
	(void)state;
	check_name(SC_ABI_NATIVE, 0, "read");
	check_name(SC_ABI_NATIVE, 1, "write");
	check_name(SC_ABI_NATIVE, 39, "getpid");
	check_name(SC_ABI_NATIVE, 59, "execve");
	check_name(SC_ABI_NATIVE, 60, "exit");
	check_name(SC_ABI_NATIVE, 110, "getppid");
	check_name(SC_ABI_NATIVE, 231, "exit_group");
	check_name(SC_ABI_NATIVE, 257, "openat");
	check_name(SC_ABI_NATIVE, 435, "clone3");
	CHECK(names_syscall_count(SC_ABI_NATIVE) > 435,
	      "native table has %u entries",
	      names_syscall_count(SC_ABI_NATIVE));
}

static void test_compat_table(void **state)
{
	(void)state;
	/* i386 numbers: never the 64-bit table's. */
	check_name(SC_ABI_COMPAT, 0, "restart_syscall");
	check_name(SC_ABI_COMPAT, 1, "exit");
	check_name(SC_ABI_COMPAT, 3, "read");
	check_name(SC_ABI_COMPAT, 11, "execve");
	check_name(SC_ABI_COMPAT, 20, "getpid");
	check_name(SC_ABI_COMPAT, 252, "exit_group");
	CHECK(names_syscall_nr(SC_ABI_COMPAT, "execve") == 11,
	      "i386 execve is 11");
	CHECK(names_syscall_nr(SC_ABI_NATIVE, "execve") == 59,
	      "x86_64 execve is 59");
}

static void test_x32_table(void **state)
{
	(void)state;
	check_name(SC_ABI_X32, 0, "read");
	check_name(SC_ABI_X32, 1, "write");
	/* x32's own entry points live at 512 and above. */
	check_name(SC_ABI_X32, 520, "execve");
	CHECK(names_syscall(SC_ABI_X32, 59) == NULL,
	      "x32 has no execve at the 64-bit number");
}

static void test_unknown_numbers(void **state)
{
	char buf[SC_NAME_LEN];
	const char *s;

	(void)state;
	s = names_syscall_fmt(SC_ABI_NATIVE, 500, buf, sizeof(buf));
	CHECK_STR(s, "syscall_0x1f4", "unknown native number");
	s = names_syscall_fmt(SC_ABI_NATIVE, 0x1c8, buf, sizeof(buf));
	CHECK_STR(s, "syscall_0x1c8", "unknown native number");
	s = names_syscall_fmt(SC_ABI_COMPAT, 0xffff, buf, sizeof(buf));
	CHECK_STR(s, "syscall_0xffff", "unknown compat number");
	s = names_syscall_fmt(SC_ABI_NATIVE, 0xffffffffU, buf, sizeof(buf));
	CHECK_STR(s, "syscall_0xffffffff", "largest number fits SC_NAME_LEN");
	s = names_syscall_fmt(SC_ABI_NATIVE, 59, buf, sizeof(buf));
	CHECK_STR(s, "execve", "known number");
	CHECK(names_syscall(SC_ABI_NATIVE, 100000) == NULL,
	      "far past the table");
	CHECK(names_syscall(SC_ABI_COUNT, 0) == NULL, "unknown ABI");
	CHECK(names_syscall_nr(SC_ABI_NATIVE, "no_such_call") == -1,
	      "unknown name");
	CHECK(names_syscall_nr(SC_ABI_COUNT, "read") == -1, "unknown ABI");
	CHECK(names_syscall_nr(SC_ABI_NATIVE, "") == -1, "empty name");
}

/* Every named number maps back to itself: names are unique per table. */
static void test_roundtrip_every_name(void **state)
{
	(void)state;
	for (unsigned int abi = 0; abi < SC_ABI_COUNT; abi++) {
		unsigned int count = names_syscall_count(abi), named = 0;

		for (unsigned int nr = 0; nr < count; nr++) {
			const char *name = names_syscall(abi, nr);
			int back;

			if (!name)
				continue;
			named++;
			CHECK(*name, "ABI %u syscall %u has an empty name", abi,
			      nr);
			back = names_syscall_nr(abi, name);
			CHECK(back == (int)nr,
			      "ABI %u: '%s' is %u but maps back "
			      "to %d",
			      abi, name, nr, back);
		}
		CHECK(named > 300, "ABI %u table has only %u names", abi,
		      named);
	}
}

static void test_abi_labels(void **state)
{
	(void)state;
	CHECK_STR(names_abi(SC_ABI_NATIVE), "64", "native label");
	CHECK_STR(names_abi(SC_ABI_COMPAT), "32", "compat label");
	CHECK_STR(names_abi(SC_ABI_X32), "x32", "x32 label");
	CHECK(names_abi_title(SC_ABI_NATIVE) == NULL, "native has no title");
	CHECK_STR(names_abi_title(SC_ABI_COMPAT), "32 bit", "strace's title");
	CHECK_STR(names_abi_title(SC_ABI_X32), "x32", "strace's title");
}

static void test_errno_names(void **state)
{
	(void)state;
	CHECK_STR(names_errno(ENOENT), "ENOENT", "errno 2");
	CHECK_STR(names_errno(EPERM), "EPERM", "errno 1");
	CHECK_STR(names_errno(EAGAIN), "EAGAIN", "not its alias EWOULDBLOCK");
	CHECK_STR(names_errno(EDEADLK), "EDEADLK", "not its alias EDEADLOCK");
	CHECK_STR(names_errno(EOPNOTSUPP), "EOPNOTSUPP", "not ENOTSUP");
	CHECK_STR(names_errno(EHWPOISON), "EHWPOISON", "last uapi errno");
	/* Kernel-internal restart codes. */
	CHECK_STR(names_errno(512), "ERESTARTSYS", "errno 512");
	CHECK_STR(names_errno(513), "ERESTARTNOINTR", "errno 513");
	CHECK_STR(names_errno(514), "ERESTARTNOHAND", "errno 514");
	CHECK_STR(names_errno(516), "ERESTART_RESTARTBLOCK", "errno 516");
	CHECK(names_errno(0) == NULL, "errno 0 has no name");
	CHECK(names_errno(-1) == NULL, "negative errno has no name");
	CHECK(names_errno(-ENOENT) == NULL, "negative errno has no name");
	CHECK(names_errno(4095) == NULL, "errno 4095 has no name");
	CHECK(names_errno(1000000) == NULL, "far past the table");
	CHECK(names_errno(300) == NULL, "gap in the table");
}

static void test_io_and_noreturn(void **state)
{
	(void)state;
	CHECK(names_is_io("read") && names_is_io("write"),
	      "read/write are I/O");
	CHECK(names_is_io("pread64") && names_is_io("recvmsg") &&
		      names_is_io("sendfile") && names_is_io("copy_file_range"),
	      "read/write family");
	CHECK(!names_is_io("openat") && !names_is_io("getppid") &&
		      !names_is_io("readlink") && !names_is_io("lseek"),
	      "returns that are not byte counts");
	CHECK(!names_is_io(NULL) && !names_is_io(""), "NULL and empty");
	CHECK(!names_is_io("rea"), "prefix of a name");
	CHECK(names_is_noreturn("exit") && names_is_noreturn("exit_group"),
	      "exit and exit_group never return");
	CHECK(!names_is_noreturn("execve") && !names_is_noreturn("read"),
	      "execve returns on failure and is timed");
	CHECK(!names_is_noreturn(NULL), "NULL");
	/* Every name of the I/O list is a syscall of one of this build's
	 * tables (no typos), but for the two that only other architectures
	 * have.
	 */
	for (const char *const *io = names_io_list(); *io; io++) {
		bool other_arch = !strcmp(*io, "send") || !strcmp(*io, "recv");
		int abi_found = -1;

		for (unsigned int abi = 0; abi < SC_ABI_COUNT; abi++) {
			if (names_syscall_nr(abi, *io) >= 0) {
				abi_found = (int)abi;
				break;
			}
		}
		CHECK(other_arch ? abi_found < 0 : abi_found >= 0,
		      "'%s' is a syscall of this build's tables", *io);
		CHECK(names_is_io(*io), "'%s' is I/O", *io);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_table),
		cmocka_unit_test(test_compat_table),
		cmocka_unit_test(test_x32_table),
		cmocka_unit_test(test_unknown_numbers),
		cmocka_unit_test(test_roundtrip_every_name),
		cmocka_unit_test(test_abi_labels),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_io_and_noreturn),
	};

	unit_init();
	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}

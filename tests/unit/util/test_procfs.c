// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/util/procfs.c: /proc/PID/stat and schedstat parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/procfs.h"

/* A real line (from cat), fields 1 to 52. */
#define STAT_TAIL                                                        \
	" R 14999 14999 5871 0 -1 4194304 101 0 0 0 17 23 0 0 20 0 3 0 " \
	"166195 3133440 418 18446744073709551615 94195857207296 "        \
	"94195857227177 140730534907392 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

static void test_stat_plain(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_int_equal(procfs_parse_stat("15001 (cat)" STAT_TAIL, &st), 0);
	assert_int_equal(st.pid, 15001);
	assert_string_equal(st.comm, "cat");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 14999);
	assert_int_equal(st.utime_ticks, 17);
	assert_int_equal(st.stime_ticks, 23);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(st.starttime_ticks, 166195);
}

/* A name may hold spaces and parentheses: it ends at the last ')'. */
static void test_stat_hostile_name(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_int_equal(procfs_parse_stat("7 (a) S 1 (b) c)" STAT_TAIL, &st),
			 0);
	assert_string_equal(st.comm, "a) S 1 (b) c");
	assert_int_equal(st.utime_ticks, 17);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(procfs_parse_stat("8 ()" STAT_TAIL, &st), 0);
	assert_string_equal(st.comm, "");
}

static void test_stat_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"15001",
		"15001 cat R 1 2",
		"15001 (cat",
		"x (cat)" STAT_TAIL,
		"-3 (cat)" STAT_TAIL,
		"15001 (cat) R 14999 14999", /* cut short */
		"15001 (cat) R x 14999 5871 0 -1 4194304 101 0 0 0 17 23 0 0 "
		"20 0 3 0 166195", /* ppid not a number */
		"15001 (cat) R 1 1 1 0 -1 0 0 0 0 0 -17 23 0 0 20 0 3 0 1",
		NULL,
	};
	struct proc_stat st;

	(void)state;
	for (int i = 0; bad[i]; i++)
		assert_int_equal(procfs_parse_stat(bad[i], &st), -EINVAL);
}

static void test_read_self(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_int_equal(procfs_read_stat(getpid(), &st), 0);
	assert_int_equal(st.pid, getpid());
	assert_true(st.num_threads >= 1);
	assert_int_equal(procfs_tgid(getpid()), getpid());
	/* pid_max is at most 4194304 */
	assert_int_equal(procfs_read_stat(4194305, &st), -ESRCH);
	assert_int_equal(procfs_tgid(4194305), -ESRCH);
}

static void test_self_rss(void **state)
{
	uint64_t rss = procfs_self_rss_bytes();
	uint64_t peak = procfs_self_peak_rss_bytes();

	(void)state;
	assert_true(rss > 0);
	/* the high-water mark is read after the resident size, so not below */
	assert_true(peak >= rss);
	assert_true(peak % 1024 == 0);
}

static void test_schedstat(void **state)
{
	uint64_t run, wait;

	(void)state;
	assert_int_equal(procfs_parse_schedstat("100642963 65759793 301\n",
						&run, &wait),
			 0);
	assert_int_equal(run, 100642963);
	assert_int_equal(wait, 65759793);
	assert_int_equal(procfs_parse_schedstat("12\n", &run, &wait), -EINVAL);
	assert_int_equal(procfs_parse_schedstat("a b c", &run, &wait), -EINVAL);
}

static void test_waits_delta(void **state)
{
	const struct task_wait a[] = { { 10, 100 }, { 11, 50 }, { 12, 7 } };
	/* 10 waited 20 more, 11 is gone, 13 is new, 12 unchanged */
	const struct task_wait b[] = { { 12, 7 }, { 10, 120 }, { 13, 30 } };

	(void)state;
	assert_int_equal(procfs_waits_delta(a, 3, b, 3), 50);
	assert_int_equal(procfs_waits_delta(NULL, 0, b, 3), 157);
	assert_int_equal(procfs_waits_delta(a, 3, NULL, 0), 0);
	/* a counter that went back (a reused tid) adds nothing */
	assert_int_equal(procfs_waits_delta(b, 3, a, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_plain),
		cmocka_unit_test(test_stat_hostile_name),
		cmocka_unit_test(test_stat_malformed),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_self_rss),
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_waits_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof top's frames: rates, error shares, sorting, escaped names. */
#include <errno.h>

#include "unit.h"

#include "render/top_frame.h"

static void put(struct sc_model *m, uint32_t pid, const char *comm, uint32_t nr,
		uint64_t calls, uint64_t errors, uint64_t ns)
{
	struct sc_proc *p = model_proc(m, pid, 1, 0);
	struct sc_stats st = { .calls = calls,
			       .errors = errors,
			       .total_ns = ns * calls };

	st.hist[sc_hist_bucket(ns)] = calls;
	st.min_ns = st.max_ns = ns;
	strncpy(p->comm, comm, SC_COMM_LEN - 1);
	assert_int_equal(model_proc_add(p, 0, nr, &st), 0);
}

static struct sc_model *fixture(void)
{
	struct sc_model *m = model_new();

	put(m, 10, "busy", 110, 2000, 0, 200);	  /* getppid */
	put(m, 10, "busy", 0, 500, 0, 300);	  /* read */
	put(m, 20, "failing", 257, 100, 50, 900); /* openat */
	put(m, 30, "slow", 7, 10, 0, 5000000);	  /* poll */
	put(m, 0, "", 110, 999, 0, 100);	  /* folded aggregate */
	put(m, 40, "\x1b]0;pwn\x07", 39, 1, 0, 100);
	model_finalize(m);
	return m;
}

static void test_rates_and_order(void **state)
{
	struct sc_model *m = fixture();
	struct top_frame fr;

	(void)state;
	/* an interval of half a second */
	assert_int_equal(top_frame_build(m, 500000000, TOP_SORT_CALLS, &fr), 0);
	assert_int_equal(fr.nprocs, 4); /* the pid-0 aggregate is not a row */
	CHECK(fr.procs[0].pid == 10, "busiest first, got %u", fr.procs[0].pid);
	CHECK(fr.procs[0].calls_s == 5000.0, "got %f", fr.procs[0].calls_s);
	CHECK(!strcmp(fr.procs[0].top[0].name, "getppid") &&
		      !strcmp(fr.procs[0].top[1].name, "read"),
	      "top syscalls by calls");
	CHECK(fr.procs[0].ntop == 2, "two syscalls");
	/* the totals count everything, the folded aggregate too */
	CHECK(fr.calls_s == 2.0 * (2000 + 500 + 100 + 10 + 999 + 1), "%f",
	      fr.calls_s);
	top_frame_sort(&fr, TOP_SORT_ERRORS);
	CHECK(fr.procs[0].pid == 20 && fr.procs[0].err_pct == 50.0,
	      "failing first at 50%%");
	CHECK(fr.procs[0].errors_s == 100.0, "%f", fr.procs[0].errors_s);
	top_frame_sort(&fr, TOP_SORT_P99);
	CHECK(fr.procs[0].pid == 30, "slowest p99 first");
	top_frame_sort(&fr, TOP_SORT_TIME);
	/* 10 calls x 5 ms in 0.5 s: 10% of the interval inside syscalls */
	CHECK(fr.procs[0].pid == 30 && fr.procs[0].busy_pct > 9.99 &&
		      fr.procs[0].busy_pct < 10.01,
	      "%f", fr.procs[0].busy_pct);
	top_frame_free(&fr);
	model_free(m);
}

static void test_lines_escape_names_and_limit_rows(void **state)
{
	struct sc_model *m = fixture();
	struct top_frame fr;
	char **lines;
	size_t n;
	bool found = false;

	(void)state;
	assert_int_equal(top_frame_build(m, 1000000000, TOP_SORT_CALLS, &fr),
			 0);
	assert_int_equal(
		top_frame_lines(&fr, TOP_SORT_CALLS, 0, false, &lines, &n), 0);
	assert_int_equal(n, 3 + 4);
	CHECK(strstr(lines[0], "by calls/s") != NULL, "%s", lines[0]);
	CHECK(strstr(lines[0], "keys:") == NULL, "no keys in batch mode");
	for (size_t i = 0; i < n; i++) {
		for (const char *p = lines[i]; *p; p++)
			CHECK((unsigned char)*p >= 0x20 && *p != 0x7f,
			      "control byte in line %zu", i);
		found |= strstr(lines[i], "\\x1b]0;pwn\\x07") != NULL;
		free(lines[i]);
	}
	free(lines);
	CHECK(found, "the hostile name, escaped");
	assert_int_equal(
		top_frame_lines(&fr, TOP_SORT_CALLS, 2, true, &lines, &n), 0);
	assert_int_equal(n, 3 + 2);
	CHECK(strstr(lines[0], "keys:") != NULL, "keys in the live view");
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	top_frame_free(&fr);
	model_free(m);
}

static void test_sort_names_and_keys(void **state)
{
	enum top_sort s = TOP_SORT_CALLS;

	(void)state;
	assert_int_equal(top_sort_parse("p99", &s), 0);
	CHECK(s == TOP_SORT_P99, "-s p99, got %d", s);
	assert_int_equal(top_sort_parse("time", &s), 0);
	CHECK(s == TOP_SORT_TIME, "-s time, got %d", s);
	CHECK(top_sort_parse("Calls", &s) == -EINVAL && s == TOP_SORT_TIME,
	      "names are exact; a bad one leaves the key alone");
	assert_int_equal(top_sort_by_key('e', &s), 0);
	CHECK(s == TOP_SORT_ERRORS, "key e, got %d", s);
	CHECK(top_sort_by_key('q', &s) == -EINVAL && s == TOP_SORT_ERRORS,
	      "q is no sort key");
}

/*
 * WAIT% and BLK%: of the time of the calls that returned in the interval
 * (a call in flight before it, returning in it, counts whole: its flight_ns
 * is negative), with the split measured; dashes without it.
 */
static void test_split_columns(void **state)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats st = { .calls = 10, .total_ns = 1000000 };
	struct top_frame fr;
	char **lines;
	size_t n;

	(void)state;
	strcpy(p->comm, "reader");
	st.hist[sc_hist_bucket(100000)] = 10;
	st.wait_ns = 300000;	/* of 1.5 ms returned: 20% */
	st.blocked_ns = 900000; /* 60% */
	assert_int_equal(model_proc_add(p, 0, 0, &st), 0);
	/* 0.5 ms of it began before the interval */
	p->rows[0].flight_ns = -500000;
	model_finalize(m);
	m->meta.split = true;
	assert_int_equal(top_frame_build(m, 1000000000, TOP_SORT_CALLS, &fr),
			 0);
	CHECK(fr.procs[0].split && fr.procs[0].wait_pct > 19.99 &&
		      fr.procs[0].wait_pct < 20.01 &&
		      fr.procs[0].blk_pct > 59.99 &&
		      fr.procs[0].blk_pct < 60.01,
	      "%f %f", fr.procs[0].wait_pct, fr.procs[0].blk_pct);
	assert_int_equal(
		top_frame_lines(&fr, TOP_SORT_CALLS, 0, false, &lines, &n), 0);
	CHECK(strstr(lines[2], "IN-SYS%  WAIT%  BLK%  TOP SYSCALLS") != NULL,
	      "%s", lines[2]);
	CHECK(strstr(lines[3], "   20.0  60.0  read 10") != NULL, "%s",
	      lines[3]);
	top_frame_lines_free(lines, n);
	top_frame_free(&fr);
	/* per comm, the same figures */
	assert_int_equal(top_frame_build_by(m, 1000000000, TOP_SORT_CALLS,
					    TOP_GROUP_COMM, &fr),
			 0);
	CHECK(fr.nprocs == 1 && fr.procs[0].split &&
		      fr.procs[0].blk_pct > 59.99 &&
		      fr.procs[0].blk_pct < 60.01,
	      "per comm");
	top_frame_free(&fr);
	/* not measured: dashes */
	m->meta.split = false;
	assert_int_equal(top_frame_build(m, 1000000000, TOP_SORT_CALLS, &fr),
			 0);
	CHECK(!fr.procs[0].split, "not measured");
	assert_int_equal(
		top_frame_lines(&fr, TOP_SORT_CALLS, 0, false, &lines, &n), 0);
	CHECK(strstr(lines[3], "      -     -  read 10") != NULL, "%s",
	      lines[3]);
	top_frame_lines_free(lines, n);
	top_frame_free(&fr);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_and_order),
		cmocka_unit_test(test_lines_escape_names_and_limit_rows),
		cmocka_unit_test(test_sort_names_and_keys),
		cmocka_unit_test(test_split_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The plan: each command line, parsed, turned into the collector's and the
 * report's settings. One case a combination of options, with the settings
 * it must give.
 */
#include "unit.h"

#include "cmd/plan.h"

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(a) ((int)(sizeof(a) / sizeof(a[0])) - 1)

/* What a profiler case must come out as. */
struct profile_case {
	char **argv;
	size_t found; /* processes -p found (distinct, live) */
	enum sc_progs progs;
	enum sc_cells cells;
	enum collector_fold fold;
	bool in_flight, fd_types, read_cgid;
	enum sc_key_kind key_kind;
};

static size_t argv_len(char **argv)
{
	size_t n = 0;

	while (argv[n])
		n++;
	return n;
}

/* Parse argv (after "scprof") and plan it, with found processes found. */
static void plan_of(char **argv, size_t found, struct profile_opts *o,
		    struct collector_opts *co, struct report_opts *ro)
{
	char *full[32] = { "scprof" };
	size_t n = argv_len(argv);
	pid_t pids[8] = { 101, 102, 103, 104 };
	struct target_found f = { .pids = pids, .npids = found };

	assert_true(n + 1 < 32);
	memcpy(full + 1, argv, n * sizeof(*argv));
	assert_int_equal(cli_parse_profile((int)n + 1, full, o), 0);
	profile_plan(o, &f, co, ro);
}

static void test_profile_modes(void **state)
{
	const struct profile_case cases[] = {
		/* a command: the one target, the plain table sums */
		{ ARGV("--", "true"), 0, SC_PROGS_FULL, SC_CELLS_ONE_TARGET,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-P", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_ONE_TARGET, COLLECTOR_FOLD_PROCS, true, false, false,
		  SC_KEY_PROCESS },
		{ ARGV("-f", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_AGGREGATE, COLLECTOR_FOLD_TOTAL, true, false, false,
		  SC_KEY_PROCESS },
		{ ARGV("-f", "-P", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false,
		  false, SC_KEY_PROCESS },
		{ ARGV("-f", "--format", "json", "--", "true"), 0,
		  SC_PROGS_FULL, SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS,
		  true, false, false, SC_KEY_PROCESS },
		{ ARGV("-f", "--format", "csv", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false,
		  false, SC_KEY_PROCESS },
		/* the whole system, a cgroup */
		{ ARGV("-a"), 0, SC_PROGS_FULL, SC_CELLS_AGGREGATE,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-a", "-P"), 0, SC_PROGS_FULL, SC_CELLS_PER_PROCESS,
		  COLLECTOR_FOLD_PROCS, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-a", "-C"), 0, SC_PROGS_COUNT_ONLY, SC_CELLS_AGGREGATE,
		  COLLECTOR_FOLD_TOTAL, false, false, false, SC_KEY_PROCESS },
		{ ARGV("--cgroup", "/sys/fs/cgroup"), 0, SC_PROGS_FULL,
		  SC_CELLS_AGGREGATE, COLLECTOR_FOLD_TOTAL, true, false, false,
		  SC_KEY_PROCESS },
		/* pids: one process found is the one target */
		{ ARGV("-p", "101"), 1, SC_PROGS_FULL, SC_CELLS_ONE_TARGET,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-p", "101,102"), 2, SC_PROGS_FULL, SC_CELLS_AGGREGATE,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-p", "101,102", "-P"), 2, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false,
		  false, SC_KEY_PROCESS },
		/* two thread ids of one process: one process found */
		{ ARGV("-p", "101,1011"), 1, SC_PROGS_FULL, SC_CELLS_ONE_TARGET,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		{ ARGV("-p", "101", "-f"), 1, SC_PROGS_FULL, SC_CELLS_AGGREGATE,
		  COLLECTOR_FOLD_TOTAL, true, false, false, SC_KEY_PROCESS },
		/* count-only: no calls in flight, no fd kinds */
		{ ARGV("-C", "--", "true"), 0, SC_PROGS_COUNT_ONLY,
		  SC_CELLS_ONE_TARGET, COLLECTOR_FOLD_TOTAL, false, false,
		  false, SC_KEY_PROCESS },
		{ ARGV("-C", "-f", "-P", "--", "true"), 0, SC_PROGS_COUNT_ONLY,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, false, false,
		  false, SC_KEY_PROCESS },
		/* --by: per-process rows, a thread's or a cgroup's */
		{ ARGV("--by", "tid", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false,
		  false, SC_KEY_THREAD },
		{ ARGV("-T", "-a"), 0, SC_PROGS_FULL, SC_CELLS_PER_PROCESS,
		  COLLECTOR_FOLD_PROCS, true, false, false, SC_KEY_THREAD },
		{ ARGV("--by", "unit", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false, true,
		  SC_KEY_PROCESS },
		{ ARGV("--by", "comm", "-a"), 0, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false,
		  false, SC_KEY_PROCESS },
		{ ARGV("--by", "pid,container", "-p", "101"), 1, SC_PROGS_FULL,
		  SC_CELLS_PER_PROCESS, COLLECTOR_FOLD_PROCS, true, false, true,
		  SC_KEY_PROCESS },
		/* fd kinds go with the cells per process or the one target */
		{ ARGV("--fd-types", "--", "true"), 0, SC_PROGS_FULL,
		  SC_CELLS_ONE_TARGET, COLLECTOR_FOLD_TOTAL, true, true, false,
		  SC_KEY_PROCESS },
		{ ARGV("--fd-types", "-a"), 0, SC_PROGS_FULL,
		  SC_CELLS_AGGREGATE, COLLECTOR_FOLD_TOTAL, true, true, false,
		  SC_KEY_PROCESS },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct profile_case *c = &cases[i];
		struct collector_opts co;
		struct report_opts ro;
		struct profile_opts o;

		plan_of(c->argv, c->found, &o, &co, &ro);
		CHECK(co.progs == c->progs, "case %zu (%s): progs %d", i,
		      c->argv[0], co.progs);
		CHECK(co.cells == c->cells, "case %zu (%s): cells %d", i,
		      c->argv[0], co.cells);
		CHECK(co.fold == c->fold, "case %zu (%s): fold %d", i,
		      c->argv[0], co.fold);
		CHECK(co.in_flight == c->in_flight, "case %zu", i);
		CHECK(co.fd_types == c->fd_types, "case %zu", i);
		CHECK(co.read_cgid == c->read_cgid, "case %zu", i);
		CHECK(co.key_kind == c->key_kind, "case %zu", i);
		cli_free_profile(&o);
	}
}

/* Whom: the target's filter and sizes, -p TID's thread, -e, -z. */
static void test_profile_whom(void **state)
{
	pid_t pids[] = { 101 };
	struct target_found f = { .pids = pids, .npids = 1, .only_tid = 1011 };
	char *argv[] = { "scprof",	"-p", "1011",	       "-e",
			 "trace=read",	"-z", "--max-entries", "99",
			 "--max-procs", "77", "--max-exited",  "5",
			 "--stacks=7",	NULL };
	struct collector_opts co;
	struct report_opts ro;
	struct profile_opts o;

	(void)state;
	assert_int_equal(cli_parse_profile(ARGC(argv), argv, &o), 0);
	profile_plan(&o, &f, &co, &ro);
	CHECK(co.mode == SC_FILTER_TGID, "mode %d", co.mode);
	CHECK(co.only_tid == 1011, "only_tid %d", co.only_tid);
	CHECK(co.trace == &o.trace && co.trace->on, "the -e set");
	CHECK(co.status == SC_STATUS_SUCCESS, "status %d", co.status);
	CHECK(co.max_stats == 99 && co.max_procs == 77 && co.max_exited == 5,
	      "sizes %u %u %u", co.max_stats, co.max_procs, co.max_exited);
	CHECK(co.stack_period == 7, "stack period %u", co.stack_period);
	CHECK(!co.follow && !co.thread_totals, "follow, thread totals");
	cli_free_profile(&o);

	char *all[] = { "scprof", "--cgroup", "/sys/fs/cgroup", NULL };

	assert_int_equal(cli_parse_profile(ARGC(all), all, &o), 0);
	f.npids = 0;
	f.only_tid = 0;
	profile_plan(&o, &f, &co, &ro);
	CHECK(co.mode == SC_FILTER_CGROUP && co.cgroup_path &&
		      !strcmp(co.cgroup_path, "/sys/fs/cgroup"),
	      "cgroup");
	CHECK(!co.trace && co.status == SC_STATUS_ALL && !co.only_tid,
	      "no filter");
	cli_free_profile(&o);
}

static void check_cols(const struct report_opts *ro,
		       const enum report_col *want, int line)
{
	size_t i = 0;

	for (; want[i] != COL_NONE; i++)
		CHECK_AT(line, ro->cols[i] == want[i], "column %zu is %d", i,
			 ro->cols[i]);
	CHECK_AT(line, ro->cols[i] == COL_NONE, "column %zu is %d", i,
		 ro->cols[i]);
}

/* The report: --count-only's defaults, -i's rate column, as asked else. */
static void test_profile_report(void **state)
{
	static const enum report_col strace[] = { COL_TIME_PCT, COL_TIME_TOTAL,
						  COL_TIME_AVG, COL_CALLS,
						  COL_ERRORS,	COL_NAME,
						  COL_NONE };
	static const enum report_col rate[] = { COL_TIME_PCT, COL_TIME_TOTAL,
						COL_TIME_AVG, COL_CALLS,
						COL_RATE,     COL_ERRORS,
						COL_NAME,     COL_NONE };
	static const enum report_col count[] = { COL_CALLS, COL_ERRORS,
						 COL_NAME, COL_NONE };
	static const enum report_col count_rate[] = { COL_CALLS, COL_RATE,
						      COL_ERRORS, COL_NAME,
						      COL_NONE };
	static const enum report_col asked[] = { COL_BYTES, COL_CALLS, COL_NAME,
						 COL_NONE };
	struct collector_opts co;
	struct report_opts ro;
	struct profile_opts o;

	(void)state;
	plan_of(ARGV("--", "true"), 0, &o, &co, &ro);
	check_cols(&ro, strace, __LINE__);
	CHECK(ro.sort == COL_TIME_TOTAL && !ro.interval, "defaults");
	CHECK(!co.slow_ns && !co.fd_types, "no --slow");
	cli_free_profile(&o);

	/* --slow: full mode, no stacks sampled, no split by fd kind (the
	 * kind is read at a slow call's return only)
	 */
	plan_of(ARGV("--slow", "15ms", "--", "true"), 0, &o, &co, &ro);
	CHECK(co.slow_ns == 15000000ULL && co.progs == SC_PROGS_FULL &&
		      !co.stack_period && !co.fd_types && !ro.fd_types &&
		      !co.drain_few_caps,
	      "--slow 15ms");
	cli_free_profile(&o);

	plan_of(ARGV("-i", "1", "--", "true"), 0, &o, &co, &ro);
	check_cols(&ro, rate, __LINE__);
	CHECK(ro.interval, "-i: interval reports");
	/* the options as parsed are left as they were */
	check_cols(&o.report, strace, __LINE__);
	cli_free_profile(&o);

	plan_of(ARGV("-C", "--", "true"), 0, &o, &co, &ro);
	check_cols(&ro, count, __LINE__);
	CHECK(ro.sort == COL_CALLS, "-C sorts by calls, not %d", ro.sort);
	cli_free_profile(&o);

	plan_of(ARGV("-C", "-i", "1", "--", "true"), 0, &o, &co, &ro);
	check_cols(&ro, count_rate, __LINE__);
	cli_free_profile(&o);

	plan_of(ARGV("-C", "-U", "bytes,calls", "-S", "errors", "-i", "1", "--",
		     "true"),
		0, &o, &co, &ro);
	check_cols(&ro, asked, __LINE__);
	CHECK(ro.sort == COL_ERRORS, "-S kept: %d", ro.sort);
	cli_free_profile(&o);

	plan_of(ARGV("--by", "tid,comm", "-H", "--fd-types", "--", "true"), 0,
		&o, &co, &ro);
	CHECK(ro.by_threads && ro.by.n == 2 && ro.histograms && ro.fd_types,
	      "--by, -H and --fd-types reach the report");
	cli_free_profile(&o);
}

static void test_top(void **state)
{
	pid_t pids[] = { 101 };
	struct target_found one = { .pids = pids, .npids = 1 }, none = {};
	struct collector_opts co;
	struct top_opts o;

	(void)state;
	char *a[] = { "top", "--batch", NULL };
	assert_int_equal(top_parse_args(ARGC(a), a, &o), 0);
	top_plan(&o, &none, TOP_GROUP_PROCESS, &co);
	CHECK(co.mode == SC_FILTER_ALL && co.progs == SC_PROGS_FULL &&
		      co.cells == SC_CELLS_PER_PROCESS && co.in_flight &&
		      co.fold == COLLECTOR_FOLD_TOTAL && co.split,
	      "top -a");
	top_plan(&o, &none, TOP_GROUP_THREAD, &co);
	CHECK(co.key_kind == SC_KEY_THREAD && !co.read_cgid, "g: threads");
	top_plan(&o, &none, TOP_GROUP_UNIT, &co);
	CHECK(co.key_kind == SC_KEY_PROCESS && co.read_cgid, "g: units");
	top_plan(&o, &none, TOP_GROUP_CONTAINER, &co);
	CHECK(co.read_cgid, "g: containers");
	top_plan(&o, &none, TOP_GROUP_CGROUP, &co);
	CHECK(co.key_kind == SC_KEY_PROCESS && co.read_cgid, "g: cgroups");
	top_plan(&o, &none, TOP_GROUP_COMM, &co);
	CHECK(co.key_kind == SC_KEY_PROCESS && !co.read_cgid, "g: comms");
	top_free_opts(&o);

	char *p[] = { "top", "--batch", "-p", "101", "--latency-duty",
		      "0.5", NULL };
	assert_int_equal(top_parse_args(ARGC(p), p, &o), 0);
	top_plan(&o, &one, TOP_GROUP_PROCESS, &co);
	CHECK(co.mode == SC_FILTER_TGID && co.progs == SC_PROGS_SAMPLED &&
		      co.cells == SC_CELLS_ONE_TARGET && !co.in_flight &&
		      co.split,
	      "top -p PID --latency-duty");
	top_plan(&o, &one, TOP_GROUP_THREAD, &co);
	CHECK(co.cells == SC_CELLS_PER_PROCESS, "threads of one process");
	top_free_opts(&o);
}

static void test_daemon(void **state)
{
	pid_t pids[] = { 101 };
	struct target_found one = { .pids = pids, .npids = 1 }, none = {};
	struct collector_opts co;
	struct daemon_opts o;

	(void)state;
	char *a[] = { "daemon", NULL };
	assert_int_equal(daemon_parse_args(ARGC(a), a, &o), 0);
	daemon_plan(&o, &none, &co);
	CHECK(co.mode == SC_FILTER_ALL && co.progs == SC_PROGS_SAMPLED &&
		      co.cells == SC_CELLS_AGGREGATE &&
		      co.fold == COLLECTOR_FOLD_TOTAL && !co.in_flight,
	      "daemon -a");
	CHECK(co.thread_totals == (o.comm_series != 0) && !co.read_cgid,
	      "per-name series by default");
	/* the calls' time split, summed: no samples of where they slept */
	CHECK(co.split && !co.split_samples, "daemon: the split, no samples");
	daemon_free_opts(&o);

	char *u[] = { "daemon", "--labels", "unit", NULL };
	assert_int_equal(daemon_parse_args(ARGC(u), u, &o), 0);
	daemon_plan(&o, &none, &co);
	CHECK(co.thread_totals && co.read_cgid, "--labels unit");
	daemon_free_opts(&o);

	char *p[] = { "daemon", "-p", "101", "--comm-series", "0", NULL };
	assert_int_equal(daemon_parse_args(ARGC(p), p, &o), 0);
	daemon_plan(&o, &one, &co);
	CHECK(co.cells == SC_CELLS_ONE_TARGET && !co.thread_totals,
	      "daemon -p PID without series");
	CHECK(!co.slow_ns && o.latency_duty < 0, "no --slow: budgeted duty");
	daemon_free_opts(&o);

	/* --slow: every call timed, unless a duty is given */
	char *s[] = { "daemon", "--slow", "20ms", NULL };
	assert_int_equal(daemon_parse_args(ARGC(s), s, &o), 0);
	daemon_plan(&o, &none, &co);
	CHECK(co.slow_ns == 20000000ULL && co.progs == SC_PROGS_SAMPLED &&
		      co.drain_few_caps,
	      "daemon --slow 20ms");
	CHECK(o.latency_duty == 1, "--slow times every call");
	daemon_free_opts(&o);
	char *sd[] = { "daemon", "--slow", "1s", "--latency-duty", "0.5", NULL };
	assert_int_equal(daemon_parse_args(ARGC(sd), sd, &o), 0);
	CHECK(o.latency_duty == 0.5, "--slow with --latency-duty 0.5");
	daemon_free_opts(&o);
	char *sb[] = { "daemon", "--slow", "1s", "--max-overhead", "2", NULL };
	assert_int_equal(daemon_parse_args(ARGC(sb), sb, &o), EXIT_USAGE);
	daemon_free_opts(&o);
}

static void test_verdict(void **state)
{
	struct verdict_opts o = { .pid = 101, .stack_period = 50 };
	struct collector_opts co;

	(void)state;
	verdict_plan(&o, &co);
	CHECK(co.mode == SC_FILTER_TGID && co.progs == SC_PROGS_FULL &&
		      co.cells == SC_CELLS_ONE_TARGET && co.in_flight &&
		      co.fd_types && co.stack_period == 50 && co.split &&
		      co.split_samples,
	      "verdict");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_modes),
		cmocka_unit_test(test_profile_whom),
		cmocka_unit_test(test_profile_report),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_daemon),
		cmocka_unit_test(test_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

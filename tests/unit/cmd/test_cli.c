// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/cmd/cli.c and cmd_profile_args.c: strict number parsers and the
 * profiler's command line. A usage error is exactly one line on stderr and
 * EXIT_USAGE; --help and --version print to stdout and return 1.
 */
#include <errno.h>
#include <math.h>

#include "cmd/cli.h"
#include "cmd/cmd_profile_args.h"
#include "sc_stack.h"
#include "unit.h"
#include "util/log.h"
#include "scprof_version.h" /* generated */

/* ---- cli_parse_u64 ------------------------------------------------------- */

static void check_u64_at(int line, const char *s, uint64_t min, uint64_t max,
			 int want_err, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int err = cli_parse_u64(s, min, max, &v);

	CHECK_AT(line, err == want_err,
		 "cli_parse_u64('%s', %" PRIu64 ", %" PRIu64 ") = %d, want %d",
		 s, min, max, err, want_err);
	if (!want_err)
		CHECK_AT(line, v == want, "'%s' parsed as %" PRIu64, s, v);
	else
		CHECK_AT(line, v == 0xdeadbeef, "'%s': output touched", s);
}
#define check_u64(...) check_u64_at(__LINE__, __VA_ARGS__)

static void test_u64(void **state)
{
	(void)state;
	check_u64("0", 0, 10, 0, 0);
	check_u64("10", 0, 10, 0, 10);
	check_u64("7", 7, 7, 0, 7);
	check_u64("007", 0, 10, 0, 7);
	check_u64("18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX);
	/* not a whole decimal number */
	check_u64("10abc", 0, 100, -EINVAL, 0);
	check_u64("-1", 0, 100, -EINVAL, 0);
	check_u64("+1", 0, 100, -EINVAL, 0);
	check_u64(" 1", 0, 100, -EINVAL, 0);
	check_u64("1 ", 0, 100, -EINVAL, 0);
	check_u64("", 0, 100, -EINVAL, 0);
	check_u64("0x10", 0, 100, -EINVAL, 0);
	check_u64("1e3", 0, 10000, -EINVAL, 0);
	check_u64("1.0", 0, 100, -EINVAL, 0);
	check_u64("abc", 0, 100, -EINVAL, 0);
	/* out of range, either side, and past 2^64 */
	check_u64("11", 0, 10, -ERANGE, 0);
	check_u64("6", 7, 10, -ERANGE, 0);
	check_u64("0", 1, 10, -ERANGE, 0);
	check_u64("99999999999", 0, UINT32_MAX, -ERANGE, 0);
	check_u64("4294967296", 0, UINT32_MAX, -ERANGE, 0);
	check_u64("4294967295", 0, UINT32_MAX, 0, UINT32_MAX);
	check_u64("18446744073709551616", 0, UINT64_MAX, -ERANGE, 0);
	check_u64("99999999999999999999999", 0, UINT64_MAX, -ERANGE, 0);
	CHECK(cli_parse_u64(NULL, 0, 1, &(uint64_t){ 0 }) == -EINVAL, "NULL");
}

/* ---- cli_parse_seconds --------------------------------------------------- */

static void test_seconds(void **state)
{
	static const char *const bad[] = {
		"0",	"0.0",	"-1",	 "-0.5",  "nan",  "NAN",   "inf",
		"-inf", "1e10", "10abc", "",	  " 1",	  "1 ",	   "abc",
		".",	"1..2", "2s",	 "1e400", "0x10", "0x1p3", "+1",
	};
	static const struct {
		const char *s;
		double v;
	} good[] = {
		{ "0.5", 0.5 },	    { "2", 2 },	     { ".25", 0.25 },
		{ "10", 10 },	    { "1e3", 1000 }, { "1000000000", 1e9 },
		{ "0.001", 0.001 },
	};
	double v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -42;
		CHECK(cli_parse_seconds(bad[i], &v) == -EINVAL,
		      "-d '%s' is rejected (parsed as %g)", bad[i], v);
		CHECK(v == -42, "-d '%s': output untouched", bad[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(cli_parse_seconds(good[i].s, &v) == 0, "-d '%s' accepted",
		      good[i].s);
		CHECK(fabs(v - good[i].v) < 1e-12, "-d '%s' is %g", good[i].s,
		      v);
	}
	CHECK(cli_parse_seconds(NULL, &v) == -EINVAL, "NULL");
}

/* ---- cli_parse_number (--latency-duty, --max-overhead) ------------------- */

static void test_number(void **state)
{
	static const char *const bad[] = {
		"-0.1", "1.5", "nan", "inf",  "",    " 0", "0 ",
		"0x1",	"1/2", "50%", "half", "1e1", "+1", ".",
	};
	static const struct {
		const char *s;
		double v;
	} good[] = {
		{ "0", 0 },	 { "0.0", 0 },	    { "1", 1 },
		{ ".25", 0.25 }, { "1e-3", 0.001 },
	};
	double v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -42;
		CHECK(cli_parse_number(bad[i], 0, 1, &v) == -EINVAL,
		      "'%s' is rejected in [0, 1] (parsed as %g)", bad[i], v);
		CHECK(v == -42, "'%s': output untouched", bad[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(cli_parse_number(good[i].s, 0, 1, &v) == 0,
		      "'%s' accepted", good[i].s);
		CHECK(fabs(v - good[i].v) < 1e-12, "'%s' is %g", good[i].s, v);
	}
	CHECK(cli_parse_number("0.0005", 0.001, 100, &v) == -EINVAL,
	      "below the minimum");
	CHECK(cli_parse_number(NULL, 0, 1, &v) == -EINVAL, "NULL");
}

/* ---- cli_parse_duration_ns (--slow) -------------------------------------- */

static void test_duration_ns(void **state)
{
	static const char *const bad[] = {
		"10",	 "ms",	 "10 ms", " 10ms",    "10ms ", "-10ms", "+10ms",
		"10sec", "10MS", "1e3ms", "0x10ms",   "nan",   "inf",	"10ms5",
		"",	 "0ms",	 "0s",	  "0.0001ns", ".ms",   "10h",	"1..2s",
	};
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{ "10ms", 10000000ULL },   { "1.5s", 1500000000ULL },
		{ "200us", 200000ULL },	   { "200\u00b5s", 200000ULL },
		{ "500ns", 500ULL },	   { "1ns", 1ULL },
		{ "2m", 120000000000ULL }, { "0.25ms", 250000ULL },
		{ "3s", 3000000000ULL },   { ".5s", 500000000ULL },
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		CHECK(cli_parse_duration_ns(bad[i], &v) < 0,
		      "'%s' is rejected (parsed as %" PRIu64 ")", bad[i], v);
		CHECK(v == 42, "'%s': output untouched", bad[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(cli_parse_duration_ns(good[i].s, &v) == 0,
		      "'%s' accepted", good[i].s);
		CHECK(v == good[i].ns, "'%s' is %" PRIu64 " ns, want %" PRIu64,
		      good[i].s, v, good[i].ns);
	}
	CHECK(cli_parse_duration_ns(NULL, &v) == -EINVAL, "NULL");
}

/* ---- cli_parse_pids ------------------------------------------------------ */

static void test_pids_lists(void **state)
{
	pid_t *pids = NULL;
	const char *bad = NULL;
	size_t n = 0;

	(void)state;
	CHECK(cli_parse_pids("1", &pids, &n, &bad) == 0 && n == 1 &&
		      pids[0] == 1,
	      "one pid");
	free(pids);
	CHECK(cli_parse_pids("10,20,4194303", &pids, &n, &bad) == 0 && n == 3 &&
		      pids[0] == 10 && pids[1] == 20 && pids[2] == 4194303,
	      "three pids");
	free(pids);
	/* many: the array grows */
	{
		char buf[4096] = "";
		size_t len = 0;

		for (int i = 1; i <= 500; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%d", i > 1 ? "," : "", i);
		CHECK(cli_parse_pids(buf, &pids, &n, &bad) == 0 && n == 500,
		      "500 pids, got %zu", n);
		for (size_t i = 0; i < n; i++)
			CHECK(pids[i] == (pid_t)i + 1, "pid %zu", i);
		free(pids);
	}
}

static void check_pids_bad_at(int line, const char *s, size_t bad_at)
{
	pid_t *pids = NULL;
	const char *bad = NULL;
	size_t n = 0;

	CHECK_AT(line, cli_parse_pids(s, &pids, &n, &bad) == -EINVAL,
		 "-p '%s' rejected", s);
	CHECK_AT(line, bad == s + bad_at,
		 "-p '%s': bad item at offset %td, want %zu", s,
		 bad ? bad - s : -1, bad_at);
	free(pids);
}
#define check_pids_bad(...) check_pids_bad_at(__LINE__, __VA_ARGS__)

static void test_pids_bad(void **state)
{
	(void)state;
	check_pids_bad("", 0);
	check_pids_bad(",", 0);
	check_pids_bad("1,,2", 2);
	check_pids_bad("1,2,", 4);
	check_pids_bad(",1", 0);
	check_pids_bad("0", 0);
	check_pids_bad("1,0", 2);
	check_pids_bad("4194305", 0);
	check_pids_bad("1,99999999999", 2);
	check_pids_bad("1,123456789012345678901234567890", 2);
	check_pids_bad("-1", 0);
	check_pids_bad("1,2x", 2);
	check_pids_bad("1, 2", 2);
	check_pids_bad("self", 0);
}

/* ---- cli_parse_profile --------------------------------------------------- */

struct parsed {
	int ret;
	char *out, *err; /* what went to stdout and stderr */
	struct profile_opts o;
};

/* Parse a NULL-terminated argument list, capturing stdout and stderr. */
static void parse(struct parsed *p, const char *const *args)
{
	char *argv[32];
	int argc = 0;
	struct fdcap out, err;

	argv[argc++] = "scprof";
	for (; *args; args++) {
		assert_true(argc < 31);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	fdcap_begin(&out, STDOUT_FILENO);
	fdcap_begin(&err, STDERR_FILENO);
	p->ret = cli_parse_profile(argc, argv, &p->o);
	p->err = fdcap_end(&err);
	p->out = fdcap_end(&out);
}

static void parsed_free(struct parsed *p)
{
	cli_free_profile(&p->o);
	free(p->out);
	free(p->err);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Parses to 0 with nothing printed. */
static void parse_ok_at(int line, struct parsed *p, const char *const *args)
{
	parse(p, args);
	if (p->ret != 0)
		print_error("stderr: %s", p->err);
	CHECK_AT(line, p->ret == 0, "'%s ...' returned %d, want 0", args[0],
		 p->ret);
	CHECK_AT(line, !*p->out && !*p->err, "'%s ...' printed something",
		 args[0]);
}
#define parse_ok(...) parse_ok_at(__LINE__, __VA_ARGS__)

/*
 * A usage error: EXIT_USAGE, nothing on stdout, one line on stderr
 * starting with "scprof: " and holding the word that explains it.
 */
static void check_usage_error_at(int line, const char *const *args,
				 const char *word)
{
	struct parsed p;

	parse(&p, args);
	CHECK_AT(line, p.ret == EXIT_USAGE,
		 "'%s ...' returned %d, want %d (stderr: %s)", args[0], p.ret,
		 EXIT_USAGE, p.err);
	CHECK_AT(line, !*p.out, "'%s ...': nothing on stdout", args[0]);
	CHECK_AT(line,
		 unit_count_lines(p.err) == 1 &&
			 p.err[strlen(p.err) - 1] == '\n',
		 "'%s ...': one line on stderr, got '%s'", args[0], p.err);
	CHECK_AT(line, !strncmp(p.err, "scprof: ", 8),
		 "'%s ...': unprefixed message '%s'", args[0], p.err);
	CHECK_AT(line, strstr(p.err, word) != NULL,
		 "'%s ...': '%s' not in '%s'", args[0], word, p.err);
	parsed_free(&p);
}
#define check_usage_error(...) check_usage_error_at(__LINE__, __VA_ARGS__)

static void test_profile_command(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p, ARGS("true"));
	CHECK(p.o.target.kind == TARGET_CMD && !strcmp(p.o.argv[0], "true") &&
		      p.o.argv[1] == NULL,
	      "command 'true'");
	/* defaults */
	CHECK(!p.o.target.follow && p.o.duration_s == 0 && !p.o.output &&
		      p.o.report.format == REPORT_TABLE &&
		      p.o.report.sort == COL_TIME_TOTAL &&
		      !p.o.report.per_process && !p.o.report.histograms &&
		      p.o.verbosity == LOG_WARN && p.o.target.max_stats == 0 &&
		      p.o.target.max_procs == 0,
	      "defaults");
	CHECK(p.o.report.cols[0] == COL_TIME_PCT &&
		      p.o.report.cols[5] == COL_NAME &&
		      p.o.report.cols[6] == COL_NONE,
	      "strace's default columns");
	parsed_free(&p);

	/* options, then the command with its own options untouched */
	parse_ok(&p,
		 ARGS("-f", "-d", "2", "-S", "calls", "ls", "-la", "-d", "x"));
	CHECK(p.o.target.kind == TARGET_CMD && p.o.target.follow &&
		      p.o.duration_s == 2 && p.o.report.sort == COL_CALLS,
	      "options before the command");
	CHECK(!strcmp(p.o.argv[0], "ls") && !strcmp(p.o.argv[1], "-la") &&
		      !strcmp(p.o.argv[2], "-d") && !strcmp(p.o.argv[3], "x") &&
		      p.o.argv[4] == NULL,
	      "the command's arguments are its own");
	parsed_free(&p);

	/* "--" ends the options: a command may start with '-' */
	parse_ok(&p, ARGS("-q", "--", "-weird", "--help"));
	CHECK(p.o.target.kind == TARGET_CMD && !strcmp(p.o.argv[0], "-weird") &&
		      !strcmp(p.o.argv[1], "--help") &&
		      p.o.verbosity == LOG_ERROR,
	      "command after --");
	parsed_free(&p);
}

static void test_profile_targets(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p, ARGS("-p", "12,34"));
	CHECK(p.o.target.kind == TARGET_PIDS && p.o.target.npids == 2 &&
		      p.o.target.pids[0] == 12 && p.o.target.pids[1] == 34,
	      "-p 12,34");
	parsed_free(&p);
	parse_ok(&p, ARGS("--pid=5", "-f"));
	CHECK(p.o.target.kind == TARGET_PIDS && p.o.target.npids == 1 &&
		      p.o.target.follow,
	      "--pid=5 -f");
	parsed_free(&p);
	/* a second -p replaces the first list */
	parse_ok(&p, ARGS("-p", "1,2,3", "-p", "9"));
	CHECK(p.o.target.npids == 1 && p.o.target.pids[0] == 9, "last -p wins");
	parsed_free(&p);
	parse_ok(&p, ARGS("-a", "-d", "0.5"));
	CHECK(p.o.target.kind == TARGET_ALL && p.o.duration_s == 0.5,
	      "-a -d 0.5");
	parsed_free(&p);
	parse_ok(&p, ARGS("--cgroup", "/sys/fs/cgroup/x"));
	CHECK(p.o.target.kind == TARGET_CGROUP &&
		      !strcmp(p.o.target.cgroup, "/sys/fs/cgroup/x"),
	      "--cgroup");
	parsed_free(&p);
}

static void test_profile_report_options(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p,
		 ARGS("--format", "json", "-o", "out.json", "-U", "calls,p99",
		      "-S", "p99", "-P", "-H", "-c", "-w", "-v", "-v",
		      "--max-entries", "16777216", "--max-procs", "1", "-a"));
	CHECK(p.o.report.format == REPORT_JSON &&
		      !strcmp(p.o.output, "out.json"),
	      "--format json -o");
	CHECK(p.o.report.cols[0] == COL_CALLS &&
		      p.o.report.cols[1] == COL_P99 &&
		      p.o.report.cols[2] == COL_NAME &&
		      p.o.report.cols[3] == COL_NONE,
	      "-U calls,p99");
	CHECK(p.o.report.sort == COL_P99 && p.o.report.per_process &&
		      p.o.report.histograms,
	      "-S -P -H");
	CHECK(p.o.verbosity == LOG_WARN + 2, "-v -v");
	CHECK(p.o.target.max_stats == 16777216 && p.o.target.max_procs == 1,
	      "map sizes");
	parsed_free(&p);
	parse_ok(&p,
		 ARGS("--format=csv", "--sort=name", "--columns=name,calls",
		      "--output=x", "--per-process", "--histograms", "--follow",
		      "--duration=3", "--verbose", "--", "true"));
	CHECK(p.o.report.format == REPORT_CSV && p.o.report.sort == COL_NAME &&
		      p.o.report.cols[0] == COL_NAME && p.o.target.follow &&
		      p.o.duration_s == 3 && p.o.verbosity == LOG_INFO,
	      "long options");
	parsed_free(&p);
}

static void test_profile_help_version(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, ARGS("--help"));
	CHECK(p.ret == 1, "--help returns 1, got %d", p.ret);
	CHECK(!strncmp(p.out, "Usage: scprof", 13), "help on stdout");
	CHECK(!*p.err, "nothing on stderr");
	CHECK(strstr(p.out, "-w") && strstr(p.out, "exit_group"),
	      "help mentions -w and how scprof differs");
	parsed_free(&p);
	parse(&p, ARGS("-h", "-a"));
	CHECK(p.ret == 1 && strstr(p.out, "Usage:"), "-h");
	parsed_free(&p);
	parse(&p, ARGS("--version"));
	CHECK(p.ret == 1, "--version returns 1");
	CHECK_STR(p.out, "scprof " SCPROF_VERSION " (git " SCPROF_GIT_REV ")\n",
		  "version line");
	parsed_free(&p);
	parse(&p, ARGS("-V"));
	CHECK(p.ret == 1 && !strcmp(p.out, "scprof " SCPROF_VERSION
					   " (git " SCPROF_GIT_REV ")\n"),
	      "-V");
	parsed_free(&p);
}

/* The hidden --list-options: the option table, for docs/gendocs.py. */
static void test_profile_list_options(void **state)
{
	static const char *const lines[] = {
		"-p pid value\n",  "-a all none\n",	"- cgroup value\n",
		"-S sort value\n", "-V version none\n", "- fd-types none\n",
		"-c - none\n",	   "-w - none\n",
	};
	struct parsed p;

	(void)state;
	parse(&p, ARGS("--list-options"));
	CHECK(p.ret == 1 && !*p.err, "--list-options returns 1");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		CHECK(strstr(p.out, lines[i]), "'%s' listed in:\n%s", lines[i],
		      p.out);
	CHECK(!strstr(p.out, "list-options"), "itself not listed");
	parsed_free(&p);
	/* Only alone: anywhere else it is an unknown option. */
	parse(&p, ARGS("-a", "--list-options"));
	CHECK(p.ret == EXIT_USAGE &&
		      strstr(p.err, "unknown option '--list-options'"),
	      "not alone: %s", p.err);
	parsed_free(&p);
}

static void test_profile_usage_errors(void **state)
{
	(void)state;
	/* no target, conflicting targets */
	check_usage_error(ARGS("-f"), "nothing to profile");
	check_usage_error(ARGS("-a", "-p", "1"), "choose one target");
	check_usage_error(ARGS("-p", "1", "-a"), "choose one target");
	check_usage_error(ARGS("-p", "1", "true"), "choose one target");
	check_usage_error(ARGS("-a", "true"), "choose one target");
	check_usage_error(ARGS("--cgroup", "/x", "-a"), "choose one target");
	check_usage_error(ARGS("--cgroup", "/x", "-p", "3"),
			  "choose one target");
	/* -f follows a command's or a pid's children only */
	check_usage_error(ARGS("-f", "-a"), "-f");
	check_usage_error(ARGS("-a", "-f"), "-f");
	check_usage_error(ARGS("-f", "--cgroup", "/x"), "-f");
	/* bad values */
	check_usage_error(ARGS("-p", "1,,2"), "invalid PID ''");
	check_usage_error(ARGS("-p", "12,abc"), "'abc'");
	check_usage_error(ARGS("-p", "0"), "'0'");
	check_usage_error(ARGS("-d", "-1", "-a"), "'-1'");
	check_usage_error(ARGS("-d", "0", "-a"), "invalid duration");
	check_usage_error(ARGS("-d", "nan", "-a"), "'nan'");
	check_usage_error(ARGS("-d", "10abc", "-a"), "'10abc'");
	check_usage_error(ARGS("-S", "bogus", "-a"), "'bogus'");
	check_usage_error(ARGS("-S", "", "-a"), "sort");
	check_usage_error(ARGS("-U", "calls,bogus", "-a"), "'bogus'");
	check_usage_error(ARGS("-U", "calls,count", "-a"), "'count'");
	check_usage_error(ARGS("-U", "", "-a"), "-U");
	check_usage_error(ARGS("--format", "xml", "-a"), "'xml'");
	check_usage_error(ARGS("--format=JSON", "-a"), "'JSON'");
	check_usage_error(ARGS("--max-entries", "0", "-a"), "--max-entries");
	check_usage_error(ARGS("--max-entries", "16777217", "-a"),
			  "'16777217'");
	check_usage_error(ARGS("--max-entries", "1k", "-a"), "'1k'");
	check_usage_error(ARGS("--max-procs", "-5", "-a"), "--max-procs");
	check_usage_error(ARGS("-o", "", "-a"), "empty output");
	/* unknown options and missing values */
	check_usage_error(ARGS("-X", "-a"), "unknown option '-X'");
	check_usage_error(ARGS("-aX"), "unknown option '-X'");
	check_usage_error(ARGS("--bogus", "-a"), "unknown option '--bogus'");
	check_usage_error(ARGS("--bogus=1", "-a"), "'--bogus=1'");
	check_usage_error(ARGS("-+", "-a"), "unknown option '-+'");
	check_usage_error(ARGS("-:", "-a"), "unknown option '-:'");
	/* a value for an option that takes none names that option */
	check_usage_error(ARGS("--all=1"), "option '--all=1' takes no value");
	check_usage_error(ARGS("-a", "--follow=yes"), "'--follow=yes'");
	check_usage_error(ARGS("--help=x"), "'--help=x' takes no value");
	check_usage_error(ARGS("-p"), "'-p' needs a value");
	check_usage_error(ARGS("-a", "-d"), "'-d' needs a value");
	check_usage_error(ARGS("-a", "--format"), "'--format' needs a value");
	check_usage_error(ARGS("-a", "--cgroup"), "'--cgroup' needs a value");
	/* --slow: a duration with its unit; times, so not with -C; its
	 * outputs need it
	 */
	check_usage_error(ARGS("--slow", "10", "-a"), "invalid --slow '10'");
	check_usage_error(ARGS("--slow", "fast", "-a"), "'fast'");
	check_usage_error(ARGS("--slow", "10ms", "-C", "-a"), "--count-only");
	check_usage_error(ARGS("-C", "--slow", "1s", "true"), "--count-only");
	check_usage_error(ARGS("--slow-out", "x", "-a"), "give --slow");
	check_usage_error(ARGS("--trace-out", "x", "-a"), "give --slow");
	check_usage_error(ARGS("--slow", "1s", "--trace-out", "", "-a"),
			  "empty trace file name");
	check_usage_error(ARGS("--slow", "1s", "--slow-out", "", "-a"),
			  "empty slow calls file name");
}

static void test_profile_slow(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p, ARGS("--slow", "10ms", "--slow-out", "s.log",
			  "--trace-out", "t.json", "-a"));
	CHECK(p.o.slow_ns == 10000000ULL, "--slow 10ms: %" PRIu64 " ns",
	      p.o.slow_ns);
	CHECK(!strcmp(p.o.slow_out, "s.log") &&
		      !strcmp(p.o.trace_out, "t.json"),
	      "--slow-out, --trace-out");
	CHECK(!p.o.stack_period, "--slow samples no stacks");
	parsed_free(&p);
	parse_ok(&p, ARGS("-a"));
	CHECK(!p.o.slow_ns && !p.o.slow_out && !p.o.trace_out, "off");
	parsed_free(&p);
}

/* --stacks-by: count, time, blocked (by time's default budget; needs the
 * split and the calls' times).
 */
static void test_profile_stacks_by(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p, ARGS("--stacks-by", "blocked", "-a"));
	CHECK(p.o.stack_by == SC_STACKS_BY_BLOCKED, "blocked: %d",
	      p.o.stack_by);
	CHECK(p.o.stack_period == SC_STACK_DEFAULT_TIME_US,
	      "one sample per %u µs blocked", p.o.stack_period);
	parsed_free(&p);
	parse_ok(&p, ARGS("--stacks-by", "blocked", "--stacks=200", "-a"));
	CHECK(p.o.stack_period == 200, "--stacks=200: %u", p.o.stack_period);
	parsed_free(&p);
	parse_ok(&p, ARGS("--stacks-by", "time", "-a"));
	CHECK(p.o.stack_by == SC_STACKS_BY_TIME, "time");
	parsed_free(&p);
	parse_ok(&p, ARGS("--stacks-by", "count", "-a"));
	CHECK(p.o.stack_by == SC_STACKS_BY_COUNT &&
		      p.o.stack_period == SC_STACK_DEFAULT_PERIOD,
	      "count");
	parsed_free(&p);
	check_usage_error(ARGS("--stacks-by", "sleep", "-a"),
			  "invalid --stacks-by 'sleep': expected count, time "
			  "or blocked");
	check_usage_error(ARGS("--stacks-by", "blocked", "-C", "-a"),
			  "--stacks-by blocked weighs calls by their blocked "
			  "time: --count-only does not time them");
	check_usage_error(ARGS("--stacks-by", "time", "-C", "-a"),
			  "--stacks-by time weighs calls by their time: "
			  "--count-only does not time them");
	check_usage_error(ARGS("--no-split", "--stacks-by", "blocked", "-a"),
			  "--no-split does not measure it");
}

/*
 * Parsing is repeatable: an error in the middle of a group of short
 * options ("-Xf") must leave no state behind for the next parse.
 */
/* "-" is standard output; one output at most goes there. */
static void test_profile_stdout(void **state)
{
	struct parsed p;

	(void)state;
	parse_ok(&p, ARGS("-o", "-", "--format", "json", "true"));
	CHECK(!strcmp(p.o.output, "-") && profile_uses_stdout(&p.o),
	      "-o - with a command: stdout");
	parsed_free(&p);
	parse_ok(&p, ARGS("true"));
	CHECK(!profile_uses_stdout(&p.o), "a command's report: stderr");
	parsed_free(&p);
	parse_ok(&p, ARGS("--folded", "-", "true"));
	CHECK(profile_uses_stdout(&p.o), "--folded - with a command");
	parsed_free(&p);
	parse_ok(&p, ARGS("-o", "r.json", "--pprof", "-", "-a"));
	CHECK(profile_uses_stdout(&p.o), "--pprof -");
	parsed_free(&p);
	parse_ok(&p, ARGS("-o", "./-", "true"));
	CHECK(!profile_uses_stdout(&p.o), "./- is a file");
	parsed_free(&p);
	parse_ok(&p, ARGS("-o", "-", "-a"));
	CHECK(profile_uses_stdout(&p.o), "-o - -a");
	parsed_free(&p);
	check_usage_error(ARGS("--folded", "-", "-a"),
			  "the report (no -o) and --folded - both go to "
			  "standard output");
	check_usage_error(ARGS("-o", "-", "--flamegraph", "-", "true"),
			  "-o - and --flamegraph - both go");
	check_usage_error(ARGS("--slow", "1s", "--slow-out", "-", "--trace-out",
			       "-", "true"),
			  "--slow-out - and --trace-out - both go");
}

static void test_profile_parse_twice(void **state)
{
	struct parsed p;

	(void)state;
	check_usage_error(ARGS("-Xf", "-a"), "'-X'");
	parse_ok(&p, ARGS("-a"));
	CHECK(p.o.target.kind == TARGET_ALL && !p.o.target.follow,
	      "-a alone after a failed '-Xf': follow %d", p.o.target.follow);
	parsed_free(&p);
	parse_ok(&p, ARGS("-f", "--", "x"));
	CHECK(p.o.target.kind == TARGET_CMD && p.o.target.follow, "-f -- x");
	parsed_free(&p);
}

/* ---- cli_calib_option, cli_duration (calibrate and verdict) ------------- */

static void usage_none(FILE *f)
{
	(void)f;
}

static const struct cli_cmd calib_cmd = {
	.prog = "scprof calibrate",
	.usage = usage_none,
	.short_opts = ":o:",
};

/* One option through cli_calib_option: its return and what it printed. */
static int calib_option(int c, const char *arg, struct cli_calib_opts *o,
			char **err)
{
	struct fdcap cap;
	int ret;

	fdcap_begin(&cap, STDERR_FILENO);
	ret = cli_calib_option(&calib_cmd, c, arg, o);
	*err = fdcap_end(&cap);
	return ret;
}

static void test_calib_options(void **state)
{
	struct cli_calib_opts o = { .cache = "/default" };
	double d = 0;
	struct fdcap cap;
	char *err;

	(void)state;
	CHECK(calib_option(CLI_OPT_FORMAT, "json", &o, &err) == 0 &&
		      o.format == REPORT_JSON && !*err,
	      "--format json");
	free(err);
	CHECK(calib_option(CLI_OPT_FORMAT, "table", &o, &err) == 0 &&
		      o.format == REPORT_TABLE,
	      "--format table");
	free(err);
	CHECK(calib_option('o', "r.json", &o, &err) == 0 &&
		      !strcmp(o.output, "r.json"),
	      "-o");
	free(err);
	CHECK(calib_option(CLI_OPT_CACHE, "c.json", &o, &err) == 0 &&
		      !strcmp(o.cache, "c.json"),
	      "--cache");
	free(err);
	/* not one of them: nothing printed, nothing changed */
	CHECK(calib_option('v', NULL, &o, &err) == -ENOENT && !*err, "-v");
	free(err);
	/* csv is the profiler's only */
	CHECK(calib_option(CLI_OPT_FORMAT, "csv", &o, &err) == EXIT_USAGE &&
		      o.format == REPORT_TABLE,
	      "--format csv");
	CHECK_STR(err,
		  "scprof calibrate: unknown format 'csv': expected table or "
		  "json (see scprof calibrate --help)\n",
		  "--format csv");
	free(err);
	CHECK(calib_option('o', "", &o, &err) == EXIT_USAGE &&
		      strstr(err, "empty output file name"),
	      "-o ''");
	free(err);
	CHECK(calib_option(CLI_OPT_CACHE, "", &o, &err) == EXIT_USAGE &&
		      strstr(err, "empty --cache file name") &&
		      !strcmp(o.cache, "c.json"),
	      "--cache ''");
	free(err);
	/* -o - is stdout; the cache is a file kept, never stdout */
	CHECK(calib_option('o', "-", &o, &err) == 0 && !strcmp(o.output, "-") &&
		      !*err,
	      "-o -");
	free(err);
	CHECK(calib_option(CLI_OPT_CACHE, "-", &o, &err) == EXIT_USAGE &&
		      unit_count_lines(err) == 1 &&
		      strstr(err, "--cache names a file scprof keeps") &&
		      !strcmp(o.cache, "c.json"),
	      "--cache -: got '%s'", err);
	free(err);
	CHECK(calib_option(CLI_OPT_CACHE, "./-", &o, &err) == 0 &&
		      !strcmp(o.cache, "./-"),
	      "--cache ./-");
	free(err);

	CHECK(cli_duration(&calib_cmd, "1.5", &d) == 0 && d == 1.5, "-d 1.5");
	fdcap_begin(&cap, STDERR_FILENO);
	CHECK(cli_duration(&calib_cmd, "0", &d) == EXIT_USAGE && d == 1.5,
	      "-d 0");
	err = fdcap_end(&cap);
	CHECK(unit_count_lines(err) == 1 && strstr(err, "invalid duration '0'"),
	      "-d 0: one line, got '%s'", err);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_duration_ns),
		cmocka_unit_test(test_pids_lists),
		cmocka_unit_test(test_pids_bad),
		cmocka_unit_test(test_profile_command),
		cmocka_unit_test(test_profile_targets),
		cmocka_unit_test(test_profile_report_options),
		cmocka_unit_test(test_profile_help_version),
		cmocka_unit_test(test_profile_list_options),
		cmocka_unit_test(test_profile_usage_errors),
		cmocka_unit_test(test_profile_slow),
		cmocka_unit_test(test_profile_stacks_by),
		cmocka_unit_test(test_profile_stdout),
		cmocka_unit_test(test_profile_parse_twice),
		cmocka_unit_test(test_calib_options),
	};

	unit_init();
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}

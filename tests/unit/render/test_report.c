// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/report*.c: the strace -c table byte for byte (goldens written from
 * strace's layout: src/count.c and `strace -c -w`, `-U`, `-S` output of
 * strace 6.1), sort keys, -S/-U parsing, JSON and CSV.
 */
#include <errno.h>
#include <json-c/json.h>

#include "model/hist.h"
#include "render/report.h"
#include "render/report_table.h"
#include "unit.h"
#include "util/escape.h"

/* One row of a hand-built model. */
struct spec {
	uint32_t abi, nr;
	uint64_t calls, errors, total_ns, min_ns, max_ns, bytes;
};

/* Fill a stats cell: calls samples spread over [min_ns, max_ns]. */
static void stats_fill(struct sc_stats *st, const struct spec *s)
{
	memset(st, 0, sizeof(*st));
	st->calls = s->calls;
	st->errors = s->errors;
	st->total_ns = s->total_ns;
	st->min_ns = s->min_ns;
	st->max_ns = s->max_ns;
	st->bytes = s->bytes;
	if (!s->max_ns)
		return; /* untimed calls, as exit_group's */
	if (s->calls == 1) {
		st->hist[sc_hist_bucket(s->max_ns)] = 1;
	} else {
		st->hist[sc_hist_bucket(s->min_ns)] += 1;
		st->hist[sc_hist_bucket(s->max_ns)] += 1;
		st->hist[sc_hist_bucket(s->total_ns / s->calls)] +=
			s->calls - 2;
	}
}

/* A model of one process (pid 1) holding the given rows, finalized. */
static struct sc_model *model_of(const struct spec *rows, size_t n)
{
	struct sc_model *m = model_new();
	struct sc_stats *st = calloc(1, sizeof(*st));
	struct sc_proc *p;

	assert_non_null(m);
	assert_non_null(st);
	p = model_proc(m, 1, 1, 0);
	assert_non_null(p);
	strcpy(p->comm, "test");
	for (size_t i = 0; i < n; i++) {
		stats_fill(st, &rows[i]);
		assert_int_equal(model_proc_add(p, rows[i].abi, rows[i].nr, st),
				 0);
	}
	assert_int_equal(model_finalize(m), 0);
	free(st);
	return m;
}

static const struct report_meta meta_cmd = {
	.mode = "command",
	.target = "groundtruth",
	.duration_ns = 2500000000ULL,
	.targets_exited = true,
	.exit_status = 3,
};

/* The table of one ABI of a model, as text (caller frees). */
static char *render_abi(const struct sc_model *m, uint32_t abi,
			const struct report_opts *o)
{
	struct memout mo;
	FILE *f = memout_open(&mo);

	assert_int_equal(report_table_abi(f, m->total, m->ntotal, abi, o), 0);
	return memout_close(&mo);
}

/* The whole report of a model, as text (caller frees). */
static char *render(const struct sc_model *m, const struct report_opts *o,
		    const struct report_meta *meta)
{
	struct memout mo;
	FILE *f = memout_open(&mo);

	assert_int_equal(report_write(f, m, o, meta), 0);
	return memout_close(&mo);
}

#define NAT SC_ABI_NATIVE
#define C32 SC_ABI_COMPAT
#define X32 SC_ABI_X32

/* ---- the strace -c table ------------------------------------------------- */

/* Default columns, sorted by time: header, rules, blank zero errors,
 * truncated usecs/call, %6.2f shares of the total, the total line.
 */
static void test_table_default_layout(void **state)
{
	static const struct spec rows[] = {
		{ NAT, 0, 101, 0, 23000, 180, 1200, 101 },	 /* read */
		{ NAT, 35, 3, 0, 6275000, 2080000, 2100000, 0 }, /* nanosleep */
		{ NAT, 110, 100050, 0, 17144000, 150, 9000, 0 }, /* getppid */
		{ NAT, 231, 2, 0, 0, 0, 0, 0 },		   /* exit_group */
		{ NAT, 257, 13, 10, 34000, 900, 8000, 0 }, /* openat */
	};
	static const char want[] =
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		" 73.03    0.017144           0    100050           getppid\n"
		" 26.73    0.006275        2091         3           nanosleep\n"
		"  0.14    0.000034           2        13        10 openat\n"
		"  0.10    0.000023           0       101           read\n"
		"  0.00    0.000000           0         2           exit_group\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.023476           0    100169        10 total\n";
	struct sc_model *m = model_of(rows, 5);
	struct report_opts o;
	char *got;

	(void)state;
	report_opts_default(&o);
	got = render_abi(m, NAT, &o);
	CHECK_STR(got, want, "default table");
	free(got);
	/* The whole report of a native-only model is that table alone. */
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, want, "report_write, table format");
	free(got);
	model_free(m);
}

/* Columns widen to fit a number or a name, as strace's do. */
static void test_table_widths_grow(void **state)
{
	static const struct spec rows[] = {
		{ NAT, 35, 1, 0, 123456789012000ULL, 123456789012000ULL,
		  123456789012000ULL, 0 },
		{ NAT, 257, 9999999999ULL, 9999999999ULL, 5000000000ULL, 1, 10,
		  0 },
		{ NAT, 110, 1234567890ULL, 0, 1000000000ULL, 1, 5, 0 },
		{ NAT, 204, 1, 0, 1000, 1000, 1000, 0 }, /* sched_getaffinity */
	};
	static const char want[] =
		"% time       seconds   usecs/call       calls     errors syscall\n"
		"------ ------------- ------------ ----------- ---------- ------------------\n"
		"100.00 123456.789012 123456789012           1            nanosleep\n"
		"  0.00      5.000000            0  9999999999 9999999999 openat\n"
		"  0.00      1.000000            0  1234567890            getppid\n"
		"  0.00      0.000001            1           1            sched_getaffinity\n"
		"------ ------------- ------------ ----------- ---------- ------------------\n"
		"100.00 123462.789013           10 11234567891 9999999999 total\n";
	struct sc_model *m = model_of(rows, 4);
	struct report_opts o;
	char *got;

	(void)state;
	report_opts_default(&o);
	got = render_abi(m, NAT, &o);
	CHECK_STR(got, want, "widened table");
	free(got);
	model_free(m);
}

/*
 * -U calls,name,errors -S calls: the name column padded when it is not
 * last, blank zero errors padded too; ties by number (ioctl 16 before
 * sched_getaffinity 204), as `strace -c -U calls,name,errors nproc`.
 */
static void test_table_columns_name_not_last(void **state)
{
	static const struct spec rows[] = {
		{ NAT, 0, 3, 0, 300, 100, 100, 0 },	 /* read */
		{ NAT, 3, 19, 0, 1900, 100, 100, 0 },	 /* close */
		{ NAT, 16, 1, 1, 100, 100, 100, 0 },	 /* ioctl */
		{ NAT, 204, 1, 0, 100, 100, 100, 0 },	 /* sched_getaffinity */
		{ NAT, 257, 30, 13, 3000, 100, 100, 0 }, /* openat */
	};
	static const char want[] = "    calls syscall               errors\n"
				   "--------- ------------------ ---------\n"
				   "       30 openat                    13\n"
				   "       19 close                       \n"
				   "        3 read                        \n"
				   "        1 ioctl                      1\n"
				   "        1 sched_getaffinity           \n"
				   "--------- ------------------ ---------\n"
				   "       54 total                     14\n";
	struct sc_model *m = model_of(rows, 5);
	struct report_opts o;
	const char *bad = NULL;
	char *got;

	(void)state;
	report_opts_default(&o);
	assert_int_equal(report_parse_cols("calls,name,errors", o.cols, &bad),
			 0);
	assert_int_equal(report_parse_sort("calls", &o.sort), 0);
	got = render_abi(m, NAT, &o);
	CHECK_STR(got, want, "-U calls,name,errors -S calls");
	free(got);
	model_free(m);
}

/*
 * -U name,calls,min-time,max-time -S name: shortest/longest in seconds
 * (%.6f), their widths grown by a 12.5 s call; the total line holds the
 * smallest minimum and the largest maximum.
 */
static void test_table_min_max_columns(void **state)
{
	static const struct spec rows[] = {
		{ NAT, 0, 7, 0, 2700000, 1400, 2600000, 0 }, /* read */
		{ NAT, 1, 1, 0, 12500000000ULL, 12500000000ULL, 12500000000ULL,
		  0 },					     /* write */
		{ NAT, 3, 23, 0, 23 * 500, 300, 1000, 0 },   /* close */
		{ NAT, 9, 30, 0, 30 * 2000, 900, 45000, 0 }, /* mmap */
	};
	static const char want[] =
		"syscall              calls  shortest   longest\n"
		"---------------- --------- --------- ---------\n"
		"close                   23  0.000000  0.000001\n"
		"mmap                    30  0.000001  0.000045\n"
		"read                     7  0.000001  0.002600\n"
		"write                    1 12.500000 12.500000\n"
		"---------------- --------- --------- ---------\n"
		"total                   61  0.000000 12.500000\n";
	struct sc_model *m = model_of(rows, 4);
	struct report_opts o;
	const char *bad = NULL;
	char *got;

	(void)state;
	report_opts_default(&o);
	assert_int_equal(report_parse_cols("name,calls,min-time,max-time",
					   o.cols, &bad),
			 0);
	assert_int_equal(report_parse_sort("name", &o.sort), 0);
	got = render_abi(m, NAT, &o);
	CHECK_STR(got, want, "-U name,calls,min-time,max-time -S name");
	free(got);
	model_free(m);
}

/*
 * Compat (i386) and x32 calls get their own tables under strace's
 * "System call usage summary for ... mode:" titles, each with its own
 * total; an unknown i386 number prints as syscall_0x1f4.
 */
static void test_table_abi_sections(void **state)
{
	static const struct spec rows[] = {
		{ NAT, 110, 10, 0, 5000, 400, 600, 0 },	      /* getppid */
		{ NAT, 0, 5, 0, 2500, 400, 600, 0 },	      /* read */
		{ C32, 11, 1, 0, 300000, 300000, 300000, 0 }, /* execve */
		{ C32, 500, 4, 4, 4000, 900, 1100, 0 },	      /* unknown */
		{ C32, 20, 20, 0, 2000, 90, 110, 0 },	      /* getpid */
		{ X32, 0, 2, 0, 1000, 500, 500, 0 },	      /* read */
	};
	static const char want[] =
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		" 66.67    0.000005           0        10           getppid\n"
		" 33.33    0.000003           0         5           read\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000008           0        15           total\n"
		"System call usage summary for 32 bit mode:\n"
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		" 98.04    0.000300         300         1           execve\n"
		"  1.31    0.000004           1         4         4 syscall_0x1f4\n"
		"  0.65    0.000002           0        20           getpid\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000306          12        25         4 total\n"
		"System call usage summary for x32 mode:\n"
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000001           0         2           read\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000001           0         2           total\n";
	struct sc_model *m = model_of(rows, 6);
	struct report_opts o;
	char *got;

	(void)state;
	report_opts_default(&o);
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, want, "native, 32 bit and x32 tables");
	free(got);
	model_free(m);
}

/* Only 32-bit calls: no empty native table before the titled one. */
static void test_table_compat_only(void **state)
{
	static const struct spec rows[] = {
		{ C32, 20, 1, 0, 300, 300, 300, 0 }, /* getpid */
	};
	static const char want[] =
		"System call usage summary for 32 bit mode:\n"
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         1           getpid\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         1           total\n";
	struct sc_model *m = model_of(rows, 1);
	struct report_opts o;
	char *got;

	(void)state;
	report_opts_default(&o);
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, want, "32 bit only");
	free(got);
	model_free(m);
}

/*
 * Unknown numbers keep their own names when rows of another ABI sort
 * between them (names of unknown numbers live inside each row's view).
 */
static void test_table_unknown_names_with_other_abi(void **state)
{
	static const struct spec rows[] = {
		{ C32, 20, 1, 0, 300, 300, 300, 0 },  /* getpid, sorts first */
		{ NAT, 500, 1, 0, 200, 200, 200, 0 }, /* syscall_0x1f4 */
		{ NAT, 501, 1, 0, 100, 100, 100, 0 }, /* syscall_0x1f5 */
	};
	static const char want[] =
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		" 66.67    0.000000           0         1           syscall_0x1f4\n"
		" 33.33    0.000000           0         1           syscall_0x1f5\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         2           total\n"
		"System call usage summary for 32 bit mode:\n"
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         1           getpid\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         1           total\n";
	struct sc_model *m = model_of(rows, 3);
	struct report_opts o;
	char *got;

	(void)state;
	report_opts_default(&o);
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, want, "unknown numbers beside another ABI");
	free(got);
	model_free(m);
}

/* Nothing recorded: one empty table rather than silence. */
static void test_table_empty(void **state)
{
	static const char want[] =
		"% time     seconds  usecs/call     calls    errors syscall\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"------ ----------- ----------- --------- --------- ----------------\n"
		"100.00    0.000000           0         0           total\n";
	struct sc_model *m = model_new();
	struct report_opts o;
	char *got;

	(void)state;
	assert_non_null(m);
	assert_int_equal(model_finalize(m), 0);
	report_opts_default(&o);
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, want, "empty model");
	free(got);
	model_free(m);
}

/* -P: a table per process, titled with its pid and its escaped comm. */
static void test_table_per_process(void **state)
{
	struct sc_model *m = model_new();
	struct sc_stats *st = calloc(1, sizeof(*st));
	static const struct spec getppid = {
		NAT, 110, 4, 0, 4000, 900, 1100, 0
	};
	struct report_opts o;
	struct sc_proc *p;
	char *got;

	(void)state;
	assert_non_null(m);
	assert_non_null(st);
	stats_fill(st, &getppid);
	p = model_proc(m, 42, 1, 0);
	assert_non_null(p);
	memcpy(p->comm, "\x1b[2Jevil\nname\\", 15);
	p->exited = true;
	assert_int_equal(model_proc_add(p, NAT, 110, st), 0);
	p = model_proc(m, 7, 1, 0);
	assert_non_null(p);
	strcpy(p->comm, "sh");
	assert_int_equal(model_proc_add(p, NAT, 110, st), 0);
	assert_int_equal(model_finalize(m), 0);
	report_opts_default(&o);
	o.per_process = true;
	got = render(m, &o, &meta_cmd);
	{
		const char *p7 = strstr(got, "\nProcess 7 (sh):\n");
		const char *p42 = strstr(got,
					 "\nProcess 42 (\\x1b[2Jevil\\x0aname"
					 "\\\\), exited:\n");

		if (!p7 || !p42 || p7 > p42)
			unit_dump(got);
		CHECK(p7 != NULL, "title of process 7");
		CHECK(p42 != NULL, "title of process 42, comm escaped");
		CHECK(p7 < p42, "processes in pid order");
	}
	CHECK(!strchr(got, '\x1b'), "no raw ESC in the table");
	/* 5 lines for the aggregate, then per process a blank line, the
	 * title and 5 lines.
	 */
	CHECK(unit_count_lines(got) == 5 + 2 * 7, "%zu lines",
	      unit_count_lines(got));
	free(got);
	free(st);
	model_free(m);
}

/*
 * -H: a bcc-style bar chart per syscall, after its errors by errno; the
 * expected text is docs/usage.md's example.
 */
static void test_histograms(void **state)
{
	static const char want[] =
		"\nLatency histograms (wall time inside each call):\n"
		"\n"
		"openat: 13 calls, 10 errors\n"
		"    ENOENT                 : 10\n"
		"               nsecs            : count     distribution\n"
		"           513 -> 1024          : 9         "
		"|****************************************|\n"
		"          1025 -> 2048          : 0         "
		"|                                        |\n"
		"          2049 -> 4096          : 1         "
		"|****                                    |\n"
		"          4097 -> 8192          : 3         "
		"|*************                           |\n";
	struct sc_model *m = model_new();
	struct sc_stats *st = calloc(1, sizeof(*st));
	struct report_opts o;
	struct sc_proc *p;
	char *got;
	size_t n;

	(void)state;
	assert_non_null(m);
	assert_non_null(st);
	st->calls = 13;
	st->errors = 10;
	st->min_ns = 600;
	st->max_ns = 5000;
	st->total_ns = 9 * 600 + 4096 + 3 * 5000;
	st->hist[sc_hist_bucket(600)] = 9;
	st->hist[sc_hist_bucket(4096)] = 1; /* le: in 2049 -> 4096 */
	st->hist[sc_hist_bucket(5000)] = 3;
	p = model_proc(m, 1, 1, 0);
	assert_non_null(p);
	assert_int_equal(model_proc_add(p, NAT, 257, st), 0);
	assert_int_equal(model_errno_add(m, NAT, 257, ENOENT, 10), 0);
	assert_int_equal(model_finalize(m), 0);
	report_opts_default(&o);
	o.histograms = true;
	got = render(m, &o, &meta_cmd);
	n = strlen(got);
	/* the aggregate table comes first, the histograms end the report */
	CHECK_STR(n > strlen(want) ? got + n - strlen(want) : got, want,
		  "end of the -H report");
	free(got);
	free(st);
	model_free(m);
}

/* -i: an interval without calls is "no calls", not a table of zeros; a
 * one-shot report without calls keeps its empty table.
 */
static void test_empty_interval(void **state)
{
	struct sc_model *m = model_new();
	struct sc_stats st = {};
	struct report_opts o;
	char *got;

	(void)state;
	assert_non_null(m);
	assert_int_equal(model_finalize(m), 0);
	report_opts_default(&o);
	o.interval = true;
	o.per_process = true;
	got = render(m, &o, &meta_cmd);
	CHECK_STR(got, "no calls\n", "empty interval");
	free(got);
	o.interval = false;
	o.per_process = false;
	got = render(m, &o, &meta_cmd);
	CHECK(strstr(got, " total\n") != NULL,
	      "an empty one-shot report keeps its table: %s", got);
	free(got);
	model_free(m);

	/* an interval with a call is a table */
	m = model_new();
	assert_non_null(m);
	st.calls = 1;
	st.total_ns = 100;
	assert_int_equal(model_proc_add(model_proc(m, 1, 1, 0), NAT, 39, &st),
			 0);
	assert_int_equal(model_finalize(m), 0);
	o.interval = true;
	got = render(m, &o, &meta_cmd);
	CHECK(strstr(got, "getpid") && strstr(got, " total\n"),
	      "an interval with calls has its table: %s", got);
	free(got);
	model_free(m);
}

/* ---- sorting ------------------------------------------------------------- */

static const struct spec sort_rows[] = {
	/* abi nr calls errors total min max bytes */
	{ NAT, 0, 10, 0, 1000, 50, 300, 500 },	 /* read */
	{ NAT, 1, 5, 1, 5000, 900, 1100, 800 },	 /* write */
	{ NAT, 257, 20, 15, 3000, 10, 5000, 0 }, /* openat */
	{ NAT, 39, 1, 0, 2000, 2000, 2000, 0 },	 /* getpid */
	{ C32, 20, 2, 0, 4000, 1500, 2500, 0 },	 /* getpid, i386 */
};

/* Sort the rows by key and compare the order (as indexes in sort_rows). */
static void check_order_at(int line, const char *key, const int want[5])
{
	struct sc_row rows[5] = {};
	struct sc_stats *st = calloc(1, sizeof(*st));
	enum report_col col;
	struct row_view *v;

	assert_non_null(st);
	for (int i = 0; i < 5; i++) {
		stats_fill(st, &sort_rows[i]);
		rows[i].abi = sort_rows[i].abi;
		rows[i].nr = sort_rows[i].nr;
		rows[i].st = *st;
	}
	CHECK_AT(line, report_parse_sort(key, &col) == 0, "-S %s is a sort key",
		 key);
	v = view_rows(rows, 5, col);
	assert_non_null(v);
	for (int i = 0; i < 5; i++) {
		const struct spec *w = &sort_rows[want[i]];

		CHECK_AT(line, v[i].row == &rows[want[i]],
			 "-S %s: position %d is %s (abi %u), want %s (abi %u)",
			 key, i, v[i].name, v[i].row->abi,
			 names_syscall(w->abi, w->nr), w->abi);
	}
	free(v);
	free(st);
}
#define check_order(...) check_order_at(__LINE__, __VA_ARGS__)

static void test_sort_keys(void **state)
{
	(void)state;
	check_order("time", (const int[]){ 1, 4, 2, 3, 0 });
	check_order("time-percent", (const int[]){ 1, 4, 2, 3, 0 });
	check_order("total-time", (const int[]){ 1, 4, 2, 3, 0 });
	check_order("calls", (const int[]){ 2, 0, 1, 4, 3 });
	check_order("errors", (const int[]){ 2, 1, 0, 3, 4 });
	/* by name ascending; equal names by ABI */
	check_order("name", (const int[]){ 3, 4, 2, 0, 1 });
	check_order("avg-time", (const int[]){ 3, 4, 1, 2, 0 });
	check_order("min-time", (const int[]){ 3, 4, 1, 0, 2 });
	check_order("max-time", (const int[]){ 2, 4, 3, 1, 0 });
	check_order("p50", (const int[]){ 3, 4, 1, 2, 0 });
	check_order("bytes", (const int[]){ 1, 0, 3, 2, 4 });
	/* nothing: by ABI, then number */
	check_order("nothing", (const int[]){ 0, 1, 3, 2, 4 });
	check_order("none", (const int[]){ 0, 1, 3, 2, 4 });
}

/* Equal keys: ABI first, then number; unknown names survive sorting. */
static void test_sort_ties(void **state)
{
	static const enum report_col keys[] = {
		COL_TIME_TOTAL, COL_CALLS,    COL_ERRORS, COL_TIME_AVG,
		COL_TIME_MIN,	COL_TIME_MAX, COL_P50,	  COL_P99,
		COL_BYTES,	COL_NONE,
	};
	static const struct {
		uint32_t abi, nr;
		const char *name;
	} want[] = {
		{ NAT, 3, "close" },	       { NAT, 9, "mmap" },
		{ NAT, 500, "syscall_0x1f4" }, { C32, 5, "open" },
		{ C32, 600, "syscall_0x258" }, { X32, 0, "read" },
	};
	static const int input[] = { 5, 3, 2, 0, 4, 1 };
	struct sc_row rows[6] = {};
	struct spec s = { 0, 0, 3, 1, 3000, 900, 1100, 7 };

	(void)state;
	for (int i = 0; i < 6; i++) {
		rows[i].abi = want[input[i]].abi;
		rows[i].nr = want[input[i]].nr;
		stats_fill(&rows[i].st, &s);
	}
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct row_view *v = view_rows(rows, 6, keys[k]);

		assert_non_null(v);
		for (int i = 0; i < 6; i++) {
			CHECK(v[i].row->abi == want[i].abi &&
				      v[i].row->nr == want[i].nr,
			      "key %d: position %d is abi %u nr %u", keys[k], i,
			      v[i].row->abi, v[i].row->nr);
			CHECK(!strcmp(v[i].name, want[i].name),
			      "key %d: position %d named '%s', want '%s'",
			      keys[k], i, v[i].name, want[i].name);
		}
		free(v);
	}
	CHECK(view_rows(rows, 0, COL_CALLS) == NULL, "no rows, no views");
}

/* ---- -S and -U parsing --------------------------------------------------- */

static void test_parse_sort(void **state)
{
	static const struct {
		const char *s;
		enum report_col col;
	} ok[] = {
		{ "time", COL_TIME_TOTAL },
		{ "time-percent", COL_TIME_TOTAL },
		{ "time_percent", COL_TIME_TOTAL },
		{ "seconds", COL_TIME_TOTAL },
		{ "total-time", COL_TIME_TOTAL },
		{ "calls", COL_CALLS },
		{ "count", COL_CALLS },
		{ "errors", COL_ERRORS },
		{ "error", COL_ERRORS },
		{ "name", COL_NAME },
		{ "syscall", COL_NAME },
		{ "avg-time", COL_TIME_AVG },
		{ "avg_time", COL_TIME_AVG },
		{ "min-time", COL_TIME_MIN },
		{ "shortest", COL_TIME_MIN },
		{ "max-time", COL_TIME_MAX },
		{ "longest", COL_TIME_MAX },
		{ "p50", COL_P50 },
		{ "p90", COL_P90 },
		{ "p99", COL_P99 },
		{ "bytes", COL_BYTES },
		{ "nothing", COL_NONE },
		{ "none", COL_NONE },
	};
	static const char *const bad[] = {
		"",	  "bogus",     "Calls", "calls,", "calls ",
		" calls", "time,name", "p5",	"p500",	  "nam",
	};
	enum report_col col;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		col = COL_COUNT;
		CHECK(report_parse_sort(ok[i].s, &col) == 0 && col == ok[i].col,
		      "-S %s gives column %d, want %d", ok[i].s, col,
		      ok[i].col);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(report_parse_sort(bad[i], &col) == -EINVAL,
		      "-S '%s' is rejected", bad[i]);
}

static void check_cols_at(int line, const char *s, const enum report_col *want,
			  size_t n)
{
	enum report_col cols[COL_COUNT];
	const char *bad = NULL;

	memset(cols, 0xff, sizeof(cols));
	CHECK_AT(line, report_parse_cols(s, cols, &bad) == 0,
		 "-U %s is accepted", s);
	for (size_t i = 0; i < COL_COUNT; i++) {
		enum report_col w = i < n ? want[i] : COL_NONE;

		CHECK_AT(line, cols[i] == w, "-U %s: column %zu is %d, want %d",
			 s, i, cols[i], w);
	}
}
#define check_cols(...) check_cols_at(__LINE__, __VA_ARGS__)

static void check_cols_bad_at(int line, const char *s, size_t bad_at)
{
	enum report_col cols[COL_COUNT];
	const char *bad = NULL;

	CHECK_AT(line, report_parse_cols(s, cols, &bad) == -EINVAL,
		 "-U '%s' is rejected", s);
	CHECK_AT(line, bad == s + bad_at,
		 "-U '%s': the bad name is at offset %td, want %zu", s,
		 bad ? bad - s : -1, bad_at);
}
#define check_cols_bad(...) check_cols_bad_at(__LINE__, __VA_ARGS__)

static void test_parse_cols(void **state)
{
	(void)state;
	check_cols("calls,name",
		   (const enum report_col[]){ COL_CALLS, COL_NAME }, 2);
	/* the name column is added when missing */
	check_cols("calls", (const enum report_col[]){ COL_CALLS, COL_NAME },
		   2);
	check_cols("name", (const enum report_col[]){ COL_NAME }, 1);
	/* strace's aliases */
	check_cols("count,syscall,error",
		   (const enum report_col[]){ COL_CALLS, COL_NAME, COL_ERRORS },
		   3);
	check_cols("time_percent,seconds,shortest,longest,avg_time",
		   (const enum report_col[]){ COL_TIME_PCT, COL_TIME_TOTAL,
					      COL_TIME_MIN, COL_TIME_MAX,
					      COL_TIME_AVG, COL_NAME },
		   6);
	check_cols("syscall-name,time-total,time-min,time-max,time-avg",
		   (const enum report_col[]){ COL_NAME, COL_TIME_TOTAL,
					      COL_TIME_MIN, COL_TIME_MAX,
					      COL_TIME_AVG },
		   5);
	/* every column at once */
	check_cols("time,total-time,avg-time,calls,errors,min-time,max-time,"
		   "p50,p90,p99,bytes",
		   (const enum report_col[]){
			   COL_TIME_PCT, COL_TIME_TOTAL, COL_TIME_AVG,
			   COL_CALLS, COL_ERRORS, COL_TIME_MIN, COL_TIME_MAX,
			   COL_P50, COL_P90, COL_P99, COL_BYTES, COL_NAME },
		   12);

	/* unknown names, duplicates (aliases included), empty items */
	check_cols_bad("bogus", 0);
	check_cols_bad("calls,bogus,name", 6);
	check_cols_bad("calls,count", 6);
	check_cols_bad("name,syscall", 5);
	check_cols_bad("time,time-percent", 5);
	check_cols_bad("", 0);
	check_cols_bad("calls,", 6);
	check_cols_bad(",calls", 0);
	check_cols_bad("calls,,name", 6);
	check_cols_bad("none", 0);
	check_cols_bad("calls,nothing", 6);
	check_cols_bad("Calls", 0);
}

/* ---- JSON ---------------------------------------------------------------- */

static struct json_object *jget(struct json_object *o, const char *key,
				enum json_type type)
{
	struct json_object *v = NULL;

	CHECK(json_object_object_get_ex(o, key, &v), "JSON key '%s' missing",
	      key);
	CHECK(json_object_get_type(v) == type, "JSON key '%s' is a %s, want %s",
	      key, json_type_to_name(json_object_get_type(v)),
	      json_type_to_name(type));
	return v;
}

static uint64_t jget_u64(struct json_object *o, const char *key)
{
	return json_object_get_uint64(jget(o, key, json_type_int));
}

static const char *jget_str(struct json_object *o, const char *key)
{
	return json_object_get_string(jget(o, key, json_type_string));
}

/* The model behind the JSON and CSV tests. */
static struct sc_model *io_model(const char *hostile_comm)
{
	static const struct spec rows[] = {
		{ NAT, 0, 10, 0, 10000, 500, 2000, 4096 }, /* read */
		{ NAT, 257, 13, 10, 26000, 900, 8000, 0 }, /* openat */
		{ NAT, 110, 5, 0, 500, 90, 110, 0 },	   /* getppid */
	};
	struct sc_model *m = model_new();
	struct sc_stats *st = calloc(1, sizeof(*st));
	struct sc_proc *p;

	assert_non_null(m);
	assert_non_null(st);
	p = model_proc(m, 200, 1, 0);
	assert_non_null(p);
	strcpy(p->comm, "worker");
	p->ppid = 1;
	p->exited = true;
	for (int i = 0; i < 2; i++) {
		stats_fill(st, &rows[i]);
		assert_int_equal(model_proc_add(p, NAT, rows[i].nr, st), 0);
	}
	p = model_proc(m, 100, 2, 0);
	assert_non_null(p);
	memcpy(p->comm, hostile_comm, strlen(hostile_comm));
	p->ppid = 99;
	stats_fill(st, &rows[2]);
	assert_int_equal(model_proc_add(p, NAT, 110, st), 0);
	stats_fill(st, &rows[1]);
	assert_int_equal(model_proc_add(p, NAT, 257, st), 0);
	assert_int_equal(model_errno_add(m, NAT, 257, ENOENT, 18), 0);
	assert_int_equal(model_errno_add(m, NAT, 257, EACCES, 2), 0);
	m->meta.drops[SC_DROP_CALLS] = 3;
	m->meta.drops[SC_DROP_UNTIMED] = 4;
	m->meta.drops[SC_DROP_PROC_INFO] = 5;
	m->meta.drops[SC_DROP_ERRNO_DETAIL] = 6;
	assert_int_equal(model_finalize(m), 0);
	free(st);
	return m;
}

/* comm: quote, backslash, newline, CSI, invalid UTF-8 (15 bytes) */
#define HOSTILE_COMM "q\"\\\n\x1b[31m\xff\xc3(,x"

static struct json_object *render_json(const struct sc_model *m,
				       const struct report_meta *meta)
{
	struct report_opts o;
	struct json_object *root;
	char *text;

	report_opts_default(&o);
	o.format = REPORT_JSON;
	text = render(m, &o, meta);
	CHECK(unit_utf8_valid(text, strlen(text)), "JSON is valid UTF-8");
	root = json_tokener_parse(text);
	if (!root)
		unit_dump(text);
	CHECK(root != NULL, "JSON output parses");
	CHECK(json_object_get_type(root) == json_type_object, "one object");
	free(text);
	return root;
}

/* Every field of a syscall object; errnos only in the aggregate list. */
static void check_syscall_obj(struct json_object *s, bool aggregate,
			      const struct sc_stats *want)
{
	static const char *const u64_keys[] = {
		"nr",	    "calls",  "errors", "interrupted",
		"total_ns", "min_ns", "max_ns", "avg_ns",
		"p50_ns",   "p90_ns", "p99_ns",
	};
	const char *name = jget_str(s, "name");
	struct json_object *bytes = NULL;

	for (size_t i = 0; i < sizeof(u64_keys) / sizeof(u64_keys[0]); i++)
		jget(s, u64_keys[i], json_type_int);
	CHECK_STR(jget_str(s, "abi"), "64", "abi label");
	CHECK(json_object_object_get_ex(s, "bytes", &bytes), "%s: bytes key",
	      name);
	if (!strcmp(name, "read"))
		CHECK(json_object_get_type(bytes) == json_type_int &&
			      json_object_get_uint64(bytes) == want->bytes,
		      "read carries its bytes");
	else
		CHECK(bytes == NULL, "%s: bytes is null", name);
	CHECK(json_object_object_get_ex(s, "errnos", NULL) == aggregate,
	      "%s: errnos %s", name, aggregate ? "present" : "absent");
	CHECK(jget_u64(s, "calls") == want->calls &&
		      jget_u64(s, "errors") == want->errors &&
		      jget_u64(s, "total_ns") == want->total_ns &&
		      jget_u64(s, "min_ns") == want->min_ns &&
		      jget_u64(s, "max_ns") == want->max_ns &&
		      jget_u64(s, "interrupted") == want->interrupted,
	      "%s: figures as in the model", name);
	CHECK(jget_u64(s, "avg_ns") == want->total_ns / want->calls,
	      "%s: avg_ns", name);
	CHECK(jget_u64(s, "p50_ns") == hist_quantile(want, 0.5) &&
		      jget_u64(s, "p90_ns") == hist_quantile(want, 0.9) &&
		      jget_u64(s, "p99_ns") == hist_quantile(want, 0.99),
	      "%s: percentiles", name);
	CHECK(jget_u64(s, "p50_ns") >= want->min_ns &&
		      jget_u64(s, "p99_ns") <= want->max_ns,
	      "%s: percentiles in range", name);
}

static const struct sc_row *row_by_name(const struct sc_row *rows, size_t n,
					const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names_syscall(rows[i].abi, rows[i].nr), name))
			return &rows[i];
	}
	fail_msg("no row %s", name);
	return NULL;
}

static void test_json_fields(void **state)
{
	struct sc_model *m = io_model(HOSTILE_COMM);
	struct report_meta meta = meta_cmd;
	struct json_object *root, *drop, *sys, *procs;

	(void)state;
	meta.target = "cmd \xff\xfe arg";
	root = render_json(m, &meta);
	CHECK_STR(jget_str(root, "version"), SCPROF_VERSION, "version");
	CHECK_STR(jget_str(root, "mode"), "command", "mode");
	CHECK_STR(jget_str(root, "target"), "cmd \xef\xbf\xbd\xef\xbf\xbd arg",
		  "target made valid UTF-8");
	CHECK(jget_u64(root, "duration_ns") == 2500000000ULL, "duration_ns");
	CHECK(json_object_get_boolean(
		      jget(root, "targets_exited", json_type_boolean)),
	      "targets_exited");
	CHECK(json_object_get_int(jget(root, "exit_status", json_type_int)) ==
		      3,
	      "exit_status");

	drop = jget(root, "dropped", json_type_object);
	CHECK(jget_u64(drop, "calls") == 3 &&
		      jget_u64(drop, "untimed_calls") == 4 &&
		      jget_u64(drop, "process_info") == 5 &&
		      jget_u64(drop, "errno_detail") == 6,
	      "dropped counters");

	sys = jget(root, "syscalls", json_type_array);
	CHECK(json_object_array_length(sys) == 3,
	      "3 syscalls in the aggregate");
	for (size_t i = 0; i < json_object_array_length(sys); i++) {
		struct json_object *s = json_object_array_get_idx(sys, i);
		const char *name = jget_str(s, "name");
		const struct sc_row *r = row_by_name(m->total, m->ntotal, name);

		check_syscall_obj(s, true, &r->st);
		CHECK(jget_u64(s, "nr") == r->nr, "%s: nr", name);
	}
	/* default sort is by time: openat (52 us), read, getppid */
	CHECK_STR(jget_str(json_object_array_get_idx(sys, 0), "name"), "openat",
		  "first syscall");
	CHECK_STR(jget_str(json_object_array_get_idx(sys, 2), "name"),
		  "getppid", "last syscall");
	{
		struct json_object *e = jget(json_object_array_get_idx(sys, 0),
					     "errnos", json_type_object);

		CHECK(json_object_object_length(e) == 2 &&
			      jget_u64(e, "ENOENT") == 18 &&
			      jget_u64(e, "EACCES") == 2,
		      "openat errnos by name");
		e = jget(json_object_array_get_idx(sys, 1), "errnos",
			 json_type_object);
		CHECK(json_object_object_length(e) == 0, "read has no errnos");
	}

	procs = jget(root, "processes", json_type_array);
	CHECK(json_object_array_length(procs) == 2, "2 processes");
	{
		struct json_object *p = json_object_array_get_idx(procs, 0);
		struct json_object *ps = jget(p, "syscalls", json_type_array);

		CHECK(jget_u64(p, "pid") == 100 && jget_u64(p, "ppid") == 99,
		      "processes in pid order, ppid");
		CHECK_STR(
			jget_str(p, "comm"),
			"q\"\\\n\x1b[31m\xef\xbf\xbd\xef\xbf\xbd(,x",
			"hostile comm as valid UTF-8, controls kept for JSON");
		CHECK(!json_object_get_boolean(
			      jget(p, "exited", json_type_boolean)),
		      "exited false");
		CHECK(json_object_array_length(ps) == 2,
		      "2 syscalls of pid 100");
		for (size_t i = 0; i < 2; i++) {
			struct json_object *s =
				json_object_array_get_idx(ps, i);
			const struct sc_proc *mp =
				model_find_proc(m, 100, 2, 0);
			const struct sc_row *r = row_by_name(
				mp->rows, mp->nrows, jget_str(s, "name"));

			check_syscall_obj(s, false, &r->st);
		}
		p = json_object_array_get_idx(procs, 1);
		CHECK(jget_u64(p, "pid") == 200, "second process");
		CHECK_STR(jget_str(p, "comm"), "worker", "plain comm");
		CHECK(json_object_get_boolean(
			      jget(p, "exited", json_type_boolean)),
		      "exited true");
	}
	json_object_put(root);
	model_free(m);
}

/* processes is present even when empty; no exit_status without a command. */
static void test_json_empty(void **state)
{
	struct sc_model *m = model_new();
	struct report_meta meta = {
		.mode = "all",
		.target = "all",
		.exit_status = -1,
	};
	struct json_object *root;

	(void)state;
	assert_non_null(m);
	assert_int_equal(model_finalize(m), 0);
	root = render_json(m, &meta);
	CHECK(json_object_array_length(
		      jget(root, "processes", json_type_array)) == 0,
	      "processes: []");
	CHECK(json_object_array_length(
		      jget(root, "syscalls", json_type_array)) == 0,
	      "syscalls: []");
	CHECK(!json_object_object_get_ex(root, "exit_status", NULL),
	      "no exit_status");
	CHECK(!json_object_get_boolean(
		      jget(root, "targets_exited", json_type_boolean)),
	      "targets_exited false");
	json_object_put(root);
	model_free(m);
}

/* ---- CSV ----------------------------------------------------------------- */

/*
 * Split one CSV record (RFC 4180) into fields, unquoting them. Returns the
 * number of fields, -1 if malformed.
 */
static int csv_split(const char *line, char fields[][64], int max)
{
	int n = 0;
	const char *p = line;

	for (;;) {
		char *o;

		if (n == max)
			return -1;
		o = fields[n];
		if (*p == '"') {
			for (p++;; p++) {
				if (!*p)
					return -1;
				if (*p == '"') {
					if (p[1] != '"')
						break;
					p++;
				}
				*o++ = *p;
			}
			p++;
			if (*p && *p != ',')
				return -1;
		} else {
			for (; *p && *p != ','; p++) {
				if (*p == '"' || *p == '\r' || *p == '\n')
					return -1;
				*o++ = *p;
			}
		}
		*o = '\0';
		n++;
		if (!*p)
			return n;
		p++;
	}
}

static void test_csv_rows_and_quoting(void **state)
{
	static const char header[] =
		"pid,comm,abi,syscall,nr,calls,errors,total_ns,min_ns,max_ns,"
		"avg_ns,p50_ns,p90_ns,p99_ns,bytes,on_cpu_ns,cpu_wait_ns,"
		"blocked_ns,io_wait_ns";
	struct sc_model *m = io_model(HOSTILE_COMM);
	struct report_opts o;
	char fields[20][64];
	char *text, *line, *save = NULL, *want_comm;
	int nline = 0;

	(void)state;
	report_opts_default(&o);
	o.format = REPORT_CSV;
	text = render(m, &o, &meta_cmd);
	/* header + 2 rows of pid 100 + 2 rows of pid 200 */
	CHECK(unit_count_lines(text) == 5, "one line per row: %zu lines",
	      unit_count_lines(text));
	CHECK(!strchr(text, '\r') && !strchr(text, '\x1b'), "no CR, no ESC");
	CHECK(unit_utf8_valid(text, strlen(text)), "CSV is valid UTF-8");
	want_comm = esc_text(HOSTILE_COMM, strlen(HOSTILE_COMM));
	assert_non_null(want_comm);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), nline++) {
		int n = csv_split(line, fields, 20);

		if (nline == 0) {
			CHECK_STR(line, header, "CSV header");
			continue;
		}
		CHECK(n == 19, "line %d has %d fields: %s", nline, n, line);
		if (nline <= 2) {
			CHECK_STR(fields[0], "100", "pid order");
			CHECK_STR(fields[1], want_comm, "comm field unquoted");
			CHECK(line[4] == '"',
			      "comm with a comma and a quote "
			      "is quoted: %s",
			      line);
		} else {
			CHECK_STR(fields[0], "200", "pid order");
			CHECK_STR(fields[1], "worker", "plain comm");
		}
		CHECK_STR(fields[2], "64", "abi");
		if (!strcmp(fields[3], "read"))
			CHECK_STR(fields[14], "4096", "read bytes");
		else
			CHECK_STR(fields[14], "", "no bytes for non-I/O calls");
		if (!strcmp(fields[3], "openat"))
			CHECK(!strcmp(fields[4], "257") &&
				      !strcmp(fields[5], "13") &&
				      !strcmp(fields[6], "10") &&
				      !strcmp(fields[7], "26000") &&
				      !strcmp(fields[8], "900") &&
				      !strcmp(fields[9], "8000") &&
				      !strcmp(fields[10], "2000"),
			      "openat figures: %s", line);
	}
	CHECK(nline == 5, "%d records", nline);
	free(want_comm);
	free(text);
	model_free(m);
}

/* Every comm byte pattern still gives one record of 15 fields per row. */
/* --fd-types: rows of one syscall split by fd kind stay apart in the model
 * and its totals; the table names them "read (socket)", JSON keeps the
 * name and adds fd_type (null for calls on no fd), CSV adds a column, and
 * errnos go with the row of their kind. Without the flag JSON and CSV
 * have no fd_type at all.
 */
static void test_fd_types(void **state)
{
	struct spec s1 = { NAT, 0, 7, 0, 7000, 900, 1100, 700 };
	struct spec s2 = { NAT, 0, 5, 2, 5000, 900, 1100, 50 };
	struct spec s3 = { NAT, 39, 4, 0, 400, 90, 110, 0 };
	struct sc_model *m = model_new();
	struct sc_stats st;
	struct report_opts o;
	struct json_object *j, *arr, *r;
	struct sc_proc *p;
	char *text;
	int found = 0;

	(void)state;
	assert_non_null(m);
	p = model_proc(m, 1, 1, 0);
	assert_non_null(p);
	strcpy(p->comm, "test");
	stats_fill(&st, &s1);
	assert_int_equal(model_proc_add_fd(p, NAT, 0, SC_FD_SOCKET, &st), 0);
	stats_fill(&st, &s2);
	assert_int_equal(model_proc_add_fd(p, NAT, 0, SC_FD_BAD, &st), 0);
	assert_int_equal(model_proc_add_fd(p, NAT, 0, SC_FD_BAD, &st), 0);
	stats_fill(&st, &s3);
	assert_int_equal(model_proc_add(p, NAT, 39, &st), 0);
	assert_int_equal(model_errno_add_fd(m, NAT, 0, SC_FD_BAD, EBADF, 4), 0);
	assert_int_equal(model_finalize(m), 0);
	CHECK(p->nrows == 3 && m->ntotal == 3, "rows by kind: %zu, total %zu",
	      p->nrows, m->ntotal);

	report_opts_default(&o);
	o.fd_types = true;
	o.histograms = true;
	text = render(m, &o, &meta_cmd);
	CHECK(strstr(text, " read (socket)\n") &&
		      strstr(text, " read (bad)\n") &&
		      strstr(text, " getpid\n"),
	      "table names rows by kind:\n%s", text);
	CHECK(strstr(text, "read (bad): 10 calls, 4 errors\n    EBADF") &&
		      !strstr(text, "read (socket): 7 calls\n    EBADF"),
	      "errnos under the row of their kind:\n%s", text);
	free(text);

	o.histograms = false;
	o.format = REPORT_JSON;
	text = render(m, &o, &meta_cmd);
	j = json_tokener_parse(text);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "syscalls", &arr));
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *name, *kind, *calls, *errnos, *e;

		r = json_object_array_get_idx(arr, i);
		assert_true(json_object_object_get_ex(r, "name", &name));
		assert_true(json_object_object_get_ex(r, "fd_type", &kind));
		assert_true(json_object_object_get_ex(r, "calls", &calls));
		assert_true(json_object_object_get_ex(r, "errnos", &errnos));
		if (!strcmp(json_object_get_string(name), "getpid")) {
			CHECK(json_object_is_type(kind, json_type_null),
			      "getpid's fd_type is null");
			found |= 1;
		} else if (!strcmp(json_object_get_string(kind), "socket")) {
			CHECK_STR(json_object_get_string(name), "read",
				  "JSON name is the syscall's");
			CHECK(json_object_get_int64(calls) == 7 &&
				      !json_object_object_get_ex(errnos,
								 "EBADF", &e),
			      "read (socket) figures");
			found |= 2;
		} else if (!strcmp(json_object_get_string(kind), "bad")) {
			CHECK(json_object_get_int64(calls) == 10 &&
				      json_object_object_get_ex(errnos, "EBADF",
								&e) &&
				      json_object_get_int64(e) == 4,
			      "read (bad) figures and errnos");
			found |= 4;
		}
	}
	CHECK(found == 7, "every row in JSON: %d", found);
	json_object_put(j);
	free(text);
	o.fd_types = false;
	text = render(m, &o, &meta_cmd);
	CHECK(!strstr(text, "fd_type"), "no fd_type without --fd-types");
	free(text);

	o.format = REPORT_CSV;
	text = render(m, &o, &meta_cmd);
	CHECK(!strstr(text, "fd_type"), "no fd_type column without the flag");
	free(text);
	o.fd_types = true;
	o.sort = COL_CALLS;
	text = render(m, &o, &meta_cmd);
	CHECK_STR(text,
		  "pid,comm,abi,syscall,fd_type,nr,calls,errors,total_ns,"
		  "min_ns,max_ns,avg_ns,p50_ns,p90_ns,p99_ns,bytes,on_cpu_ns,"
		  "cpu_wait_ns,blocked_ns,io_wait_ns\n"
		  "1,test,64,read,bad,0,10,4,10000,900,1100,1000,976,1100,"
		  "1100,100,10000,0,0,0\n"
		  "1,test,64,read,socket,0,7,0,7000,900,1100,1000,971,1100,"
		  "1100,700,7000,0,0,0\n"
		  "1,test,64,getpid,,39,4,0,400,90,110,100,102,110,110,,400,0,"
		  "0,0\n",
		  "CSV with an fd_type column");
	free(text);
	model_free(m);
}

static void test_csv_random_comms(void **state)
{
	static const char pick[] = ",\"\n\r \\\x1b\x7f\xff\xc3\xa9"
				   "a";
	uint64_t seed = 1234;
	struct report_opts o;

	(void)state;
	report_opts_default(&o);
	o.format = REPORT_CSV;
	for (int iter = 0; iter < 300; iter++) {
		char comm[SC_COMM_LEN] = {};
		struct sc_model *m;
		char fields[20][64], *text, *line, *save = NULL, *want;
		size_t len = 1 + unit_rand(&seed) % (SC_COMM_LEN - 1);

		for (size_t i = 0; i < len; i++)
			comm[i] = pick[unit_rand(&seed) % (sizeof(pick) - 1)];
		m = io_model(comm);
		text = render(m, &o, &meta_cmd);
		want = esc_text(comm, strlen(comm));
		assert_non_null(want);
		CHECK(unit_count_lines(text) == 5, "%zu lines",
		      unit_count_lines(text));
		line = strtok_r(text, "\n", &save);
		for (int r = 0; r < 2; r++) {
			line = strtok_r(NULL, "\n", &save);
			assert_non_null(line);
			CHECK(csv_split(line, fields, 20) == 19,
			      "19 fields: %s", line);
			CHECK(!strcmp(fields[1], want),
			      "comm decodes to esc_text");
		}
		free(want);
		free(text);
		model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_default_layout),
		cmocka_unit_test(test_table_widths_grow),
		cmocka_unit_test(test_table_columns_name_not_last),
		cmocka_unit_test(test_table_min_max_columns),
		cmocka_unit_test(test_table_abi_sections),
		cmocka_unit_test(test_table_compat_only),
		cmocka_unit_test(test_table_unknown_names_with_other_abi),
		cmocka_unit_test(test_table_empty),
		cmocka_unit_test(test_table_per_process),
		cmocka_unit_test(test_histograms),
		cmocka_unit_test(test_empty_interval),
		cmocka_unit_test(test_sort_keys),
		cmocka_unit_test(test_sort_ties),
		cmocka_unit_test(test_parse_sort),
		cmocka_unit_test(test_parse_cols),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_json_empty),
		cmocka_unit_test(test_csv_rows_and_quoting),
		cmocka_unit_test(test_csv_random_comms),
		cmocka_unit_test(test_fd_types),
	};

	unit_init();
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}

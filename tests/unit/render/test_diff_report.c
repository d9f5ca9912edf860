// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof diff's output (user/render/diff_report.c and the differential
 * flame graph of flamegraph.c): names from the files escaped, the table's
 * changes and summary, the JSON list, two-count folded lines, the SVG's
 * colours.
 */
#include <math.h>
#include <json-c/json.h>

#include "unit.h"
#include "model/diff.h"
#include "render/diff_report.h"
#include "render/flamegraph.h"

static struct diff_result *result(enum diff_noise noise)
{
	struct diff_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->noise = noise;
	r->min_change_pct = DIFF_MIN_CHANGE_PCT;
	r->a.path = strdup("a.json");
	r->b.path = strdup("b\x1b]0;x\a.json");
	r->a.intervals = r->b.intervals = noise != DIFF_NOISE_NONE;
	r->a.nintervals = r->a.nused = r->b.nintervals = r->b.nused = 6;
	r->a.interval_s = r->b.interval_s = 0.5;
	r->a.seconds = r->b.seconds = 3;
	r->rows = calloc(16, sizeof(*r->rows));
	assert_non_null(r->rows);
	return r;
}

static void add(struct diff_result *r, const char *name, int group,
		enum diff_fig f, double a, double b, enum diff_state st,
		bool judged)
{
	struct diff_row *row = &r->rows[r->nrows++];

	row->syscall = strdup(name);
	row->abi = strdup("64");
	row->group = group;
	row->fig = f;
	row->a = a;
	row->b = b;
	row->change_pct = a && !isnan(a) && !isnan(b) ? (b - a) / a * 100 : NAN;
	row->threshold_pct = NAN;
	row->state = st;
	row->judged = judged;
}

static char *table(const struct diff_result *r, bool verbose)
{
	struct diff_report_opts o = { .verbose = verbose };
	struct memout m;

	assert_int_equal(diff_write_table(memout_open(&m), r, &o), 0);
	return memout_close(&m);
}

static void test_table_changes_and_unchanged(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_BOTH);
	char *t;

	(void)state;
	add(r, "getppid", -1, DIFF_CALLS, 10000, 5000, DIFF_CHANGED, true);
	add(r, "evil\x1b[2J\xff", -1, DIFF_CALLS, 0, 3, DIFF_NEW, true);
	add(r, "evil\x1b[2J\xff", -1, DIFF_MEAN, NAN, 900, DIFF_NEW, true);
	add(r, "getppid", -1, DIFF_MEAN, 300, 310, DIFF_SAME, true);
	add(r, "read", -1, DIFF_CALLS, 10, 10.1, DIFF_SAME, true);
	add(r, "execve", -1, DIFF_MEAN, 5000, 9000, DIFF_CHANGED, false);
	t = table(r, false);
	CHECK(strstr(t, "\ngetppid ") && strstr(t, " calls/s "), "%s", t);
	CHECK(strstr(t, " -50.0%\n"), "%s", t);
	CHECK(strstr(t, "new"), "%s", t);
	/* the hostile name, escaped: no ESC and no invalid byte printed */
	CHECK(!strchr(t, '\x1b') && !strchr(t, '\a') && !strchr(t, '\xff'),
	      "%s", t);
	CHECK(strstr(t, "evil\\x1b[2J\\xff"), "%s", t);
	CHECK(strstr(t, "b\\x1b]0;x\\x07.json"), "the file name escaped: %s",
	      t);
	/* a new syscall is one line (its calls), unchanged figures are not
	 * listed, the not judged change is counted
	 */
	CHECK(!strstr(t, " mean "), "%s", t);
	CHECK(strstr(t, "2 syscalls with no change beyond noise: execve, "
			"read\n"),
	      "%s", t);
	CHECK(strstr(t, "1 difference not judged"), "%s", t);
	free(t);
	/* -v: everything, ~ and ? */
	t = table(r, true);
	CHECK(strstr(t, "~") && strstr(t, "+80.0%?"), "%s", t);
	CHECK(!strstr(t, "not judged"), "%s", t);
	free(t);
	diff_result_free(r);
}

static void test_table_noise_unknown(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_NONE);
	char *t;

	(void)state;
	add(r, "getppid", -1, DIFF_CALLS, 10000, 5000, DIFF_CHANGED, false);
	add(r, "openat", -1, DIFF_ERRORS, 0, 20, DIFF_CHANGED, false);
	t = table(r, false);
	CHECK(strstr(t, "one report of 3.00 s"), "%s", t);
	CHECK(strstr(t, "Noise unknown") && strstr(t, "-i SECS"), "%s", t);
	/* no ? when nothing could be judged: the line said it once */
	CHECK(strstr(t, "-50.0%\n") && strstr(t, "from 0\n"), "%s", t);
	CHECK(unit_count_lines(t) == 7, "%s", t);
	free(t);
	diff_result_free(r);
}

static void test_table_no_change(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_BOTH);
	char *t;

	(void)state;
	add(r, "getppid", -1, DIFF_CALLS, 10000, 10010, DIFF_SAME, true);
	t = table(r, false);
	CHECK(strstr(t, "\nNo change.\n1 syscall with no change beyond "
			"noise: getppid\n"),
	      "%s", t);
	free(t);
	diff_result_free(r);
}

static void test_table_groups(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_BOTH);
	char *t;

	(void)state;
	r->grouped = true;
	r->ngroups = 1;
	r->groups = calloc(1, sizeof(*r->groups));
	r->groups[0].n = 1;
	r->groups[0].keys = calloc(1, sizeof(char *));
	r->groups[0].vals = calloc(1, sizeof(char *));
	r->groups[0].keys[0] = strdup("comm");
	r->groups[0].vals[0] = strdup("a\nb");
	add(r, "read", -1, DIFF_CALLS, 100, 50, DIFF_CHANGED, true);
	add(r, "read", 0, DIFF_CALLS, 100, 50, DIFF_CHANGED, true);
	t = table(r, false);
	CHECK(strstr(t, "By group:\ngroup"), "%s", t);
	CHECK(strstr(t, "comm=a\\x0ab read"), "%s", t);
	free(t);
	diff_result_free(r);
}

static void test_notes_keys_differ(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_BOTH);
	struct memout m;
	char *t;

	(void)state;
	r->by_a = strdup("comm");
	r->by_b = strdup("");
	r->a.count_only = true;
	r->b.dropped = 12;
	r->a.nused = 5;
	r->a.last_s = 0.1;
	diff_write_notes(memout_open(&m), r);
	t = memout_close(&m);
	CHECK(strstr(t, "A was made with --by comm and B without: comparing "
			"the totals only.\n"),
	      "%s", t);
	CHECK(strstr(t, "A was recorded with --count-only"), "%s", t);
	CHECK(strstr(t, "B lost 12 calls"), "%s", t);
	CHECK(strstr(t, "a last one of 0.10 s left out"), "%s", t);
	/* what reruns add to a time figure, with its factor */
	CHECK(strstr(t, "A time figure (mean, p50, p99, time/s) differs "
			"between reruns") &&
		      strstr(t, "adds 4.0 times\nthe spread of its intervals"),
	      "%s", t);
	free(t);
	diff_result_free(r);
}

static void test_json(void **state)
{
	struct diff_result *r = result(DIFF_NOISE_BOTH);
	struct json_object *arr, *o, *v;
	struct memout m;
	char *t;

	(void)state;
	add(r, "getppid", -1, DIFF_CALLS, 10000, 5000, DIFF_CHANGED, true);
	add(r, "open\xff", -1, DIFF_MEAN, NAN, 900, DIFF_NEW, false);
	r->rows[0].threshold_pct = 12.345;
	assert_int_equal(diff_write_json(memout_open(&m), r), 0);
	t = memout_close(&m);
	arr = json_tokener_parse(t);
	CHECK(arr && json_object_is_type(arr, json_type_array), "%s", t);
	assert_int_equal(json_object_array_length(arr), 2);
	o = json_object_array_get_idx(arr, 0);
	CHECK(json_object_object_get_ex(o, "figure", &v) &&
		      !strcmp(json_object_get_string(v), "calls_per_s"),
	      "%s", t);
	CHECK(json_object_object_get_ex(o, "change_pct", &v) &&
		      fabs(json_object_get_double(v) + 50) < 1e-9,
	      "%s", t);
	CHECK(json_object_object_get_ex(o, "significant", &v) &&
		      json_object_get_boolean(v),
	      "%s", t);
	CHECK(json_object_object_get_ex(o, "threshold_pct", &v) &&
		      fabs(json_object_get_double(v) - 12.35) < 1e-9,
	      "%s", t);
	CHECK(!json_object_object_get_ex(o, "group", &v), "totals: no group");
	o = json_object_array_get_idx(arr, 1);
	CHECK(json_object_object_get_ex(o, "threshold_pct", &v) && !v, "%s", t);
	/* not judged: significant null; absent: a null; from 0: null % */
	CHECK(json_object_object_get_ex(o, "significant", &v) && !v, "%s", t);
	CHECK(json_object_object_get_ex(o, "a", &v) && !v, "%s", t);
	CHECK(json_object_object_get_ex(o, "change_pct", &v) && !v, "%s", t);
	CHECK(json_object_object_get_ex(o, "state", &v) &&
		      !strcmp(json_object_get_string(v), "new"),
	      "%s", t);
	/* valid UTF-8 */
	CHECK(json_object_object_get_ex(o, "syscall", &v) &&
		      !strcmp(json_object_get_string(v), "open\xef\xbf\xbd"),
	      "%s", t);
	json_object_put(arr);
	free(t);
	diff_result_free(r);
}

/* A stack diff of lines "frames a b" given as {frames..., NULL}. */
static struct stack_diff *stacks(const char *const *const *lines,
				 const uint64_t (*counts)[2], size_t n)
{
	struct stack_diff *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->v = calloc(n, sizeof(*d->v));
	d->n = n;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (lines[i][k])
			k++;
		d->v[i].frames = calloc(k, sizeof(char *));
		d->v[i].nframes = k;
		for (size_t j = 0; j < k; j++)
			d->v[i].frames[j] = strdup(lines[i][j]);
		d->v[i].a = counts[i][0];
		d->v[i].b = counts[i][1];
		d->total_a += counts[i][0];
		d->total_b += counts[i][1];
		if (!counts[i][1])
			d->gone_a += counts[i][0];
	}
	return d;
}

static const char *const L0[] = { "app", "main", "logger", "write", NULL };
static const char *const L1[] = { "app", "main", "raw;x\\y", "write", NULL };
static const char *const L2[] = { "app", "init", "<old>", "mmap", NULL };
static const char *const *const LINES[] = { L0, L1, L2 };
static const uint64_t COUNTS[][2] = { { 700, 500 }, { 200, 500 }, { 100, 0 } };

static void test_folded(void **state)
{
	struct stack_diff *d = stacks(LINES, COUNTS, 3);
	struct memout m;
	char *t;

	(void)state;
	assert_int_equal(diff_write_folded(memout_open(&m), d), 0);
	t = memout_close(&m);
	CHECK_STR(t,
		  "app;main;logger;write 700 500\n"
		  "app;main;raw\\x3bx\\\\y;write 200 500\n"
		  "app;init;<old>;mmap 100 0\n",
		  "two-count folded lines");
	free(t);
	stack_diff_free(d);
}

/* The fill of the frame named name in svg, or "". */
static const char *fill_of(const char *svg, const char *name, char *buf,
			   size_t len)
{
	char key[128];
	const char *p, *f;

	snprintf(key, sizeof(key), "data-n=\"%s\"", name);
	p = strstr(svg, key);
	f = p ? strstr(p, "fill=\"") : NULL;
	buf[0] = '\0';
	if (f)
		snprintf(buf, len, "%.*s", (int)strcspn(f + 6, "\""), f + 6);
	return buf;
}

static void test_flamegraph_diff(void **state)
{
	struct stack_diff *d = stacks(LINES, COUNTS, 3);
	struct memout m;
	char *t, buf[64];

	(void)state;
	assert_int_equal(flamegraph_diff_svg(memout_open(&m), d, "a <-> b"), 0);
	t = memout_close(&m);
	/* raw: 20% -> 50%, the largest change: the deepest red; logger:
	 * 70% -> 50%, blue, 2/3 as deep (235 x 1/3 in red and green)
	 */
	CHECK(!strcmp(fill_of(t, "logger", buf, sizeof(buf)), "rgb(78,78,255)"),
	      "logger %s", buf);
	CHECK(!strcmp(fill_of(t, "raw;x\\\\y", buf, sizeof(buf)),
		      "rgb(255,0,0)"),
	      "raw %s", buf);
	/* app: all the samples on both sides, no change */
	CHECK(!strcmp(fill_of(t, "app", buf, sizeof(buf)), "rgb(240,240,240)"),
	      "app %s", buf);
	/* frames only A has are not drawn; the line under the title says
	 * how much of A that leaves out
	 */
	CHECK(!strstr(t, "data-n=\"init\"") && !strstr(t, "&lt;old&gt;"), "%s",
	      t);
	CHECK(strstr(t, "not drawn: 100 of A&#39;s samples (10.0%)"), "%s", t);
	CHECK(strstr(t, "a &lt;-&gt; b"), "the title escaped");
	CHECK(strstr(t, "(B: 500 samples, 50.00%; A: 700 samples, 70.00%; "
			"-20.00 points)"),
	      "%s", t);
	free(t);
	stack_diff_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_changes_and_unchanged),
		cmocka_unit_test(test_table_noise_unknown),
		cmocka_unit_test(test_table_no_change),
		cmocka_unit_test(test_table_groups),
		cmocka_unit_test(test_notes_keys_differ),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_flamegraph_diff),
	};

	unit_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof diff (user/analyze/diff.c, diff_load.c): the noise judgement on
 * known spreads, zero and near-zero values, new and gone syscalls, the
 * short last interval, one side with intervals, group matching, folded
 * stacks, and reports that are not reports.
 */
#include <errno.h>
#include <math.h>

#include "unit.h"
#include "analyze/diff.h"
#include "analyze/diff_input.h"
#include "analyze/diff_load.h"
#include "analyze/diff_stacks.h"

#define MAXIV 8

/* One syscall through a run: per interval calls, errors and mean ns. */
struct sc {
	const char *name;
	double calls[MAXIV];
	double errors[MAXIV];
	double avg_ns[MAXIV];
};

/*
 * A run as scprof writes it: JSON lines from -i (intervals), or one
 * object (the first duration only). A syscall with no call in an interval
 * is not in it, as in scprof's reports. by: a group key ("comm") and
 * each syscall is in the group of that name's value from group_vals, or
 * none (NULL).
 */
static char *report(const double *dur, size_t n, const struct sc *s, size_t ns,
		    bool intervals, const char *by,
		    const char *const *group_vals)
{
	struct memout m;
	FILE *f = memout_open(&m);

	for (size_t i = 0; i < (intervals ? n : 1); i++) {
		bool first = true;

		fprintf(f, "{");
		if (intervals)
			fprintf(f, "\"interval\":%zu,\"interval_end\":\"x\",",
				i + 1);
		fprintf(f,
			"\"version\":\"0.1.0\",\"duration_ns\":%.0f,"
			"\"syscalls\":[",
			dur[i] * 1e9);
		for (size_t k = 0; k < ns; k++) {
			if (!s[k].calls[i])
				continue;
			fprintf(f,
				"%s{\"name\":\"%s\",\"abi\":\"64\",\"calls\":%.0f,"
				"\"errors\":%.0f,\"total_ns\":%.0f,\"avg_ns\":%.0f,"
				"\"p50_ns\":%.0f,\"p99_ns\":%.0f}",
				first ? "" : ",", s[k].name, s[k].calls[i],
				s[k].errors[i], s[k].calls[i] * s[k].avg_ns[i],
				s[k].avg_ns[i], s[k].avg_ns[i],
				2 * s[k].avg_ns[i]);
			first = false;
		}
		fprintf(f, "]");
		if (by) {
			fprintf(f, ",\"groups\":[");
			first = true;
			for (size_t k = 0; k < ns; k++) {
				if (!s[k].calls[i])
					continue;
				fprintf(f,
					"%s{\"by\":{\"%s\":\"%s\"},\"syscalls\":"
					"[{\"name\":\"%s\",\"abi\":\"64\","
					"\"calls\":%.0f,\"errors\":%.0f,"
					"\"total_ns\":%.0f,\"avg_ns\":%.0f,"
					"\"p50_ns\":%.0f,\"p99_ns\":%.0f}]}",
					first ? "" : ",", by, group_vals[k],
					s[k].name, s[k].calls[i],
					s[k].errors[i],
					s[k].calls[i] * s[k].avg_ns[i],
					s[k].avg_ns[i], s[k].avg_ns[i],
					2 * s[k].avg_ns[i]);
				first = false;
			}
			fprintf(f, "]");
		} else {
			fprintf(f, ",\"processes\":[]");
		}
		fprintf(f, "}\n");
	}
	return memout_close(&m);
}

static struct diff_run *parse(const char *text, const char *name)
{
	struct diff_run *r = NULL;

	assert_int_equal(diff_run_parse(text, strlen(text), name, &r), 0);
	assert_non_null(r);
	return r;
}

/* Compare two texts (min change 5%). */
static struct diff_result *compare(const char *ta, const char *tb)
{
	struct diff_run *a = parse(ta, "a.json"), *b = parse(tb, "b.json");
	struct diff_opts o = { .min_change_pct = DIFF_MIN_CHANGE_PCT };
	struct diff_result *r = NULL;

	assert_int_equal(diff_compare(a, b, &o, &r), 0);
	assert_non_null(r);
	diff_run_free(a);
	diff_run_free(b);
	return r;
}

/* The row of syscall's figure in group (-1: the totals), or NULL. */
static const struct diff_row *row(const struct diff_result *r,
				  const char *syscall, enum diff_fig f,
				  int group)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].syscall, syscall) &&
		    r->rows[i].fig == f && r->rows[i].group == group)
			return &r->rows[i];
	return NULL;
}

static const double DUR4[] = { 1, 1, 1, 1 };

/* ---- the judgement ------------------------------------------------------ */

static enum diff_state judge(double a, double sea, double b, double seb,
			     bool *judged, double *pct)
{
	return diff_judge((struct diff_est){ a, sea, 0 },
			  (struct diff_est){ b, seb, 0 }, DIFF_MIN_CHANGE_PCT,
			  judged, pct);
}

static void test_judge_known_spreads(void **state)
{
	bool judged;
	double pct;

	(void)state;
	/* 10 apart, noise sqrt(1 + 1) = 1.41: 7 sigmas, a change */
	CHECK(judge(100, 1, 110, 1, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(judged && fabs(pct - 10) < 1e-9, "pct %g", pct);
	/* the other way round: -9.1% */
	CHECK(judge(110, 1, 100, 1, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(fabs(pct + 100.0 / 11) < 1e-9, "pct %g", pct);
	/* 10 apart, noise sqrt(9 + 9) = 4.24: 2.4 sigmas, within noise */
	CHECK(judge(100, 3, 110, 3, &judged, &pct) == DIFF_SAME, "");
	CHECK(judged, "the noise is known");
	/* just either side of 3 sigmas: noise 5 (3, 4) */
	CHECK(judge(100, 3, 114.9, 4, &judged, &pct) == DIFF_SAME, "");
	CHECK(judge(100, 3, 115.1, 4, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(judge(100, 3, 85.1, 4, &judged, &pct) == DIFF_SAME, "");
	CHECK(judge(100, 3, 84.9, 4, &judged, &pct) == DIFF_CHANGED, "");
	/* no spread at all (the same count every interval): any change */
	CHECK(judge(1000, 0, 1100, 0, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(judge(1000, 0, 1000, 0, &judged, &pct) == DIFF_SAME, "");
}

static void test_judge_min_change(void **state)
{
	bool judged;
	double pct;

	(void)state;
	/* far beyond the noise but 3%: no change at 5% */
	CHECK(judge(100, 0.01, 103, 0.01, &judged, &pct) == DIFF_SAME, "");
	CHECK(judged && fabs(pct - 3) < 1e-9, "pct %g", pct);
	CHECK(diff_judge((struct diff_est){ 100, 0.01, 0 },
			 (struct diff_est){ 103, 0.01, 0 }, 2, &judged,
			 &pct) == DIFF_CHANGED,
	      "at --min-change 2 it counts");
}

static void test_judge_noise_unknown(void **state)
{
	bool judged;
	double pct;

	(void)state;
	CHECK(judge(100, NAN, 50, NAN, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(!judged && fabs(pct + 50) < 1e-9, "pct %g", pct);
	CHECK(judge(100, NAN, 104, NAN, &judged, &pct) == DIFF_SAME,
	      "under --min-change");
	CHECK(!judged, "");
	/* one side's spread alone does not judge */
	CHECK(judge(100, 1, 50, NAN, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(!judged, "");
}

static void test_judge_zero(void **state)
{
	bool judged;
	double pct;

	(void)state;
	/* from 0: no percentage, judged by the noise alone */
	CHECK(judge(0, 0, 5, 1, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(isnan(pct), "pct %g from 0", pct);
	CHECK(judge(0, 0, 2, 1, &judged, &pct) == DIFF_SAME,
	      "2 errors/s with a spread of 1 is noise");
	/* to 0: -100% */
	CHECK(judge(5, 1, 0, 0, &judged, &pct) == DIFF_CHANGED, "");
	CHECK(fabs(pct + 100) < 1e-9, "pct %g", pct);
	CHECK(judge(0, 0, 0, 0, &judged, &pct) == DIFF_SAME, "");
	/* near zero: a tiny rate doubling within its noise is no change */
	CHECK(judge(0.01, 0.01, 0.02, 0.01, &judged, &pct) == DIFF_SAME, "");
}

static void test_judge_rerun_part(void **state)
{
	struct diff_est a = { 100, 1, 0 }, b = { 110, 1, 0 };
	bool judged;
	double pct;

	(void)state;
	/* 10 apart, within-run noise 1.41: a change */
	CHECK(diff_judge(a, b, DIFF_MIN_CHANGE_PCT, &judged, &pct) ==
			      DIFF_CHANGED &&
		      judged,
	      "");
	/* what a rerun adds, 3 a side: noise sqrt(1 + 9 + 1 + 9) = 4.47,
	 * 10 is 2.2 of it: no change
	 */
	a.rerun = b.rerun = 3;
	CHECK(diff_judge(a, b, DIFF_MIN_CHANGE_PCT, &judged, &pct) ==
			      DIFF_SAME &&
		      judged,
	      "");
	CHECK(fabs(diff_threshold_pct(a, b, DIFF_MIN_CHANGE_PCT) -
		   3 * sqrt(20.0)) < 1e-9,
	      "threshold %g", diff_threshold_pct(a, b, DIFF_MIN_CHANGE_PCT));
	b.v = 114;
	CHECK(diff_judge(a, b, DIFF_MIN_CHANGE_PCT, &judged, &pct) ==
		      DIFF_CHANGED,
	      "14 > 13.4");
	/* the threshold is --min-change when the noise is smaller */
	a.rerun = b.rerun = 0;
	CHECK(diff_threshold_pct(a, b, DIFF_MIN_CHANGE_PCT) ==
		      DIFF_MIN_CHANGE_PCT,
	      "");
	/* unknown noise, or from 0: none */
	a.se = NAN;
	CHECK(isnan(diff_threshold_pct(a, b, DIFF_MIN_CHANGE_PCT)), "");
	a.se = 1;
	a.v = 0;
	CHECK(isnan(diff_threshold_pct(a, b, DIFF_MIN_CHANGE_PCT)), "");
}

/* ---- whole runs ----------------------------------------------------------- */

static void test_halved_calls_are_a_change(void **state)
{
	struct sc a[] = { { "getppid",
			    { 1000, 1010, 990, 1000 },
			    {},
			    { 300, 310, 290, 300 } } },
		  b[] = { { "getppid",
			    { 500, 505, 495, 500 },
			    {},
			    { 300, 290, 310, 300 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *calls = row(r, "getppid", DIFF_CALLS, -1),
			      *mean = row(r, "getppid", DIFF_MEAN, -1),
			      *time = row(r, "getppid", DIFF_TIME, -1);

	(void)state;
	CHECK(r->noise == DIFF_NOISE_BOTH, "noise %d", r->noise);
	CHECK(calls && calls->state == DIFF_CHANGED && calls->judged, "");
	CHECK(fabs(calls->a - 1000) < 1e-9 && fabs(calls->b - 500) < 1e-9,
	      "%g -> %g", calls->a, calls->b);
	CHECK(fabs(calls->change_pct + 50) < 1e-9, "%g", calls->change_pct);
	CHECK(mean && mean->state == DIFF_SAME && mean->judged,
	      "the latency did not change");
	CHECK(time && time->state == DIFF_CHANGED, "");
	CHECK(r->changed == 2, "calls/s and time/s: %zu", r->changed);
	/* changes first, the biggest first */
	CHECK(r->rows[0].state == DIFF_CHANGED, "");
	CHECK(r->rows[r->nrows - 1].state == DIFF_SAME, "");
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_same_calls_within_noise(void **state)
{
	/* a tick pattern: 4000 or 6000 a second, 5000 on average, +4% */
	struct sc a[] = { { "getppid",
			    { 4000, 6000, 4000, 6000 },
			    {},
			    { 300, 300, 300, 300 } } },
		  b[] = { { "getppid",
			    { 6000, 4000, 6000, 4800 },
			    {},
			    { 300, 300, 300, 300 } } },
		  c[] = { { "getppid",
			    { 6000, 4000, 6000, 6000 },
			    {},
			    { 300, 300, 300, 300 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 1, true, NULL, NULL),
	     *tc = report(DUR4, 4, c, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *calls = row(r, "getppid", DIFF_CALLS, -1);

	(void)state;
	CHECK(calls && calls->state == DIFF_SAME && calls->judged, "");
	CHECK(r->changed == 0, "%zu", r->changed);
	diff_result_free(r);
	/* +10%, still within the spread of +-1000 (se 577 a side) */
	r = compare(ta, tc);
	calls = row(r, "getppid", DIFF_CALLS, -1);
	CHECK(calls && calls->state == DIFF_SAME, "");
	CHECK(fabs(calls->change_pct - 10) < 1e-9, "%g", calls->change_pct);
	diff_result_free(r);
	free(ta);
	free(tb);
	free(tc);
}

/*
 * A time figure's noise adds DIFF_RUN_SPREAD times its intervals' spread
 * (what reruns differ by); a count's does not. Both +17%, both with a
 * spread of about 3.5% between intervals.
 */
static void test_time_figures_carry_rerun_noise(void **state)
{
	struct sc a[] = { { "getppid",
			    { 1000, 1040, 960, 1000 },
			    {},
			    { 290, 310, 290, 310 } } },
		  b[] = { { "getppid",
			    { 1170, 1210, 1130, 1170 },
			    {},
			    { 340, 360, 340, 360 } } },
		  c[] = { { "getppid",
			    { 1000, 1040, 960, 1000 },
			    {},
			    { 590, 610, 590, 610 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 1, true, NULL, NULL),
	     *tc = report(DUR4, 4, c, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *calls = row(r, "getppid", DIFF_CALLS, -1),
			      *mean = row(r, "getppid", DIFF_MEAN, -1);
	/* the means' spread: sd 11.55 a side, se 5.77, rerun 46.2 */
	double sd = 20 / sqrt(3.0), noise;

	(void)state;
	noise = sqrt(2 * (sd * sd / 4 +
			  DIFF_RUN_SPREAD * DIFF_RUN_SPREAD * sd * sd));
	/* calls: 170 apart, noise sqrt(2) * 16.3 = 23.1: a change */
	CHECK(calls && calls->state == DIFF_CHANGED && calls->judged, "");
	CHECK(fabs(calls->threshold_pct - 3 * sqrt(2 * 800 / 3.0) / 10) < 1e-6,
	      "calls threshold %g", calls->threshold_pct);
	/* the mean: 50 apart; within-run noise alone (8.2) would call it
	 * a change, with what reruns add (65.8) it is not
	 */
	CHECK(mean && mean->state == DIFF_SAME && mean->judged, "");
	/* (calls-weighted: 300.2 and 350.2) */
	CHECK(fabs(mean->change_pct - 16.65) < 0.01, "%g", mean->change_pct);
	CHECK(fabs(mean->threshold_pct - 3 * noise / mean->a * 100) < 1e-6,
	      "mean threshold %g, want %g", mean->threshold_pct,
	      3 * noise / mean->a * 100);
	CHECK(r->changed == 1, "calls/s only: %zu", r->changed);
	diff_result_free(r);
	/* twice as slow is beyond it */
	r = compare(ta, tc);
	mean = row(r, "getppid", DIFF_MEAN, -1);
	CHECK(mean && mean->state == DIFF_CHANGED && mean->judged, "");
	calls = row(r, "getppid", DIFF_CALLS, -1);
	CHECK(calls && calls->state == DIFF_SAME, "");
	diff_result_free(r);
	free(ta);
	free(tb);
	free(tc);
}

/*
 * A p99 with fewer than DIFF_TAIL_CALLS calls beyond it sits somewhere
 * in its histogram bucket: its noise adds half a bucket (DIFF_TAIL_RES of
 * it), so steady runs 30% apart are no change in it; with calls enough,
 * or in the median, they are.
 */
static void test_thin_tail_carries_the_bucket(void **state)
{
	struct sc a[] = { { "nanosleep",
			    { 100, 100, 100, 100 },
			    {},
			    { 5000, 5010, 5000, 5010 } } },
		  b[] = { { "nanosleep",
			    { 100, 100, 100, 100 },
			    {},
			    { 6500, 6510, 6500, 6510 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *p99 = row(r, "nanosleep", DIFF_P99, -1),
			      *p50 = row(r, "nanosleep", DIFF_P50, -1);

	(void)state;
	/* 400 calls a side: 4 beyond the p99 */
	CHECK(p99 && p99->state == DIFF_SAME && p99->judged, "");
	CHECK(p99->threshold_pct > 3 * sqrt(2.0) * 100 * DIFF_TAIL_RES - 1,
	      "p99 threshold %g", p99->threshold_pct);
	CHECK(p50 && p50->state == DIFF_CHANGED, "");
	diff_result_free(r);
	free(ta);
	free(tb);
	for (int i = 0; i < 4; i++)
		a[0].calls[i] = b[0].calls[i] = 1000;
	ta = report(DUR4, 4, a, 1, true, NULL, NULL);
	tb = report(DUR4, 4, b, 1, true, NULL, NULL);
	r = compare(ta, tb);
	p99 = row(r, "nanosleep", DIFF_P99, -1);
	CHECK(p99 && p99->state == DIFF_CHANGED, "4000 calls: 40 beyond");
	diff_result_free(r);
	free(ta);
	free(tb);
}

/* One side without intervals borrows the other's noise: the within-run
 * part scaled by the runs' lengths, the rerun part as it is.
 */
static void test_borrowed_rerun_noise(void **state)
{
	struct sc a[] = { { "getppid",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 290, 310, 290, 310 } } };
	const double sixteen[] = { 16 };
	struct sc b_near[] = { { "getppid", { 16000 }, {}, { 520 } } },
		  b_far[] = { { "getppid", { 16000 }, {}, { 700 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tn = report(sixteen, 1, b_near, 1, false, NULL, NULL),
	     *tf = report(sixteen, 1, b_far, 1, false, NULL, NULL);
	struct diff_result *r = compare(ta, tn);
	const struct diff_row *mean = row(r, "getppid", DIFF_MEAN, -1);
	double sd = 20 / sqrt(3.0), se = sd / 2, run = DIFF_RUN_SPREAD * sd;
	/* B's: se 520/300 * 5.77 * sqrt(4/16), rerun 520/300 * 46.2 (scaled
	 * like the se, the rerun part would make 220 a change)
	 */
	double k = 520.0 / 300,
	       noise = sqrt(se * se + run * run + k * k * se * se / 4 +
			    k * k * run * run);

	(void)state;
	CHECK(r->noise == DIFF_NOISE_A, "%d", r->noise);
	/* 220 apart: 220 < 3 * 92.8 */
	CHECK(mean && mean->judged && mean->state == DIFF_SAME, "");
	CHECK(fabs(mean->threshold_pct - 3 * noise / 300 * 100) < 1e-6,
	      "threshold %g, want %g", mean->threshold_pct,
	      3 * noise / 300 * 100);
	diff_result_free(r);
	/* 400 apart: 400 > 3 * 117.6 */
	r = compare(ta, tf);
	mean = row(r, "getppid", DIFF_MEAN, -1);
	CHECK(mean && mean->judged && mean->state == DIFF_CHANGED, "");
	diff_result_free(r);
	free(ta);
	free(tn);
	free(tf);
}

static void test_short_last_interval_left_out(void **state)
{
	/* 3 whole seconds of 1000 calls, then 0.1 s with 500 (5000/s) */
	const double dur[] = { 1, 1, 1, 0.1 };
	struct sc a[] = { { "getppid",
			    { 1000, 1000, 1000, 500 },
			    {},
			    { 300, 300, 300, 300 } } };
	char *ta = report(dur, 4, a, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, ta);
	const struct diff_row *calls = row(r, "getppid", DIFF_CALLS, -1);

	(void)state;
	CHECK(r->a.nintervals == 4 && r->a.nused == 3, "%zu of %zu", r->a.nused,
	      r->a.nintervals);
	CHECK(fabs(r->a.last_s - 0.1) < 1e-9, "%g", r->a.last_s);
	CHECK(fabs(r->a.seconds - 3) < 1e-9, "%g", r->a.seconds);
	CHECK(calls && fabs(calls->a - 1000) < 1e-9, "%g", calls->a);
	diff_result_free(r);
	free(ta);
	/* half the median or more is kept */
	{
		const double dur2[] = { 1, 1, 1, 0.5 };
		char *t2 = report(dur2, 4, a, 1, true, NULL, NULL);

		r = compare(t2, t2);
		CHECK(r->a.nused == 4, "%zu", r->a.nused);
		diff_result_free(r);
		free(t2);
	}
}

static void test_one_side_with_intervals(void **state)
{
	/* A: 1000 a second with an se of 40.8 (4.08%) over 4 s */
	struct sc a[] = { { "getppid",
			    { 1000, 1100, 900, 1000 },
			    {},
			    { 300, 300, 300, 300 } } };
	const double four[] = { 4 };
	/* B, one report of 4 s: se taken as 4.08% of B's value */
	struct sc b_far[] = { { "getppid", { 4800 }, {}, { 300 } } },
		  b_near[] = { { "getppid", { 4600 }, {}, { 300 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tf = report(four, 1, b_far, 1, false, NULL, NULL),
	     *tn = report(four, 1, b_near, 1, false, NULL, NULL);
	struct diff_result *r = compare(ta, tf);
	const struct diff_row *calls = row(r, "getppid", DIFF_CALLS, -1);

	(void)state;
	CHECK(r->noise == DIFF_NOISE_A, "%d", r->noise);
	CHECK(!r->b.intervals, "");
	/* 1200 vs 1000: 200 > 3 sqrt(40.8^2 + 49^2) = 191 */
	CHECK(calls && calls->judged && calls->state == DIFF_CHANGED,
	      "%g -> %g", calls->a, calls->b);
	diff_result_free(r);
	/* 1150: 150 < 3 sqrt(40.8^2 + 46.9^2) = 187 */
	r = compare(ta, tn);
	calls = row(r, "getppid", DIFF_CALLS, -1);
	CHECK(calls && calls->judged && calls->state == DIFF_SAME, "");
	diff_result_free(r);
	/* the other way round: B's intervals serve */
	r = compare(tf, ta);
	CHECK(r->noise == DIFF_NOISE_B, "%d", r->noise);
	calls = row(r, "getppid", DIFF_CALLS, -1);
	CHECK(calls && calls->judged && calls->state == DIFF_CHANGED, "");
	diff_result_free(r);
	free(ta);
	free(tf);
	free(tn);
}

static void test_no_intervals(void **state)
{
	const double two[] = { 2 }, four[] = { 4 };
	struct sc a[] = { { "getppid", { 2000 }, {}, { 300 } },
			  { "read", { 100 }, {}, { 1000 } } },
		  b[] = { { "getppid", { 2000 }, {}, { 300 } },
			  { "read", { 206 }, {}, { 1000 } } };
	char *ta = report(two, 1, a, 2, false, NULL, NULL),
	     *tb = report(four, 1, b, 2, false, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *g = row(r, "getppid", DIFF_CALLS, -1),
			      *rd = row(r, "read", DIFF_CALLS, -1);

	(void)state;
	CHECK(r->noise == DIFF_NOISE_NONE, "%d", r->noise);
	/* per second: 1000 in 2 s against 500 in 4 s is half the rate */
	CHECK(g && !g->judged && g->state == DIFF_CHANGED, "");
	CHECK(fabs(g->change_pct + 50) < 1e-9, "%g", g->change_pct);
	/* read: 50/s -> 51.5/s, +3%: under --min-change */
	CHECK(rd && rd->state == DIFF_SAME && !rd->judged, "");
	CHECK(r->changed == 2, "getppid's calls/s and time/s: %zu", r->changed);
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_new_and_gone(void **state)
{
	struct sc a[] = { { "getppid",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } },
			  { "openat",
			    { 50, 50, 50, 50 },
			    { 50, 50, 50, 50 },
			    { 2000, 2000, 2000, 2000 } },
			  { "execve", { 1, 0, 0, 0 }, {}, { 500000 } } },
		  b[] = { { "getppid",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } },
			  { "read",
			    { 70, 70, 70, 70 },
			    {},
			    { 900, 900, 900, 900 } },
			  { "execve", { 0, 1, 0, 0 }, {}, { 0, 500000 } } };
	char *ta = report(DUR4, 4, a, 3, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 3, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *gone = row(r, "openat", DIFF_CALLS, -1),
			      *gone_err = row(r, "openat", DIFF_ERRORS, -1),
			      *gone_mean = row(r, "openat", DIFF_MEAN, -1),
			      *nw = row(r, "read", DIFF_CALLS, -1),
			      *nw_mean = row(r, "read", DIFF_MEAN, -1),
			      *ex = row(r, "execve", DIFF_CALLS, -1);

	(void)state;
	CHECK(gone && gone->state == DIFF_GONE && gone->judged, "");
	CHECK(gone->b == 0 && fabs(gone->change_pct + 100) < 1e-9, "%g",
	      gone->change_pct);
	CHECK(gone_err && gone_err->state == DIFF_GONE, "");
	CHECK(gone_mean && isnan(gone_mean->b) && isnan(gone_mean->change_pct),
	      "no latency in B");
	CHECK(nw && nw->state == DIFF_NEW && nw->a == 0 &&
		      isnan(nw->change_pct),
	      "");
	CHECK(nw_mean && isnan(nw_mean->a) && nw_mean->state == DIFF_NEW, "");
	/* one execve a run, in another interval: no change */
	CHECK(ex && ex->state == DIFF_SAME, "");
	/* one change each for openat and read, not one per figure */
	CHECK(r->changed == 2, "%zu", r->changed);
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_stray_new_call_is_noise(void **state)
{
	/* one call in one interval of 4: mean 0.25/s, se 0.25: not new */
	struct sc a[] = { { "getppid",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } } },
		  b[] = { { "getppid",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } },
			  { "rt_sigreturn",
			    { 0, 0, 1, 0 },
			    {},
			    { 0, 0, 900, 0 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 2, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *x = row(r, "rt_sigreturn", DIFF_CALLS, -1);

	(void)state;
	CHECK(x && x->state == DIFF_SAME && x->judged, "%d",
	      x ? (int)x->state : -1);
	CHECK(r->changed == 0, "%zu", r->changed);
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_errors_from_zero(void **state)
{
	struct sc a[] = { { "openat",
			    { 100, 100, 100, 100 },
			    {},
			    { 2000, 2000, 2000, 2000 } } },
		  b[] = { { "openat",
			    { 100, 100, 100, 100 },
			    { 5, 6, 5, 6 },
			    { 2000, 2000, 2000, 2000 } } };
	char *ta = report(DUR4, 4, a, 1, true, NULL, NULL),
	     *tb = report(DUR4, 4, b, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *e = row(r, "openat", DIFF_ERRORS, -1);

	(void)state;
	CHECK(e && e->state == DIFF_CHANGED && e->judged, "");
	CHECK(e->a == 0 && isnan(e->change_pct), "%g", e->change_pct);
	diff_result_free(r);
	/* 0 errors on both sides: no row */
	r = compare(ta, ta);
	CHECK(!row(r, "openat", DIFF_ERRORS, -1), "");
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_groups_matched_by_values(void **state)
{
	/* A lists nginx first, B redis first: matched by value */
	struct sc a[] = { { "read",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } },
			  { "write",
			    { 800, 800, 800, 800 },
			    {},
			    { 300, 300, 300, 300 } } },
		  b[] = { { "write",
			    { 800, 800, 800, 800 },
			    {},
			    { 300, 300, 300, 300 } },
			  { "read",
			    { 400, 400, 400, 400 },
			    {},
			    { 300, 300, 300, 300 } } };
	const char *va[] = { "nginx", "redis" }, *vb[] = { "redis", "nginx" };
	char *ta = report(DUR4, 4, a, 2, true, "comm", va),
	     *tb = report(DUR4, 4, b, 2, true, "comm", vb);
	struct diff_result *r = compare(ta, tb);
	const struct diff_row *rd;
	int nginx = -1;

	(void)state;
	CHECK(r->grouped && !r->by_a && !r->by_b, "");
	CHECK(r->ngroups == 2, "%zu", r->ngroups);
	for (size_t i = 0; i < r->ngroups; i++) {
		CHECK(r->groups[i].n == 1 &&
			      !strcmp(r->groups[i].keys[0], "comm"),
		      "");
		if (!strcmp(r->groups[i].vals[0], "nginx"))
			nginx = (int)i;
	}
	CHECK(nginx >= 0, "");
	rd = row(r, "read", DIFF_CALLS, nginx);
	CHECK(rd && rd->state == DIFF_CHANGED &&
		      fabs(rd->change_pct + 60) < 1e-9,
	      "");
	rd = row(r, "write", DIFF_CALLS, 1 - nginx);
	CHECK(rd && rd->state == DIFF_SAME, "redis' writes did not change");
	/* no new or gone: nginx's read is not redis' */
	CHECK(!row(r, "read", DIFF_CALLS, 1 - nginx), "");
	/* the totals come first */
	CHECK(r->rows[0].group == -1, "");
	diff_result_free(r);
	free(ta);
	free(tb);
}

static void test_groups_by_other_keys(void **state)
{
	struct sc a[] = { { "read",
			    { 1000, 1000, 1000, 1000 },
			    {},
			    { 300, 300, 300, 300 } } };
	const char *v[] = { "nginx" }, *p[] = { "42" };
	char *ta = report(DUR4, 4, a, 1, true, "comm", v),
	     *tb = report(DUR4, 4, a, 1, true, "pid", p),
	     *tn = report(DUR4, 4, a, 1, true, NULL, NULL);
	struct diff_result *r = compare(ta, tb);

	(void)state;
	CHECK(!r->grouped && r->by_a && r->by_b, "");
	CHECK(!strcmp(r->by_a, "comm") && !strcmp(r->by_b, "pid"), "%s %s",
	      r->by_a, r->by_b);
	for (size_t i = 0; i < r->nrows; i++)
		CHECK(r->rows[i].group == -1, "the totals only");
	CHECK(row(r, "read", DIFF_CALLS, -1), "");
	diff_result_free(r);
	/* one with --by, one without */
	r = compare(tn, ta);
	CHECK(!r->grouped && !strcmp(r->by_a, "") && !strcmp(r->by_b, "comm"),
	      "");
	diff_result_free(r);
	free(ta);
	free(tb);
	free(tn);
}

static void test_count_only_has_no_latency(void **state)
{
	const char *t = "{\"duration_ns\":1000000000,\"count_only\":true,"
			"\"syscalls\":[{\"name\":\"getppid\",\"abi\":\"64\","
			"\"calls\":10,\"errors\":0,\"total_ns\":0,\"avg_ns\":0,"
			"\"p50_ns\":0,\"p99_ns\":0}]}";
	struct diff_result *r = compare(t, t);

	(void)state;
	CHECK(r->a.count_only && r->b.count_only, "");
	CHECK(row(r, "getppid", DIFF_CALLS, -1), "");
	CHECK(!row(r, "getppid", DIFF_MEAN, -1), "");
	CHECK(!row(r, "getppid", DIFF_TIME, -1), "");
	diff_result_free(r);
}

/* ---- input that is not a report ------------------------------------------ */

static int parse_err(const char *text)
{
	struct diff_run *r = NULL;
	struct fdcap cap;
	char *msg;
	int err;

	fdcap_begin(&cap, 2);
	err = diff_run_parse(text, strlen(text), "bad.json", &r);
	msg = fdcap_end(&cap);
	CHECK(!r, "no run from %s", text);
	/* one line naming the file */
	CHECK(err != 0 && unit_count_lines(msg) == 1 && strstr(msg, "bad.json"),
	      "%s -> %d %s", text, err, msg);
	free(msg);
	return err;
}

static void test_not_a_report(void **state)
{
	(void)state;
	assert_int_equal(parse_err(""), -EINVAL);
	assert_int_equal(parse_err("  \n"), -EINVAL);
	assert_int_equal(parse_err("{\"syscalls\": [}"), -EINVAL);
	assert_int_equal(parse_err("{\"a\": 1"), -EINVAL);
	assert_int_equal(parse_err("[1, 2]"), -EINVAL);
	assert_int_equal(parse_err("null"), -EINVAL);
	assert_int_equal(parse_err("{\"version\": \"1\"}"), -EINVAL);
	assert_int_equal(parse_err("{\"syscalls\": []}"), -EINVAL);
	assert_int_equal(parse_err("{\"syscalls\": [], \"duration_ns\": 0}"),
			 -EINVAL);
	/* a syscall without one of its figures */
	assert_int_equal(parse_err("{\"duration_ns\": 1, \"syscalls\": "
				   "[{\"name\": \"read\", \"calls\": 1}]}"),
			 -EINVAL);
	assert_int_equal(parse_err("{\"duration_ns\": 1, \"syscalls\": [1]}"),
			 -EINVAL);
	/* two one-shot reports in one file */
	assert_int_equal(parse_err("{\"duration_ns\": 1, \"syscalls\": []}\n"
				   "{\"duration_ns\": 1, \"syscalls\": []}"),
			 -EINVAL);
	/* JSON lines with one object that is no interval */
	assert_int_equal(parse_err("{\"interval\": 1, \"duration_ns\": 1, "
				   "\"syscalls\": []}\n{\"duration_ns\": 1, "
				   "\"syscalls\": []}"),
			 -EINVAL);
	/* negative numbers */
	assert_int_equal(
		parse_err("{\"duration_ns\": 1, \"syscalls\": [{\"name\": "
			  "\"read\", \"calls\": -1, \"errors\": 0, "
			  "\"total_ns\": 0, \"avg_ns\": 0, \"p50_ns\": 0, "
			  "\"p99_ns\": 0}]}"),
		-EINVAL);
	/* a group whose "by" holds a number */
	assert_int_equal(parse_err("{\"duration_ns\": 1, \"syscalls\": [], "
				   "\"groups\": [{\"by\": {\"pid\": 1}, "
				   "\"syscalls\": []}]}"),
			 -EINVAL);
}

static void test_error_names_the_line(void **state)
{
	const char *t = "{\"interval\": 1, \"duration_ns\": 1, \"syscalls\": "
			"[]}\n{\"interval\": 2, \"duration_ns\": 1,\n"
			"\"syscalls\": []}\n\n{\"interval\": 3, oops}\n";
	struct diff_run *r = NULL;
	struct fdcap cap;
	char *msg;

	(void)state;
	fdcap_begin(&cap, 2);
	assert_int_equal(diff_run_parse(t, strlen(t), "x.json", &r), -EINVAL);
	msg = fdcap_end(&cap);
	CHECK(strstr(msg, "x.json: line 5: not JSON\n"), "%s", msg);
	free(msg);
}

static void test_sniff(void **state)
{
	(void)state;
	CHECK(diff_sniff(" \n{\"a\":1}", 9) == DIFF_INPUT_JSON, "");
	CHECK(diff_sniff("[]", 2) == DIFF_INPUT_JSON, "");
	CHECK(diff_sniff("comm;main;read 3\n", 17) == DIFF_INPUT_FOLDED, "");
	CHECK(diff_sniff("\nread\t3\r\n", 10) == DIFF_INPUT_FOLDED, "");
	CHECK(diff_sniff("", 0) == DIFF_INPUT_OTHER, "");
	CHECK(diff_sniff(" \n", 2) == DIFF_INPUT_OTHER, "");
	CHECK(diff_sniff("hello\n", 6) == DIFF_INPUT_OTHER, "");
	CHECK(diff_sniff("12\n", 3) == DIFF_INPUT_OTHER, "no stack");
	CHECK(diff_sniff("\x7f"
			 "ELF 1",
			 6) == DIFF_INPUT_FOLDED,
	      "what it looks like: its lines are judged when read");
}

/* ---- folded stacks --------------------------------------------------------- */

static void folded(const char *text, struct folded_file *f)
{
	assert_int_equal(folded_parse(text, strlen(text), "x.folded", f), 0);
}

static void test_folded_parse(void **state)
{
	struct folded_file f;
	struct fdcap cap;
	char *msg;

	(void)state;
	/* \x3b is a ; inside a frame, \\ a backslash */
	folded("app;main;a\\x3bb;read 12\r\n\napp;c\\\\d;write  3\n", &f);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.v[0].nframes, 4);
	CHECK_STR(f.v[0].frames[2], "a;b", "decoded frame");
	assert_int_equal(f.v[0].count, 12);
	CHECK_STR(f.v[1].frames[1], "c\\d", "decoded backslash");
	assert_int_equal(f.v[1].count, 3);
	folded_free(&f);
	fdcap_begin(&cap, 2);
	CHECK(folded_parse("app;main 12\nno count here\n", 27, "x.folded",
			   &f) == -EINVAL,
	      "");
	CHECK(folded_parse("12\n", 3, "x.folded", &f) == -EINVAL,
	      "a count without a stack");
	CHECK(folded_parse("\n\n", 2, "x.folded", &f) == -EINVAL, "empty");
	msg = fdcap_end(&cap);
	CHECK(strstr(msg, "x.folded: line 2: not a folded stack line"), "%s",
	      msg);
	free(msg);
}

static void test_stack_diff(void **state)
{
	struct folded_file a, b;
	struct diff_opts o = { .min_change_pct = DIFF_MIN_CHANGE_PCT };
	struct stack_diff *d = NULL;

	(void)state;
	folded("app;main;logger;write 750\napp;main;raw;write 250\n"
	       "app;init;mmap 10\napp;main;raw;write 5\n",
	       &a);
	folded("app;main;logger;write 500\napp;main;raw;write 500\n"
	       "app;main;new;read 10\n",
	       &b);
	assert_int_equal(diff_stacks(&a, &b, &o, &d), 0);
	assert_int_equal(d->total_a, 1015);
	assert_int_equal(d->total_b, 1010);
	assert_int_equal(d->n, 4);
	/* sorted by frames; the two raw lines of A merged */
	CHECK_STR(d->v[0].frames[1], "init", "first line");
	assert_int_equal(d->v[0].a, 10);
	assert_int_equal(d->v[0].b, 0);
	CHECK_STR(d->v[1].frames[2], "logger", "second line");
	CHECK(d->v[1].significant, "75%% -> 50%%");
	CHECK_STR(d->v[3].frames[2], "raw", "last line");
	assert_int_equal(d->v[3].a, 255);
	assert_int_equal(d->v[3].b, 500);
	CHECK(d->v[3].significant, "25%% -> 50%%");
	assert_int_equal(d->gone_a, 10);
	assert_int_equal(d->new_b, 10);
	stack_diff_free(d);
	folded_free(&b);
	/* the same counts: nothing changed */
	assert_int_equal(diff_stacks(&a, &a, &o, &d), 0);
	assert_int_equal(d->changed, 0);
	stack_diff_free(d);
	/* a share moving within sampling noise: 10 of 1015 -> 12 of 1017 */
	folded("app;main;logger;write 750\napp;main;raw;write 250\n"
	       "app;init;mmap 12\napp;main;raw;write 5\n",
	       &b);
	assert_int_equal(diff_stacks(&a, &b, &o, &d), 0);
	assert_int_equal(d->changed, 0);
	stack_diff_free(d);
	folded_free(&a);
	folded_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge_known_spreads),
		cmocka_unit_test(test_judge_min_change),
		cmocka_unit_test(test_judge_noise_unknown),
		cmocka_unit_test(test_judge_zero),
		cmocka_unit_test(test_judge_rerun_part),
		cmocka_unit_test(test_halved_calls_are_a_change),
		cmocka_unit_test(test_same_calls_within_noise),
		cmocka_unit_test(test_time_figures_carry_rerun_noise),
		cmocka_unit_test(test_thin_tail_carries_the_bucket),
		cmocka_unit_test(test_borrowed_rerun_noise),
		cmocka_unit_test(test_short_last_interval_left_out),
		cmocka_unit_test(test_one_side_with_intervals),
		cmocka_unit_test(test_no_intervals),
		cmocka_unit_test(test_new_and_gone),
		cmocka_unit_test(test_stray_new_call_is_noise),
		cmocka_unit_test(test_errors_from_zero),
		cmocka_unit_test(test_groups_matched_by_values),
		cmocka_unit_test(test_groups_by_other_keys),
		cmocka_unit_test(test_count_only_has_no_latency),
		cmocka_unit_test(test_not_a_report),
		cmocka_unit_test(test_error_names_the_line),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_folded_parse),
		cmocka_unit_test(test_stack_diff),
	};

	unit_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff: two runs compared, as plain data. analyze/diff fills a
 * diff_result from two reports (one row per syscall, group and figure,
 * judged against the runs' interval-to-interval spread) and a stack_diff
 * from two folded stack files; render/diff_report prints them.
 */
#ifndef SCPROF_MODEL_DIFF_H
#define SCPROF_MODEL_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A change is beyond noise when |B - A| > DIFF_SIGMAS * sqrt(seA^2 +
 * seB^2), se the standard error of a side's figure: over its intervals,
 * and for a time figure what a rerun adds (DIFF_RUN_SPREAD).
 */
#define DIFF_SIGMAS 3.0
/*
 * What reruns of the same work differ by, which no spread inside one run
 * sees (another load, another CPU, a slow minute): a time figure (mean,
 * p50, p99, time/s) of a run with steady intervals can sit well away from
 * a rerun's. A side's standard error for one is sqrt(sd^2 / n +
 * (DIFF_RUN_SPREAD * sd)^2), sd the spread of its n intervals' values:
 * with every CPU busy, 4 was the least that kept the reruns measured
 * unchanged (docs/usage.md, "Did it help?"). Counts (calls/s, errors/s)
 * of the same work repeat: their error is the intervals' alone.
 */
#define DIFF_RUN_SPREAD 4.0
/*
 * A p99 with fewer than DIFF_TAIL_CALLS calls beyond it in a run (fewer
 * than 100 * DIFF_TAIL_CALLS calls in all) is read off a histogram
 * bucket holding a few calls: its place in the bucket (25% wide) is
 * arbitrary, and a rerun moves it by up to a bucket while the run's
 * intervals agree (busy reruns of 300 sleeps: p99s 35-38% apart, each
 * run's intervals within 1%). Its standard error then adds DIFF_TAIL_RES
 * of its value: half a bucket.
 */
#define DIFF_TAIL_CALLS 10.0
#define DIFF_TAIL_RES 0.125
/* Default --min-change: smaller changes are no change, however sure. */
#define DIFF_MIN_CHANGE_PCT 5.0
/* Intervals a side needs for its spread to be known. */
#define DIFF_MIN_INTERVALS 2
/* A last interval shorter than this share of the median is left out. */
#define DIFF_SHORT_LAST 0.5

/* The figures compared per syscall. */
enum diff_fig {
	DIFF_CALLS,  /* calls per second of run */
	DIFF_ERRORS, /* failed calls per second */
	DIFF_MEAN,   /* mean latency, ns */
	DIFF_P50,    /* median latency, ns */
	DIFF_P99,    /* 99th percentile latency, ns */
	DIFF_TIME,   /* ns inside the call per second of run */
	DIFF_FIGS,
};

/* A figure's change; judged (diff_row.judged) against the noise when
 * that is known, else only against --min-change.
 */
enum diff_state {
	DIFF_SAME,    /* within noise, or below --min-change */
	DIFF_CHANGED, /* beyond noise and at least --min-change */
	DIFF_NEW,     /* the syscall made calls in B only */
	DIFF_GONE,    /* the syscall made calls in A only */
};

/* What the noise of the comparison is known from. */
enum diff_noise {
	DIFF_NOISE_BOTH, /* both runs' intervals */
	DIFF_NOISE_A,	 /* A's intervals only, B's spread scaled from it */
	DIFF_NOISE_B,	 /* B's only */
	DIFF_NOISE_NONE, /* neither run has intervals: not judged */
};

/* A --by group: its keys and values, raw (escape them to print). */
struct diff_group {
	size_t n;
	char **keys;
	char **vals;
};

struct diff_row {
	/* Raw, from the reports: escape to print. */
	char *syscall;
	char *fd_type; /* NULL: no --fd-types */
	char *abi;     /* "64", "32", "x32" */
	int group;     /* index into diff_result.groups; -1: the totals */
	enum diff_fig fig;
	double a, b;	   /* NAN: the figure has no value on that side */
	double change_pct; /* (b - a) / a in %; NAN when a is 0 or absent */
	/* The smallest change that counts, in % of a: DIFF_SIGMAS standard
	 * errors, or --min-change if more; NAN when not judged or a is 0.
	 */
	double threshold_pct;
	enum diff_state state;
	bool judged; /* against the noise; else the noise is not known */
};

struct diff_side {
	char *path;
	bool intervals;	   /* JSON lines from -i */
	size_t nintervals; /* read */
	size_t nused;	   /* judged: a short last one left out */
	double last_s;	   /* the length of one left out, else 0 */
	double seconds;	   /* of the intervals used (or the run) */
	double interval_s; /* the median interval */
	bool count_only;   /* no latency or time figures */
	uint64_t dropped;  /* calls the report says were lost */
};

struct diff_result {
	struct diff_side a, b;
	enum diff_noise noise;
	double min_change_pct;
	/* Groups: compared when both runs were made with the same --by
	 * keys; else by_a and by_b say what each had ("comm,pid", "" for
	 * no --by) and only the totals are compared.
	 */
	bool grouped;
	char *by_a, *by_b; /* NULL when the keys agree */
	struct diff_group *groups;
	size_t ngroups;
	/* Totals first, then each group's; in each, the changes first
	 * (judged ones, then those not judged), the biggest first.
	 */
	struct diff_row *rows;
	size_t nrows;
	/* Changes that count (the exit status): judged ones, or any when
	 * the noise is not known at all; one per new or gone syscall.
	 */
	size_t changed;
};

void diff_result_free(struct diff_result *r);
/* Free n groups' keys and values, and the array. */
void diff_groups_free(struct diff_group *g, size_t n);
/* The figure's name in tables ("calls/s") and its JSON key. */
const char *diff_fig_name(enum diff_fig f);
const char *diff_fig_key(enum diff_fig f);
/* Latencies are in ns, the rest per second. */
bool diff_fig_is_latency(enum diff_fig f);
/* A measured time (a latency or time/s), rather than a count. */
bool diff_fig_is_time(enum diff_fig f);

/* Two folded stack files merged: one line per distinct stack. */
struct stack_diff_line {
	char **frames; /* raw, root first (the process name, ..., syscall) */
	size_t nframes;
	uint64_t a, b;	  /* samples in each file */
	bool significant; /* its share changed beyond sampling noise */
};

struct stack_diff {
	struct stack_diff_line *v; /* sorted by frames */
	size_t n;
	uint64_t total_a, total_b;
	uint64_t gone_a; /* A's samples in stacks that B does not have */
	uint64_t new_b;	 /* B's samples in stacks that A does not have */
	size_t changed;	 /* lines whose share changed significantly */
};

void stack_diff_free(struct stack_diff *d);

#endif

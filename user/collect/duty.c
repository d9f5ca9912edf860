// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "collect/duty.h"
#include "util/clock.h"
#include "util/log.h"

/* How often an open budgeted window looks at what it has spent. */
#define DUTY_CHECK_NS 50000000ULL
/* How often the tracepoint's dispatch is measured again. */
#define DUTY_MEASURE_NS (300 * 1000000000ULL)
/*
 * Cost windows (collector__has_cost_windows): the last share of each
 * period (away from the latency window, which begins it: there most runs
 * are timed ones), and from the start until the timing program has timed
 * this many of the runs that cost what the counting program's do.
 */
#define DUTY_COST_SHARE 0.01
#define DUTY_COST_RUNS 256
/* How often, until then, it looks (an idle target may never get there). */
#define DUTY_COST_CHECK_NS 1000000000ULL
/* Calls per measuring loop, and loops each way (the least is kept). */
#define DUTY_LOOP_CALLS 10000
#define DUTY_LOOPS 5
/* Rounds of a measurement, each switching the window once each way: the
 * median round is kept. 300,000 calls in all, about what one round of 7
 * loops of 20,000 each way was: a measurement at the start delays the
 * first window (scprof top's first frame is timed that much less).
 */
#define DUTY_ROUNDS 3
/* Tries at most, while the rounds' median says it costs nothing. */
#define DUTY_TRIES 3

struct duty {
	struct collector *col;
	struct duty_opts o;
	uint64_t period_ns;
	uint64_t period_start; /* CLOCK_MONOTONIC of the current period */
	uint64_t window_end;   /* planned; == period_start: no window */
	bool open;
	bool cost_open;	     /* a cost window */
	bool cost_known;     /* DUTY_COST_RUNS measured */
	uint64_t cost_start; /* the current period's cost window */
	uint64_t cost_opened_at, cost_closed_ns;
	uint64_t opened_at;
	uint64_t open_ns;   /* time inside windows in the current period */
	uint64_t closed_ns; /* inside windows closed, since the start */
	double ratio;
	double sample_ratio;
	double latency_share;
	struct collector_cost at_period; /* cost at the period's start */
	uint64_t windows, closed_early;
	/* CPU time so far, in ns, added up from one reading to the next (the
	 * runs between two readings at the per-run means of the later one),
	 * so that the totals never go down as the means move.
	 */
	struct collector_cost last;
	double enter_ns, exit_ns, switch_ns, waking_ns, lat_ns, count_ns;
	/* What a window adds to each call beyond its programs' own run
	 * time: the sys_enter tracepoint's dispatch, measured (ns/call).
	 */
	double dispatch_ns;
	uint64_t measured_at;
	double cost_ns; /* the windows' whole cost so far, dispatch included */
};

/* Work of one run of a kind, in ns (its timed runs' mean). */
static double per_run(const struct collector_cost *c, int k)
{
	return c->timed_runs[k] ?
		       (double)c->timed_ns[k] / (double)c->timed_runs[k] :
		       0;
}

/*
 * The latency part's cost between two readings, in ns: the enter
 * program's runs, and what timing adds to an exit run. The per-run figures
 * are the cumulative means (more samples, steadier).
 */
static double latency_ns(const struct collector_cost *now,
			 const struct collector_cost *then)
{
	double extra =
		per_run(now, SC_COST_EXIT_TIMED) - per_run(now, SC_COST_EXIT);

	if (extra < 0)
		extra = 0;
	return (double)(now->runs[SC_COST_ENTER] - then->runs[SC_COST_ENTER]) *
		       per_run(now, SC_COST_ENTER) +
	       (double)(now->runs[SC_COST_EXIT_TIMED] -
			then->runs[SC_COST_EXIT_TIMED]) *
		       extra;
}

/* Runs of kind k between two readings, at the later one's mean. */
static double spent_ns(const struct collector_cost *now,
		       const struct collector_cost *then, int k)
{
	return (double)(now->runs[k] - then->runs[k]) * per_run(now, k);
}

/* The split's scheduler programs between two readings (attached in
 * windows only): every context switch and wake-up of the machine runs
 * them, whoever's it is.
 */
static uint64_t split_runs(const struct collector_cost *now,
			   const struct collector_cost *then)
{
	return now->runs[SC_COST_SWITCH] - then->runs[SC_COST_SWITCH] +
	       now->runs[SC_COST_WAKING] - then->runs[SC_COST_WAKING] +
	       now->runs[SC_COST_WAKEUP] - then->runs[SC_COST_WAKEUP];
}

static double split_ns(const struct collector_cost *now,
		       const struct collector_cost *then)
{
	return spent_ns(now, then, SC_COST_SWITCH) +
	       spent_ns(now, then, SC_COST_WAKING) +
	       spent_ns(now, then, SC_COST_WAKEUP);
}

/* What a window cost between two readings: its programs' run time and
 * the dispatch of each call that ran the enter program, the calls it let
 * go at once included (other processes', when the daemon watches some),
 * and of each run of the split's programs. Their tracepoints' dispatch is
 * not measured apart: the sys_enter one's stands for it, an upper bound
 * (a syscall tracepoint is reached through the syscall entry's slow path
 * and, from 6.13, runs its probes under RCU Tasks Trace; the scheduler's
 * are plain static calls).
 */
static double window_ns(const struct duty *d, const struct collector_cost *now,
			const struct collector_cost *then)
{
	uint64_t calls = now->runs[SC_COST_ENTER] - then->runs[SC_COST_ENTER] +
			 now->runs[SC_COST_ENTER_OTHER] -
			 then->runs[SC_COST_ENTER_OTHER];

	return latency_ns(now, then) + split_ns(now, then) +
	       d->dispatch_ns * (double)(calls + split_runs(now, then));
}

/* ns per call of a loop of getppid calls (scprof's own: its programs
 * return at once for them, so what is measured is the dispatch), in the
 * thread's CPU time: on a busy machine a loop of a few ms is preempted
 * more often than not, and on the monotonic clock 3 rounds of 7 such
 * loops each way read from -153 to +218 ns a call beside an nginx load
 * (the least loop each way is no help when all of them waited); on the
 * thread's clock a wait adds nothing.
 */
static double loop_ns(void)
{
	uint64_t t0 = clock_thread_ns();

	for (int i = 0; i < DUTY_LOOP_CALLS; i++)
		syscall(SYS_getppid);
	return (double)(clock_thread_ns() - t0) / DUTY_LOOP_CALLS;
}

/*
 * One round of measuring what attaching the window's programs costs each
 * call that the programs' self-timing does not see: the tracepoint's
 * dispatch. The least of a few loops in the window's state as it is, then
 * in the other, is kept (noise only ever adds); the window is then put
 * back as it was. *ns: open less shut, ns a call.
 */
static int measure_round(struct duty *d, double *ns)
{
	double least[2] = { INFINITY, INFINITY }; /* [0]: shut, [1]: open */
	bool was = d->open;
	int err;

	for (int i = 0; i < DUTY_LOOPS; i++)
		least[was] = fmin(least[was], loop_ns());
	err = collector__latency_window(d->col, !was);
	for (int i = 0; !err && i < DUTY_LOOPS; i++)
		least[!was] = fmin(least[!was], loop_ns());
	err = collector__latency_window(d->col, was) ?: err;
	*ns = least[1] - least[0];
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Measure the dispatch: the median of DUTY_ROUNDS rounds. One round alone
 * (all a measurement was until then) read 7 and 57 ns in 2 of 30 daemons
 * of the benchmark's nginx budget runs, where the others read 25-46, and
 * the windows priced from them cost the load 0.07 s more and 0.01 s less
 * each than their metrics said (a 57 came back later with its three rounds
 * alike: what one more window adds follows the machine's state, other
 * probes on sys_enter included, and is measured in it).
 *
 * The window is switched as few times as that takes, one close a round: a
 * close removes a probe from a syscall tracepoint, and on kernels whose
 * syscall tracepoints run under RCU Tasks Trace (6.13 on, before its
 * reimplementation) every removal starts a grace period that leaves each
 * thread running at that moment marked, and a marked thread's every
 * syscall tracepoint call takes the slow unlock (a full barrier) from then
 * on: +10 to 20 ns a call measured here. Alternating within a round, as
 * this once did, made up to 28 of them at each measurement. A marked
 * measuring thread reads the dispatch some 8 ns dearer (40-42 against
 * 32.6-33.2 here): it is not marked by its own closes, which its loops
 * are over long before the grace period looks at it, but it may be by
 * others' (a tracer stopped just before the daemon started). With
 * --latency-duty 0 no window ever opens: nothing to measure.
 */
static int measure_dispatch(struct duty *d, uint64_t now)
{
	double ns[DUTY_ROUNDS], median = 0;
	int err;

	if (!collector__has_windows(d->col) || d->o.ratio == 0 ||
	    (!d->o.price && d->o.ratio > 0))
		return 0; /* no window to open, or nobody to tell */
	/* Loops slowed down by others on every try read no cost, or less
	 * than none (a median of 0.0 in one of 769 tests of a make test
	 * beside four builds): a dispatch is never free, so try again, and
	 * after DUTY_TRIES keep the last one measured, or none (unknown,
	 * not 0, and measured again at the next period's end).
	 */
	for (int t = 0; t < DUTY_TRIES && median <= 0; t++) {
		for (int i = 0; i < DUTY_ROUNDS; i++) {
			err = measure_round(d, &ns[i]);
			if (err)
				return err;
		}
		qsort(ns, DUTY_ROUNDS, sizeof(ns[0]), cmp_double);
		median = ns[DUTY_ROUNDS / 2];
	}
	if (median <= 0) {
		pr_debug("latency windows: no dispatch measured (rounds %.1f "
			 "to %.1f ns)",
			 ns[0], ns[DUTY_ROUNDS - 1]);
		return 0;
	}
	d->dispatch_ns = median;
	d->measured_at = now ? now : 1;
	pr_debug("latency windows: %.1f ns a call of dispatch (rounds %.1f "
		 "to %.1f)",
		 d->dispatch_ns, ns[0], ns[DUTY_ROUNDS - 1]);
	return 0;
}

static int set_window(struct duty *d, bool open, uint64_t now)
{
	int err;

	if (open == d->open)
		return 0;
	err = collector__latency_window(d->col, open);
	if (err)
		return err;
	d->open = open;
	if (open) {
		d->opened_at = now;
		d->windows++;
	} else {
		d->open_ns += now - d->opened_at;
		d->closed_ns += now - d->opened_at;
	}
	return 0;
}

uint64_t duty__timed_ns(const struct duty *d, uint64_t now)
{
	return d->closed_ns +
	       (d->open && now > d->opened_at ? now - d->opened_at : 0);
}

static void set_cost_window(struct duty *d, bool open, uint64_t now)
{
	if (open == d->cost_open)
		return;
	collector__cost_window(d->col, open);
	d->cost_open = open;
	if (open)
		d->cost_opened_at = now;
	else if (now > d->cost_opened_at)
		d->cost_closed_ns += now - d->cost_opened_at;
}

/* A new period at now: plan its window from the ratio, and its cost
 * window.
 */
static int begin_period(struct duty *d, uint64_t now)
{
	int err = collector__cost(d->col, &d->at_period);

	if (err)
		return err;
	d->period_start = now;
	d->cost_start =
		now + (uint64_t)((1 - DUTY_COST_SHARE) * (double)d->period_ns);
	d->open_ns = 0;
	d->window_end = now + (uint64_t)(d->ratio * (double)d->period_ns);
	return set_window(d, d->window_end > now, now);
}

/*
 * The period that ends now: what its window cost, and (budgeted) the
 * ratio that keeps the next one within the budget. A window that saw no
 * call costs nothing: the ratio may double, at most, a period.
 */
static int end_period(struct duty *d, uint64_t now)
{
	struct collector_cost c;
	double spent, full;
	int err;

	/* The window stays open into the next period if that one wants
	 * it from its start: no call is left untimed at the boundary.
	 */
	if (d->open) {
		d->open_ns += now - d->opened_at;
		d->closed_ns += now - d->opened_at;
		d->opened_at = now;
	}
	err = collector__cost(d->col, &c);
	if (err)
		return err;
	spent = window_ns(d, &c, &d->at_period);
	d->sample_ratio = (double)d->open_ns / (double)d->period_ns;
	d->latency_share = spent / (double)d->period_ns;
	if (!d->o.budget || d->o.ratio >= 0)
		return 0;
	/* CPU share the latency part would take with a window all along */
	full = d->open_ns ? spent / (double)d->open_ns : 0;
	if (full > 0 && d->o.budget / full < d->ratio * 2)
		d->ratio = d->o.budget / full;
	else
		d->ratio *= 2;
	d->ratio = fmin(1.0, fmax(DUTY_MIN_RATIO, d->ratio));
	return 0;
}

/* The cost window is open at now from its start to its period's end,
 * and all along until the runs it measures are known (looked at every
 * DUTY_COST_CHECK_NS).
 */
static int check_cost(struct duty *d, uint64_t now)
{
	uint64_t period_end = d->period_start + d->period_ns;
	struct collector_cost c;
	int err;

	if (!collector__has_cost_windows(d->col))
		return 0;
	if (!d->cost_known) {
		err = collector__cost(d->col, &c);
		if (err)
			return err;
		d->cost_known = c.timed_runs[SC_COST_EXIT] >= DUTY_COST_RUNS;
	}
	set_cost_window(
		d, !d->cost_known || (now >= d->cost_start && now < period_end),
		now);
	return 0;
}

/* A budgeted window closes once the period's budget is spent. */
static int check_budget(struct duty *d, uint64_t now)
{
	struct collector_cost c;
	int err;

	if (d->o.ratio >= 0 || !d->open)
		return 0;
	err = collector__cost(d->col, &c);
	if (err)
		return err;
	if (window_ns(d, &c, &d->at_period) <
	    d->o.budget * (double)d->period_ns)
		return 0;
	d->closed_early++;
	d->window_end = now;
	return set_window(d, false, now);
}

int duty__new(struct duty **out, struct collector *c,
	      const struct duty_opts *opts, uint64_t now_ns)
{
	struct duty *d = calloc(1, sizeof(*d));
	uint64_t t0 = clock_mono_ns();
	int err;

	if (!d)
		return -ENOMEM;
	d->col = c;
	d->o = *opts;
	if (d->o.period_s <= 0)
		d->o.period_s = DUTY_DEFAULT_PERIOD_S;
	d->period_ns = (uint64_t)(d->o.period_s * 1e9);
	/* Budgeted: start at one period in ten, then follow the cost. */
	d->ratio = d->o.ratio >= 0 ? d->o.ratio : 0.1;
	d->sample_ratio = d->ratio;
	err = measure_dispatch(d, now_ns);
	/* (the period starts once measuring is done) */
	err = err ?: begin_period(d, now_ns + (clock_mono_ns() - t0));
	err = err ?: check_cost(d, d->period_start);
	if (err) {
		free(d);
		return err;
	}
	*out = d;
	return 0;
}

int duty__tick(struct duty *d, uint64_t now, uint64_t *next)
{
	uint64_t period_end = d->period_start + d->period_ns;
	int err = 0;

	/* (closed before the dispatch is measured, at a period's end, once
	 * the runs it measures are known)
	 */
	err = check_cost(d, now);
	if (err)
		return err;
	if (now >= period_end) {
		err = end_period(d, now);
		if (!err && now - d->measured_at >= DUTY_MEASURE_NS) {
			uint64_t t0 = clock_mono_ns();

			err = measure_dispatch(d, now);
			now += clock_mono_ns() - t0;
		}
		if (!err)
			err = begin_period(d, now);
		period_end = d->period_start + d->period_ns;
	} else if (d->open && now >= d->window_end && d->o.ratio < 1) {
		err = set_window(d, false, now);
	} else {
		err = check_budget(d, now);
	}
	err = err ?: check_cost(d, now);
	if (err)
		return err;
	*next = period_end;
	if (d->open && d->o.ratio < 1 && d->window_end < *next)
		*next = d->window_end;
	if (d->open && d->o.ratio < 0 && now + DUTY_CHECK_NS < *next)
		*next = now + DUTY_CHECK_NS;
	if (collector__has_cost_windows(d->col)) {
		if (!d->cost_known && now + DUTY_COST_CHECK_NS < *next)
			*next = now + DUTY_COST_CHECK_NS;
		else if (!d->cost_open && now < d->cost_start &&
			 d->cost_start < *next)
			*next = d->cost_start;
	}
	return 0;
}

int duty__info(struct duty *d, struct duty_info *out)
{
	struct collector_cost c;
	double enter, exit, lat, sw, wk;
	int err = collector__cost(d->col, &c);

	if (err)
		return err;
	enter = spent_ns(&c, &d->last, SC_COST_ENTER);
	exit = spent_ns(&c, &d->last, SC_COST_EXIT) +
	       spent_ns(&c, &d->last, SC_COST_EXIT_TIMED);
	sw = spent_ns(&c, &d->last, SC_COST_SWITCH);
	/* (wake-ups: their start, sched_waking, and end, sched_wakeup) */
	wk = spent_ns(&c, &d->last, SC_COST_WAKING) +
	     spent_ns(&c, &d->last, SC_COST_WAKEUP);
	lat = latency_ns(&c, &d->last);
	d->cost_ns += window_ns(d, &c, &d->last);
	d->enter_ns += enter;
	d->exit_ns += exit;
	d->switch_ns += sw;
	d->waking_ns += wk;
	/* (the split's programs are part of timing calls) */
	d->lat_ns += lat + sw + wk;
	d->count_ns += fmax(0, enter + exit - lat);
	d->last = c;
	memset(out, 0, sizeof(*out));
	out->budgeted = d->o.ratio < 0;
	out->ratio = d->ratio;
	out->sample_ratio = d->sample_ratio;
	out->budget = d->o.budget;
	out->enter_s = d->enter_ns / 1e9;
	out->exit_s = d->exit_ns / 1e9;
	out->switch_s = d->switch_ns / 1e9;
	out->waking_s = d->waking_ns / 1e9;
	out->latency_s = d->lat_ns / 1e9;
	out->latency_cost_s = d->cost_ns / 1e9;
	out->dispatch_ns = d->dispatch_ns;
	out->dispatch_known = d->measured_at != 0;
	out->count_s = d->count_ns / 1e9;
	out->latency_share = d->latency_share;
	out->windows = d->windows;
	out->closed_early = d->closed_early;
	out->cost_windows = collector__has_cost_windows(d->col);
	out->cost_window_s = (double)d->cost_closed_ns / 1e9;
	if (d->cost_open) {
		uint64_t now = clock_mono_ns();

		if (now > d->cost_opened_at)
			out->cost_window_s +=
				(double)(now - d->cost_opened_at) / 1e9;
	}
	return 0;
}

void duty__free(struct duty *d)
{
	free(d);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Latency on a duty cycle (sampled mode): every call is counted, always;
 * the enter program that times calls is attached for a window at the
 * start of each period. With a fixed ratio the window is ratio * period;
 * otherwise the ratio is chosen from a CPU budget and what a window costs:
 * its programs' own measured run time (collector__cost: the enter
 * program, timing at exit, the split's scheduler programs) and the
 * tracepoint's dispatch of each call, which they cannot time themselves,
 * measured with a getppid loop with and without the window at the start
 * and every 5 minutes. A window that has spent the period's budget closes
 * early.
 */
#ifndef SCPROF_DUTY_H
#define SCPROF_DUTY_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/collector.h"

#define DUTY_DEFAULT_PERIOD_S 10.0
#define DUTY_DEFAULT_BUDGET 0.01 /* 1% of one CPU */
#define DUTY_MIN_RATIO 0.001	 /* the budget never turns timing off */

struct duty_opts {
	double ratio;	 /* fixed, in [0, 1]; negative: from the budget */
	double budget;	 /* CPU fraction (of one CPU) for the latency part */
	double period_s; /* 0: DUTY_DEFAULT_PERIOD_S */
	/* Measure what a window adds to each call (the dispatch loops), at
	 * the start and every 5 minutes: needed by a budget, and to report
	 * what windows cost. Without it (a fixed ratio nobody prices) the
	 * periods are not held up by the loops.
	 */
	bool price;
};

/* The duty cycle's figures, for reports (cumulative unless said). */
struct duty_info {
	bool budgeted;	     /* the ratio follows the budget */
	double ratio;	     /* planned for the current period */
	double sample_ratio; /* share of the last whole period inside a
			      * window (the planned ratio before one ended)
			      */
	double budget;
	double enter_s;	       /* CPU seconds of the enter program */
	double exit_s;	       /* CPU seconds of the exit program */
	double switch_s;       /* of the split's sched_switch program */
	double waking_s;       /* of the split's sched_waking program */
	double latency_s;      /* the latency part: enter + timing at exit +
				* the split's programs
				*/
	double latency_cost_s; /* the same and the dispatch: what windows
				* cost (what the budget holds)
				*/
	double dispatch_ns;    /* measured per call while a window is open */
	bool dispatch_known;   /* measured (there are windows to open) */
	double count_s;	       /* the counting part (never traded away) */
	double latency_share;  /* latency part's CPU share (of one CPU) over
			       * the last whole period
			       */
	uint64_t windows;      /* windows opened */
	uint64_t closed_early; /* windows closed when the budget was spent */
	bool cost_windows;     /* there are cost windows (tail calls) */
	double cost_window_s;  /* time inside them */
};

struct duty;

/* Starts the first period (and window) at now_ns. 0 or -errno. */
int duty__new(struct duty **out, struct collector *c,
	      const struct duty_opts *opts, uint64_t now_ns);
/*
 * Open or close the window as due at now_ns; *next_ns is when to call
 * again at the latest. 0 or -errno (reported).
 */
int duty__tick(struct duty *d, uint64_t now_ns, uint64_t *next_ns);
int duty__info(struct duty *d, struct duty_info *out);
/* Time spent inside windows since the start, up to now_ns. */
uint64_t duty__timed_ns(const struct duty *d, uint64_t now_ns);
void duty__free(struct duty *d);

#endif

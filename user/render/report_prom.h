/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Prometheus text exposition (format 0.0.4) of the record model: the
 * per-syscall counters, latency histograms and split of the time of a
 * cumulative snapshot, per-comm series, the CPU quota throttling of the
 * target's cgroup and scprof's own figures.
 */
#ifndef SCPROF_REPORT_PROM_H
#define SCPROF_REPORT_PROM_H

#include <stdint.h>
#include <stdio.h>

#include "model/comm_series.h"
#include "model/model.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* scprof's own state, as the daemon sees it. */
struct prom_self {
	unsigned int progs_attached;
	uint32_t stats_entries, stats_max;
	uint32_t procs_entries, procs_max;
	uint64_t map_bytes;
	uint64_t procs_folded;
	uint64_t comm_folded, comm_evicted;
	uint64_t scrapes;
	uint64_t scrape_ns; /* reading the maps for this scrape */
	uint64_t cpu_ns;    /* user + system time of the daemon */
	uint64_t rss_bytes;
	/* Latency on a duty cycle (all zero and not shown when !sampled). */
	bool sampled;
	bool budgeted;		/* the duty follows a CPU budget */
	double duty_ratio;	/* planned for the current period */
	double sample_ratio;	/* share of the last period that was timed */
	double budget;		/* fraction of one CPU (budgeted only) */
	double enter_s, exit_s; /* the syscall programs' CPU time */
	bool split;		/* the split's programs: their CPU time */
	double switch_s, waking_s;
	double latency_s, count_s; /* the same, by part */
	double latency_cost_s;	   /* latency_s and the dispatch it adds */
	double dispatch_ns;	   /* per call, while a window is open */
	bool dispatch_known;	   /* else no gauge */
	uint64_t windows, windows_closed_early;
	bool cost_windows; /* else no cost window metric */
	double cost_window_s;
	/* --slow (not shown when !slow): calls logged, and lost */
	bool slow;
	uint64_t slow_calls, slow_lost;
};

struct prom_input {
	const struct sc_model *model;	     /* cumulative and finalized */
	const struct comm_series_row *comms; /* NULL: no per-comm series */
	size_t ncomms;
	const struct prom_self *self; /* NULL: no self metrics */
	/* the series' labels (--labels); NULL or n 0: comm */
	const struct group_by *labels;
};

/* Number of finite `le` bounds of scprof_syscall_duration_seconds. */
#define PROM_LE_COUNT 15
/* The i-th bound in ns: 2^(8 + 2i), 256 ns to ~68.7 s. A bucket counts the
 * calls shorter than its bound: those are exact sums of BPF buckets.
 */
uint64_t prom_le_ns(unsigned int i);

/* Write the exposition. 0 or -errno (write errors included). */
int report_prom(FILE *f, const struct prom_input *in);

#endif

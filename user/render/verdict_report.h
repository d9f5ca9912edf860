/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A verdict as a short report, or as one JSON object. */
#ifndef SCPROF_VERDICT_REPORT_H
#define SCPROF_VERDICT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/calibration.h"
#include "model/verdict.h"

/* What was judged, and with which calibration. */
struct verdict_meta {
	pid_t pid;
	const char *comm; /* raw bytes: escaped on output */
	bool exited;	  /* it ended during the run */
	uint64_t threads; /* when last seen */
	const struct calibration *cal;
	bool cal_saved; /* loaded from the saved calibration */
	long long now;	/* Unix time of the report */
	/* Its calls still in flight at the end, longest first; known is
	 * false when scprof could not read them.
	 */
	const struct sc_flight_call *flights;
	size_t nflights;
	bool flights_known;
};

/* How many of the largest syscalls the reports list. */
#define VERDICT_TOP_ROWS 8

/* The one-line answer: "YES: ..." or "NO: ...". */
#define VERDICT_ANSWER_LEN 512
void verdict_answer(const struct verdict *v, char *buf, size_t len);
/* What a finding means and what to do, in a few sentences. */
#define VERDICT_ADVICE_LEN 1536
void verdict_advice(const struct verdict *v, const struct verdict_finding *f,
		    char *buf, size_t len);

int verdict_write_table(FILE *f, const struct verdict *v,
			const struct verdict_meta *meta);
int verdict_write_json(FILE *f, const struct verdict *v,
		       const struct verdict_meta *meta);

#endif

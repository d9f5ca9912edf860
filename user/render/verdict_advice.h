/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A verdict in words: the one-line answer and each finding's advice, as
 * the table prints them and JSON carries them (verdict_report.h).
 */
#ifndef SCPROF_VERDICT_ADVICE_H
#define SCPROF_VERDICT_ADVICE_H

#include <stddef.h>

#include "model/verdict.h"

/* The one-line answer: "YES: ..." or "NO: ...". */
#define VERDICT_ANSWER_LEN 512
void verdict_answer(const struct verdict *v, char *buf, size_t len);
/* What a finding means and what to do, in a few sentences. */
#define VERDICT_ADVICE_LEN 1536
void verdict_advice(const struct verdict *v, const struct verdict_finding *f,
		    char *buf, size_t len);
/* 950 -> "950 ns", 1671879.3 -> "1671.9 us", 25e6 -> "25.00 ms" */
const char *verdict_dur_text(double ns, char *buf, size_t len);
/* "the CFS quota of /a/b" (cgroup v1) or "cpu.max of /a/b", escaped. */
void verdict_quota_name(const struct sc_throttle *t, char *buf, size_t len);

#endif

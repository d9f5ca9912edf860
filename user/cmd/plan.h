/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The plan: each command's parsed options turned into the collector's and
 * the renderer's settings, once and with no side effect. What comes out is
 * read, never re-derived from the options, by everything after: the
 * collector (programs, map sizes, drain, fold) and the reports.
 */
#ifndef SCPROF_PLAN_H
#define SCPROF_PLAN_H

#include "cmd/cmd_daemon.h"
#include "cmd/cmd_profile_args.h"
#include "cmd/cmd_top.h"
#include "cmd/cmd_verdict.h"
#include "collect/collector.h"
#include "collect/target.h"
#include "render/report.h"
#include "render/top_frame.h"

/*
 * `scprof [OPTIONS] TARGET`: what to collect for the report asked for,
 * and that report's settings (--count-only's default columns and sort;
 * -i's rate column).
 */
void profile_plan(const struct profile_opts *o,
		  const struct target_found *found, struct collector_opts *co,
		  struct report_opts *ro);
/* `scprof top`, its rows grouped by group (the g key changes it). */
void top_plan(const struct top_opts *o, const struct target_found *found,
	      enum group_key group, struct collector_opts *co);
/* `scprof daemon`: every call counted and summed per syscall in the
 * kernel, latency on a duty cycle; per thread with per-name series.
 */
void daemon_plan(const struct daemon_opts *o, const struct target_found *found,
		 struct collector_opts *co);
/* `scprof verdict -p PID`: one process, fd kinds, the calls in flight. */
void verdict_plan(const struct verdict_opts *o, struct collector_opts *co);
/* The calibration's probe effect: scprof itself its one target, timed
 * as a -p PID run is.
 */
void calibrate_plan(struct collector_opts *co);

#endif

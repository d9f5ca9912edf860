/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The probe effect: what scprof's own programs add to a syscall, measured
 * on the floor loop (getppid) bare and probed, and what scprof reports for
 * that call while probing it.
 */
#ifndef SCPROF_PROBE_EFFECT_H
#define SCPROF_PROBE_EFFECT_H

#include "analyze/cal_loops.h"
#include "model/calibration.h"

struct collector_opts;

/* The floor loop bare and under a collector of co (the plan's
 * calibrate_plan: scprof itself its one target) added this process as
 * its target. samples holds 3 x p->runs doubles. 0 or -errno.
 */
int probe_effect_measure(const struct collector_opts *co, struct cal_env *e,
			 const struct cal_plan *p, double overhead_ns,
			 struct cal_probe *out, double *samples);

#endif

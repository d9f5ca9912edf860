// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Calibration: the loops of the catalogue one after another, pinned to a
 * CPU, then the probe effect. The loops are in cal_loops.c, their
 * statistics in cal_stats.c, the probe effect in probe_effect.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/calibrate.h"
#include "analyze/cal_loops.h"
#include "analyze/cal_stats.h"
#include "analyze/probe_effect.h"
#include "collect/sysinfo.h"
#include "util/log.h"

/* Runs per loop and the length of one run. */
#define QUICK_RUNS 7
#define QUICK_RUN_NS 80000000ULL
#define FULL_RUNS 15
#define FULL_RUN_NS 200000000ULL

static int report_loop_error(const char *name, int err)
{
	pr_err("calibration loop %s failed: %s", name, strerror(-err));
	return err;
}

static int measure(size_t i, struct cal_env *e, const struct cal_plan *p,
		   double overhead_ns, struct cal_loop_result *out,
		   double *samples)
{
	const struct cal_loop *d = cal_loop(i);
	cal_fn fn = cal_loop_fn(i);
	struct cal_stats st;
	uint64_t n;

	e->size = d->bytes;
	e->off = 0;
	n = cal_scale(fn, e, p->run_ns);
	if (e->err)
		return report_loop_error(d->name, e->err);
	for (uint32_t r = 0; r < p->runs; r++) {
		uint64_t t = cal_timed(fn, e, n);

		if (e->err)
			return report_loop_error(d->name, e->err);
		samples[r] = cal_per_call(t, n, overhead_ns);
	}
	cal_stats_compute(samples, p->runs, &st);
	out->name = d->name;
	out->ns_per_call = st.median;
	out->min_ns = st.min;
	out->max_ns = st.max;
	out->calls = n * p->runs;
	out->runs = p->runs;
	out->bytes_per_call = d->bytes;
	return 0;
}

/* The empty loop's cost per iteration, which every figure has taken off. */
static double measure_overhead(struct cal_env *e, const struct cal_plan *p,
			       double *samples)
{
	struct cal_stats st;
	uint64_t n = cal_scale(cal_loop_empty, e, p->run_ns / 4);

	for (uint32_t r = 0; r < p->runs; r++)
		samples[r] =
			cal_per_call(cal_timed(cal_loop_empty, e, n), n, 0);
	cal_stats_compute(samples, p->runs, &st);
	return st.median;
}

/* Pin to the CPU we run on; *old keeps the mask to restore. -1 if not. */
static int pin(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -1;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		pr_info("cannot pin to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return cpu;
}

static void progress(const struct calibrate_opts *o, size_t i, size_t n,
		     const char *what)
{
	if (o->progress)
		o->progress(o->progress_ctx, i, n, what);
}

int calibrate__run(const struct calibrate_opts *o, struct calibration **out)
{
	struct cal_plan p = {
		.runs = o->quick ? QUICK_RUNS : FULL_RUNS,
		.run_ns = o->quick ? QUICK_RUN_NS : FULL_RUN_NS,
	};
	struct cal_env e = { .fd = -1, .devnull = -1 };
	struct calibration *c;
	double *samples = NULL;
	cpu_set_t old;
	size_t steps = 0, step = 0;
	int err;

	*out = NULL;
	c = calibration__new();
	if (!c) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	c->quick = o->quick;
	c->created = (long long)time(NULL);
	c->loops = calloc(CAL_NLOOPS, sizeof(*c->loops));
	samples = calloc(3 * (size_t)p.runs, sizeof(*samples));
	err = c->loops && samples ? machine_read(&c->machine) : -ENOMEM;
	if (err) {
		pr_err("out of memory");
		goto cleanup;
	}
	err = cal_env_open(&e);
	if (err)
		goto cleanup;
	for (size_t i = 0; i < CAL_NLOOPS; i++)
		steps += !o->want || o->want[i];
	steps += o->probe;

	c->pinned_cpu = pin(&old);
	c->loop_overhead_ns = measure_overhead(&e, &p, samples);
	for (size_t i = 0; !err && i < CAL_NLOOPS; i++) {
		if (o->want && !o->want[i])
			continue;
		progress(o, step++, steps, cal_loop(i)->name);
		err = measure(i, &e, &p, c->loop_overhead_ns,
			      &c->loops[c->nloops], samples);
		if (!err)
			c->nloops++;
	}
	if (!err && o->probe) {
		progress(o, step++, steps, "probe effect");
		if (!o->probe_opts ||
		    probe_effect_measure(o->probe_opts, &e, &p,
					 c->loop_overhead_ns, &c->probe,
					 samples))
			pr_warn("the probe effect was not measured: "
				"probe_overhead_ns is unknown");
	}
	if (c->pinned_cpu >= 0)
		sched_setaffinity(0, sizeof(old), &old);
cleanup:
	cal_env_close(&e);
	free(samples);
	if (err) {
		calibration__free(c);
		return err;
	}
	*out = c;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdbool.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "analyze/probe_effect.h"
#include "analyze/cal_stats.h"
#include "collect/collector.h"

/* What scprof reported for this process's getppid calls: the mean. */
static double reported_floor(struct collector *c)
{
	struct sc_model *m = NULL;
	double v = 0;
	pid_t self = getpid();

	if (collector__snapshot(c, &m))
		return 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *p = &m->procs[i];

		if (p->pid != (uint32_t)self)
			continue;
		for (size_t j = 0; j < p->nrows; j++) {
			const struct sc_row *r = &p->rows[j];

			if (r->abi == SC_ABI_NATIVE && r->nr == SYS_getppid &&
			    r->st.calls)
				v = (double)r->st.total_ns /
				    (double)r->st.calls;
		}
	}
	model_free(m);
	return v;
}

/*
 * The probe effect: the floor loop bare and with scprof's programs
 * attached and targeting this process, in pairs whose order alternates so
 * that a drift in the machine's speed falls on both sides alike.
 */
int probe_effect_measure(const struct collector_opts *co, struct cal_env *e,
			 const struct cal_plan *p, double overhead_ns,
			 struct cal_probe *out, double *samples)
{
	struct collector *c = NULL;
	cal_fn floor_loop = cal_loop_fn(CAL_LOOP_GETPPID);
	double *bare = samples, *probed = samples + p->runs,
	       *diff = samples + 2 * p->runs;
	struct cal_stats st;
	uint64_t n;
	int err;

	err = collector__open(&c, co);
	if (err)
		return err;
	err = collector__add_target(c, getpid());
	if (err)
		goto out;
	n = cal_scale(floor_loop, e, p->run_ns);
	for (uint32_t i = 0; i < p->runs; i++) {
		for (int k = 0; k < 2; k++) {
			bool with = (k == 0) == (i % 2 == 1);
			uint64_t t;

			if (with) {
				err = collector__attach(c);
				if (err)
					goto out;
			}
			t = cal_timed(floor_loop, e, n);
			if (with)
				collector__detach(c);
			(with ? probed : bare)[i] =
				cal_per_call(t, n, overhead_ns);
		}
		diff[i] = probed[i] - bare[i];
	}
	out->reported_ns = reported_floor(c);
	cal_stats_compute(diff, p->runs, &st);
	out->overhead_ns = st.median > 0 ? st.median : 0;
	cal_stats_compute(bare, p->runs, &st);
	out->bare_ns = st.median;
	cal_stats_compute(probed, p->runs, &st);
	out->probed_ns = st.median;
	out->pairs = p->runs;
	out->measured = true;
out:
	collector__destroy(c);
	return err;
}

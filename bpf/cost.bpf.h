/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled mode: the syscall programs measure their own cost, so that the
 * daemon can keep the latency part within its budget without holding
 * bpf_stats (BPF_ENABLE_STATS puts two clock reads around every run of
 * every program, 35 ns a run on the development VM, and needs
 * CAP_SYS_ADMIN to turn on). Every run is counted per CPU and kind; one
 * in SC_COST_EVERY is timed, between the start and the end of its work.
 *
 * Uses the setting and map scprof.bpf.c defines before it includes this
 * file: progs, selfcost.
 */
#ifndef SCPROF_COST_BPF_H
#define SCPROF_COST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"

struct cost_probe {
	struct sc_selfcost *sc; /* NULL: not sampled mode */
	__u64 t0;		/* 0: this run is not timed */
	__u32 kind;		/* enum sc_cost_kind */
};

static __always_inline void cost_begin(struct cost_probe *cp, __u32 kind)
{
	__u32 zero = 0;

	if (progs != SC_PROGS_SAMPLED)
		return;
	cp->sc = bpf_map_lookup_elem(&selfcost, &zero);
	if (!cp->sc)
		return;
	/* One count a program: enter and exit alternate on a CPU, and a
	 * shared count would time one of them only.
	 */
	barrier_var(kind);
	if (kind >= SC_COST_COUNT) {
		cp->sc = NULL;
		return;
	}
	cp->kind = kind;
	if (!(cp->sc->ticks[kind]++ & (SC_COST_EVERY - 1)))
		cp->t0 = bpf_ktime_get_ns();
}

/* A run that does nothing: counted only. */
static __always_inline void cost_tick(__u32 kind)
{
	struct sc_selfcost *s;
	__u32 zero = 0;

	if (progs != SC_PROGS_SAMPLED)
		return;
	s = bpf_map_lookup_elem(&selfcost, &zero);
	barrier_var(kind);
	if (s && kind < SC_COST_COUNT)
		s->ticks[kind]++;
}

/* The exit program timed its call: its run is of the dearer kind (the
 * only run counted apart from its tick: the others' count is their
 * kind's ticks).
 */
static __always_inline void cost_stamped(struct cost_probe *cp)
{
	if (!cp->sc)
		return;
	cp->kind = SC_COST_EXIT_TIMED;
	cp->sc->runs[SC_COST_EXIT_TIMED]++;
}

static __always_inline void cost_end(struct cost_probe *cp)
{
	struct sc_selfcost *s = cp->sc;
	__u32 k = cp->kind;

	__u64 ns;

	if (!s || !cp->t0)
		return;
	ns = bpf_ktime_get_ns() - cp->t0;
	barrier_var(k);
	/* A run this long was interrupted: not a measure of it. */
	if (k >= SC_COST_COUNT || ns > SC_COST_MAX_NS)
		return;
	s->timed_ns[k] += ns;
	s->timed_runs[k]++;
}

#endif /* SCPROF_COST_BPF_H */

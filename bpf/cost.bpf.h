/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled mode: the syscall programs measure their own cost, so that the
 * daemon can keep the latency part within its budget without holding
 * bpf_stats (BPF_ENABLE_STATS puts two clock reads around every run of
 * every program, 35 ns a run on the development VM, and needs
 * CAP_SYS_ADMIN to turn on). Every run is counted per CPU and kind; one
 * in SC_COST_EVERY is timed, between the start and the end of its work.
 * (The counting exit program, with tail calls, counts its runs in the
 * verdict cache's slots when those are on, and times none: see
 * sc_sampled_exit.)
 *
 * Uses the setting progs (settings.bpf.h).
 */
#ifndef SCPROF_COST_BPF_H
#define SCPROF_COST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "settings.bpf.h"

/* What the syscall programs cost, measured by themselves on one run in
 * SC_COST_EVERY per CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_selfcost);
} selfcost SEC(".maps");

static __always_inline struct sc_selfcost *selfcost_here(void)
{
	__u32 zero = 0;

	return settings.progs == SC_PROGS_SAMPLED ?
		       bpf_map_lookup_elem(&selfcost, &zero) :
		       NULL;
}

/* A run of the given kind begins: it is counted, and one in
 * SC_COST_EVERY is timed. Returns the clock at its start, or 0 (not
 * timed): what cost_end() needs, the only state a probe keeps across the
 * run (a program's hot path keeps nothing else live for it).
 */
static __always_inline __u64 cost_begin_every(__u32 kind, __u64 mask)
{
	struct sc_selfcost *s = selfcost_here();

	barrier_var(kind);
	if (!s || kind >= SC_COST_COUNT)
		return 0;
	if (s->ticks[kind]++ & mask)
		return 0;
	return bpf_ktime_get_ns();
}

static __always_inline __u64 cost_begin(__u32 kind)
{
	return cost_begin_every(kind, SC_COST_EVERY - 1);
}

/* A run that does nothing: counted only. */
static __always_inline void cost_tick(__u32 kind)
{
	struct sc_selfcost *s = selfcost_here();

	barrier_var(kind);
	if (s && kind < SC_COST_COUNT)
		s->ticks[kind]++;
}

/* The exit program timed its call: its run is of the dearer kind (the
 * only run counted apart from its tick: the others' count is their
 * kind's ticks).
 */
static __always_inline void cost_stamped(void)
{
	struct sc_selfcost *s = selfcost_here();

	if (s)
		s->runs[SC_COST_EXIT_TIMED]++;
}

/* The run that began at t0 (cost_begin) ends, as a run of kind. */
static __always_inline void cost_end(__u32 kind, __u64 t0)
{
	struct sc_selfcost *s;
	__u64 ns;

	if (!t0)
		return;
	ns = bpf_ktime_get_ns() - t0;
	s = selfcost_here();
	barrier_var(kind);
	/* A run this long was interrupted: not a measure of it. */
	if (!s || kind >= SC_COST_COUNT || ns > SC_COST_MAX_NS)
		return;
	s->timed_ns[kind] += ns;
	s->timed_runs[kind]++;
}

#endif /* SCPROF_COST_BPF_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampled mode's windows (the daemon, top --latency-duty): in a latency
 * window the enter program and the split's scheduler programs are
 * attached, and the calls they stamp are timed; in a cost window (with
 * tail calls) the counting exit program hands every call to the timing
 * one, which measures what a run costs; and what the programs cost, as
 * they measured themselves (cost.bpf.h). When to open them is duty.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "collect/collector_priv.h"
#include "util/log.h"

bool collector__has_windows(const struct collector *c)
{
	return c->settings.progs == SC_PROGS_SAMPLED;
}

/* Sampled mode: the counting exit program hands calls to the timing one
 * while any bit of exit_timing is set (enum sc_timing).
 */
static void set_timing(struct collector *c, __u32 bit, bool on)
{
	__u32 *t = &c->skel->bss->exit_timing;

	if (on)
		__atomic_or_fetch(t, bit, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(t, ~bit, __ATOMIC_SEQ_CST);
}

bool collector__has_cost_windows(const struct collector *c)
{
	return c->counting_exit;
}

void collector__cost_window(struct collector *c, bool open)
{
	if (c->counting_exit)
		set_timing(c, SC_TIMING_COST, open);
}

/* The split's scheduler programs, in or out with a latency window: they
 * only look at calls stamped in it (split.bpf.h), so outside windows they
 * would cost every context switch and wake-up of the machine for nothing.
 * A call preempted as they go is switched in unseen: the count of such
 * calls starts again from zero with each window.
 */
static int split_window(struct collector *c, bool open)
{
	struct scprof_bpf *skel = c->skel;
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} progs[] = {
		{ skel->progs.sc_switch, &skel->links.sc_switch },
		{ skel->progs.sc_waking, &skel->links.sc_waking },
		{ skel->progs.sc_waking_sleep, &skel->links.sc_waking_sleep },
		{ skel->progs.sc_wakeup, &skel->links.sc_wakeup },
	};

	if (!c->opts.split)
		return 0;
	if (open)
		__atomic_store_n(&skel->bss->split_preempted, 0,
				 __ATOMIC_SEQ_CST);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		/* (one of the waking programs is loaded: --slow's keeps the
		 * longest sleeps; the wake-up's end with the run-queue delay
		 * only)
		 */
		if (!bpf_program__autoload(progs[i].prog))
			continue;
		if (!open) {
			bpf_link__destroy(*progs[i].link);
			*progs[i].link = NULL;
			continue;
		}
		*progs[i].link = bpf_program__attach(progs[i].prog);
		if (!*progs[i].link) {
			int err = -errno;

			split_window(c, false);
			pr_err("cannot attach the split's program %s: %s",
			       bpf_program__name(progs[i].prog),
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

int collector__latency_window(struct collector *c, bool open)
{
	struct scprof_bpf *skel = c->skel;
	struct bpf_link **link = &skel->links.sc_sys_enter;
	__u32 *gen = &skel->bss->window_gen;
	int err;

	if (c->settings.progs != SC_PROGS_SAMPLED || open == (*link != NULL))
		return 0;
	if (!open) {
		bpf_link__destroy(*link);
		*link = NULL;
		/* even: no window; stamps taken until now are stale */
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
		set_timing(c, SC_TIMING_LATENCY, false);
		split_window(c, false);
		return 0;
	}
	/* (before any call is stamped: each is split from its start) */
	err = split_window(c, true);
	if (err)
		return err;
	__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST); /* odd: a window */
	set_timing(c, SC_TIMING_LATENCY, true);
	*link = bpf_program__attach(skel->progs.sc_sys_enter);
	if (!*link) {
		err = -errno;
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
		set_timing(c, SC_TIMING_LATENCY, false);
		split_window(c, false);
		pr_err("cannot attach the latency program: %s", strerror(-err));
		return err;
	}
	return 0;
}

int collector__cost(struct collector *c, struct collector_cost *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct sc_selfcost *v;
	__u32 zero = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (c->settings.progs != SC_PROGS_SAMPLED)
		return 0;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.selfcost), &zero,
				v)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < ncpus; i++) {
		for (int k = 0; k < SC_COST_COUNT; k++) {
			out->runs[k] += v[i].ticks[k];
			out->timed_runs[k] += v[i].timed_runs[k];
			out->timed_ns[k] += v[i].timed_ns[k];
		}
		out->runs[SC_COST_EXIT_TIMED] += v[i].runs[SC_COST_EXIT_TIMED];
	}
	/* the counting program's runs, where the verdict cache is on */
	for (size_t i = 0; i < SC_WANT_SLOTS; i++)
		out->runs[SC_COST_EXIT] += __atomic_load_n(
			&c->skel->bss->want_cache[i].runs, __ATOMIC_RELAXED);
	/* A timed exit began as an untimed one (its tick). (A copy taken
	 * while a run is between the two counts can see one more timed
	 * run than ticks.)
	 */
	out->runs[SC_COST_EXIT] -=
		out->runs[SC_COST_EXIT] > out->runs[SC_COST_EXIT_TIMED] ?
			out->runs[SC_COST_EXIT_TIMED] :
			out->runs[SC_COST_EXIT];
out:
	free(v);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-thread totals (opts.thread_totals): what the programs keep in
 * tslots and in the procs entries (the counts of threads without a slot),
 * read into per-process totals for the daemon's
 * per-name series, and folded when processes exit. Each process's totals
 * are one row (ABI 0, number 0): the sum over its syscalls.
 *
 * Counts never move inside the kernel: a dead slot keeps its thread's
 * counts until this file takes them (into c->tdone) and frees the slot, so
 * a snapshot, taken in the same thread as the folds, sees every count in
 * exactly one place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "collect/proc_counts.h"

static void counts_to_stats(const struct sc_counts *c, struct sc_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->calls = c->calls;
	st->errors = c->errors;
	st->interrupted = c->interrupted;
	st->bytes = c->bytes;
	st->total_ns = c->total_ns;
	st->wait_ns = c->wait_ns;
	st->blocked_ns = c->blocked_ns;
	st->iowait_ns = c->iowait_ns;
}

static int add_counts(struct sc_model *m, const struct sc_proc_key *k,
		      const struct sc_counts *c)
{
	struct sc_proc *p = model_key_proc(m, k);
	struct sc_stats st;

	if (!p)
		return -ENOMEM;
	counts_to_stats(c, &st);
	return model_proc_add(p, 0, 0, &st);
}

static int add_done(void *ctx, const struct sc_proc_key *k,
		    const struct sc_counts *c)
{
	return add_counts(ctx, k, c);
}

/* Read a slot's counts once (the owner may be adding meanwhile). */
static void slot_counts(const struct sc_tslot *ts, struct sc_counts *c)
{
	c->calls = __atomic_load_n(&ts->c.calls, __ATOMIC_ACQUIRE);
	c->errors = __atomic_load_n(&ts->c.errors, __ATOMIC_RELAXED);
	c->interrupted = __atomic_load_n(&ts->c.interrupted, __ATOMIC_RELAXED);
	c->bytes = __atomic_load_n(&ts->c.bytes, __ATOMIC_RELAXED);
	c->total_ns = __atomic_load_n(&ts->c.total_ns, __ATOMIC_RELAXED);
	c->wait_ns = __atomic_load_n(&ts->c.wait_ns, __ATOMIC_RELAXED);
	c->blocked_ns = __atomic_load_n(&ts->c.blocked_ns, __ATOMIC_RELAXED);
	c->iowait_ns = __atomic_load_n(&ts->c.iowait_ns, __ATOMIC_RELAXED);
}

/* Take the counts of dead slot i and free it. */
static int reap_slot(struct collector *c, int i)
{
	struct sc_tslot *ts = &c->skel->bss->tslots[i];
	struct sc_counts cnt;

	slot_counts(ts, &cnt);
	if (cnt.calls && proc_counts__add(c->tdone, &ts->proc, &cnt))
		return -ENOMEM;
	memset(&ts->c, 0, sizeof(ts->c));
	return 0;
}

int collector_tslots_reap(struct collector *c)
{
	struct scprof_bpf__bss *bss = c->skel->bss;
	int64_t freed = 0;
	int err = 0;

	if (!c->opts.thread_totals)
		return 0;
	/* the dead slots' bits: a word of 64 slots at a time */
	for (int w = 0; !err && w < SC_TSLOTS / 64; w++) {
		uint64_t bits = __atomic_load_n(&bss->tslots_dead_bits[w],
						__ATOMIC_ACQUIRE);

		while (bits) {
			int b = __builtin_ctzll(bits), i = w * 64 + b;
			struct sc_tslot *ts = &bss->tslots[i];

			bits &= bits - 1;
			/* (its owner's mark seen, or at the next look) */
			if (!(__atomic_load_n(&ts->owner, __ATOMIC_ACQUIRE) &
			      1))
				continue;
			err = reap_slot(c, i);
			if (err)
				break;
			/* the bit clear before the slot is free: a thread
			 * that takes it next marks it anew when it dies
			 */
			__atomic_fetch_and(&bss->tslots_dead_bits[w],
					   ~(1ULL << b), __ATOMIC_RELEASE);
			__atomic_store_n(&ts->owner, 0, __ATOMIC_RELEASE);
			freed++;
		}
	}
	__atomic_fetch_sub(&bss->tslots_dead, freed, __ATOMIC_RELAXED);
	return err;
}

int collector__tslots_free(struct collector *c)
{
	/* (at each wake-up with a thread dead: a new thread often runs on a
	 * dead one's kernel stack and so maps to its slot, which it takes only
	 * once freed; until then its calls go to its process's entry in procs. The
	 * dead slots are found by their bits, in the mapped .bss: no system
	 * call, and no look at the live ones)
	 */
	if (!c->opts.thread_totals ||
	    !__atomic_load_n(&c->skel->bss->tslots_dead, __ATOMIC_RELAXED))
		return 0;
	return collector_tslots_reap(c);
}

/* The counts c into p's one row (ABI 0, number 0). */
static int proc_add_counts(struct sc_proc *p, const struct sc_counts *c)
{
	struct sc_stats st;

	counts_to_stats(c, &st);
	return model_proc_add(p, 0, 0, &st);
}

static bool counts_any(const struct sc_counts *c)
{
	return c->calls || c->total_ns;
}

int collector_tslots_add_info(const struct collector *c, struct sc_proc *p,
			      const struct sc_proc_info *info)
{
	if (!c->opts.thread_totals || !counts_any(&info->counts))
		return 0;
	return proc_add_counts(p, &info->counts);
}

int collector_tslots_fold(struct collector *c, const struct sc_model *exited,
			  struct sc_model *out)
{
	int err;

	if (!c->opts.thread_totals || !exited->nprocs)
		return 0;
	/* Every thread of an exited process is dead: its slots are read.
	 * (What its threads without a slot counted came with its entry in
	 * procs: collector_tslots_add_info.)
	 */
	err = collector_tslots_reap(c);
	/* what their dead threads left, out of c->tdone (all of it, even
	 * after a failure: the processes are gone)
	 */
	for (size_t i = 0; i < exited->nprocs; i++) {
		struct sc_proc_key k = model_proc_key(&exited->procs[i]);
		struct sc_proc *dst;
		struct sc_counts cnt;

		if (!proc_counts__take(c->tdone, &k, &cnt))
			continue;
		dst = out ? model_find_key(out, &k) : NULL;
		if (!err && dst)
			err = proc_add_counts(dst, &cnt);
	}
	return err;
}

/* A procs entry into the snapshot m: its threads' counts without a slot
 * (a process of its own when it has any), and its name.
 */
static int proc_entry(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_proc_info *info = val;
	struct sc_proc *p;

	if (counts_any(&info->counts)) {
		p = model_key_proc(m, key);
		if (!p || proc_add_counts(p, &info->counts))
			return -ENOMEM;
	} else {
		p = model_find_key(m, key);
	}
	if (p)
		collector_proc_set_info(p, info);
	return 0;
}

int collector__proc_totals(struct collector *c, struct sc_model **out)
{
	struct scprof_bpf__bss *bss = c->skel->bss;
	struct sc_model *m;
	int err;

	*out = NULL;
	if (!c->opts.thread_totals)
		return -EINVAL;
	err = collector_tslots_reap(c);
	if (err)
		return err;
	m = model_new();
	if (!m)
		return -ENOMEM;
	err = proc_counts__each(c->tdone, add_done, m);
	for (int i = 0; !err && i < SC_TSLOTS; i++) {
		const struct sc_tslot *ts = &bss->tslots[i];
		struct sc_counts cnt;

		if (!__atomic_load_n(&ts->owner, __ATOMIC_ACQUIRE))
			continue;
		slot_counts(ts, &cnt);
		if (cnt.calls)
			err = add_counts(m, &ts->proc, &cnt);
	}
	/* then the counts in procs, and every process's name */
	if (!err)
		err = collector_map_walk(bpf_map__fd(c->skel->maps.procs),
					 sizeof(struct sc_proc_key),
					 sizeof(struct sc_proc_info),
					 proc_entry, m);
	if (!err) /* the cgroups of --labels unit, cgroup, container */
		err = collector_cgroups_name(c, m);
	if (!err)
		err = model_finalize(m);
	if (err) {
		model_free(m);
		return err;
	}
	*out = m;
	return 0;
}

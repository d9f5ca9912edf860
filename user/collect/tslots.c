// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-thread totals (opts.thread_totals): what the programs keep in
 * tslots and ptotals, read into per-process totals for the daemon's
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

int collector_tslots_reap(struct collector *c)
{
	struct scprof_bpf__bss *bss = c->skel->bss;
	int64_t freed = 0;

	if (!c->opts.thread_totals)
		return 0;
	for (int i = 0; i < SC_TSLOTS; i++) {
		struct sc_tslot *ts = &bss->tslots[i];
		struct sc_counts cnt;

		if (!(__atomic_load_n(&ts->owner, __ATOMIC_ACQUIRE) & 1))
			continue;
		/* dead: no program writes it any more */
		slot_counts(ts, &cnt);
		if (cnt.calls && add_counts(c->tdone, &ts->proc, &cnt))
			return -ENOMEM;
		memset(&ts->c, 0, sizeof(ts->c));
		__atomic_store_n(&ts->owner, 0, __ATOMIC_RELEASE);
		freed++;
	}
	__atomic_fetch_sub(&bss->tslots_dead, freed, __ATOMIC_RELAXED);
	return 0;
}

int collector__tslots_free(struct collector *c)
{
	/* (at each wake-up with a thread dead: a new thread often runs on a
	 * dead one's kernel stack and so maps to its slot, which it takes only
	 * once freed; until then its calls go through the ptotals hash. The
	 * look at every slot reads only their owners, in the mapped .bss: no
	 * system call)
	 */
	if (!c->opts.thread_totals ||
	    !__atomic_load_n(&c->skel->bss->tslots_dead, __ATOMIC_RELAXED))
		return 0;
	return collector_tslots_reap(c);
}

/* Add to out, for each process in want (NULL: all), its ptotals entry;
 * with del, delete those entries.
 */
struct ptotals_ctx {
	struct sc_model *out;
	const struct sc_model *want;
	struct sc_proc_key *dead;
	size_t ndead, cap;
	bool del;
};

static int ptotal_one(void *ctx, const void *key, const void *val)
{
	struct ptotals_ctx *p = ctx;
	const struct sc_proc_key *k = key;

	if (p->want && !model_find_key(p->want, k))
		return 0;
	if (add_counts(p->out, k, val))
		return -ENOMEM;
	if (!p->del)
		return 0;
	if (p->ndead == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct sc_proc_key *tmp = realloc(p->dead, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		p->dead = tmp;
		p->cap = cap;
	}
	p->dead[p->ndead++] = *k;
	return 0;
}

static int ptotals_walk(struct collector *c, struct ptotals_ctx *p)
{
	int fd = bpf_map__fd(c->skel->maps.ptotals);
	int err = collector_map_walk(fd, sizeof(struct sc_proc_key),
				     sizeof(struct sc_counts), ptotal_one, p);

	collector_map_delete(fd, p->dead, sizeof(*p->dead), p->ndead);
	free(p->dead);
	return err;
}

/* A copy of m without the processes in gone. */
static struct sc_model *model_without(const struct sc_model *m,
				      const struct sc_model *gone)
{
	struct sc_model *out = model_new();

	for (size_t i = 0; out && i < m->nprocs; i++) {
		const struct sc_proc *p = &m->procs[i];
		struct sc_proc *q;

		if (model_find_proc(gone, p->pid, p->start_ns, p->cgtag))
			continue;
		q = model_proc(out, p->pid, p->start_ns, p->cgtag);
		if (!q || model_proc_merge(q, p)) {
			model_free(out);
			return NULL;
		}
	}
	return out;
}

int collector_tslots_fold(struct collector *c, const struct sc_model *exited,
			  struct sc_model *out)
{
	struct ptotals_ctx p = { .want = exited, .del = true };
	struct sc_model *rest;
	int err;

	if (!c->opts.thread_totals || !exited->nprocs)
		return 0;
	/* Every thread of an exited process is dead: its slots are read. */
	err = collector_tslots_reap(c);
	if (err)
		return err;
	p.out = model_new();
	if (!p.out)
		return -ENOMEM;
	err = ptotals_walk(c, &p);
	for (size_t i = 0; !err && i < c->tdone->nprocs; i++) {
		const struct sc_proc *src = &c->tdone->procs[i];
		struct sc_proc *dst;

		if (!model_find_proc(exited, src->pid, src->start_ns,
				     src->cgtag))
			continue;
		dst = model_proc(p.out, src->pid, src->start_ns, src->cgtag);
		err = dst ? model_proc_merge(dst, src) : -ENOMEM;
	}
	for (size_t i = 0; !err && out && i < p.out->nprocs; i++) {
		const struct sc_proc *src = &p.out->procs[i];
		struct sc_proc *dst = model_find_proc(
			out, src->pid, src->start_ns, src->cgtag);

		if (dst)
			err = model_proc_merge(dst, src);
	}
	model_free(p.out);
	if (err)
		return err;
	rest = model_without(c->tdone, exited);
	if (!rest)
		return -ENOMEM;
	model_free(c->tdone);
	c->tdone = rest;
	return 0;
}

/* The names of the processes in m, from procs. */
static int name_procs(struct collector *c, struct sc_model *m)
{
	int fd = bpf_map__fd(c->skel->maps.procs);

	for (size_t i = 0; i < m->nprocs; i++) {
		struct sc_proc *p = &m->procs[i];
		struct sc_proc_key k = model_proc_key(p);
		struct sc_proc_info info;

		if (!bpf_map_lookup_elem(fd, &k, &info))
			collector_proc_set_info(p, &info);
	}
	return 0;
}

int collector__proc_totals(struct collector *c, struct sc_model **out)
{
	struct scprof_bpf__bss *bss = c->skel->bss;
	struct ptotals_ctx p = {};
	struct sc_model *m;
	int err;

	*out = NULL;
	if (!c->opts.thread_totals)
		return -EINVAL;
	err = collector_tslots_reap(c);
	if (err)
		return err;
	m = model_clone(c->tdone);
	if (!m)
		return -ENOMEM;
	for (int i = 0; !err && i < SC_TSLOTS; i++) {
		const struct sc_tslot *ts = &bss->tslots[i];
		struct sc_counts cnt;

		if (!__atomic_load_n(&ts->owner, __ATOMIC_ACQUIRE))
			continue;
		slot_counts(ts, &cnt);
		if (cnt.calls)
			err = add_counts(m, &ts->proc, &cnt);
	}
	p.out = m;
	if (!err)
		err = ptotals_walk(c, &p);
	if (!err)
		err = name_procs(c, m);
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

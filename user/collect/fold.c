// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Folding: moving what exited processes left in the maps into userspace
 * (the collector's folded model), so the maps hold only live processes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "util/log.h"

#define DEFAULT_MAX_EXITED 4096
/* What the exited processes kept one by one may hold at most: their
 * entries and rows (a row is about 1.4 KB with its histogram, a short
 * process 25 to 40 rows). Past it they are merged like those past
 * max_exited, so memory is bounded whatever the churn.
 */
#define EXITED_BUDGET (64ULL << 20)

struct harvest_ctx {
	struct collector *c;
	struct sc_model *exited;   /* exited processes, as a lookup set */
	struct sc_model *out;	   /* the caller's copy, or NULL */
	struct sc_model *ended;	   /* (pid, start) of the exited, tag 0:
				    * their exit code, and (exited set once
				    * decided) whether they are merged
				    */
	struct sc_stats_key *dead; /* stats keys to delete */
	size_t ndead, cap;
	int64_t marked; /* entries the BPF side marked exited */
};

/* An exited process's entry (info: its name, exit...) in h's models. */
static int add_exited(struct harvest_ctx *h, const struct sc_proc_key *k,
		      const struct sc_proc_info *info)
{
	struct sc_proc *p = model_key_proc(h->exited, k);

	if (!p)
		return -ENOMEM;
	collector_proc_set_info(p, info);
	p->exited = true;
	if (h->out) {
		p = model_key_proc(h->out, k);
		if (!p)
			return -ENOMEM;
		collector_proc_set_info(p, info);
		p->exited = true;
		/* its threads' counts without a slot, final (only the
		 * caller's copy has the totals row)
		 */
		return collector_tslots_add_info(h->c, p, info);
	}
	return 0;
}

/* The entries the BPF side marked exited: one per process (per thread
 * with --by tid), under one of its cgroup tags.
 */
static int collect_exited(void *ctx, const void *key, const void *val)
{
	struct harvest_ctx *h = ctx;
	const struct sc_proc_key *k = key;
	const struct sc_proc_info *info = val;

	struct sc_proc *e;

	if (!info->exited)
		return 0;
	h->marked++;
	e = model_proc(h->ended, k->tgid, k->start_ns, 0);
	if (!e)
		return -ENOMEM;
	e->exit_code = info->exit_code;
	return add_exited(h, k, info);
}

/* The process's entries under its other cgroup tags (it changed cgroup)
 * ended with it.
 */
static int collect_moved_exited(void *ctx, const void *key, const void *val)
{
	struct harvest_ctx *h = ctx;
	const struct sc_proc_key *k = key;
	struct sc_proc_info info = *(const struct sc_proc_info *)val;
	const struct sc_proc *e;

	e = model_find_proc(h->ended, k->tgid, k->start_ns, 0);
	if (info.exited || !e)
		return 0;
	info.exit_code = e->exit_code;
	return add_exited(h, k, &info);
}

/* Where the cells of an exited process go: its own entry, or the one
 * aggregate (pid 0) of COLLECTOR_FOLD_TOTAL and of the processes beyond
 * max_exited.
 */
static struct sc_proc *fold_target(struct collector *c,
				   const struct sc_proc *src)
{
	struct sc_proc *dst;

	if (c->opts.fold == COLLECTOR_FOLD_TOTAL || src->merged) {
		dst = model_proc(c->folded, 0, 0, 0);
		if (dst)
			dst->exited = true;
		return dst;
	}
	dst = model_proc(c->folded, src->pid, src->start_ns, src->cgtag);
	if (!dst)
		return NULL;
	memcpy(dst->comm, src->comm, sizeof(dst->comm));
	dst->ppid = src->ppid;
	dst->tgid = src->tgid;
	dst->cgid = src->cgid;
	dst->exited = true;
	dst->exit_code = src->exit_code;
	return dst;
}

/* What keeping entry p one by one costs: its entry and its rows (none
 * without a cell: it is not kept).
 */
static size_t kept_bytes(const struct sc_proc *p)
{
	return p->nrows ? sizeof(*p) + p->nrows * sizeof(*p->rows) : 0;
}

/* Decide, for each process that exited since the last harvest, whether it
 * is kept on its own or merged into the aggregate: with FOLD_PROCS, the
 * first max_exited are kept, and by default (no --max-exited asked) only
 * while their rows fit in EXITED_BUDGET, so memory stays bounded on long
 * runs. A process's entries under several
 * cgroup tags go the same way, counted once and charged together (the
 * decision is kept in its entry of ended). Their cells are in exited
 * (stage_stats), so what each costs is known.
 */
static int plan_merges(struct collector *c, struct sc_model *exited,
		       struct sc_model *ended)
{
	uint32_t max = c->opts.max_exited ? c->opts.max_exited :
					    DEFAULT_MAX_EXITED;
	struct sc_proc *agg = model_find_proc(c->folded, 0, 0, 0);
	size_t kept = c->folded->nprocs - (agg ? 1 : 0);
	size_t *need = calloc(ended->nprocs ? ended->nprocs : 1, sizeof(*need));
	uint32_t merged = 0;

	if (!need)
		return -ENOMEM;
	for (size_t i = 0; i < exited->nprocs; i++) {
		const struct sc_proc *p = &exited->procs[i];
		struct sc_proc *e =
			model_find_proc(ended, p->pid, p->start_ns, 0);

		if (e)
			need[e - ended->procs] += kept_bytes(p);
	}
	for (size_t i = 0; i < exited->nprocs; i++) {
		struct sc_proc *p = &exited->procs[i];
		struct sc_proc *e =
			model_find_proc(ended, p->pid, p->start_ns, 0);
		size_t cost = e ? need[e - ended->procs] : kept_bytes(p);

		if (e && e->exited) {
			p->merged = e->merged;
			continue;
		}
		if (c->opts.fold == COLLECTOR_FOLD_TOTAL || kept >= max ||
		    (!c->opts.max_exited &&
		     c->exited_bytes + cost > EXITED_BUDGET)) {
			p->merged = 1;
			merged++;
		} else {
			kept++;
			c->exited_kept++;
			c->exited_bytes += cost;
			if (c->exited_bytes > c->exited_bytes_max)
				c->exited_bytes_max = c->exited_bytes;
		}
		if (e) {
			e->exited = true;
			e->merged = p->merged;
		}
	}
	free(need);
	c->exited_merged += merged;
	if (!merged)
		return 0;
	agg = model_proc(c->folded, 0, 0, 0);
	if (!agg)
		return -ENOMEM;
	agg->exited = true;
	agg->merged += merged;
	return 0;
}

/* An exited process's cell: staged in its entry of h->exited (and added
 * to the caller's copy), its key kept for deleting.
 */
static int stage_stats(void *ctx, const void *key, const void *val)
{
	struct harvest_ctx *h = ctx;
	const struct sc_stats_key *k = key;
	struct sc_proc *src, *dst;

	src = model_find_key(h->exited, &k->proc);
	if (!src)
		return 0;
	if (model_proc_add_fd(src, k->abi, k->nr, k->fd_type, val))
		return -ENOMEM;
	if (h->out) {
		dst = model_find_key(h->out, &k->proc);
		if (!dst ||
		    model_proc_add_fd(dst, k->abi, k->nr, k->fd_type, val))
			return -ENOMEM;
	}
	if (h->ndead == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct sc_stats_key *tmp = realloc(h->dead, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		h->dead = tmp;
		h->cap = cap;
	}
	h->dead[h->ndead++] = *k;
	return 0;
}

/* The staged rows to where plan_merges sent them: a process kept on its
 * own takes them over (trimmed to size, not copied); the merged ones are
 * added to the aggregate.
 */
static int fold_staged(struct harvest_ctx *h)
{
	for (size_t i = 0; i < h->exited->nprocs; i++) {
		struct sc_proc *src = &h->exited->procs[i];
		struct sc_proc *dst;

		if (!src->nrows)
			continue;
		dst = fold_target(h->c, src);
		if (!dst)
			return -ENOMEM;
		if (!dst->rows) {
			struct sc_row *fit =
				realloc(src->rows, src->nrows * sizeof(*fit));

			dst->rows = fit ? fit : src->rows;
			dst->nrows = dst->cap = src->nrows;
			src->rows = NULL;
			src->nrows = src->cap = 0;
		} else if (model_proc_merge(dst, src)) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* The paths of the cgroups of the processes kept on their own in
 * c->folded, for the reports to come (their cgroups may be gone by then).
 */
static int name_kept(struct harvest_ctx *h)
{
	for (size_t i = 0; i < h->exited->nprocs; i++) {
		const struct sc_proc *p = &h->exited->procs[i];
		const char *path =
			p->cgid && !p->merged ?
				model_cgroup_path(h->exited, p->cgid) :
				NULL;

		if (path && model_cgroup_set(h->c->folded, p->cgid, path))
			return -ENOMEM;
	}
	return 0;
}

/* With -v: what the exited processes kept in userspace hold. */
void collector__report_folded(const struct collector *c)
{
	if (!c || !c->procs_folded)
		return;
	pr_info("exited processes: %llu folded out of the maps, %llu kept one "
		"by one (%.1f MB of rows at most), %llu merged",
		(unsigned long long)c->procs_folded,
		(unsigned long long)c->exited_kept,
		(double)c->exited_bytes_max / (1 << 20),
		(unsigned long long)c->exited_merged);
}

int collector__harvest(struct collector *c)
{
	return collector__harvest_exited(c, NULL);
}

/* The one target ended: its cells are final, keep them. */
static int fold_one(struct harvest_ctx *h)
{
	struct collector *c = h->c;
	struct sc_proc_key k;
	struct sc_proc *src, *dst;
	int err;

	src = collector_one_key(c, &k) ? model_find_key(h->exited, &k) : NULL;
	if (!src)
		return 0;
	dst = fold_target(c, src);
	err = dst ? collector_arrays_add(c, dst) : -ENOMEM;
	if (!err && h->out) {
		dst = model_find_key(h->out, &k);
		err = dst ? collector_arrays_add(c, dst) : -ENOMEM;
	}
	if (!err)
		c->one_folded = true;
	return err;
}

/* Exited processes make no more calls: their cells are final and now held
 * in c->folded, so out of the maps with them.
 */
static void forget_exited(struct harvest_ctx *h, int procs_fd, int stats_fd)
{
	struct scprof_bpf__bss *bss = h->c->skel->bss;
	struct sc_proc_key *keys;
	int64_t cells, procs = 0;

	cells = collector_map_delete(stats_fd, h->dead, sizeof(*h->dead),
				     h->ndead);
	keys = calloc(h->exited->nprocs ? h->exited->nprocs : 1, sizeof(*keys));
	for (size_t i = 0; keys && i < h->exited->nprocs; i++)
		keys[i] = model_proc_key(&h->exited->procs[i]);
	if (keys)
		procs = collector_map_delete(procs_fd, keys, sizeof(*keys),
					     h->exited->nprocs);
	else /* (no memory for the batch: one by one) */
		for (size_t i = 0; i < h->exited->nprocs; i++) {
			struct sc_proc_key k =
				model_proc_key(&h->exited->procs[i]);

			procs += !bpf_map_delete_elem(procs_fd, &k);
		}
	free(keys);
	/* The programs count what they create; take off what went. */
	__atomic_fetch_sub(&bss->stats_used, cells, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&bss->procs_used, procs, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&bss->procs_exited, h->marked, __ATOMIC_RELAXED);
	h->c->procs_folded += h->ended->nprocs;
}

bool collector__harvest_due(const struct collector *c)
{
	const struct scprof_bpf__bss *bss = c->skel->bss;
	int64_t cells = __atomic_load_n(&bss->stats_used, __ATOMIC_RELAXED);
	int64_t procs = __atomic_load_n(&bss->procs_used, __ATOMIC_RELAXED);

	/* Dead threads' slots block their stack addresses until freed. */
	if (c->opts.thread_totals &&
	    __atomic_load_n(&bss->tslots_dead, __ATOMIC_RELAXED) * 4 >=
		    SC_TSLOTS)
		return true;
	/* Only exited processes can be folded: none, nothing to gain. */
	if (__atomic_load_n(&bss->procs_exited, __ATOMIC_RELAXED) <= 0)
		return false;
	return cells * 4 >=
		       (int64_t)bpf_map__max_entries(c->skel->maps.stats) ||
	       procs * 4 >= (int64_t)bpf_map__max_entries(c->skel->maps.procs);
}

int collector__harvest_exited(struct collector *c, struct sc_model *exited)
{
	struct harvest_ctx h = { .c = c, .out = exited };
	int procs_fd = bpf_map__fd(c->skel->maps.procs);
	int stats_fd = bpf_map__fd(c->skel->maps.stats);
	int err;

	h.exited = model_new();
	h.ended = model_new();
	if (!h.exited || !h.ended) {
		err = -ENOMEM;
		goto out;
	}
	err = collector_map_walk(procs_fd, sizeof(struct sc_proc_key),
				 sizeof(struct sc_proc_info), collect_exited,
				 &h);
	if (!err && c->opts.read_cgid && h.ended->nprocs)
		err = collector_map_walk(procs_fd, sizeof(struct sc_proc_key),
					 sizeof(struct sc_proc_info),
					 collect_moved_exited, &h);
	if (!err)
		err = collector_cgroups_name(c, h.exited);
	if (!err && h.exited->nprocs)
		err = collector_map_walk(stats_fd, sizeof(struct sc_stats_key),
					 sizeof(struct sc_stats), stage_stats,
					 &h);
	if (!err)
		err = plan_merges(c, h.exited, h.ended);
	if (!err && h.exited->nprocs)
		err = fold_one(&h);
	if (!err)
		err = fold_staged(&h);
	if (!err)
		err = collector_tslots_fold(c, h.exited, exited);
	if (!err)
		err = name_kept(&h);
	if (!err)
		forget_exited(&h, procs_fd, stats_fd);
	if (!err && exited) /* the cgroups of their --by and --labels */
		err = model_cgroups_copy(exited, h.exited);
out:
	free(h.dead);
	model_free(h.exited);
	model_free(h.ended);
	return err;
}

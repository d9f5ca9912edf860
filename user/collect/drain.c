// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading the maps into the model: per-CPU sums, snapshots, map figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "collect/split_drain.h"
#include "util/clock.h"

/* Entries read per batch: a bpf() call each, not two per entry (and
 * buffers below malloc's mmap threshold: no page faults each walk). A
 * walk of small entries (procs) takes up to WALK_BYTES a call:
 * under churn a fold walks thousands of them.
 */
#define WALK_BATCH 64
#define WALK_BYTES (64 * 1024)

/* One key at a time (get_next_key and a lookup each): kernels or maps
 * without the batch API.
 */
static int walk_one_by_one(int fd, size_t ksz, size_t vsz,
			   int (*fn)(void *ctx, const void *key,
				     const void *val),
			   void *ctx)
{
	void *key = malloc(ksz), *next = malloc(ksz), *val = malloc(vsz);
	bool first = true;
	int err = 0;

	if (!key || !next || !val) {
		err = -ENOMEM;
		goto out;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ksz);
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		err = fn(ctx, key, val);
		if (err)
			break;
	}
out:
	free(key);
	free(next);
	free(val);
	return err;
}

static size_t walk_room(size_t ksz, size_t vsz)
{
	size_t room = WALK_BYTES / (ksz + vsz);

	return room > WALK_BATCH ? room : WALK_BATCH;
}

int collector_map_walk(int fd, size_t ksz, size_t vsz,
		       int (*fn)(void *ctx, const void *key, const void *val),
		       void *ctx)
{
	size_t tok = ksz > 8 ? ksz : 8, room = walk_room(ksz, vsz);
	char *keys = malloc(ksz * room), *vals = malloc(vsz * room);
	char *in = calloc(1, tok), *out = calloc(1, tok);
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals || !in || !out) {
		err = -ENOMEM;
		goto out;
	}
	while (!done && !err) {
		__u32 count = (__u32)room;
		int r = bpf_map_lookup_batch(fd, first ? NULL : in, out, keys,
					     vals, &count, NULL);

		if (r == -ENOSPC) { /* a bucket holds more than room */
			char *k = realloc(keys, ksz * room * 2);
			char *v = k ? realloc(vals, vsz * room * 2) : NULL;

			if (k)
				keys = k;
			if (!v) {
				err = -ENOMEM;
				break;
			}
			vals = v;
			room *= 2;
			continue;
		}
		if (r && r != -ENOENT) {
			/* no batch API here: the old way, from the start */
			if (first && (r == -EINVAL || r == -ENOTSUP ||
				      r == -EOPNOTSUPP || r == -ENOSYS)) {
				err = walk_one_by_one(fd, ksz, vsz, fn, ctx);
				break;
			}
			err = r;
			break;
		}
		done = r == -ENOENT; /* the last entries came with it */
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(ctx, keys + i * ksz, vals + i * vsz);
		memcpy(in, out, tok);
		first = false;
	}
out:
	free(keys);
	free(vals);
	free(in);
	free(out);
	return err;
}

int collector_map_delete(int fd, const void *keys, size_t ksz, size_t n)
{
	const char *k = keys;
	size_t gone = 0;

	while (n) {
		__u32 count = n > WALK_BATCH ? WALK_BATCH : (__u32)n;
		int r = bpf_map_delete_batch(fd, k, &count, NULL);

		if (r && (r == -EINVAL || r == -ENOTSUP || r == -EOPNOTSUPP ||
			  r == -ENOSYS)) {
			/* no batch API: one by one */
			for (size_t i = 0; i < n; i++)
				gone += !bpf_map_delete_elem(fd, k + i * ksz);
			return (int)gone;
		}
		/* (a key deleted meanwhile ends a batch early: go on after
		 * it)
		 */
		gone += count;
		if (r && count < (n > WALK_BATCH ? WALK_BATCH : n))
			count++;
		k += (size_t)count * ksz;
		n -= count;
	}
	return (int)gone;
}

void collector_proc_set_info(struct sc_proc *p, const struct sc_proc_info *info)
{
	memcpy(p->comm, info->comm, sizeof(p->comm));
	p->ppid = info->ppid;
	p->tgid = info->tgid;
	p->cgid = info->cgid;
	p->exited = info->exited;
	p->exit_code = info->exit_code;
}

/* Sum the per-CPU counters by syscall number: sums[ABI * SC_NR_MAX + nr]. */
static int arrays_sum_counts(struct collector *c, struct sc_counts *sums)
{
	int fd = bpf_map__fd(c->skel->maps.nr_counts);
	__u32 n = bpf_map__max_entries(c->skel->maps.nr_counts), count = n;
	int ncpus = libbpf_num_possible_cpus();
	struct sc_counts *vals = NULL;
	__u32 *keys = NULL, out_batch;
	int err;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	keys = calloc(n, sizeof(*keys));
	vals = calloc((size_t)n * (size_t)ncpus, sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &count,
				   NULL);
	if (err == -ENOENT) /* the whole array in one go */
		err = 0;
	/* ENOTSUPP (524, the kernel's own): arrays before Linux 5.11 */
	if (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
	    err == -524) {
		/* No batch operations: one lookup per key. */
		for (count = 0; count < n; count++) {
			keys[count] = count;
			err = bpf_map_lookup_elem(fd, &count,
						  &vals[(size_t)count * ncpus]);
			if (err)
				goto out;
		}
	}
	if (err)
		goto out;
	for (__u32 i = 0; i < count; i++) {
		struct sc_counts *s;

		if (keys[i] >= SC_ABI_COUNT * SC_NR_MAX)
			continue;
		s = &sums[keys[i]];
		for (int cpu = 0; cpu < ncpus; cpu++) {
			const struct sc_counts *v =
				&vals[(size_t)i * ncpus + cpu];

			s->calls += v->calls;
			s->errors += v->errors;
			s->interrupted += v->interrupted;
			s->bytes += v->bytes;
			s->total_ns += v->total_ns;
			s->wait_ns += v->wait_ns;
			s->blocked_ns += v->blocked_ns;
			s->iowait_ns += v->iowait_ns;
		}
	}
out:
	free(keys);
	free(vals);
	return err;
}

/* Add the cells of the arrays to p: the summed counters and, but in
 * count-only mode, the shared latency cells.
 */
int collector_arrays_add(struct collector *c, struct sc_proc *p)
{
	struct sc_counts *sums =
		calloc(SC_ABI_COUNT * SC_NR_MAX, sizeof(*sums));
	int err;

	if (!sums)
		return -ENOMEM;
	err = arrays_sum_counts(c, sums);
	for (__u32 i = 0; !err && i < SC_ABI_COUNT * SC_NR_MAX; i++) {
		__u32 abi = i / SC_NR_MAX, nr = i % SC_NR_MAX;
		struct sc_stats st = {};

		if (!sums[i].calls)
			continue;
		/* Racing with the programs is fine: every field is a
		 * naturally aligned counter.
		 */
		if (c->nr_stats && abi == SC_ABI_NATIVE)
			memcpy(&st, &c->nr_stats[nr], sizeof(st));
		st.calls = sums[i].calls;
		st.errors = sums[i].errors;
		st.interrupted = sums[i].interrupted;
		st.bytes = sums[i].bytes;
		st.total_ns = sums[i].total_ns;
		st.wait_ns = sums[i].wait_ns;
		st.blocked_ns = sums[i].blocked_ns;
		st.iowait_ns = sums[i].iowait_ns;
		if (model_proc_add(p, abi, nr, &st))
			err = -ENOMEM;
	}
	free(sums);
	return err;
}

bool collector_one_key(const struct collector *c, struct sc_proc_key *k)
{
	if (!c->one || c->one_folded ||
	    !__atomic_load_n(&c->skel->bss->one_ready, __ATOMIC_ACQUIRE))
		return false;
	k->tgid = (__u32)c->one;
	k->cgtag = 0;
	k->start_ns = c->skel->bss->one_start_ns;
	return true;
}

static int add_live_stats(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_stats_key *k = key;
	struct sc_proc *p = model_key_proc(m, &k->proc);

	if (!p || model_proc_add_fd(p, k->abi, k->nr, k->fd_type, val))
		return -ENOMEM;
	return 0;
}

/* The merged cells (no process's) go to pid 0, beside the exited
 * processes merged there.
 */
static int add_merged(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_stats_key *k = key;
	struct sc_proc *p = model_proc(m, 0, 0, 0);

	if (!p || model_proc_add(p, k->abi, k->nr, val))
		return -ENOMEM;
	p->exited = true;
	return 0;
}

/* SC_CELLS_AGGREGATE: the arrays hold every target's calls, pid 0's. */
static int add_aggregate(struct collector *c, struct sc_model *m)
{
	struct sc_proc *p;

	if (c->opts.cells != SC_CELLS_AGGREGATE)
		return 0;
	p = model_proc(m, 0, 0, 0);
	if (!p)
		return -ENOMEM;
	p->exited = true;
	return collector_arrays_add(c, p);
}

static int add_proc_info(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_proc_key *k = key;
	struct sc_proc *p = model_find_key(m, k);

	if (p)
		collector_proc_set_info(p, val);
	return 0;
}

static int add_errno(void *ctx, const void *key, const void *val)
{
	const struct sc_errno_key *k = key;

	return model_errno_add_fd(ctx, k->abi, k->nr, k->fd_type, k->err,
				  *(const __u64 *)val);
}

/* Swap *m (empty) and the folded processes. */
static void swap_folded(struct collector *c, struct sc_model **m)
{
	struct sc_model *f = c->folded;

	c->folded = *m;
	c->exited_bytes = 0;
	*m = f;
}

int collector__snapshot(struct collector *c, struct sc_model **out)
{
	return collector__snapshot_at(c, clock_mono_ns(), out);
}

/* last: the folded processes move into the snapshot rather than being
 * copied (up to the exited budget's worth of rows, as much again at the
 * report's peak otherwise).
 */
static int snapshot(struct collector *c, uint64_t now_ns, bool last,
		    struct sc_model **out)
{
	struct sc_model *m;
	int err;

	*out = NULL;
	if (last) {
		m = model_new();
		if (!m)
			return -ENOMEM;
		swap_folded(c, &m);
	} else {
		m = model_clone(c->folded);
	}
	if (!m)
		return -ENOMEM;
	m->meta.count_only = c->opts.progs == SC_PROGS_COUNT_ONLY;
	err = collector_map_walk(bpf_map__fd(c->skel->maps.stats),
				 sizeof(struct sc_stats_key),
				 sizeof(struct sc_stats), add_live_stats, m);
	if (!err) {
		struct sc_proc_key k;
		struct sc_proc *p;

		if (collector_one_key(c, &k)) {
			p = model_key_proc(m, &k);
			err = p ? collector_arrays_add(c, p) : -ENOMEM;
		}
	}
	if (!err)
		err = add_aggregate(c, m);
	if (!err)
		err = collector_map_walk(bpf_map__fd(c->skel->maps.merged),
					 sizeof(struct sc_stats_key),
					 sizeof(struct sc_stats), add_merged,
					 m);
	if (!err)
		err = collector_map_walk(bpf_map__fd(c->skel->maps.procs),
					 sizeof(struct sc_proc_key),
					 sizeof(struct sc_proc_info),
					 add_proc_info, m);
	if (!err)
		err = collector_map_walk(bpf_map__fd(c->skel->maps.errnos),
					 sizeof(struct sc_errno_key),
					 sizeof(__u64), add_errno, m);
	/* After the cells: a call that returns in between is missed in
	 * this snapshot rather than counted twice.
	 */
	if (!err && c->inflight)
		err = inflight_add(c->inflight, now_ns, m);
	if (!err)
		err = collector_cgroups_name(c, m);
	if (!err && c->stacks && !c->opts.stacks_on_demand)
		err = stack_drain_add(c->stacks, m);
	m->meta.split = c->opts.split;
	m->meta.fd_types = c->opts.fd_types;
	m->meta.by_threads = c->opts.key_kind == SC_KEY_THREAD;
	if (!err && c->split) {
		whys_free(&m->why);
		err = split_drain_take(c->split, &m->why, &m->meta.throttle);
		m->meta.split_lost = split_drain_dropped(c->split);
	}
	for (int i = 0; i < SC_DROP_COUNT; i++)
		m->meta.drops[i] = __atomic_load_n(&c->skel->bss->drops[i],
						   __ATOMIC_RELAXED);
	m->meta.unattributed =
		__atomic_load_n(&c->skel->bss->unattributed, __ATOMIC_RELAXED);
	for (uint32_t map = 0; map < SC_MAP_COUNT; map++)
		for (uint32_t e = 0; e < SC_ERRNO_SLOTS; e++) {
			uint64_t n = __atomic_load_n(
				&c->skel->bss->map_fails[map][e],
				__ATOMIC_RELAXED);

			if (n)
				model_map_fail_add(&m->meta, map, e, n);
		}
	if (!err)
		err = model_finalize(m);
	if (err) {
		model_free(m);
		return err;
	}
	*out = m;
	return 0;
}

int collector__snapshot_at(struct collector *c, uint64_t now_ns,
			   struct sc_model **out)
{
	return snapshot(c, now_ns, false, out);
}

int collector__snapshot_last(struct collector *c, uint64_t now_ns,
			     struct sc_model **out)
{
	return snapshot(c, now_ns, true, out);
}

static uint32_t map_count(int fd, size_t ksz)
{
	void *key = malloc(ksz), *next = malloc(ksz);
	uint32_t n = 0;

	if (!key || !next)
		goto out;
	while (!bpf_map_get_next_key(fd, n ? key : NULL, next)) {
		memcpy(key, next, ksz);
		n++;
	}
out:
	free(key);
	free(next);
	return n;
}

/* Kernel memory charged to a map, from its fdinfo; 0 if unknown. */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	}
	fclose(f);
	return v;
}

int collector__info(struct collector *c, struct collector_info *out)
{
	const struct bpf_object_skeleton *s = c->skel->skeleton;
	struct bpf_map *map;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < s->prog_cnt; i++) {
		if (*s->progs[i].link)
			out->progs_attached++;
	}
	out->stats_max = bpf_map__max_entries(c->skel->maps.stats);
	out->procs_max = bpf_map__max_entries(c->skel->maps.procs);
	out->stats_entries = map_count(bpf_map__fd(c->skel->maps.stats),
				       sizeof(struct sc_stats_key));
	out->procs_entries = map_count(bpf_map__fd(c->skel->maps.procs),
				       sizeof(struct sc_proc_key));
	bpf_object__for_each_map(map, c->skel->obj)
		out->map_bytes += map_memlock(bpf_map__fd(map));
	out->procs_folded = c->procs_folded;
	return 0;
}

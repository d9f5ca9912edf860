// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/stacks.h"

#define INDEX_EMPTY ((size_t)-1)

struct sc_model *model_new(void)
{
	return calloc(1, sizeof(struct sc_model));
}

static void proc_free(struct sc_proc *p)
{
	free(p->rows);
}

void model_free(struct sc_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++)
		proc_free(&m->procs[i]);
	free(m->procs);
	free(m->index);
	free(m->total);
	free(m->errnos);
	free(m->flights);
	for (size_t i = 0; i < m->ncgnames; i++)
		free(m->cgnames[i].path);
	free(m->cgnames);
	stacks_free(m->stacks);
	whys_free(&m->why);
	free(m);
}

const char *model_cgroup_path(const struct sc_model *m, uint64_t id)
{
	for (size_t i = 0; i < m->ncgnames; i++)
		if (m->cgnames[i].id == id)
			return m->cgnames[i].path;
	return NULL;
}

int model_cgroup_set(struct sc_model *m, uint64_t id, const char *path)
{
	struct sc_cgname *n;
	char *copy;

	if (model_cgroup_path(m, id))
		return 0;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	n = realloc(m->cgnames, (m->ncgnames + 1) * sizeof(*n));
	if (!n) {
		free(copy);
		return -ENOMEM;
	}
	m->cgnames = n;
	n[m->ncgnames].id = id;
	n[m->ncgnames++].path = copy;
	return 0;
}

int model_cgroups_copy(struct sc_model *dst, const struct sc_model *src)
{
	for (size_t i = 0; i < src->ncgnames; i++)
		if (model_cgroup_set(dst, src->cgnames[i].id,
				     src->cgnames[i].path))
			return -ENOMEM;
	return 0;
}

void model_copy_meta(struct sc_model *dst, const struct sc_model *src)
{
	dst->meta = src->meta;
}

static uint64_t fail_count(const struct sc_model_meta *m, uint32_t map,
			   uint32_t err)
{
	for (uint32_t i = 0; m && i < m->nfails; i++)
		if (m->fails[i].map == map && m->fails[i].err == err)
			return m->fails[i].count;
	return 0;
}

void model_map_fail_add(struct sc_model_meta *meta, uint32_t map, uint32_t err,
			uint64_t count)
{
	uint32_t i;

	for (i = 0; i < meta->nfails; i++)
		if (meta->fails[i].map == map && meta->fails[i].err == err)
			break;
	if (i == meta->nfails) {
		/* the last slot stands for every kind beyond the others */
		if (i == SC_MAP_FAILS_MAX) {
			i--;
			err = 0;
		} else {
			meta->nfails++;
			meta->fails[i].map = (uint16_t)map;
			meta->fails[i].err = (uint16_t)err;
			meta->fails[i].count = 0;
		}
	}
	meta->fails[i].count += count;
}

void model_meta_delta(struct sc_model_meta *d, const struct sc_model_meta *cur,
		      const struct sc_model_meta *prev)
{
	*d = *cur;
	for (int i = 0; i < SC_DROP_COUNT; i++)
		d->drops[i] =
			delta_u64(cur->drops[i], prev ? prev->drops[i] : 0);
	d->unattributed =
		delta_u64(cur->unattributed, prev ? prev->unattributed : 0);
	d->cgroups_unnamed = delta_u64(cur->cgroups_unnamed,
				       prev ? prev->cgroups_unnamed : 0);
	d->split_lost = delta_u64(cur->split_lost, prev ? prev->split_lost : 0);
	if (prev && prev->throttle.known) {
		d->throttle.throttled_ns =
			delta_u64(cur->throttle.throttled_ns,
				  prev->throttle.throttled_ns);
		d->throttle.nr_throttled =
			delta_u64(cur->throttle.nr_throttled,
				  prev->throttle.nr_throttled);
		d->throttle.nr_periods = delta_u64(cur->throttle.nr_periods,
						   prev->throttle.nr_periods);
	}
	d->nfails = 0;
	for (uint32_t i = 0; i < cur->nfails; i++) {
		const struct sc_map_fail *f = &cur->fails[i];
		uint64_t n =
			delta_u64(f->count, fail_count(prev, f->map, f->err));

		if (n)
			model_map_fail_add(d, f->map, f->err, n);
	}
}

struct sc_model *model_clone(const struct sc_model *m)
{
	struct sc_model *c = model_new();

	if (!c)
		return NULL;
	model_copy_meta(c, m);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *src = &m->procs[i];
		struct sc_proc *p =
			model_proc(c, src->pid, src->start_ns, src->cgtag);

		if (!p)
			goto err;
		if (model_proc_merge(p, src))
			goto err;
		p->ppid = src->ppid;
		p->tgid = src->tgid;
		p->cgid = src->cgid;
		memcpy(p->comm, src->comm, sizeof(p->comm));
		p->exited = src->exited;
		p->exit_code = src->exit_code;
		p->merged = src->merged;
	}
	for (size_t i = 0; i < m->nerrnos; i++) {
		const struct sc_errno_row *e = &m->errnos[i];

		if (model_errno_add_fd(c, e->abi, e->nr, e->fd_type, e->err,
				       e->count))
			goto err;
	}
	if (model_cgroups_copy(c, m))
		goto err;
	for (size_t i = 0; i < m->nflights; i++) {
		if (model_flight_add(c, &m->flights[i]))
			goto err;
	}
	if (m->stacks) {
		c->stacks = stacks_clone(m->stacks);
		if (!c->stacks)
			goto err;
	}
	if (whys_copy(&c->why, &m->why))
		goto err;
	return c;
err:
	model_free(c);
	return NULL;
}

size_t model_proc_hash(uint32_t pid, uint64_t start_ns, uint32_t cgtag)
{
	uint64_t h = ((uint64_t)pid << 32) ^ start_ns ^ cgtag;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h;
}

static int index_grow(struct sc_model *m)
{
	size_t cap = m->index_cap ? m->index_cap * 2 : 64;
	size_t *idx = malloc(cap * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		idx[i] = INDEX_EMPTY;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *p = &m->procs[i];
		size_t s = model_proc_hash(p->pid, p->start_ns, p->cgtag);

		while (idx[s & (cap - 1)] != INDEX_EMPTY)
			s++;
		idx[s & (cap - 1)] = i;
	}
	free(m->index);
	m->index = idx;
	m->index_cap = cap;
	return 0;
}

struct sc_proc *model_find_proc(const struct sc_model *m, uint32_t pid,
				uint64_t start_ns, uint32_t cgtag)
{
	if (!m->index_cap)
		return NULL;
	for (size_t s = model_proc_hash(pid, start_ns, cgtag);; s++) {
		size_t i = m->index[s & (m->index_cap - 1)];
		const struct sc_proc *p;

		if (i == INDEX_EMPTY)
			return NULL;
		p = &m->procs[i];
		if (p->pid == pid && p->start_ns == start_ns &&
		    p->cgtag == cgtag)
			return &m->procs[i];
	}
}

struct sc_proc *model_proc(struct sc_model *m, uint32_t pid, uint64_t start_ns,
			   uint32_t cgtag)
{
	struct sc_proc *p = model_find_proc(m, pid, start_ns, cgtag);
	size_t s;

	if (p)
		return p;

	/* Keep the index at most half full. */
	if ((m->nprocs + 1) * 2 > m->index_cap && index_grow(m))
		return NULL;
	if (m->nprocs == m->procs_cap) {
		size_t cap = m->procs_cap ? m->procs_cap * 2 : 16;
		struct sc_proc *tmp = realloc(m->procs, cap * sizeof(*tmp));

		if (!tmp)
			return NULL;
		m->procs = tmp;
		m->procs_cap = cap;
	}
	p = &m->procs[m->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->start_ns = start_ns;
	p->cgtag = cgtag;
	for (s = model_proc_hash(pid, start_ns, cgtag);; s++) {
		if (m->index[s & (m->index_cap - 1)] == INDEX_EMPTY) {
			m->index[s & (m->index_cap - 1)] = m->nprocs;
			break;
		}
	}
	m->nprocs++;
	return p;
}

void stats_add(struct sc_stats *dst, const struct sc_stats *src)
{
	dst->calls += src->calls;
	dst->errors += src->errors;
	dst->interrupted += src->interrupted;
	dst->total_ns += src->total_ns;
	dst->bytes += src->bytes;
	dst->wait_ns += src->wait_ns;
	dst->blocked_ns += src->blocked_ns;
	dst->iowait_ns += src->iowait_ns;
	if (src->min_ns && (!dst->min_ns || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (size_t i = 0; i < SC_HIST_BUCKETS; i++)
		dst->hist[i] += src->hist[i];
}

void row_add(struct sc_row *dst, const struct sc_row *src)
{
	stats_add(&dst->st, &src->st);
	dst->flight_ns += src->flight_ns;
	dst->flight_calls += src->flight_calls;
}

static struct sc_row *row_get(struct sc_row **rows, size_t *n, size_t *cap,
			      uint32_t abi, uint32_t nr, uint32_t fd_type)
{
	struct sc_row *r;

	for (size_t i = 0; i < *n; i++) {
		if ((*rows)[i].nr == nr && (*rows)[i].abi == abi &&
		    (*rows)[i].fd_type == fd_type)
			return &(*rows)[i];
	}
	if (*n == *cap) {
		/* Rows are large (a histogram each): grow gently, from
		 * one (a process's totals, or an exited one's under
		 * churn, are its only row)
		 */
		size_t ncap = *cap ? *cap + *cap / 2 + 1 : 1;
		struct sc_row *tmp = realloc(*rows, ncap * sizeof(*tmp));

		if (!tmp)
			return NULL;
		*rows = tmp;
		*cap = ncap;
	}
	r = &(*rows)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->abi = abi;
	r->nr = nr;
	r->fd_type = fd_type;
	return r;
}

int model_proc_add_fd(struct sc_proc *p, uint32_t abi, uint32_t nr,
		      uint32_t fd_type, const struct sc_stats *st)
{
	struct sc_row *r =
		row_get(&p->rows, &p->nrows, &p->cap, abi, nr, fd_type);

	if (!r)
		return -ENOMEM;
	stats_add(&r->st, st);
	return 0;
}

int model_proc_add(struct sc_proc *p, uint32_t abi, uint32_t nr,
		   const struct sc_stats *st)
{
	return model_proc_add_fd(p, abi, nr, SC_FD_NONE, st);
}

int model_proc_add_flight(struct sc_proc *p, uint32_t abi, uint32_t nr,
			  uint32_t fd_type, uint64_t ns, uint64_t ncalls)
{
	struct sc_row *r =
		row_get(&p->rows, &p->nrows, &p->cap, abi, nr, fd_type);

	if (!r)
		return -ENOMEM;
	r->st.total_ns += ns;
	r->flight_ns += (int64_t)ns;
	r->flight_calls += ncalls;
	return 0;
}

int model_proc_merge(struct sc_proc *dst, const struct sc_proc *src)
{
	for (size_t i = 0; i < src->nrows; i++) {
		const struct sc_row *r = &src->rows[i];
		struct sc_row *d = row_get(&dst->rows, &dst->nrows, &dst->cap,
					   r->abi, r->nr, r->fd_type);

		if (!d)
			return -ENOMEM;
		row_add(d, r);
	}
	return 0;
}

int model_flight_add(struct sc_model *m, const struct sc_flight_call *f)
{
	if (m->nflights == m->flights_cap) {
		size_t cap = m->flights_cap ? m->flights_cap * 2 : 16;
		struct sc_flight_call *tmp =
			realloc(m->flights, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		m->flights = tmp;
		m->flights_cap = cap;
	}
	m->flights[m->nflights++] = *f;
	return 0;
}

static int cmp_flight(const void *a, const void *b)
{
	const struct sc_flight_call *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void model_flights_sort(struct sc_model *m)
{
	if (m->nflights > 1)
		qsort(m->flights, m->nflights, sizeof(*m->flights), cmp_flight);
}

int model_errno_add(struct sc_model *m, uint32_t abi, uint32_t nr, uint32_t err,
		    uint64_t count)
{
	return model_errno_add_fd(m, abi, nr, SC_FD_NONE, err, count);
}

int model_errno_add_fd(struct sc_model *m, uint32_t abi, uint32_t nr,
		       uint32_t fd_type, uint32_t err, uint64_t count)
{
	struct sc_errno_row *e;

	for (size_t i = 0; i < m->nerrnos; i++) {
		e = &m->errnos[i];
		if (e->abi == abi && e->nr == nr && e->err == err &&
		    e->fd_type == fd_type) {
			e->count += count;
			return 0;
		}
	}
	if (m->nerrnos == m->errnos_cap) {
		size_t cap = m->errnos_cap ? m->errnos_cap * 2 : 16;
		struct sc_errno_row *tmp =
			realloc(m->errnos, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		m->errnos = tmp;
		m->errnos_cap = cap;
	}
	e = &m->errnos[m->nerrnos++];
	e->abi = abi;
	e->nr = nr;
	e->err = err;
	e->count = count;
	e->fd_type = fd_type;
	return 0;
}

int model_finalize(struct sc_model *m)
{
	/* slot[abi][nr]: 1 + index into total, 0 while absent */
	size_t(*slot)[SC_NR_MAX] = calloc(SC_ABI_COUNT, sizeof(*slot));
	size_t cap = 0;
	int err = 0;

	if (!slot)
		return -ENOMEM;
	free(m->total);
	m->total = NULL;
	m->ntotal = 0;
	for (size_t i = 0; i < m->nprocs && !err; i++) {
		const struct sc_proc *p = &m->procs[i];

		for (size_t j = 0; j < p->nrows; j++) {
			const struct sc_row *src = &p->rows[j];
			bool fast = src->nr < SC_NR_MAX &&
				    src->abi < SC_ABI_COUNT && !src->fd_type;
			struct sc_row *r;

			if (fast && slot[src->abi][src->nr]) {
				r = &m->total[slot[src->abi][src->nr] - 1];
			} else {
				r = row_get(&m->total, &m->ntotal, &cap,
					    src->abi, src->nr, src->fd_type);
				if (!r) {
					err = -ENOMEM;
					break;
				}
				if (fast)
					slot[src->abi][src->nr] = m->ntotal;
			}
			row_add(r, src);
		}
	}
	free(slot);
	return err;
}

uint64_t model_abi_calls(const struct sc_row *rows, size_t n, uint32_t abi)
{
	uint64_t calls = 0;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi == abi)
			calls += rows[i].st.calls;
	}
	return calls;
}

bool model_abi_seen(const struct sc_row *rows, size_t n, uint32_t abi)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi == abi && row_seen(&rows[i]))
			return true;
	}
	return false;
}

bool model_incomplete(const struct sc_model *m)
{
	for (int i = 0; i < SC_DROP_COUNT; i++)
		if (m->meta.drops[i])
			return true;
	return m->meta.unattributed != 0 || m->meta.cgroups_unnamed != 0 ||
	       m->meta.nfails != 0;
}

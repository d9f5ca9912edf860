// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampled call sites: distinct stacks and their counts. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/stacks.h"

struct sc_stacks *stacks_new(uint32_t period)
{
	struct sc_stacks *s = calloc(1, sizeof(*s));

	if (s)
		s->period = period;
	return s;
}

void stack_frames_free(struct sc_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].func);
		free(f[i].module);
		free(f[i].file);
	}
	free(f);
}

void stacks_free(struct sc_stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		stack_frames_free(s->v[i].frames, s->v[i].nframes);
		stack_frames_free(s->v[i].kframes, s->v[i].nkframes);
		free(s->v[i].cgroup);
	}
	free(s->v);
	free(s->index);
	free(s);
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

struct sc_frame *stack_frames_dup(const struct sc_frame *f, size_t n)
{
	struct sc_frame *d = calloc(n ? n : 1, sizeof(*d));

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		d[i].offset = f[i].offset;
		d[i].line = f[i].line;
		d[i].runtime = f[i].runtime;
		if (dup_str(&d[i].func, f[i].func) ||
		    dup_str(&d[i].module, f[i].module) ||
		    dup_str(&d[i].file, f[i].file)) {
			stack_frames_free(d, i + 1);
			return NULL;
		}
	}
	return d;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static uint64_t hash_frames(uint64_t h, const struct sc_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = hash_str(h, f[i].module);
		h = hash_bytes(h, &f[i].offset, sizeof(f[i].offset));
		h = hash_str(h, f[i].func);
	}
	return hash_bytes(h, &n, sizeof(n));
}

/* A stack's identity: name, cgroup, syscall, and each frame's place and
 * name, the user's and the kernel's.
 */
static uint64_t stack_hash(uint32_t nr, uint32_t abi, const char *comm,
			   const char *cgroup, const struct sc_frame *f,
			   size_t n, const struct sc_frame *kf, size_t nk)
{
	uint64_t h = 14695981039346656037ULL;

	h = hash_bytes(h, &nr, sizeof(nr));
	h = hash_bytes(h, &abi, sizeof(abi));
	h = hash_bytes(h, comm, strnlen(comm, SC_COMM_LEN));
	if (cgroup)
		h = hash_str(h, cgroup);
	h = hash_frames(h, f, n);
	return nk ? hash_frames(h, kf, nk) : h;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool frames_eq(const struct sc_frame *a, size_t na,
		      const struct sc_frame *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].offset != b[i].offset ||
		    !str_eq(a[i].module, b[i].module) ||
		    !str_eq(a[i].func, b[i].func))
			return false;
	return true;
}

static bool stack_eq(const struct sc_stack *st, uint32_t nr, uint32_t abi,
		     const char *comm, const char *cgroup,
		     const struct sc_frame *f, size_t n,
		     const struct sc_frame *kf, size_t nk)
{
	return st->nr == nr && st->abi == abi &&
	       !strncmp(st->comm, comm, SC_COMM_LEN) &&
	       str_eq(st->cgroup, cgroup) &&
	       frames_eq(st->frames, st->nframes, f, n) &&
	       frames_eq(st->kframes, st->nkframes, kf, nk);
}

static int index_build(struct sc_stacks *s, size_t cap)
{
	size_t *idx = malloc(cap * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	memset(idx, 0xff, cap * sizeof(*idx));
	for (size_t i = 0; i < s->n; i++) {
		const struct sc_stack *st = &s->v[i];
		size_t j = stack_hash(st->nr, st->abi, st->comm, st->cgroup,
				      st->frames, st->nframes, st->kframes,
				      st->nkframes) &
			   (cap - 1);

		while (idx[j] != SIZE_MAX)
			j = (j + 1) & (cap - 1);
		idx[j] = i;
	}
	free(s->index);
	s->index = idx;
	s->index_cap = cap;
	return 0;
}

static int index_grow(struct sc_stacks *s)
{
	return index_build(s, s->index_cap ? s->index_cap * 2 : 64);
}

int stacks_add(struct sc_stacks *s, uint32_t nr, uint32_t abi, const char *comm,
	       const struct sc_frame *frames, size_t nframes, uint64_t count)
{
	return stacks_add_kernel(s, nr, abi, comm, frames, nframes, NULL, 0,
				 count);
}

int stacks_add_kernel(struct sc_stacks *s, uint32_t nr, uint32_t abi,
		      const char *comm, const struct sc_frame *frames,
		      size_t nframes, const struct sc_frame *kframes,
		      size_t nkframes, uint64_t count)
{
	return stacks_add_in_cgroup(s, nr, abi, comm, NULL, frames, nframes,
				    kframes, nkframes, count);
}

int stacks_add_in_cgroup(struct sc_stacks *s, uint32_t nr, uint32_t abi,
			 const char *comm, const char *cgroup,
			 const struct sc_frame *frames, size_t nframes,
			 const struct sc_frame *kframes, size_t nkframes,
			 uint64_t count)
{
	struct sc_stack *st;
	size_t j;

	if ((s->n + 1) * 2 > s->index_cap && index_grow(s))
		return -ENOMEM;
	j = stack_hash(nr, abi, comm, cgroup, frames, nframes, kframes,
		       nkframes) &
	    (s->index_cap - 1);
	for (; s->index[j] != SIZE_MAX; j = (j + 1) & (s->index_cap - 1)) {
		st = &s->v[s->index[j]];
		if (stack_eq(st, nr, abi, comm, cgroup, frames, nframes,
			     kframes, nkframes)) {
			st->count += count;
			s->samples += count;
			return 0;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct sc_stack *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	st = &s->v[s->n];
	memset(st, 0, sizeof(*st));
	if (dup_str(&st->cgroup, cgroup))
		return -ENOMEM;
	st->frames = stack_frames_dup(frames, nframes);
	if (!st->frames) {
		free(st->cgroup);
		return -ENOMEM;
	}
	if (nkframes) {
		st->kframes = stack_frames_dup(kframes, nkframes);
		if (!st->kframes) {
			stack_frames_free(st->frames, nframes);
			free(st->cgroup);
			return -ENOMEM;
		}
		st->nkframes = nkframes;
	}
	st->nr = nr;
	st->abi = abi;
	strncpy(st->comm, comm, SC_COMM_LEN - 1);
	st->nframes = nframes;
	st->count = count;
	s->index[j] = s->n++;
	s->samples += count;
	return 0;
}

struct sc_stacks *stacks_clone(const struct sc_stacks *s)
{
	struct sc_stacks *d = stacks_new(s->period);

	if (!d)
		return NULL;
	memcpy(d->lost, s->lost, sizeof(d->lost));
	d->lost_total = s->lost_total;
	d->gaps = s->gaps;
	d->max_weight = s->max_weight;
	d->by = s->by;
	for (size_t i = 0; i < s->n; i++) {
		const struct sc_stack *st = &s->v[i];

		if (stacks_add_in_cgroup(d, st->nr, st->abi, st->comm,
					 st->cgroup, st->frames, st->nframes,
					 st->kframes, st->nkframes,
					 st->count)) {
			stacks_free(d);
			return NULL;
		}
	}
	return d;
}

static int by_count(const void *a, const void *b)
{
	const struct sc_stack *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	return strncmp(x->comm, y->comm, SC_COMM_LEN);
}

void stacks_sort(struct sc_stacks *s)
{
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), by_count);
	if (index_build(s, s->index_cap)) {
		/* the next stacks_add builds it again */
		free(s->index);
		s->index = NULL;
		s->index_cap = 0;
	}
}

const char *stacks_weighting_name(enum sc_stack_weighting by)
{
	switch (by) {
	case SC_STACKS_BY_TIME:
		return "time";
	case SC_STACKS_BY_BLOCKED:
		return "blocked";
	default:
		return "count";
	}
}

bool stacks_timed(const struct sc_stacks *s)
{
	return s->by != SC_STACKS_BY_COUNT;
}

bool stacks_untrusted(const struct sc_stacks *s)
{
	return s->lost_total * 20 > s->samples + s->lost_total;
}

uint64_t stacks_syscall_samples(const struct sc_stacks *s, uint32_t abi,
				uint32_t nr)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].nr == nr && s->v[i].abi == abi)
			n += s->v[i].count;
	return n;
}

bool stack_has_func(const struct sc_stack *st, const char *name)
{
	for (size_t i = 0; i < st->nframes; i++)
		if (st->frames[i].func && !strcmp(st->frames[i].func, name))
			return true;
	return false;
}

const char *stack_frame_name(const struct sc_frame *f, char *buf, size_t len)
{
	if (f->func)
		return f->func;
	if (f->module)
		snprintf(buf, len, "%s+0x%" PRIx64, f->module, f->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, f->offset);
	return buf;
}

const char *stack_runtime_name(unsigned int rt)
{
	static const char *const names[SC_RT_COUNT] = {
		[SC_RT_LIBC] = "libc",
		[SC_RT_GO] = "Go",
		[SC_RT_NODE] = "node",
		[SC_RT_LIBUV] = "libuv",
	};

	return rt < SC_RT_COUNT ? names[rt] : NULL;
}

/* A frame of the program's own, in a known place (not an address the
 * unwinder read from a frame it could not follow).
 */
static bool own_frame(const struct sc_frame *f)
{
	return f->runtime == SC_RT_NONE && (f->func || f->module);
}

/* Where a call site label starts: the first frame of the program's own,
 * else (a runtime's own call) the innermost.
 */
static size_t first_shown(const struct sc_stack *st)
{
	for (size_t i = 0; i < st->nframes; i++)
		if (own_frame(&st->frames[i]))
			return i;
	return 0;
}

/* Is frame i in the label? From the program's first frame on, none of a
 * runtime's (folded, SVG and JSON have them); a runtime's own call shows
 * every frame.
 */
static bool label_frame(const struct sc_stack *st, size_t i0, size_t i)
{
	const struct sc_frame *f = &st->frames[i];

	/* address 0 in nothing: where an unwinder lost its way, not code */
	if (!f->func && !f->module && !f->offset)
		return false;
	return i >= i0 &&
	       (!own_frame(&st->frames[i0]) || f->runtime == SC_RT_NONE);
}

const char *stack_via(const struct sc_stack *st, char *buf, size_t len)
{
	size_t i0 = first_shown(st), used = 0;
	unsigned int seen = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < i0; i++) {
		unsigned int rt = st->frames[i].runtime;
		const char *name = stack_runtime_name(rt);
		int w;

		if (!name || (seen & (1u << rt)) || used >= len)
			continue;
		seen |= 1u << rt;
		w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
			     name);
		used += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

/* stack_label() and, where runtime frames were skipped, " (via VIA)". */
static char *stack_site(const struct sc_stack *st)
{
	char via[64], *label = stack_label(st), *s;

	if (!label || !*stack_via(st, via, sizeof(via)))
		return label;
	if (asprintf(&s, "%s (via %s)", label, via) < 0)
		s = NULL;
	free(label);
	return s;
}

size_t stack_label_frames(const struct sc_stack *st,
			  const struct sc_frame **out, size_t max, bool *more)
{
	size_t i0 = first_shown(st), n = 0, i;
	char buf[96];

	for (i = i0; i < st->nframes && n < max; i++) {
		const char *name;

		if (!label_frame(st, i0, i))
			continue;
		out[n++] = &st->frames[i];
		name = stack_frame_name(&st->frames[i], buf, sizeof(buf));
		/* what calls main is the C library or the Go runtime */
		if (!strcmp(name, "main") || !strcmp(name, "main.main")) {
			i = st->nframes;
			break;
		}
	}
	while (i < st->nframes && !label_frame(st, i0, i))
		i++;
	if (more)
		*more = i < st->nframes;
	return n;
}

const struct sc_frame *stack_lead(const struct sc_stack *st)
{
	return st->nframes ? &st->frames[first_shown(st)] : NULL;
}

char *stack_label(const struct sc_stack *st)
{
	const struct sc_frame *shown[STACK_LABEL_FRAMES];
	const struct sc_frame *lead = stack_lead(st);
	size_t n, len = 64;
	char buf[96], *s;
	bool more;

	n = stack_label_frames(st, shown, STACK_LABEL_FRAMES, &more);
	for (size_t i = 0; i < n; i++)
		len += strlen(stack_frame_name(shown[i], buf, sizeof(buf))) + 4;
	if (lead && lead->file)
		len += strlen(lead->file) + 16;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, " <- ");
		strcat(s, stack_frame_name(shown[i], buf, sizeof(buf)));
	}
	if (more)
		strcat(s, " <- ...");
	if (lead && lead->file) {
		const char *b = strrchr(lead->file, '/');

		sprintf(s + strlen(s), " (%s:%u)", b ? b + 1 : lead->file,
			lead->line);
	}
	return s;
}

char *stacks_top_site(const struct sc_stacks *s, uint32_t abi, uint32_t nr,
		      double *share)
{
	uint64_t total = 0, best = 0;
	char *best_label = NULL;

	*share = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct sc_stack *st = &s->v[i];
		uint64_t n = 0;
		char *label;

		if (st->nr != nr || st->abi != abi)
			continue;
		total += st->count;
		label = stack_site(st);
		if (!label) {
			free(best_label);
			return NULL;
		}
		/* all the stacks with this label */
		for (size_t j = 0; j < s->n; j++) {
			char *l;

			if (s->v[j].nr != nr || s->v[j].abi != abi)
				continue;
			l = j == i ? NULL : stack_site(&s->v[j]);
			if (j == i || (l && !strcmp(l, label)))
				n += s->v[j].count;
			free(l);
		}
		if (n > best) {
			free(best_label);
			best_label = label;
			best = n;
		} else {
			free(label);
		}
	}
	if (best_label)
		*share = (double)best / (double)total;
	return best_label;
}

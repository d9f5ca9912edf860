// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --pprof: the sampled stacks as profile.proto, packed by protobuf-c. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#include "profile.pb-c.h" /* generated from render/profile.proto */
#include "model/group.h"
#include "model/names.h"
#include "model/stacks.h"
#include "render/pprof.h"
#include "util/escape.h"
#include "util/intern.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Sample values, in this order. */
enum { VAL_CALLS, VAL_NS, NVALS };

/* Raw bytes (a name from a binary, a process name) as text: esc_text. */
static int64_t str_raw(struct strtab *t, const char *s)
{
	return strtab_take(t, esc_text(s, strlen(s)));
}

/* ---- the profile being built ---- */

struct loc {
	pb_location pb;
	pb_line line;
	pb_line *linep;
};

/* Labels a sample carries, at most: comm and the other keys. */
#define MAX_LABELS GROUP_KEY_COUNT

struct sample {
	pb_sample pb;
	int64_t value[NVALS];
	pb_label label[MAX_LABELS];
	pb_label *labelp[MAX_LABELS];
	uint64_t *loc_ids;
};

/* What a sample of one syscall stands for, worked out once per syscall. */
struct sc_weight {
	uint32_t abi, nr;
	double calls; /* calls per sample */
	double mean;  /* ns per call; 0 without time */
};

struct builder {
	struct strtab str;
	struct idtab func_ids, loc_ids, map_ids;
	pb_function *funcs; /* funcs[id - 1] */
	size_t nfuncs, funcs_cap;
	struct loc *locs;
	size_t nlocs, locs_cap;
	pb_mapping *maps;
	size_t nmaps, maps_cap;
	struct sample *samples;
	size_t nsamples;
	/* the labels: comm first, then the others of --labels */
	enum group_key keys[MAX_LABELS];
	int64_t key_str[MAX_LABELS];
	size_t nkeys;
	bool timed; /* --stacks-by time or blocked: ns measured */
	struct sc_weight *weights; /* one per syscall sampled */
	size_t nweights, weights_cap;
};

/* Room for one more of an array of n elements of size sz. */
static int grow(void *vp, size_t *cap, size_t n, size_t sz)
{
	void **p = vp;
	size_t c = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*p, c * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* A function: kind 0 a user function, 1 a syscall. Its id, or 0 when out
 * of memory.
 */
static uint64_t function_id(struct builder *b, int64_t name, int64_t file,
			    uint64_t kind)
{
	struct idkey k = { { (uint64_t)name, (uint64_t)file, kind, 0 } };
	pb_function f = PERFTOOLS__PROFILES__FUNCTION__INIT;
	ssize_t slot;
	uint64_t id = idtab_find(&b->func_ids, &k, &slot);

	if (id || slot < 0 ||
	    grow(&b->funcs, &b->funcs_cap, b->nfuncs, sizeof(*b->funcs)))
		return id;
	f.id = ++b->nfuncs;
	f.name = name;
	f.system_name = name;
	f.filename = file;
	b->funcs[f.id - 1] = f;
	idtab_set(&b->func_ids, (size_t)slot, &k, f.id);
	return f.id;
}

/* The mapping of a module (a string index). Its id, or 0 when out of
 * memory.
 */
static uint64_t mapping_id(struct builder *b, int64_t module)
{
	struct idkey k = { { (uint64_t)module, 0, 0, 0 } };
	pb_mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT;
	ssize_t slot;
	uint64_t id = idtab_find(&b->map_ids, &k, &slot);

	if (id || slot < 0 ||
	    grow(&b->maps, &b->maps_cap, b->nmaps, sizeof(*b->maps)))
		return id;
	/* Frames carry offsets in the module as addr2line takes them, not
	 * where it was loaded: the mapping starts at 0. Symbolized as far
	 * as every one of its frames is (cleared below).
	 */
	mp.id = ++b->nmaps;
	mp.filename = module;
	mp.has_functions = mp.has_filenames = mp.has_line_numbers = true;
	b->maps[mp.id - 1] = mp;
	idtab_set(&b->map_ids, (size_t)slot, &k, mp.id);
	return mp.id;
}

/* A location: mapping (0: none), address, function (0: unknown), line.
 * Its id, or 0 when out of memory.
 */
static uint64_t location_id(struct builder *b, uint64_t map, uint64_t addr,
			    uint64_t func, int64_t line)
{
	struct idkey k = { { map, addr, func, (uint64_t)line } };
	struct loc *l;
	ssize_t slot;
	uint64_t id = idtab_find(&b->loc_ids, &k, &slot);

	if (id || slot < 0 ||
	    grow(&b->locs, &b->locs_cap, b->nlocs, sizeof(*b->locs)))
		return id;
	l = &b->locs[b->nlocs];
	memset(l, 0, sizeof(*l));
	perftools__profiles__location__init(&l->pb);
	perftools__profiles__line__init(&l->line);
	l->pb.id = ++b->nlocs;
	l->pb.mapping_id = map;
	l->pb.address = addr;
	l->line.function_id = func;
	l->line.line = line;
	idtab_set(&b->loc_ids, (size_t)slot, &k, l->pb.id);
	return l->pb.id;
}

/* A user frame's location id, or 0 when out of memory. */
static uint64_t frame_location(struct builder *b, const struct sc_frame *f)
{
	int64_t name = 0, file = 0;
	uint64_t map = 0, func = 0;

	if (f->module) {
		int64_t mod = str_raw(&b->str, f->module);

		if (mod < 0 || !(map = mapping_id(b, mod)))
			return 0;
	}
	if (f->file && (file = str_raw(&b->str, f->file)) < 0)
		return 0;
	if (f->func) {
		name = str_raw(&b->str, f->func);
		if (name < 0 || !(func = function_id(b, name, file, 0)))
			return 0;
	}
	if (map) {
		pb_mapping *mp = &b->maps[map - 1];

		mp->has_functions &= f->func != NULL;
		mp->has_filenames &= f->file != NULL;
		mp->has_line_numbers &= f->line != 0;
	}
	return location_id(b, map, f->offset, func, func ? f->line : 0);
}

/* The syscall as a leaf location: no mapping, one function named after
 * it. Its id, or 0 when out of memory.
 */
static uint64_t syscall_location(struct builder *b, uint32_t abi, uint32_t nr)
{
	char nbuf[SC_NAME_LEN];
	const char *name = names_syscall_fmt(abi, nr, nbuf, sizeof(nbuf));
	int64_t s = strtab_take(&b->str, strdup(name));
	uint64_t func = s < 0 ? 0 : function_id(b, s, 0, 1);

	return func ? location_id(b, 0, 0, func, 0) : 0;
}

/* A syscall's weight. Its exact count of calls (the model's rows of it,
 * every fd kind) is shared among its samples, so that they add up to it:
 * a 1-in-N sample is N calls only on average, and one sampled call of a
 * syscall made once (a 300 ms sleep before exit) would otherwise stand
 * for N of them, N times its time. N calls a sample when the model has
 * fewer calls than samples (its rows were not kept). The mean: the
 * returned calls' time over their number (by blocked time: their blocked
 * time over it).
 */
static struct sc_weight syscall_weight(const struct sc_model *m,
				       const struct sc_stacks *s, uint32_t abi,
				       uint32_t nr)
{
	struct sc_weight w = { .abi = abi, .nr = nr, .calls = s->period };
	uint64_t calls = 0, timed = 0;
	uint64_t samples = stacks_syscall_samples(s, abi, nr);
	double ns = 0;

	for (size_t i = 0; i < m->ntotal; i++) {
		const struct sc_row *r = &m->total[i];

		if (r->abi != abi || r->nr != nr)
			continue;
		calls += r->st.calls;
		for (size_t b = 0; b < SC_HIST_BUCKETS; b++)
			timed += r->st.hist[b];
		ns += s->by == SC_STACKS_BY_BLOCKED ?
			      (double)r->st.blocked_ns :
			      (double)row_returned_ns(r);
	}
	if (!stacks_timed(s) && samples && calls >= samples)
		w.calls = (double)calls / (double)samples;
	/* (over the calls timed: all of them but in the daemon's sampled
	 * mode, whose time is of the calls in its latency windows)
	 */
	if (!m->meta.count_only && (timed || calls))
		w.mean = ns / (double)(timed ? timed : calls);
	return w;
}

/* The weight of a syscall, from the builder's list (added on first use);
 * NULL when out of memory.
 */
static const struct sc_weight *weight_of(struct builder *b,
					 const struct sc_model *m, uint32_t abi,
					 uint32_t nr)
{
	for (size_t i = 0; i < b->nweights; i++)
		if (b->weights[i].abi == abi && b->weights[i].nr == nr)
			return &b->weights[i];
	if (grow(&b->weights, &b->weights_cap, b->nweights,
		 sizeof(*b->weights)))
		return NULL;
	b->weights[b->nweights] = syscall_weight(m, m->stacks, abi, nr);
	return &b->weights[b->nweights++];
}

static int64_t clamp_i64(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 9.2e18 ? INT64_MAX : (int64_t)llround(v);
}

static int add_sample(struct builder *b, const struct sc_model *m,
		      const struct sc_stack *st, uint32_t period)
{
	struct sample *sa = &b->samples[b->nsamples];
	const struct sc_weight *w = weight_of(b, m, st->abi, st->nr);
	size_t n = st->nkframes + 1 + st->nframes;
	double calls, mean;
	int64_t c;

	if (!w)
		return -ENOMEM;
	calls = (double)st->count * w->calls;
	mean = w->mean;
	sa->loc_ids = calloc(n, sizeof(*sa->loc_ids));
	if (!sa->loc_ids)
		return -ENOMEM;
	b->nsamples++;
	/* leaf first: where it slept (by blocked time: the kernel frames,
	 * innermost first, in the [kernel] mapping), the syscall, then the
	 * user frames innermost first
	 */
	for (size_t i = 0; i < st->nkframes; i++) {
		sa->loc_ids[i] = frame_location(b, &st->kframes[i]);
		if (!sa->loc_ids[i])
			return -ENOMEM;
	}
	sa->loc_ids[st->nkframes] = syscall_location(b, st->abi, st->nr);
	if (!sa->loc_ids[st->nkframes])
		return -ENOMEM;
	for (size_t i = 0; i < st->nframes; i++) {
		size_t k = st->nkframes + 1 + i;

		sa->loc_ids[k] = frame_location(b, &st->frames[i]);
		if (!sa->loc_ids[k])
			return -ENOMEM;
	}
	if (b->timed) { /* measured: period µs each; calls estimated */
		double ns = (double)st->count * (double)period * 1000.0;

		sa->value[VAL_CALLS] = clamp_i64(mean > 0 ? ns / mean : 0);
		sa->value[VAL_NS] = clamp_i64(ns);
	} else {
		sa->value[VAL_CALLS] = clamp_i64(calls);
		sa->value[VAL_NS] = clamp_i64(calls * mean);
	}
	perftools__profiles__sample__init(&sa->pb);
	for (size_t i = 0; i < b->nkeys; i++) {
		char val[4096];
		const char *v = val;

		if (b->keys[i] == GROUP_COMM) {
			memcpy(val, st->comm, SC_COMM_LEN);
			val[SC_COMM_LEN - 1] = '\0';
		} else {
			/* the process's cgroup, "" unknown: as /metrics */
			v = group_path_value(st->cgroup ? st->cgroup : "",
					     b->keys[i], val, sizeof(val));
		}
		c = str_raw(&b->str, v);
		if (c < 0)
			return -ENOMEM;
		perftools__profiles__label__init(&sa->label[i]);
		sa->label[i].key = b->key_str[i];
		sa->label[i].str = c;
		sa->labelp[i] = &sa->label[i];
	}
	sa->pb.n_location_id = n;
	sa->pb.location_id = sa->loc_ids;
	sa->pb.n_value = NVALS;
	sa->pb.value = sa->value;
	sa->pb.n_label = b->nkeys;
	sa->pb.label = sa->labelp;
	return 0;
}

/* The label keys: comm, then the others of o->labels in their order. 0
 * or -ENOMEM.
 */
static int label_keys(struct builder *b, const struct pprof_opts *o)
{
	b->keys[b->nkeys++] = GROUP_COMM;
	for (size_t i = 0; o->labels && i < o->labels->n; i++)
		if (o->labels->keys[i] != GROUP_COMM && b->nkeys < MAX_LABELS)
			b->keys[b->nkeys++] = o->labels->keys[i];
	for (size_t i = 0; i < b->nkeys; i++) {
		b->key_str[i] = strtab_take(&b->str,
					    strdup(group_key_name(b->keys[i])));
		if (b->key_str[i] < 0)
			return -ENOMEM;
	}
	return 0;
}

/* pprof takes the first mapping for the program: the module of the
 * outermost frame outside the C library (_start, main) of the stack with
 * the most samples gets id 1. 0 or -ENOMEM.
 */
static int main_mapping(struct builder *b, const struct sc_stacks *s)
{
	const struct sc_stack *top = NULL;
	int64_t mod;

	for (size_t i = 0; i < s->n; i++)
		if (!top || s->v[i].count > top->count)
			top = &s->v[i];
	for (size_t k = top ? top->nframes : 0; k-- > 0;) {
		const struct sc_frame *f = &top->frames[k];

		if (!f->module || f->runtime == SC_RT_LIBC)
			continue;
		mod = str_raw(&b->str, f->module);
		return mod < 0 || !mapping_id(b, mod) ? -ENOMEM : 0;
	}
	return 0;
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->nsamples; i++)
		free(b->samples[i].loc_ids);
	free(b->samples);
	free(b->funcs);
	free(b->locs);
	free(b->maps);
	free(b->weights);
	idtab_free(&b->func_ids);
	idtab_free(&b->loc_ids);
	idtab_free(&b->map_ids);
	strtab_free(&b->str);
}

/* A comment line (string index), or -ENOMEM. */
static int64_t comment(struct builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int64_t comment(struct builder *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return strtab_take(&b->str, n < 0 ? NULL : s);
}

/* What the values are, and what the profile lacks, as comments (go tool
 * pprof -comments). 0 or -ENOMEM.
 */
static int add_comments(struct builder *b, const struct sc_model *m,
			const struct pprof_opts *o, int64_t *out, size_t *n)
{
	const struct sc_stacks *s = m->stacks;
	char *target = o->target ? esc_text(o->target, strlen(o->target)) :
				   NULL;

	*n = 0;
	if (o->target && !target)
		return -ENOMEM;
	out[(*n)++] = comment(b, "scprof %s: %s", SCPROF_VERSION,
			      target ? target : "");
	free(target);
	if (s->by == SC_STACKS_BY_BLOCKED)
		out[(*n)++] = comment(
			b,
			"blocked-nanoseconds: sampled by blocked time "
			"(--stacks-by blocked), one sample per %" PRIu32
			" us blocked in calls, with the kernel frames of where "
			"each slept (its longest sleep; mapping [kernel]) "
			"above the syscall; calls: an estimate, that time over "
			"the syscall's mean blocked time per call",
			s->period);
	else if (s->by == SC_STACKS_BY_TIME)
		out[(*n)++] = comment(
			b,
			"syscall-nanoseconds: sampled by time (--stacks-by "
			"time), one sample per %" PRIu32
			" us in calls; calls: an estimate, that time over the "
			"syscall's mean latency",
			s->period);
	else
		out[(*n)++] =
			comment(b,
				"calls: the user stack of 1 call in %" PRIu32
				" was sampled; a syscall's samples share its "
				"exact count of calls",
				s->period);
	if (stacks_timed(s)) /* said above */
		;
	else if (m->meta.count_only)
		out[(*n)++] = comment(b, "syscall-nanoseconds: 0, "
					 "--count-only measures no time");
	else
		out[(*n)++] = comment(
			b, "syscall-nanoseconds: an estimate, the calls times "
			   "the syscall's mean latency over the run");
	if (o->note)
		out[(*n)++] = str_raw(&b->str, o->note);
	if (b->nkeys > 1)
		out[(*n)++] = comment(
			b, "labels: comm and those of the daemon's --labels, "
			   "as its /metrics series have them; a process's "
			   "cgroup read at its first sample (\"\" when it "
			   "had gone); no pid");
	else
		out[(*n)++] = comment(b, "labels: comm only; the stacks are "
					 "kept by process name, not by pid or "
					 "cgroup");
	if (s->lost_total)
		out[(*n)++] = comment(b,
				      "%" PRIu64 " more samples were lost: "
				      "the ring buffer was full",
				      s->lost_total);
	for (size_t i = 0; i < *n; i++)
		if (out[i] < 0)
			return -ENOMEM;
	return 0;
}

int pprof_encode(const struct sc_model *m, const struct pprof_opts *o,
		 uint8_t **buf, size_t *len)
{
	pb_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[NVALS], period_type;
	pb_value_type *typep[NVALS];
	pb_function **funcp = NULL;
	pb_location **locp = NULL;
	pb_mapping **mapp = NULL;
	pb_sample **samplep = NULL;
	const struct sc_stacks *s = m->stacks;
	struct builder b = {};
	int64_t comments[8], t_calls, t_ns, u_count, u_ns;
	size_t ncomments = 0;
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (!s)
		return -EINVAL;
	b.timed = stacks_timed(s);
	b.samples = calloc(s->n ? s->n : 1, sizeof(*b.samples));
	if (!b.samples || strtab_take(&b.str, strdup("")) != 0) {
		err = -ENOMEM;
		goto out;
	}
	t_calls = strtab_take(&b.str, strdup("calls"));
	u_count = strtab_take(&b.str, strdup("count"));
	t_ns = strtab_take(&b.str, strdup(s->by == SC_STACKS_BY_BLOCKED ?
						  "blocked-nanoseconds" :
						  "syscall-nanoseconds"));
	u_ns = strtab_take(&b.str, strdup("nanoseconds"));
	if (t_calls < 0 || u_count < 0 || t_ns < 0 || u_ns < 0) {
		err = -ENOMEM;
		goto out;
	}
	err = label_keys(&b, o);
	err = err ?: main_mapping(&b, s);
	for (size_t i = 0; !err && i < s->n; i++)
		err = add_sample(&b, m, &s->v[i], s->period);
	err = err ?: add_comments(&b, m, o, comments, &ncomments);
	if (err)
		goto out;

	/* Every array is final: point the messages at their parts. */
	funcp = calloc(b.nfuncs + 1, sizeof(*funcp));
	locp = calloc(b.nlocs + 1, sizeof(*locp));
	mapp = calloc(b.nmaps + 1, sizeof(*mapp));
	samplep = calloc(b.nsamples + 1, sizeof(*samplep));
	if (!funcp || !locp || !mapp || !samplep) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b.nfuncs; i++)
		funcp[i] = &b.funcs[i];
	for (size_t i = 0; i < b.nmaps; i++)
		mapp[i] = &b.maps[i];
	for (size_t i = 0; i < b.nsamples; i++)
		samplep[i] = &b.samples[i].pb;
	for (size_t i = 0; i < b.nlocs; i++) {
		struct loc *l = &b.locs[i];

		l->linep = &l->line;
		l->pb.line = &l->linep;
		l->pb.n_line = l->line.function_id ? 1 : 0;
		locp[i] = &l->pb;
	}
	for (size_t i = 0; i < NVALS; i++) {
		perftools__profiles__value_type__init(&types[i]);
		typep[i] = &types[i];
	}
	types[VAL_CALLS].type = t_calls;
	types[VAL_CALLS].unit = u_count;
	types[VAL_NS].type = t_ns;
	types[VAL_NS].unit = u_ns;
	period_type = types[VAL_CALLS];

	p.n_sample_type = NVALS;
	p.sample_type = typep;
	p.n_sample = b.nsamples;
	p.sample = samplep;
	for (size_t i = 0; o->served && i < b.nmaps; i++)
		b.maps[i].has_functions = true;
	p.n_mapping = b.nmaps;
	p.mapping = mapp;
	p.n_location = b.nlocs;
	p.location = locp;
	p.n_function = b.nfuncs;
	p.function = funcp;
	p.n_string_table = b.str.n;
	p.string_table = b.str.v;
	p.time_nanos = o->time_ns;
	p.duration_nanos = m->meta.duration_ns > INT64_MAX ?
				   INT64_MAX :
				   (int64_t)m->meta.duration_ns;
	p.period_type = &period_type;
	p.period = s->period;
	p.n_comment = ncomments;
	p.comment = comments;
	/* Time by default, where there is time. */
	p.default_sample_type = m->meta.count_only ? t_calls : t_ns;

	*len = perftools__profiles__profile__get_packed_size(&p);
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		*len = 0;
		err = -ENOMEM;
		goto out;
	}
	if (perftools__profiles__profile__pack(&p, *buf) != *len) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		err = -EIO;
	}
out:
	free(funcp);
	free(locp);
	free(mapp);
	free(samplep);
	builder_free(&b);
	return err;
}

/* buf, gzip-compressed (deflate with gzip's header and trailer), to f. */
static int gzip_write(FILE *f, const uint8_t *buf, size_t len)
{
	const size_t chunk = 1 << 16;
	unsigned char *out = malloc(chunk);
	z_stream z = {};
	size_t left = len;
	int ret, err = 0;

	if (!out)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip stream, not zlib's own framing */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)buf;
	errno = 0;
	do {
		if (!z.avail_in && left) {
			uInt in = left > UINT_MAX ? UINT_MAX : (uInt)left;

			z.avail_in = in;
			left -= in;
		}
		z.next_out = out;
		z.avail_out = (uInt)chunk;
		ret = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			err = -EIO;
		else if (fwrite(out, 1, chunk - z.avail_out, f) !=
			 chunk - z.avail_out)
			err = errno ? -errno : -EIO;
	} while (ret != Z_STREAM_END && !err);
	deflateEnd(&z);
	free(out);
	/* errno is not cleared after the start: a write that failed inside
	 * fwrite, which may still have returned the whole count, left it
	 */
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}

int pprof_write(FILE *f, const struct sc_model *m, const struct pprof_opts *o)
{
	uint8_t *buf;
	size_t len;
	int err = pprof_encode(m, o, &buf, &len);

	if (!err)
		err = gzip_write(f, buf, len);
	free(buf);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampled call sites as text: table section, JSON list, folded. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "render/callsites.h"
#include "render/jsonw.h"
#include "util/escape.h"

const char *callsites_frame_name(const struct sc_frame *f, char *buf,
				 size_t len)
{
	return stack_frame_name(f, buf, len);
}

char *callsites_label(const struct sc_stack *st)
{
	return stack_label(st);
}

struct site {
	char *label;
	char via[64]; /* stack_via() */
	uint64_t count;
};

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->label, y->label) ?: strcmp(x->via, y->via);
}

/* The call sites of one syscall, merged by label, largest first. */
static int syscall_sites(const struct sc_stacks *s, uint32_t abi, uint32_t nr,
			 struct site **out, size_t *nout)
{
	struct site *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct sc_stack *st = &s->v[i];
		char *label, via[sizeof(v->via)];
		size_t j;

		if (st->nr != nr || st->abi != abi)
			continue;
		label = callsites_label(st);
		if (!label)
			goto nomem;
		stack_via(st, via, sizeof(via));
		for (j = 0; j < n && (strcmp(v[j].label, label) ||
				      strcmp(v[j].via, via));
		     j++)
			;
		if (j < n) {
			v[j].count += st->count;
			free(label);
			continue;
		}
		if (!(n & (n + 1))) { /* n + 1 a power of two: grow */
			struct site *t = realloc(v, (n + 1) * 2 * sizeof(*v));

			if (!t) {
				free(label);
				goto nomem;
			}
			v = t;
		}
		v[n] = (struct site){ .label = label, .count = st->count };
		memcpy(v[n++].via, via, sizeof(via));
	}
	if (n)
		qsort(v, n, sizeof(*v), site_cmp);
	*out = v;
	*nout = n;
	return 0;
nomem:
	for (size_t j = 0; j < n; j++)
		free(v[j].label);
	free(v);
	return -ENOMEM;
}

struct top_sc {
	const struct sc_row *row;
	uint64_t key;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_sc *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->row->nr < y->row->nr ? -1 : x->row->nr > y->row->nr;
}

static int syscall_section(FILE *f, const struct sc_stacks *s,
			   const struct sc_row *row)
{
	uint64_t total = stacks_syscall_samples(s, row->abi, row->nr);
	char nbuf[SC_NAME_LEN];
	const char *name =
		names_syscall_fmt(row->abi, row->nr, nbuf, sizeof(nbuf));
	struct site *v;
	size_t n;
	int err = syscall_sites(s, row->abi, row->nr, &v, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		char *e = i < CALLSITES_PER_SYSCALL ?
				  esc_text(v[i].label, strlen(v[i].label)) :
				  NULL;
		char lead[SC_NAME_LEN + sizeof(v->via) + 8] = "";

		if (i < CALLSITES_PER_SYSCALL && !e)
			err = -ENOMEM;
		/* "write (via libc)": the syscall, on the first line and
		 * wherever the runtime it came through changes
		 */
		if (!i || strcmp(v[i].via, v[i - 1].via))
			snprintf(lead, sizeof(lead),
				 *v[i].via ? "%s (via %s)" : "%s", name,
				 v[i].via);
		if (e)
			fprintf(f, "  %-16s %3.0f%%  %s\n", lead,
				100.0 * (double)v[i].count / (double)total, e);
		free(e);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].label);
	if (n > CALLSITES_PER_SYSCALL)
		fprintf(f, "  %-16s       (%zu more call sites)\n", "",
			n - CALLSITES_PER_SYSCALL);
	free(v);
	return err;
}

int callsites_table(FILE *f, const struct sc_model *m)
{
	const struct sc_stacks *s = m->stacks;
	struct top_sc *top;
	size_t n = 0;
	int err = 0;

	if (!s)
		return 0;
	if (s->by == SC_STACKS_BY_BLOCKED)
		fprintf(f,
			"\ncall sites by blocked time in calls (the user stack "
			"and where it slept, at one call per %u µs blocked: "
			"%" PRIu64 " samples",
			s->period, s->samples);
	else if (s->by == SC_STACKS_BY_TIME)
		fprintf(f,
			"\ncall sites by time in calls (the user stack at one "
			"call per %u µs of it: %" PRIu64 " samples",
			s->period, s->samples);
	else
		fprintf(f,
			"\ncall sites (the user stack of 1 call in %u: %" PRIu64
			" samples",
			s->period, s->samples);
	/* (by time a sample's weight is the time it stands for anyway) */
	if (s->max_weight > 1 && !stacks_timed(s))
		fprintf(f,
			"; 1 in up to %" PRIu64
			" while the ring buffer filled, each sample counted"
			" for the calls it stands for",
			(uint64_t)s->period * s->max_weight);
	if (s->lost_total)
		fprintf(f, ", %" PRIu64 " more lost: the ring buffer was full",
			s->lost_total);
	fputs("):\n", f);
	if (stacks_untrusted(s))
		fputs("  (more than 5% of the samples were lost: the shares "
		      "below may be off)\n",
		      f);
	top = calloc(m->ntotal ? m->ntotal : 1, sizeof(*top));
	if (!top)
		return -ENOMEM;
	for (size_t i = 0; i < m->ntotal; i++) {
		const struct sc_row *r = &m->total[i];

		if (!stacks_syscall_samples(s, r->abi, r->nr))
			continue;
		top[n].row = r;
		top[n++].key = m->meta.count_only ? r->st.calls :
			       s->by == SC_STACKS_BY_BLOCKED ?
						    r->st.blocked_ns :
						    r->st.total_ns;
	}
	qsort(top, n, sizeof(*top), top_cmp);
	for (size_t i = 0; !err && i < n && i < CALLSITES_SYSCALLS; i++)
		err = syscall_section(f, s, top[i].row);
	if (!n)
		fputs("  (no call was sampled)\n", f);
	free(top);
	return err;
}

static struct json_object *frame_obj(const struct sc_frame *fr)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err   ?:
		      (fr->func ? jw_add_str(o, "function", fr->func) :
				  jw_add_null(o, "function"));
	err = err   ?:
		      (fr->module ? jw_add_str(o, "module", fr->module) :
				    jw_add_null(o, "module"));
	err = err ?: jw_add_u64(o, "offset", fr->offset);
	err = err   ?:
		      (fr->file ? jw_add_str(o, "file", fr->file) :
				  jw_add_null(o, "file"));
	err = err   ?:
		      (fr->line ? jw_add_u64(o, "line", fr->line) :
				  jw_add_null(o, "line"));
	return jw_done(o, err);
}

/* "site": the label, "via": the runtimes it skips (null: none). */
static int add_site(struct json_object *o, const struct sc_stack *st)
{
	char via[64], *label = callsites_label(st);
	int err = label ? jw_add_str(o, "site", label) : -ENOMEM;

	free(label);
	if (err)
		return err;
	return *stack_via(st, via, sizeof(via)) ? jw_add_str(o, "via", via) :
						  jw_add_null(o, "via");
}

/* by blocked time: kernel_frames, where it slept, innermost first */
static int add_kernel_frames(struct json_object *o, const struct sc_stack *st)
{
	struct json_object *frames = NULL;
	int err = jw_add_array(o, "kernel_frames", &frames);

	for (size_t i = 0; !err && i < st->nkframes; i++) {
		const struct sc_frame *fr = &st->kframes[i];
		struct json_object *k = json_object_new_object();

		err = k ? 0 : -ENOMEM;
		err = err   ?:
			      (fr->func ? jw_add_str(k, "function", fr->func) :
					  jw_add_null(k, "function"));
		err = err ?: jw_push(frames, jw_done(k, err));
	}
	return err;
}

static struct json_object *stack_obj(const struct sc_stack *st, bool blocked)
{
	struct json_object *o = json_object_new_object(), *frames = NULL;
	char nbuf[SC_NAME_LEN], comm[SC_COMM_LEN];
	int err = o ? 0 : -ENOMEM;

	memcpy(comm, st->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	err = err   ?:
		      jw_add_str(o, "syscall",
				 names_syscall_fmt(st->abi, st->nr, nbuf,
						   sizeof(nbuf)));
	err = err ?: jw_add_str(o, "comm", comm);
	err = err ?: jw_add_u64(o, "count", st->count);
	/* the call site as the table names it */
	err = err ?: add_site(o, st);
	err = err ?: jw_add_array(o, "frames", &frames);
	for (size_t i = 0; !err && i < st->nframes; i++)
		err = jw_push(frames, frame_obj(&st->frames[i]));
	if (blocked)
		err = err ?: add_kernel_frames(o, st);
	return jw_done(o, err);
}

int callsites_json_add(struct json_object *root, const struct sc_stacks *s)
{
	struct json_object *o = json_object_new_object(), *list = NULL, *lost;
	int err = o ? 0 : -ENOMEM;

	/* count: one call in period; time: one sample per period µs */
	err = err ?: jw_add_str(o, "weighting", stacks_weighting_name(s->by));
	err = err ?: jw_add_u64(o, "period", s->period);
	err = err ?: jw_add_u64(o, "samples", s->samples);
	err = err ?: jw_add_u64(o, "lost", s->lost_total);
	/* 1 in up to period * max_weight while the ring filled */
	err = err ?: jw_add_u64(o, "max_weight", s->max_weight ?: 1);
	err = err ?: jw_add_bool(o, "shares_trusted", !stacks_untrusted(s));
	/* by syscall, so that shares across syscalls can be corrected */
	lost = err ? NULL : json_object_new_object();
	err = err ?: (lost ? 0 : -ENOMEM);
	for (uint32_t nr = 0; !err && nr < SC_NR_MAX; nr++) {
		char nbuf[SC_NAME_LEN];

		if (s->lost[nr])
			err = jw_add_u64(lost,
					 names_syscall_fmt(SC_ABI_NATIVE, nr,
							   nbuf, sizeof(nbuf)),
					 s->lost[nr]);
	}
	if (err)
		json_object_put(lost);
	else
		err = jw_add(o, "lost_by_syscall", lost);
	err = err ?: jw_add(root, "stack_sampling", jw_done(o, err));
	err = err ?: jw_add_array(root, "stacks", &list);
	for (size_t i = 0; !err && i < s->n; i++)
		err = jw_push(list, stack_obj(&s->v[i],
					      s->by == SC_STACKS_BY_BLOCKED));
	return err;
}

char *callsites_esc_folded(const char *s)
{
	char *e = esc_text(s, strlen(s)), *out, *p;
	size_t semis = 0;

	if (!e)
		return NULL;
	for (p = e; *p; p++)
		semis += *p == ';';
	out = malloc(strlen(e) + semis * 3 + 1);
	if (out) {
		char *q = out;

		for (p = e; *p; p++) {
			if (*p == ';') {
				memcpy(q, "\\x3b", 4);
				q += 4;
			} else {
				*q++ = *p;
			}
		}
		*q = '\0';
	}
	free(e);
	return out;
}

/* path + ";" + name, escaped, name + "_[k]" for a kernel frame; NULL on
 * ENOMEM (path freed).
 */
static char *folded_append(char *path, const char *name, bool kernel)
{
	char *e = callsites_esc_folded(name), *t;
	size_t len = e ? strlen(path) + strlen(e) + 6 : 0;

	t = e ? realloc(path, len) : NULL;
	if (!t) {
		free(e);
		free(path);
		return NULL;
	}
	strcat(t, ";");
	strcat(t, e);
	if (kernel)
		strcat(t, CALLSITES_KERNEL_MARK);
	free(e);
	return t;
}

/* "COMM;root;...;leaf;SYSCALL", then the kernel frames (blocked: where it
 * slept) outermost first, escaped; NULL on ENOMEM.
 */
static char *folded_path(const struct sc_stack *st)
{
	char nbuf[SC_NAME_LEN], comm[SC_COMM_LEN], buf[96];
	char *path;

	memcpy(comm, st->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	path = callsites_esc_folded(comm[0] ? comm : "?");
	for (size_t k = st->nframes; path && k-- > 0;)
		path = folded_append(path,
				     callsites_frame_name(&st->frames[k], buf,
							  sizeof(buf)),
				     false);
	if (path)
		path = folded_append(path,
				     names_syscall_fmt(st->abi, st->nr, nbuf,
						       sizeof(nbuf)),
				     false);
	for (size_t k = st->nkframes; path && k-- > 0;)
		path = folded_append(path,
				     callsites_frame_name(&st->kframes[k], buf,
							  sizeof(buf)),
				     true);
	return path;
}

struct folded_line {
	char *path;
	uint64_t count;
};

static int folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->path,
		      ((const struct folded_line *)b)->path);
}

int callsites_folded(FILE *f, const struct sc_stacks *s)
{
	struct folded_line *v = calloc(s->n ? s->n : 1, sizeof(*v));
	int err = v ? 0 : -ENOMEM;
	size_t n = 0;

	for (size_t i = 0; !err && i < s->n; i++, n++) {
		v[i].path = folded_path(&s->v[i]);
		v[i].count = s->v[i].count;
		if (!v[i].path)
			err = -ENOMEM;
	}
	if (!err)
		qsort(v, n, sizeof(*v), folded_cmp);
	/* by time: counts in µs, and said on a first line (flamegraph.pl
	 * skips what it cannot read)
	 */
	if (!err && s->by == SC_STACKS_BY_TIME)
		fprintf(f, "# scprof --stacks-by time: counts are microseconds "
			   "in calls\n");
	else if (!err && s->by == SC_STACKS_BY_BLOCKED)
		fprintf(f, "# scprof --stacks-by blocked: counts are "
			   "microseconds blocked in calls; kernel frames end "
			   "in " CALLSITES_KERNEL_MARK "\n");
	for (size_t i = 0; !err && i < n; i++) {
		uint64_t c = v[i].count;

		/* Stacks that differ in offsets only fold into one line. */
		while (i + 1 < n && !strcmp(v[i].path, v[i + 1].path))
			c += v[++i].count;
		fprintf(f, "%s %" PRIu64 "\n", v[i].path,
			stacks_timed(s) ? c * s->period : c);
	}
	for (size_t i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}

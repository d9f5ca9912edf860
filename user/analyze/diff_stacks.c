// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff of two folded stack files: read, then merged and judged. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff_input.h"
#include "analyze/diff_stacks.h"
#include "util/escape.h"

/* ---- reading a file ------------------------------------------------------ */

#define BY_TIME_LINE "# scprof --stacks-by time"
#define BY_BLOCKED_LINE "# scprof --stacks-by blocked"

static bool starts(const char *s, size_t n, const char *p)
{
	return n >= strlen(p) && !memcmp(s, p, strlen(p));
}

void folded_free(struct folded_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		for (size_t k = 0; k < f->v[i].nframes; k++)
			free(f->v[i].frames[k]);
		free(f->v[i].frames);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* "a;b;c" (len bytes) into decoded frames. 0 or -ENOMEM. */
static int split_frames(const char *s, size_t len, struct folded_stack *st)
{
	size_t n = 1, k = 0, start = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == ';';
	st->frames = calloc(n, sizeof(*st->frames));
	if (!st->frames)
		return -ENOMEM;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		st->frames[k] = esc_text_decode(s + start, i - start);
		if (!st->frames[k])
			return -ENOMEM;
		k++;
		st->nframes = k;
		start = i + 1;
	}
	return 0;
}

/* Samples a file may hold: exact in a double, and no sum overflows. */
#define FOLDED_MAX_COUNT (1ULL << 53)

int folded_parse(const char *text, size_t len, const char *name,
		 struct folded_file *out)
{
	size_t pos = 0, line = 0, cap = 0;
	uint64_t total = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	while (!err && pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos, sp, end;
		struct folded_stack *st;
		uint64_t count = 0;

		pos += n + 1;
		line++;
		end = n;
		while (end && (s[end - 1] == '\r' || s[end - 1] == ' ' ||
			       s[end - 1] == '\t'))
			end--;
		if (!end)
			continue;
		if (diff_folded_comment(s, end)) {
			if (starts(s, end, BY_TIME_LINE))
				out->by = SC_STACKS_BY_TIME;
			else if (starts(s, end, BY_BLOCKED_LINE))
				out->by = SC_STACKS_BY_BLOCKED;
			continue;
		}
		sp = end;
		while (sp && s[sp - 1] >= '0' && s[sp - 1] <= '9')
			sp--;
		if (sp == end || !sp ||
		    (s[sp - 1] != ' ' && s[sp - 1] != '\t') || end - sp > 19 ||
		    memchr(s, '\0', end)) {
			err = diff_input_error(-EINVAL, name, line,
					       "not a folded stack line (FRAME;"
					       "FRAME;... COUNT)");
			break;
		}
		for (size_t i = sp; i < end; i++)
			count = count * 10 + (uint64_t)(s[i] - '0');
		total += count;
		if (count > FOLDED_MAX_COUNT || total > FOLDED_MAX_COUNT) {
			err = diff_input_error(-EINVAL, name, line,
					       "more than 2^53 samples");
			break;
		}
		if (out->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;

			st = realloc(out->v, ncap * sizeof(*st));
			if (!st) {
				err = -ENOMEM;
				break;
			}
			out->v = st;
			cap = ncap;
		}
		st = &out->v[out->n++];
		memset(st, 0, sizeof(*st));
		st->count = count;
		/* the stack is what comes before the blanks and the count */
		while (sp && (s[sp - 1] == ' ' || s[sp - 1] == '\t'))
			sp--;
		err = split_frames(s, sp, st);
	}
	if (err == -ENOMEM)
		diff_input_error(err, name, 0, "out of memory");
	if (!err && !out->n)
		err = diff_input_error(-EINVAL, name, 0,
				       "empty: no folded stack in it");
	if (err)
		folded_free(out);
	return err;
}

/* ---- merged and judged --------------------------------------------------- */

struct stack_ref {
	const struct folded_stack *st;
	int side; /* 0: A, 1: B */
};

static int frames_cmp(const struct folded_stack *a,
		      const struct folded_stack *b)
{
	for (size_t i = 0; i < a->nframes && i < b->nframes; i++) {
		int c = strcmp(a->frames[i], b->frames[i]);

		if (c)
			return c;
	}
	return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
}

static int ref_cmp(const void *pa, const void *pb)
{
	const struct stack_ref *a = pa, *b = pb;
	int c = frames_cmp(a->st, b->st);

	return c ? c : a->side - b->side;
}

static int copy_frames(struct stack_diff_line *l, const struct folded_stack *st)
{
	l->frames = calloc(st->nframes + 1, sizeof(*l->frames));
	if (!l->frames)
		return -ENOMEM;
	for (size_t k = 0; k < st->nframes; k++, l->nframes++) {
		l->frames[k] = strdup(st->frames[k]);
		if (!l->frames[k])
			return -ENOMEM;
	}
	return 0;
}

/* Is the change of a line's share beyond sampling noise (two binomial
 * samples of total_a and total_b) and at least min_pct of its share?
 */
static bool share_changed(uint64_t a, uint64_t ta, uint64_t b, uint64_t tb,
			  double min_pct)
{
	double pa = ta ? (double)a / (double)ta : 0,
	       pb = tb ? (double)b / (double)tb : 0;
	double se = sqrt((ta ? pa * (1 - pa) / (double)ta : 0) +
			 (tb ? pb * (1 - pb) / (double)tb : 0));

	if (pa == pb)
		return false;
	if (pa > 0 && fabs(pb - pa) / pa * 100.0 < min_pct)
		return false;
	return fabs(pb - pa) > DIFF_SIGMAS * se;
}

int diff_stacks(const struct folded_file *a, const struct folded_file *b,
		const struct diff_opts *o, struct stack_diff **out)
{
	struct stack_diff *d = calloc(1, sizeof(*d));
	struct stack_ref *refs = calloc(a->n + b->n + 1, sizeof(*refs));
	size_t n = 0;
	int err = d && refs ? 0 : -ENOMEM;

	*out = NULL;
	for (size_t i = 0; !err && i < a->n; i++) {
		refs[n++] = (struct stack_ref){ &a->v[i], 0 };
		d->total_a += a->v[i].count;
	}
	for (size_t i = 0; !err && i < b->n; i++) {
		refs[n++] = (struct stack_ref){ &b->v[i], 1 };
		d->total_b += b->v[i].count;
	}
	if (!err) {
		qsort(refs, n, sizeof(*refs), ref_cmp);
		d->v = calloc(n + 1, sizeof(*d->v));
		if (!d->v)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < n;) {
		struct stack_diff_line *l = &d->v[d->n++];
		size_t j = i;

		err = copy_frames(l, refs[i].st);
		/* the same stack on several lines (or in both files) */
		for (; j < n && !frames_cmp(refs[i].st, refs[j].st); j++) {
			if (refs[j].side)
				l->b += refs[j].st->count;
			else
				l->a += refs[j].st->count;
		}
		i = j;
		if (!l->b)
			d->gone_a += l->a;
		if (!l->a)
			d->new_b += l->b;
		l->significant = share_changed(l->a, d->total_a, l->b,
					       d->total_b, o->min_change_pct);
		d->changed += l->significant;
	}
	free(refs);
	if (err) {
		stack_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

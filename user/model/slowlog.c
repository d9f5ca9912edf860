// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/slowlog.h"

void slow_call_free(struct sc_slow_call *c)
{
	free(c->desc);
	free(c->local);
	free(c->peer);
	for (size_t i = 0; i < c->nframes; i++)
		free(c->frames[i]);
	free(c->source);
	free(c->via);
	free(c->slept_in);
	memset(c, 0, sizeof(*c));
}

uint64_t slow_call_on_cpu_ns(const struct sc_slow_call *c)
{
	uint64_t off = c->wait_ns + c->blocked_ns;

	return c->dur_ns > off ? c->dur_ns - off : 0;
}

void slowlog_init(struct sc_slowlog *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	l->max = max;
}

void slowlog_clear(struct sc_slowlog *l)
{
	for (size_t i = 0; i < l->n; i++)
		slow_call_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int slowlog_push(struct sc_slowlog *l, struct sc_slow_call *c)
{
	if (l->n >= l->max) {
		slow_call_free(c);
		l->dropped++;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct sc_slow_call *v;

		if (cap > l->max)
			cap = l->max;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			slow_call_free(c);
			l->dropped++;
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *c;
	memset(c, 0, sizeof(*c));
	return 0;
}

int slowlog_move(struct sc_slowlog *dst, struct sc_slowlog *src)
{
	int err = 0;

	for (size_t i = 0; i < src->n; i++) {
		int e = slowlog_push(dst, &src->v[i]);

		err = err ?: e;
	}
	src->n = 0;
	return err;
}

static int dup_or_null(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? -ENOMEM : 0;
}

int slow_call_site(struct sc_slow_call *c, const struct sc_stack *st)
{
	const struct sc_frame *shown[SC_SLOW_FRAMES];
	const struct sc_frame *lead = stack_lead(st);
	size_t n = stack_label_frames(st, shown, SC_SLOW_FRAMES, NULL);
	char buf[96];

	for (size_t i = 0; i < n; i++) {
		c->frames[i] =
			strdup(stack_frame_name(shown[i], buf, sizeof(buf)));
		if (!c->frames[i])
			return -ENOMEM;
		c->nframes = i + 1;
	}
	if (lead && lead->file) {
		const char *b = strrchr(lead->file, '/');

		if (asprintf(&c->source, "%s:%u", b ? b + 1 : lead->file,
			     lead->line) < 0) {
			c->source = NULL;
			return -ENOMEM;
		}
	}
	return dup_or_null(&c->via, stack_via(st, buf, sizeof(buf)));
}

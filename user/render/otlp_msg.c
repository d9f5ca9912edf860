// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The OTLP metrics as they are built (otlp_msg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/otlp_msg.h"
#include "util/escape.h"

typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;

/* ---- an arena: every piece of the message, freed at once ------------ */

struct otlp_chunk {
	struct otlp_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define CHUNK_MIN (64 * 1024)

void *otlp_alloc(struct otlp_msg *b, size_t n)
{
	struct otlp_chunk *c = b->chunks;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;

		c = malloc(sizeof(*c) + size);
		if (!c) {
			b->err = -ENOMEM;
			return NULL;
		}
		c->size = size;
		c->used = 0;
		c->next = b->chunks;
		b->chunks = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

void otlp_msg_free(struct otlp_msg *b)
{
	while (b->chunks) {
		struct otlp_chunk *c = b->chunks;

		b->chunks = c->next;
		free(c);
	}
	free(b->metrics);
}

/* Append p to the array *v of *n pointers (grown in the arena). */
bool otlp_push(struct otlp_msg *b, void ***v, size_t *n, void *p)
{
	/* capacity: the next power of two from 4 */
	if (*n >= 4 && !(*n & (*n - 1))) {
		void **w = otlp_alloc(b, 2 * *n * sizeof(*w));

		if (!w)
			return false;
		memcpy(w, *v, *n * sizeof(*w));
		*v = w;
	} else if (*n == 0) {
		*v = otlp_alloc(b, 4 * sizeof(**v));
		if (!*v)
			return false;
	}
	(*v)[(*n)++] = p;
	return true;
}

/* A string as valid UTF-8, in the arena. */
char *otlp_str(struct otlp_msg *b, const char *s, size_t len)
{
	char *u = esc_utf8(s, len), *out;

	if (!u) {
		b->err = -ENOMEM;
		return NULL;
	}
	out = otlp_alloc(b, strlen(u) + 1);
	if (out)
		strcpy(out, u);
	free(u);
	return out;
}

KeyValue *otlp_kv(struct otlp_msg *b, const char *key, const char *val)
{
	KeyValue *k = otlp_alloc(b, sizeof(*k));
	AnyValue *v = otlp_alloc(b, sizeof(*v));

	if (!k || !v)
		return NULL;
	opentelemetry__proto__common__v1__key_value__init(k);
	opentelemetry__proto__common__v1__any_value__init(v);
	k->key = (char *)key;
	k->value = v;
	v->value_case =
		OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)val;
	return k;
}

/* ---- metrics and points ----------------------------------------------- */

Metric *otlp_metric(struct otlp_msg *b, enum otlp_kind kind, const char *name,
		    const char *unit, const char *desc)
{
	Metric *m = otlp_alloc(b, sizeof(*m));

	if (!m)
		return NULL;
	opentelemetry__proto__metrics__v1__metric__init(m);
	m->name = (char *)name;
	m->unit = (char *)unit;
	m->description = (char *)desc;
	if (kind == OTLP_SUM) {
		m->sum = otlp_alloc(b, sizeof(*m->sum));
		if (!m->sum)
			return NULL;
		opentelemetry__proto__metrics__v1__sum__init(m->sum);
		m->data_case =
			OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
		m->sum->aggregation_temporality =
			OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
		m->sum->is_monotonic = true;
	} else {
		m->gauge = otlp_alloc(b, sizeof(*m->gauge));
		if (!m->gauge)
			return NULL;
		opentelemetry__proto__metrics__v1__gauge__init(m->gauge);
		m->data_case =
			OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
	}
	if (b->nmetrics == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		Metric **v = realloc(b->metrics, cap * sizeof(*v));

		if (!v) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->metrics = v;
		b->cap = cap;
	}
	b->metrics[b->nmetrics++] = m;
	return m;
}

/* A point of m with up to two attributes (NULL keys: none). */
NumberPoint *otlp_point(struct otlp_msg *b, Metric *m, const char *k1,
			const char *v1, const char *k2, const char *v2)
{
	NumberPoint *p;
	bool ok;

	if (!m)
		return NULL;
	p = otlp_alloc(b, sizeof(*p));
	if (!p)
		return NULL;
	opentelemetry__proto__metrics__v1__number_data_point__init(p);
	p->time_unix_nano = b->now_ns;
	if (m->data_case ==
	    OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM) {
		p->start_time_unix_nano = b->start_ns;
		ok = otlp_push(b, (void ***)&m->sum->data_points,
			       &m->sum->n_data_points, p);
	} else {
		ok = otlp_push(b, (void ***)&m->gauge->data_points,
			       &m->gauge->n_data_points, p);
	}
	if (ok && k1)
		ok = otlp_push(b, (void ***)&p->attributes, &p->n_attributes,
			       otlp_kv(b, k1, v1));
	if (ok && k2)
		ok = otlp_push(b, (void ***)&p->attributes, &p->n_attributes,
			       otlp_kv(b, k2, v2));
	return ok && !b->err ? p : NULL;
}

void otlp_set_int(NumberPoint *p, uint64_t v)
{
	if (!p)
		return;
	p->value_case =
		OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_INT;
	p->as_int = (int64_t)v;
}

void otlp_set_double(NumberPoint *p, double v)
{
	if (!p)
		return;
	p->value_case =
		OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
	p->as_double = v;
}

/* A family of one point without attributes. */
void otlp_single_int(struct otlp_msg *b, enum otlp_kind kind, const char *name,
		     const char *unit, const char *desc, uint64_t v)
{
	otlp_set_int(otlp_point(b, otlp_metric(b, kind, name, unit, desc), NULL,
				NULL, NULL, NULL),
		     v);
}

void otlp_single_double(struct otlp_msg *b, enum otlp_kind kind,
			const char *name, const char *unit, const char *desc,
			double v)
{
	otlp_set_double(otlp_point(b, otlp_metric(b, kind, name, unit, desc),
				   NULL, NULL, NULL, NULL),
			v);
}

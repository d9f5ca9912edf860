/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The OTLP metrics as they are built (render/otlp.c: the calls' families
 * and the request that carries them; otlp_self.c: scprof's own): metrics
 * and their points, on opentelemetry-proto's metrics/v1 structs
 * (protobuf-c), everything they point to in one arena freed at once.
 * Every function records its first failure (-ENOMEM) in the message and
 * returns NULL or false; the rest is then skipped, and the error
 * returned.
 */
#ifndef SCPROF_OTLP_MSG_H
#define SCPROF_OTLP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"

typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberPoint;
typedef Opentelemetry__Proto__Metrics__V1__HistogramDataPoint HistPoint;
typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;

struct otlp_chunk;

struct otlp_msg {
	struct otlp_chunk *chunks; /* the arena */
	int err;		   /* the first failure */
	Metric **metrics;	   /* in the order made */
	size_t nmetrics, cap;
	uint64_t start_ns, now_ns; /* the points' start and time */
	uint64_t start_mono_ns;	   /* start_ns on comm_series' clock */
};

/* n bytes of the arena, zeroed (NULL: out of memory, recorded). */
void *otlp_alloc(struct otlp_msg *b, size_t n);
/* Append p to the array *v of *n pointers, grown in the arena; false
 * when out of memory.
 */
bool otlp_push(struct otlp_msg *b, void ***v, size_t *n, void *p);
/* len bytes of s as valid UTF-8, in the arena. */
char *otlp_str(struct otlp_msg *b, const char *s, size_t len);
/* A string attribute (key and val not copied: they must outlive b). */
KeyValue *otlp_kv(struct otlp_msg *b, const char *key, const char *val);

enum otlp_kind {
	OTLP_SUM,   /* cumulative, monotonic from start_ns */
	OTLP_GAUGE, /* as it is now */
};

/* A new metric of the message (the strings not copied). */
Metric *otlp_metric(struct otlp_msg *b, enum otlp_kind kind, const char *name,
		    const char *unit, const char *desc);
/* A point of m (NULL: none made) with up to two attributes (NULL keys:
 * none).
 */
NumberPoint *otlp_point(struct otlp_msg *b, Metric *m, const char *k1,
			const char *v1, const char *k2, const char *v2);
/* The point's value (p NULL: nothing). */
void otlp_set_int(NumberPoint *p, uint64_t v);
void otlp_set_double(NumberPoint *p, double v);
/* A metric of one point without attributes. */
void otlp_single_int(struct otlp_msg *b, enum otlp_kind kind, const char *name,
		     const char *unit, const char *desc, uint64_t v);
void otlp_single_double(struct otlp_msg *b, enum otlp_kind kind,
			const char *name, const char *unit, const char *desc,
			double v);

static inline double otlp_seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Everything the message holds. */
void otlp_msg_free(struct otlp_msg *b);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The daemon's OTLP exporter (--otlp-endpoint): payloads made by the
 * daemon's loop (render/otlp.h) go into a bounded queue, and a thread of
 * its own POSTs them to ENDPOINT/v1/metrics with libcurl (OTLP/HTTP,
 * protobuf, gzip'ed unless told not to), retrying with exponential backoff on 429, 502, 503, 504 and
 * connection errors (Retry-After honoured), so that a slow or absent
 * collector never holds up the loop or a scrape.
 */
#ifndef SCPROF_DAEMON_OTLP_H
#define SCPROF_DAEMON_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_DEFAULT_INTERVAL_S 15
#define OTLP_DEFAULT_TIMEOUT_S 10
#define OTLP_DEFAULT_QUEUE 8
/* An export is given up (failed) once it has been retried this long. */
#define OTLP_RETRY_MAX_S 120
/* Backoff without Retry-After: 1 s, doubled up to this. */
#define OTLP_BACKOFF_MAX_S 30

struct otlp_opts {
	const char *endpoint; /* NULL: no export */
	double interval_s;
	double timeout_s;
	unsigned int queue; /* exports waiting at most */
	bool gzip;	    /* --otlp-compression gzip (the default) */
	const char *ca, *cert, *key;
	char **headers; /* "Name: value", checked */
	size_t nheaders;
	/* for tests: the backoff's first step and the give-up time */
	double backoff_s, retry_max_s;
};

struct otlp_exporter;

struct otlp_stats {
	uint64_t sent, failed, dropped, retries, rejected, queued;
};

/* Check and keep one --otlp-header "Name: value". 0 or -EINVAL (*why
 * says what is wrong), -ENOMEM.
 */
int otlp_opts_add_header(struct otlp_opts *o, const char *line,
			 const char **why);
/*
 * --otlp-headers-file: one "Name: value" a line, blank lines and lines
 * starting with # skipped. 0, or -errno (the file) or -EINVAL with
 * *lineno and *why saying where and what.
 */
int otlp_opts_headers_file(struct otlp_opts *o, const char *path,
			   unsigned int *lineno, const char **why);
void otlp_opts_free(struct otlp_opts *o);

/* The thread started. 0 or -errno (a message logged). */
int otlp_exporter__new(struct otlp_exporter **out, const struct otlp_opts *o);
/* Queue a payload (taken over, freed by the exporter); the oldest
 * waiting one is dropped when the queue is full.
 */
void otlp_exporter__push(struct otlp_exporter *e, uint8_t *buf, size_t len);
void otlp_exporter__stats(struct otlp_exporter *e, struct otlp_stats *s);
/* The URL posted to. */
const char *otlp_exporter__url(const struct otlp_exporter *e);
/*
 * Stop the thread: the attempt under way ends (within the timeout), the
 * newest export waiting, if any, is tried once more, the rest dropped
 * uncounted. NULL is fine.
 */
void otlp_exporter__free(struct otlp_exporter *e);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <zlib.h>

#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "cmd/daemon_otlp.h"
#include "render/otlp.h"
#include "util/escape.h"
#include "util/log.h"

/* ---- options ----------------------------------------------------------- */

/* An HTTP field name is a token (RFC 9110); its value has no control
 * byte but tab. "Name: value", spaces around the value trimmed.
 */
static int check_header(const char *line, const char **why)
{
	const char *colon = strchr(line, ':');

	if (!colon || colon == line) {
		*why = "expected 'Name: value'";
		return -EINVAL;
	}
	for (const char *p = line; p < colon; p++)
		if (!isalnum((unsigned char)*p) &&
		    !strchr("!#$%&'*+-.^_`|~", *p)) {
			*why = "the name is not an HTTP token";
			return -EINVAL;
		}
	for (const char *p = colon + 1; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			*why = "the value has a control character";
			return -EINVAL;
		}
	return 0;
}

int otlp_opts_add_header(struct otlp_opts *o, const char *line,
			 const char **why)
{
	char **v, *h;
	const char *val;
	size_t nlen;
	int err = check_header(line, why);

	if (err)
		return err;
	nlen = (size_t)(strchr(line, ':') - line);
	val = line + nlen + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	if (asprintf(&h, "%.*s: %s", (int)nlen, line, val) < 0)
		return -ENOMEM;
	/* trailing blanks go too */
	for (size_t n = strlen(h); n && (h[n - 1] == ' ' || h[n - 1] == '\t');)
		h[--n] = '\0';
	v = realloc(o->headers, (o->nheaders + 1) * sizeof(*v));
	if (!v) {
		free(h);
		return -ENOMEM;
	}
	o->headers = v;
	o->headers[o->nheaders++] = h;
	return 0;
}

int otlp_opts_headers_file(struct otlp_opts *o, const char *path,
			   unsigned int *lineno, const char **why)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	*lineno = 0;
	if (!f)
		return -errno;
	while (!err && (n = getline(&line, &cap, f)) >= 0) {
		char *s = line;

		++*lineno;
		while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
			s[--n] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		err = otlp_opts_add_header(o, s, why);
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	return err;
}

void otlp_opts_free(struct otlp_opts *o)
{
	for (size_t i = 0; i < o->nheaders; i++) {
		/* secrets: not left in freed memory */
		explicit_bzero(o->headers[i], strlen(o->headers[i]));
		free(o->headers[i]);
	}
	free(o->headers);
	o->headers = NULL;
	o->nheaders = 0;
}

/* ---- the exporter ------------------------------------------------------ */

struct payload {
	uint8_t *buf;
	size_t len;
};

struct otlp_exporter {
	struct otlp_opts o;
	char *url;
	CURL *curl;
	struct curl_slist *hdrs;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock: the queue (a ring), stop, the counts */
	struct payload *q;
	size_t head, n;
	bool stop;
	struct otlp_stats st;
	uint64_t dropped_quiet; /* drops not yet logged */
	unsigned int seed;	/* the backoff's jitter */
};

struct response {
	char *body;
	size_t len;
	double retry_after_s; /* < 0: none */
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct response *r = ctx;
	size_t n = size * nmemb;
	char *b;

	/* a status message or a partial success: a little is plenty */
	if (r->len + n > 65536)
		return n;
	b = realloc(r->body, r->len + n + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, p, n);
	r->len += n;
	b[r->len] = '\0';
	r->body = b;
	return n;
}

/* Retry-After: seconds, or an HTTP date. */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct response *r = ctx;
	size_t n = size * nmemb;
	static const char name[] = "retry-after:";
	char val[128];
	size_t vlen;

	if (n <= sizeof(name) - 1 || strncasecmp(p, name, sizeof(name) - 1))
		return n;
	vlen = n - (sizeof(name) - 1);
	if (vlen >= sizeof(val))
		return n;
	memcpy(val, p + sizeof(name) - 1, vlen);
	val[vlen] = '\0';
	{
		char *s = val, *end;
		double secs;

		while (*s == ' ' || *s == '\t')
			s++;
		secs = strtod(s, &end);
		if (end != s && isfinite(secs) && secs >= 0) {
			r->retry_after_s = secs;
		} else {
			time_t t = curl_getdate(s, NULL);

			if (t >= 0)
				r->retry_after_s =
					(double)(t - time(NULL)) > 0 ?
						(double)(t - time(NULL)) :
						0;
		}
	}
	return n;
}

static char *make_url(const char *endpoint)
{
	static const char path[] = "v1/metrics";
	size_t n = strlen(endpoint);
	char *url;

	while (n && endpoint[n - 1] == '/')
		n--;
	/* the whole URL given already */
	if (n >= sizeof(path) &&
	    !strncmp(endpoint + n - (sizeof(path) - 1), path,
		     sizeof(path) - 1) &&
	    endpoint[n - sizeof(path)] == '/')
		return strndup(endpoint, n);
	if (asprintf(&url, "%.*s/%s", (int)n, endpoint, path) < 0)
		return NULL;
	return url;
}

static int setup_curl(struct otlp_exporter *e)
{
	const struct otlp_opts *o = &e->o;
	struct curl_slist *h;
	CURLcode rc;

	rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		pr_err("cannot start the OTLP exporter: %s",
		       curl_easy_strerror(rc));
		return -ENOTSUP;
	}
	e->curl = curl_easy_init();
	if (!e->curl) {
		pr_err("cannot start the OTLP exporter (libcurl)");
		return -ENOMEM;
	}
	h = curl_slist_append(NULL, "Content-Type: " OTLP_CONTENT_TYPE);
	e->hdrs = h;
	/* no "Expect: 100-continue" round trip on large bodies */
	h = h ? curl_slist_append(h, "Expect:") : NULL;
	if (h && o->gzip)
		h = curl_slist_append(h, "Content-Encoding: gzip");
	for (size_t i = 0; h && i < o->nheaders; i++)
		h = curl_slist_append(h, o->headers[i]);
	if (!h) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	e->hdrs = h;
	curl_easy_setopt(e->curl, CURLOPT_URL, e->url);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, e->hdrs);
	curl_easy_setopt(e->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->curl, CURLOPT_USERAGENT, "scprof/" SCPROF_VERSION);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS,
			 (long)(o->timeout_s * 1000));
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(o->timeout_s * 1000));
	/* only HTTP and HTTPS, and no redirect: a POST goes where it is told */
#if CURL_AT_LEAST_VERSION(7, 85, 0)
	curl_easy_setopt(e->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e->curl, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(e->curl, CURLOPT_FOLLOWLOCATION, 0L);
	if (o->ca)
		curl_easy_setopt(e->curl, CURLOPT_CAINFO, o->ca);
	if (o->cert)
		curl_easy_setopt(e->curl, CURLOPT_SSLCERT, o->cert);
	if (o->key)
		curl_easy_setopt(e->curl, CURLOPT_SSLKEY, o->key);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e->curl, CURLOPT_HEADERFUNCTION, on_header);
	return 0;
}

/* The body of a refusal, escaped, cut short: for the log. */
static char *body_text(const struct response *r)
{
	size_t n = r->len < 200 ? r->len : 200;

	return r->body ? esc_text(r->body, n) : NULL;
}

enum outcome { SENT, RETRY, FAIL };

/* A 2xx's ExportMetricsServiceResponse: points rejected, if any. */
static void partial_success(struct otlp_exporter *e, const struct response *r)
{
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceResponse
		*resp;
	const Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsPartialSuccess
		*ps;

	if (!r->len)
		return;
	resp = opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__unpack(
		NULL, r->len, (const uint8_t *)r->body);
	if (!resp)
		return; /* not protobuf: nothing said */
	ps = resp->partial_success;
	if (ps && (ps->rejected_data_points > 0 ||
		   (ps->error_message && *ps->error_message))) {
		char *msg = ps->error_message ?
				    esc_text(ps->error_message,
					     strlen(ps->error_message)) :
				    NULL;

		pthread_mutex_lock(&e->lock);
		e->st.rejected += (uint64_t)(ps->rejected_data_points > 0 ?
						     ps->rejected_data_points :
						     0);
		pthread_mutex_unlock(&e->lock);
		pr_warn("OTLP receiver at %s rejected %lld data points: %s",
			e->url, (long long)ps->rejected_data_points,
			msg ? msg : "");
		free(msg);
	}
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__free_unpacked(
		resp, NULL);
}

/* One POST; *why (malloc'ed) says what went wrong. */
static enum outcome post(struct otlp_exporter *e, const struct payload *p,
			 double *retry_after_s, char **why)
{
	struct response r = { .retry_after_s = -1 };
	long status = 0;
	CURLcode rc;
	enum outcome out;

	*why = NULL;
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, p->buf);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)p->len);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(e->curl, CURLOPT_HEADERDATA, &r);
	rc = curl_easy_perform(e->curl);
	if (rc != CURLE_OK) {
		/* refused, reset, timed out, TLS: the receiver may come back */
		if (asprintf(why, "%s", curl_easy_strerror(rc)) < 0)
			*why = NULL;
		free(r.body);
		return RETRY;
	}
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		partial_success(e, &r);
		out = SENT;
	} else {
		char *text = body_text(&r);

		if (asprintf(why, "HTTP %ld%s%s", status, text ? ": " : "",
			     text ? text : "") < 0)
			*why = NULL;
		free(text);
		/* the spec's retryable answers; any other is final */
		out = status == 429 || status == 502 || status == 503 ||
				      status == 504 ?
			      RETRY :
			      FAIL;
	}
	*retry_after_s = r.retry_after_s;
	free(r.body);
	return out;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait up to secs (under lock), or until stopped. true: stopped. */
static bool wait_locked(struct otlp_exporter *e, double secs)
{
	struct timespec ts;
	double until;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	until = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + secs;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	while (!e->stop && now_s() < until)
		if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) ==
		    ETIMEDOUT)
			break;
	return e->stop;
}

/* Send one payload until it is sent, refused for good, or retried for
 * too long (or the exporter stops: then once only).
 */
static void send_one(struct otlp_exporter *e, struct payload *p, bool last,
		     unsigned int *failing)
{
	double first = now_s(), backoff = e->o.backoff_s;

	for (;;) {
		double after = -1, wait;
		char *why = NULL;
		enum outcome out = post(e, p, &after, &why);
		bool give_up = out == FAIL || last ||
			       now_s() - first >= e->o.retry_max_s;

		if (out == SENT) {
			uint64_t dropped;

			pthread_mutex_lock(&e->lock);
			e->st.sent++;
			dropped = e->dropped_quiet;
			e->dropped_quiet = 0;
			pthread_mutex_unlock(&e->lock);
			if (dropped)
				pr_warn("OTLP: %llu exports were dropped while "
					"the queue was full",
					(unsigned long long)dropped);
			if (*failing)
				pr_warn("OTLP exports to %s go through again "
					"(after %u failed attempts)",
					e->url, *failing);
			*failing = 0;
			free(why);
			return;
		}
		if (!*failing || out == FAIL || give_up)
			pr_warn("OTLP export to %s failed: %s%s", e->url,
				why ? why : "?",
				out == FAIL ? " (not retried)" :
				give_up	    ? " (given up)" :
					      ": retrying, with backoff (logged "
					      "again when it goes through)");
		free(why);
		++*failing;
		pthread_mutex_lock(&e->lock);
		if (give_up) {
			e->st.failed++;
			pthread_mutex_unlock(&e->lock);
			return;
		}
		e->st.retries++;
		wait = after >= 0 ? after : backoff;
		if (wait > e->o.retry_max_s)
			wait = e->o.retry_max_s;
		/* each retry without Retry-After waits twice as long, from
		 * 0.75x to 1.25x of that at random, so a fleet of daemons
		 * spreads its retries
		 */
		if (after < 0) {
			wait *= 0.75 +
				0.5 * ((double)rand_r(&e->seed) / RAND_MAX);
			backoff = backoff * 2 > OTLP_BACKOFF_MAX_S ?
					  OTLP_BACKOFF_MAX_S :
					  backoff * 2;
		}
		last = wait_locked(e, wait);
		pthread_mutex_unlock(&e->lock);
	}
}

/*
 * The payload gzip'ed, in place. An export is mostly the histograms' runs
 * of zero counts: a system's export of 300 kB is 13 kB gzip'ed.
 */
static int gzip_payload(struct payload *p)
{
	z_stream z = {};
	uint8_t *out;
	uLong bound;
	int rc;

	if (p->len > UINT32_MAX ||
	    deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)p->len);
	out = malloc(bound);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = p->buf;
	z.avail_in = (uInt)p->len;
	z.next_out = out;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	free(p->buf);
	p->buf = out;
	p->len = z.total_out;
	return 0;
}

static void *exporter_thread(void *arg)
{
	struct otlp_exporter *e = arg;
	unsigned int failing = 0;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		struct payload p;
		bool last;

		while (!e->n && !e->stop)
			pthread_cond_wait(&e->cond, &e->lock);
		if (!e->n)
			break;
		if (e->stop) {
			/* the newest only: it has every figure */
			while (e->n > 1) {
				free(e->q[e->head].buf);
				e->head = (e->head + 1) % e->o.queue;
				e->n--;
			}
		}
		p = e->q[e->head];
		e->head = (e->head + 1) % e->o.queue;
		e->n--;
		last = e->stop;
		pthread_mutex_unlock(&e->lock);
		if (e->o.gzip && gzip_payload(&p)) {
			pr_warn("OTLP: cannot compress an export: out of memory");
			pthread_mutex_lock(&e->lock);
			e->st.failed++;
			pthread_mutex_unlock(&e->lock);
		} else {
			send_one(e, &p, last, &failing);
		}
		free(p.buf);
		pthread_mutex_lock(&e->lock);
		if (last)
			break;
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int otlp_exporter__new(struct otlp_exporter **out, const struct otlp_opts *o)
{
	struct otlp_exporter *e = calloc(1, sizeof(*e));
	int err;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->o = *o;
	e->seed = (unsigned int)(time(NULL) ^ getpid());
	if (!e->o.queue)
		e->o.queue = OTLP_DEFAULT_QUEUE;
	if (e->o.backoff_s <= 0)
		e->o.backoff_s = 1;
	if (e->o.retry_max_s <= 0)
		e->o.retry_max_s = OTLP_RETRY_MAX_S;
	pthread_mutex_init(&e->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&e->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	e->q = calloc(e->o.queue, sizeof(*e->q));
	e->url = make_url(o->endpoint);
	if (!e->q || !e->url) {
		pr_err("out of memory");
		err = -ENOMEM;
		goto fail;
	}
	err = setup_curl(e);
	if (err)
		goto fail;
	err = -pthread_create(&e->thread, NULL, exporter_thread, e);
	if (err) {
		pr_err("cannot start the OTLP exporter's thread: %s",
		       strerror(-err));
		goto fail;
	}
	e->started = true;
	*out = e;
	return 0;
fail:
	otlp_exporter__free(e);
	return err;
}

void otlp_exporter__push(struct otlp_exporter *e, uint8_t *buf, size_t len)
{
	pthread_mutex_lock(&e->lock);
	if (e->n == e->o.queue) {
		/* the oldest goes: the newest has every figure it had */
		free(e->q[e->head].buf);
		e->head = (e->head + 1) % e->o.queue;
		e->n--;
		e->st.dropped++;
		if (!e->dropped_quiet++)
			pr_warn("OTLP: the queue of exports (%u) is full, the "
				"receiver at %s is slow or away: dropping the "
				"oldest (counted in "
				"scprof_otlp_exports_dropped_total; logged "
				"again once exports go through)",
				e->o.queue, e->url);
	}
	e->q[(e->head + e->n) % e->o.queue] = (struct payload){ buf, len };
	e->n++;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void otlp_exporter__stats(struct otlp_exporter *e, struct otlp_stats *s)
{
	pthread_mutex_lock(&e->lock);
	*s = e->st;
	s->queued = e->n;
	pthread_mutex_unlock(&e->lock);
}

const char *otlp_exporter__url(const struct otlp_exporter *e)
{
	return e->url;
}

void otlp_exporter__free(struct otlp_exporter *e)
{
	if (!e)
		return;
	if (e->started) {
		pthread_mutex_lock(&e->lock);
		e->stop = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->thread, NULL);
	}
	for (size_t i = 0; e->q && i < e->n; i++)
		free(e->q[(e->head + i) % e->o.queue].buf);
	free(e->q);
	if (e->curl)
		curl_easy_cleanup(e->curl);
	curl_slist_free_all(e->hdrs);
	free(e->url);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>

#include "cmd/daemon_http.h"
#include "cmd/daemon_metrics.h"
#include "cmd/daemon_profile.h"
#include "render/report_prom.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/web_config.h"

#define MAX_CONNECTIONS 16
#define MAX_CONNECTIONS_PER_IP 8

static const char index_page[] =
	"scprof daemon: Prometheus metrics at /metrics\n";
static const char index_profile[] =
	"scprof daemon: Prometheus metrics at /metrics, the calls' call sites "
	"as a pprof profile at " PROFILE_PATH "?seconds=N\n";

void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const void *)ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

/* Bind before anything else: a second daemon fails here, quickly. */
int open_listener(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	int one = 1, fd, err;

	fd = socket(o->addr.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create a socket for %s: %s", o->listen,
		       strerror(errno));
		return err;
	}
	/* Lets a restarted daemon bind over TIME_WAIT; a live listener on
	 * the port still makes bind fail (no SO_REUSEPORT).
	 */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&o->addr, o->addrlen)) {
		err = -errno;
		if (errno == EADDRINUSE)
			pr_err("cannot listen on %s: address already in use "
			       "(another scprof daemon or service has it)",
			       o->listen);
		else if (errno == EADDRNOTAVAIL)
			pr_err("cannot listen on %s: no such local address",
			       o->listen);
		else
			pr_err("cannot listen on %s: %s", o->listen,
			       strerror(errno));
		close(fd);
		return err;
	}
	if (listen(fd, 64)) {
		err = -errno;
		pr_err("cannot listen on %s: %s", o->listen, strerror(errno));
		close(fd);
		return err;
	}
	d->listen_fd = fd;
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status,
			     const char *type, char *body, size_t len,
			     bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body,
					    owned ? MHD_RESPMEM_MUST_FREE :
						    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!strcmp(type, PROFILE_CONTENT_TYPE)) /* as net/http/pprof */
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A short plain-text reply. */
static enum MHD_Result reply_text(struct MHD_Connection *conn,
				  unsigned int status, const char *msg)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)msg,
		     strlen(msg), false);
}

/*
 * With basic_auth_users, whether the request carries a user and password
 * that match; false after queueing 401 with WWW-Authenticate.
 */
static bool authorized(struct daemon *d, struct MHD_Connection *conn,
		       enum MHD_Result *ret)
{
	static const char denied[] = "unauthorized\n";
	struct MHD_Response *r;
	char *user, *pass = NULL;
	bool ok;

	if (!web_config_auth_required(d->o->web))
		return true;
	user = MHD_basic_auth_get_username_password(conn, &pass);
	ok = user && pass && web_config_check_user(d->o->web, user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	MHD_free(user);
	if (ok)
		return true;
	*ret = MHD_NO;
	r = MHD_create_response_from_buffer(strlen(denied), (void *)denied,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return false;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	*ret = MHD_queue_basic_auth_fail_response(conn, "scprof", r);
	MHD_destroy_response(r);
	return false;
}

static enum MHD_Result reply_answer(struct MHD_Connection *conn,
				    const struct profile_answer *a)
{
	return reply(conn, a->status, a->type, a->body, a->len, a->owned);
}

/*
 * --pprof-endpoint: a profile holds its request (suspended) until
 * daemon_http_tick answers it; the answer waits in the request's own
 * context (req_cls), where MHD calls back once it is resumed.
 */
static enum MHD_Result on_profile(struct daemon *d, struct MHD_Connection *conn,
				  const char *method, void **req_cls)
{
	struct profile_answer *a = *req_cls;
	const char *seconds;
	enum MHD_Result ret;

	if (a) { /* resumed: the profile's answer */
		*req_cls = NULL;
		ret = reply_answer(conn, a);
		free(a);
		return ret;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return MHD_NO;
	seconds = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
					      "seconds");
	if (!daemon_profile_start(d, method, seconds, clock_mono_ns(), a)) {
		ret = reply_answer(conn, a);
		free(a);
		return ret;
	}
	/* the answer comes at the profile's end, into a (MHD does not time
	 * a suspended connection out: tested with --http-timeout 1)
	 */
	*req_cls = a;
	d->profile.conn = conn;
	d->profile.answer = a;
	MHD_suspend_connection(conn);
	return MHD_YES;
}

void daemon_http_tick(struct daemon *d, uint64_t now_ns, uint64_t *next_ns)
{
	struct profile_answer done;

	if (!d->profile.conn || !daemon_profile_due(d, now_ns, next_ns, &done))
		return;
	*(struct profile_answer *)d->profile.answer = done;
	MHD_resume_connection(d->profile.conn);
	d->profile.conn = NULL;
	d->profile.answer = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct daemon *d = cls;
	char *buf = NULL;
	size_t len = 0;
	enum MHD_Result ret;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	if (!authorized(d, conn, &ret))
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: use GET or HEAD\n");
	if (!strcmp(url, PROFILE_PATH))
		return on_profile(d, conn, method, req_cls);
	if (!strcmp(url, "/"))
		return reply_text(conn, MHD_HTTP_OK,
				  d->o->pprof_endpoint ? index_profile :
							 index_page);
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: metrics are at /metrics\n");
	err = daemon_serve_metrics(d, &buf, &len);
	if (err) {
		pr_err("cannot collect metrics: %s", strerror(-err));
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot collect metrics\n");
	}
	return reply(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, buf, len, true);
}

/* A request ends: a profile's answer left unsent (the client went away,
 * the daemon stops) is freed.
 */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct profile_answer *a = *req_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!a)
		return;
	if (a->owned)
		free(a->body);
	free(a);
	*req_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	pr_info("http: %s", msg);
}

int start_http(struct daemon *d)
{
	const char *cert = web_config_cert_pem(d->o->web);
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			     /* a profile's request waits for its end */
			     MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0,
		  (void *)web_config_key_pem(d->o->web) },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			pr_err("cannot serve HTTPS: this libmicrohttpd has no "
			       "TLS support");
			return -ENOTSUP;
		}
		flags |= MHD_USE_TLS;
	} else {
		tls[0].option = MHD_OPTION_END;
	}
	d->http = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, d, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_LISTEN_SOCKET, d->listen_fd,
		MHD_OPTION_CONNECTION_TIMEOUT, d->o->http_timeout_s,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
		/* one remote host cannot take every slot from the scraper */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)MAX_CONNECTIONS_PER_IP,
		/* --web-config's certificate and key, if any */
		MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!d->http) {
		pr_err("cannot start the HTTP server on %s", d->o->listen);
		return -EIO;
	}
	d->listen_fd = -1; /* MHD owns it now */
	return 0;
}

void stop_http(struct daemon *d)
{
	if (!d->http)
		return;
	/* a profile's request is let go unanswered: closed */
	daemon_profile_abort(d);
	if (d->profile.conn) {
		struct profile_answer *a = d->profile.answer;

		a->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		MHD_resume_connection(d->profile.conn);
		d->profile.conn = NULL;
		d->profile.answer = NULL;
	}
	MHD_stop_daemon(d->http);
	d->http = NULL;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>

#include "cmd/cmd_daemon.h"
#include "cmd/commands.h"
#include "cmd/run.h"
#include "collect/collector.h"
#include "collect/target.h"
#include "model/comm_series.h"
#include "render/report_prom.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/signals.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define COMM_IDLE_NS (600ULL * 1000000000ULL)
#define MAX_CONNECTIONS 16
#define MAX_CONNECTIONS_PER_IP 8

static const char index_page[] =
	"scprof daemon: Prometheus metrics at /metrics\n";

struct daemon {
	struct daemon_opts *o;
	struct collector *col;
	struct comm_series *comms;
	struct MHD_Daemon *http;
	int listen_fd;
	int pidfile_fd; /* >= 0: locked and written, removed on exit */
	uint64_t scrapes;
	bool targets_gone;
};

/* ---- command line ---------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: scprof daemon [OPTIONS] [-a | -p PID[,PID...] | --cgroup PATH]\n"
	      "\n"
	      "Attach once and serve cumulative syscall metrics in the Prometheus text\n"
	      "format at http://ADDR:PORT/metrics until SIGTERM or SIGINT. Exited\n"
	      "processes are folded into the totals, so memory stays flat however many\n"
	      "processes come and go.\n"
	      "\n"
	      "Targets (default: the whole system, scprof excepted):\n"
	      "  -a, --all             the whole system\n"
	      "  -p, --pid PID[,PID]   running processes, all their threads\n"
	      "      --cgroup PATH     every task under a cgroup v2 directory\n"
	      "  -f, --follow          with -p, also children forked by the targets\n"
	      "\n"
	      "Service:\n"
	      "  -l, --listen ADDR:PORT  where to serve (default " DAEMON_DEFAULT_LISTEN
	      ",\n"
	      "                        loopback only); [::1]:PORT for IPv6, port 0 lets\n"
	      "                        the kernel choose (the log line says which)\n"
	      "      --pidfile FILE    write the daemon's pid to FILE, locked while it\n"
	      "                        runs, removed when it stops\n"
	      "      --comm-series K   per-process-name series for at most K names\n"
	      "                        (default 10, 0 for none); other names are summed\n"
	      "                        into comm=\"(other processes)\"\n"
	      "      --fold-interval SECS  how often exited processes are folded out of\n"
	      "                        the BPF maps (default 5)\n"
	      "      --http-timeout SECS  drop HTTP connections idle this long (default 10)\n"
	      "      --max-entries N   stats map size (default 16384)\n"
	      "      --max-procs N     process map size (default 8192)\n"
	      "  -v, --verbose         more messages (-vv: libbpf's too)\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "HTTP: GET or HEAD /metrics (Content-Type " PROM_CONTENT_TYPE
	      "),\n"
	      "/ (a pointer to /metrics); anything else is 404 or 405.\n"
	      "Exit status: 0 after SIGTERM/SIGINT, 1 on a runtime error (privileges,\n"
	      "address in use, dead target), 2 on a usage error. Needs root, or CAP_BPF\n"
	      "and CAP_PERFMON; once attached it keeps none where the kernel lets it\n"
	      "read its maps without them, else only those two.\n",
	      f);
}

int daemon_parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *len)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	size_t hlen;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (!colon || cli_parse_u64(colon + 1, 0, 65535, &port))
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (host[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (hlen < 3 || host[hlen - 1] != ']')
			return -EINVAL;
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return 0;
	}
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		/* inet_pton takes only the dotted quad, no "1" or "0x7f.1" */
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
	}
	return 0;
}

enum {
	OPT_PIDFILE = CLI_OPT_OWN,
	OPT_COMM_SERIES,
	OPT_FOLD_INTERVAL,
	OPT_HTTP_TIMEOUT,
};

static const struct option long_opts[] = {
	CLI_TARGET_OPTIONS,
	{ "listen", required_argument, NULL, 'l' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "comm-series", required_argument, NULL, OPT_COMM_SERIES },
	{ "fold-interval", required_argument, NULL, OPT_FOLD_INTERVAL },
	{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
	CLI_COMMON_OPTIONS,
	{},
};

static int daemon_option(void *ctx, int c, const char *arg);

static const struct cli_cmd daemon_cmd = {
	.prog = "scprof daemon",
	.usage = usage,
	.short_opts = ":ap:fl:vqh",
	.long_opts = long_opts,
	.option = daemon_option,
	.default_target = TARGET_ALL,
	.stray_hint = "the daemon runs no command (use -p PID or --cgroup "
		      "PATH)",
};

static int daemon_option(void *ctx, int c, const char *arg)
{
	const struct cli_cmd *cmd = &daemon_cmd;
	struct daemon_opts *o = ctx;
	uint64_t v;

	switch (c) {
	case 'l':
		if (daemon_parse_listen(arg, &o->addr, &o->addrlen))
			return cli_error(cmd,
					 "invalid listen address '%s': "
					 "expected ADDR:PORT, e.g. "
					 "127.0.0.1:9733 or [::1]:9733",
					 arg);
		o->listen = arg;
		return 0;
	case OPT_PIDFILE:
		if (!*arg)
			return cli_error(cmd, "empty pidfile name");
		o->pidfile = arg;
		return 0;
	case OPT_COMM_SERIES:
		if (cli_parse_u64(arg, 0, 1000, &v))
			return cli_error(cmd,
					 "invalid --comm-series '%s': "
					 "expected 0 to 1000",
					 arg);
		o->comm_series = (unsigned int)v;
		return 0;
	case OPT_FOLD_INTERVAL:
		if (cli_parse_seconds(arg, &o->fold_s) || o->fold_s < 0.1 ||
		    o->fold_s > 3600)
			return cli_error(cmd,
					 "invalid --fold-interval '%s': "
					 "expected 0.1 to 3600 seconds",
					 arg);
		return 0;
	case OPT_HTTP_TIMEOUT:
		if (cli_parse_u64(arg, 1, 3600, &v))
			return cli_error(cmd,
					 "invalid --http-timeout '%s': "
					 "expected 1 to 3600 seconds",
					 arg);
		o->http_timeout_s = (unsigned int)v;
		return 0;
	default:
		return -ENOENT;
	}
}

int daemon_parse_args(int argc, char **argv, struct daemon_opts *o)
{
	const struct cli_shared sh = {
		.target = &o->target,
		.verbosity = &o->verbosity,
	};
	int err;

	memset(o, 0, sizeof(*o));
	o->listen = DAEMON_DEFAULT_LISTEN;
	o->comm_series = 10;
	o->fold_s = 5;
	o->http_timeout_s = 10;
	o->verbosity = LOG_WARN;
	err = cli_parse(&daemon_cmd, argc, argv, o, &sh);
	if (err)
		return err;
	if (!o->addrlen)
		daemon_parse_listen(o->listen, &o->addr, &o->addrlen);
	return 0;
}

void daemon_free_opts(struct daemon_opts *o)
{
	cli_target_free(&o->target);
}

/* ---- setup ----------------------------------------------------------- */

static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
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
static int open_listener(struct daemon *d)
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

/* A pidfile held under an exclusive lock for the daemon's lifetime. */
static int open_pidfile(struct daemon *d)
{
	const char *path = d->o->pidfile;
	char buf[32];
	int fd, err, n;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open pidfile '%s': %s", path, strerror(errno));
		return err;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		n = (int)read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (err == -EBUSY)
			pr_err("pidfile '%s' is locked by a running daemon "
			       "(pid %s)",
			       path, *buf ? buf : "?");
		else
			pr_err("cannot lock pidfile '%s': %s", path,
			       strerror(-err));
		close(fd);
		return err;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	err = ftruncate(fd, 0) ? -errno : 0;
	if (!err) {
		ssize_t w = pwrite(fd, buf, (size_t)n, 0);

		err = w < 0 ? -errno : w != n ? -EIO : 0; /* short: no errno */
	}
	if (err) {
		pr_err("cannot write pidfile '%s': %s", path, strerror(-err));
		unlink(path);
		close(fd);
		return err;
	}
	d->pidfile_fd = fd;
	return 0;
}

static void close_pidfile(struct daemon *d)
{
	if (d->pidfile_fd < 0)
		return;
	if (unlink(d->o->pidfile) && errno != ENOENT)
		pr_warn("cannot remove pidfile '%s': %s", d->o->pidfile,
			strerror(errno));
	close(d->pidfile_fd);
	d->pidfile_fd = -1;
}

/*
 * Once attached, keep only what reading and folding the maps needs: no
 * capability at all where the kernel allows using open maps without one
 * (collector__maps_need_no_caps), else CAP_BPF and CAP_PERFMON. Not in the
 * bounding set either, so nothing exec'd later could get more back.
 */
static int drop_capabilities(bool keep_bpf)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	uint64_t keep = keep_bpf ? (1ULL << CAP_BPF) | (1ULL << CAP_PERFMON) :
				   0,
		 have;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	have = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	if (have & (1ULL << CAP_SETPCAP)) {
		for (int cap = 0; cap <= 63; cap++) {
			if (keep & (1ULL << cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
			    errno != EINVAL)
				return -errno;
		}
	}
	keep &= have;
	for (int i = 0; i < 2; i++) {
		data[i].effective = data[i].permitted =
			(uint32_t)(keep >> (32 * i));
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

/* ---- scrapes --------------------------------------------------------- */

static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		       1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static uint64_t self_rss_bytes(void)
{
	unsigned long long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * One scrape: a cumulative snapshot of the maps (*m, which the caller
 * frees), the per-name series brought up to date, and scprof's own
 * figures into *self; in then refers to all three.
 */
static int scrape(struct daemon *d, struct sc_model **m, struct prom_self *self,
		  struct prom_input *in)
{
	struct collector_info info;
	uint64_t t0 = clock_mono_ns();
	int err;

	err = collector__snapshot(d->col, m);
	if (!err && d->comms)
		err = comm_series__update(d->comms, *m, t0);
	if (!err)
		err = collector__info(d->col, &info);
	if (err)
		return err;
	if (d->comms) {
		in->comms = comm_series__rows(d->comms, &in->ncomms);
		self->comm_folded = comm_series__folded(d->comms);
		self->comm_evicted = comm_series__evicted(d->comms);
	}
	self->progs_attached = info.progs_attached;
	self->stats_entries = info.stats_entries;
	self->stats_max = info.stats_max;
	self->procs_entries = info.procs_entries;
	self->procs_max = info.procs_max;
	self->map_bytes = info.map_bytes;
	self->procs_folded = info.procs_folded;
	self->scrapes = ++d->scrapes;
	self->scrape_ns = clock_mono_ns() - t0;
	self->cpu_ns = self_cpu_ns();
	self->rss_bytes = self_rss_bytes();
	in->model = *m;
	in->self = self;
	return 0;
}

/* The exposition of a scrape, into a malloc'ed buffer. */
static int render(const struct prom_input *in, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int err;

	if (!f)
		return -errno;
	err = report_prom(f, in);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

static int serve_metrics(struct daemon *d, char **buf, size_t *len)
{
	struct prom_input in = {};
	struct prom_self self = {};
	struct sc_model *m = NULL;
	int err;

	err = scrape(d, &m, &self, &in);
	if (!err)
		err = render(&in, buf, len);
	model_free(m);
	/* Models are transient: give their memory back. */
	malloc_trim(0);
	return err;
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct daemon *d = cls;
	char *buf = NULL;
	size_t len = 0;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: use GET or HEAD\n");
	if (!strcmp(url, "/"))
		return reply_text(conn, MHD_HTTP_OK, index_page);
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: metrics are at /metrics\n");
	err = serve_metrics(d, &buf, &len);
	if (err) {
		pr_err("cannot collect metrics: %s", strerror(-err));
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot collect metrics\n");
	}
	return reply(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, buf, len, true);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	pr_info("http: %s", msg);
}

static int start_http(struct daemon *d)
{
	d->http = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, d,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, d->listen_fd,
		MHD_OPTION_CONNECTION_TIMEOUT, d->o->http_timeout_s,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
		/* one remote host cannot take every slot from the scraper */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)MAX_CONNECTIONS_PER_IP, MHD_OPTION_END);
	if (!d->http) {
		pr_err("cannot start the HTTP server on %s", d->o->listen);
		return -EIO;
	}
	d->listen_fd = -1; /* MHD owns it now */
	return 0;
}

/* ---- the loop -------------------------------------------------------- */

static int fold_exited(struct daemon *d)
{
	struct sc_model *exited = NULL;
	int err;

	/* The per-name series need the exited processes' final figures. */
	if (d->comms) {
		exited = model_new();
		if (!exited)
			return -ENOMEM;
	}
	err = collector__harvest_exited(d->col, exited);
	if (!err && exited)
		comm_series__fold(d->comms, exited);
	model_free(exited);
	/* Models are transient: give their memory back, so the daemon's
	 * footprint is its steady state, not its largest fold.
	 */
	malloc_trim(0);
	if (!err && d->o->target.kind == TARGET_PIDS && !d->targets_gone &&
	    collector__live_targets(d->col) <= 0) {
		d->targets_gone = true;
		pr_warn("every target process has exited: serving their final "
			"figures");
	}
	return err;
}

static int run(struct daemon *d, int sigfd)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(d->http, MHD_DAEMON_INFO_EPOLL_FD);
	uint64_t fold_ns = (uint64_t)(d->o->fold_s * 1e9);
	uint64_t next_fold = clock_mono_ns() + fold_ns;
	struct pollfd pfd[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = info ? info->epoll_fd : -1, .events = POLLIN },
	};

	if (!info) {
		pr_err("cannot drive the HTTP server (no epoll descriptor)");
		return -EIO;
	}
	for (;;) {
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		uint64_t now = clock_mono_ns();
		int timeout_ms, err;

		if (now >= next_fold) {
			err = fold_exited(d);
			if (err) {
				pr_err("cannot fold exited processes: %s",
				       strerror(-err));
				return err;
			}
			next_fold = now + fold_ns;
		}
		timeout_ms = (int)((next_fold - now + 999999) / 1000000);
		if (MHD_get_timeout(d->http, &mhd_ms) == MHD_YES &&
		    mhd_ms < (MHD_UNSIGNED_LONG_LONG)timeout_ms)
			timeout_ms = (int)mhd_ms;
		if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR) {
			err = -errno;
			pr_err("poll failed: %s", strerror(errno));
			return err;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si) &&
			    (si.ssi_signo == SIGTERM ||
			     si.ssi_signo == SIGINT)) {
				pr_info("%s received: stopping",
					strsignal((int)si.ssi_signo));
				return 0;
			}
		}
		MHD_run(d->http);
	}
}

static int daemon_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct daemon *d = ctx;
	int err = daemon_parse_args(argc, argv, d->o);

	if (err)
		daemon_free_opts(d->o);
	*verbosity = d->o->verbosity;
	return err;
}

/* Attach, then keep only the capabilities reading the maps needs. */
static int attach(struct daemon *d)
{
	struct collector_opts copts = { .fold = COLLECTOR_FOLD_TOTAL };
	bool keep_bpf;
	int err;

	err = target_attach(&d->o->target, &copts, &d->col);
	if (err)
		return err;
	err = collector__maps_need_no_caps(d->col);
	if (err < 0)
		pr_warn("cannot tell whether the maps need capabilities: %s",
			strerror(-err));
	keep_bpf = err != 1;
	err = drop_capabilities(keep_bpf);
	if (err)
		pr_warn("cannot drop capabilities: %s", strerror(-err));
	else
		pr_info("attached; capabilities kept: %s",
			keep_bpf ? "CAP_BPF, CAP_PERFMON" : "none");
	return 0;
}

/* The address the HTTP server really listens on (port 0: the kernel's). */
static void served_addr(struct daemon *d, char *where, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const union MHD_DaemonInfo *li =
		MHD_get_daemon_info(d->http, MHD_DAEMON_INFO_LISTEN_FD);

	if (li && !getsockname(li->listen_fd, (struct sockaddr *)&ss, &sl))
		addr_str(&ss, where, len);
	else
		snprintf(where, len, "%s", d->o->listen);
}

/* The socket first, so a second daemon fails quickly; then the pidfile,
 * the series, the programs and the HTTP server.
 */
static int daemon_start(void *ctx, struct cmd_env *env)
{
	struct daemon *d = ctx;
	struct daemon_opts *o = d->o;
	struct comm_series_opts so = {
		.max_series = o->comm_series,
		.idle_ns = COMM_IDLE_NS,
	};
	char where[80];

	(void)env;
	signal(SIGPIPE, SIG_IGN); /* a scraper that hangs up is no reason */
	if (o->target.kind == TARGET_PIDS &&
	    target_resolve_pids(o->target.pids, &o->target.npids))
		return EXIT_FAIL;
	if (open_listener(d) || (o->pidfile && open_pidfile(d)))
		return EXIT_FAIL;
	if (o->comm_series && comm_series__new(&d->comms, &so)) {
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	if (attach(d) || start_http(d))
		return EXIT_FAIL;
	served_addr(d, where, sizeof(where));
	pr_warn("serving metrics at http://%s/metrics (pid %d)", where,
		(int)getpid());
	return 0;
}

static int daemon_loop(void *ctx, struct cmd_env *env)
{
	return run(ctx, env->sigfd);
}

static void daemon_teardown(void *ctx, int status)
{
	struct daemon *d = ctx;

	if (d->http)
		MHD_stop_daemon(d->http);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	/* Detaches every BPF program: nothing is left in the kernel. */
	collector__destroy(d->col);
	comm_series__free(d->comms);
	close_pidfile(d);
	if (status == EXIT_OK)
		pr_warn("stopped: BPF programs detached");
	daemon_free_opts(d->o);
}

static const struct cmd_ops daemon_ops = {
	.prog = "scprof daemon",
	.signals = CMD_SIGNALS_FD,
	.parse = daemon_parse,
	.start = daemon_start,
	.loop = daemon_loop,
	.teardown = daemon_teardown,
};

int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o;
	struct daemon d = { .o = &o, .listen_fd = -1, .pidfile_fd = -1 };

	return cmd_run(&daemon_ops, &d, argc, argv);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>

#include "cmd/cmd_daemon.h"
#include "cmd/commands.h"
#include "cmd/daemon_http.h"
#include "cmd/daemon_metrics.h"
#include "cmd/daemon_otlp.h"
#include "cmd/daemon_priv.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/cgroups.h"
#include "collect/collector.h"
#include "collect/duty.h"
#include "collect/target.h"
#include "model/comm_series.h"
#include "model/split_hold.h"
#include "render/otlp.h"
#include "render/report_prom.h"
#include "render/slowcalls.h"
#include "util/caps.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/pidfile.h"
#include "util/web_config.h"
#include "util/strlist.h"

#define COMM_IDLE_NS (600ULL * 1000000000ULL)

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
	      "      --max-series K    the same (1 to 1000), for the series of --labels\n"
	      "      --labels KEYS     the labels of those series, comma-separated: comm\n"
	      "                        (the default), unit (systemd unit), cgroup (v2\n"
	      "                        path), container (id), pod (uid), qos (the pod's\n"
	      "                        QoS class); a series per distinct\n"
	      "                        set, the rest in one \"(other)\" value (comm:\n"
	      "                        \"(other processes)\"), counted in\n"
	      "                        scprof_group_series_folded_total\n"
	      "      --fold-interval SECS  how often exited processes and threads are\n"
	      "                        folded out of the BPF maps (default 5; at once\n"
	      "                        when a map is a quarter full)\n"
	      "      --http-timeout SECS  drop HTTP connections idle this long (default 10)\n"
	      "      --web-config FILE  HTTPS and basic auth from a Prometheus web\n"
	      "                        configuration file (exporter-toolkit format:\n"
	      "                        tls_server_config cert_file/key_file,\n"
	      "                        basic_auth_users with bcrypt hashes)\n"
	      "      --pprof-endpoint  serve the calls' user stacks as a pprof profile\n"
	      "                        at /debug/pprof/syscalls?seconds=N (1 to 300,\n"
	      "                        default 30; go tool pprof reads it), one\n"
	      "                        profile at a time (another gets 409); stacks\n"
	      "                        are sampled, 1 call in 1000 of those the\n"
	      "                        latency windows see, only while one runs\n"
	      "      --max-entries N   stats map size (default 16384)\n"
	      "      --max-procs N     process map size (default 8192)\n"
	      "  -v, --verbose         more messages (-vv: each latency and cost\n"
	      "                        window as it opens and closes, with its\n"
	      "                        CLOCK_MONOTONIC time, and libbpf's messages)\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "OpenTelemetry (OTLP/HTTP, protobuf): the same figures, pushed as well\n"
	      "(counters as cumulative sums, latency histograms with scprof's own\n"
	      "buckets, --labels as semantic-convention attributes; at the start, every\n"
	      "interval and on SIGTERM):\n"
	      "      --otlp-endpoint URL  POST them to URL/v1/metrics (http:// or\n"
	      "                        https://; a URL ending in /v1/metrics as is)\n"
	      "      --otlp-interval SECS  how often (default 15)\n"
	      "      --otlp-timeout SECS  give up an attempt after this (default 10);\n"
	      "                        429, 502, 503, 504 and connection errors are\n"
	      "                        retried with backoff (Retry-After honoured)\n"
	      "                        for up to 120 s, then given up\n"
	      "      --otlp-queue N    exports waiting at most (default 8, 1 to 1000);\n"
	      "                        the oldest is dropped when full, counted in\n"
	      "                        scprof_otlp_exports_dropped_total\n"
	      "      --otlp-ca FILE    the CA certificates (PEM) that verify the receiver\n"
	      "      --otlp-cert FILE  a client certificate (PEM) for mutual TLS\n"
	      "      --otlp-key FILE   its private key (PEM)\n"
	      "      --otlp-header 'NAME: VALUE'  an HTTP header on every export\n"
	      "                        (repeatable), e.g. 'Authorization: Bearer ...'\n"
	      "      --otlp-headers-file FILE  headers from FILE, one a line (# comments):\n"
	      "                        secrets stay out of ps\n"
	      "      --otlp-compression gzip|none  the body's (default gzip)\n"
	      "\n"
	      "Latency, sampled on a budget (counts, errors and bytes are exact always):\n"
	      "      --max-overhead PCT  CPU the latency part may use, in percent of one\n"
	      "                        CPU (default 1). Calls are timed in a window at\n"
	      "                        the start of each period; the window is sized\n"
	      "                        from what the BPF programs measured they cost,\n"
	      "                        and closes early once the period's budget is spent\n"
	      "      --latency-duty RATIO  a fixed share of time to time calls in, from 0\n"
	      "                        (never) to 1 (every call, always); overrides\n"
	      "                        --max-overhead\n"
	      "      --latency-period SECS  the length of a period (default 10)\n"
	      "      --slow DURATION   log each call that takes DURATION or longer (10ms,\n"
	      "                        1.5s, 200us) as it returns, one line each: time,\n"
	      "                        comm[pid/tid], syscall, its fd and what it is, result,\n"
	      "                        duration, call site; counted in\n"
	      "                        scprof_slow_calls_total, those lost (ring buffer\n"
	      "                        full) in scprof_slow_calls_lost_total. Calls are\n"
	      "                        seen when timed: --slow implies --latency-duty 1\n"
	      "                        (every call timed) unless --latency-duty is given\n"
	      "Only calls that begin and end in one window are timed: the histograms,\n"
	      "_sum and _count hold those calls, scprof_syscalls_total every call.\n"
	      "Their time is split into on a CPU, waiting for a CPU, blocked and I/O\n"
	      "wait (scprof_syscall_on_cpu_seconds_total and its kin).\n"
	      "scprof_latency_sample_ratio says the share of time timed;\n"
	      "scprof_bpf_run_seconds_total what the programs cost.\n"
	      "\n"
	      "HTTP: GET or HEAD /metrics (Content-Type " PROM_CONTENT_TYPE
	      "),\n"
	      "/ (a pointer to /metrics), GET /debug/pprof/syscalls with\n"
	      "--pprof-endpoint; anything else is 404 or 405.\n"
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
	OPT_WEB_CONFIG,
	OPT_LATENCY_DUTY,
	OPT_MAX_OVERHEAD,
	OPT_LATENCY_PERIOD,
	OPT_LABELS,
	OPT_MAX_SERIES,
	OPT_SLOW,
	OPT_OTLP_ENDPOINT,
	OPT_OTLP_INTERVAL,
	OPT_OTLP_TIMEOUT,
	OPT_OTLP_QUEUE,
	OPT_OTLP_CA,
	OPT_OTLP_CERT,
	OPT_OTLP_KEY,
	OPT_OTLP_HEADER,
	OPT_OTLP_HEADERS_FILE,
	OPT_OTLP_COMPRESSION,
	OPT_PPROF_ENDPOINT,
};

static const struct option long_opts[] = {
	CLI_TARGET_OPTIONS,
	{ "listen", required_argument, NULL, 'l' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "comm-series", required_argument, NULL, OPT_COMM_SERIES },
	{ "max-series", required_argument, NULL, OPT_MAX_SERIES },
	{ "labels", required_argument, NULL, OPT_LABELS },
	{ "fold-interval", required_argument, NULL, OPT_FOLD_INTERVAL },
	{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
	{ "web-config", required_argument, NULL, OPT_WEB_CONFIG },
	{ "latency-duty", required_argument, NULL, OPT_LATENCY_DUTY },
	{ "max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD },
	{ "latency-period", required_argument, NULL, OPT_LATENCY_PERIOD },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT },
	{ "otlp-interval", required_argument, NULL, OPT_OTLP_INTERVAL },
	{ "otlp-timeout", required_argument, NULL, OPT_OTLP_TIMEOUT },
	{ "otlp-queue", required_argument, NULL, OPT_OTLP_QUEUE },
	{ "otlp-ca", required_argument, NULL, OPT_OTLP_CA },
	{ "otlp-cert", required_argument, NULL, OPT_OTLP_CERT },
	{ "otlp-key", required_argument, NULL, OPT_OTLP_KEY },
	{ "otlp-header", required_argument, NULL, OPT_OTLP_HEADER },
	{ "otlp-headers-file", required_argument, NULL, OPT_OTLP_HEADERS_FILE },
	{ "otlp-compression", required_argument, NULL, OPT_OTLP_COMPRESSION },
	{ "pprof-endpoint", no_argument, NULL, OPT_PPROF_ENDPOINT },
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

/* --web-config FILE: loaded and checked now, before anything is served. */
static int daemon_web_config_option(const struct cli_cmd *cmd, const char *arg,
				    struct web_config **web)
{
	char msg[512], *safe;

	web_config_free(*web);
	*web = NULL;
	if (!web_config_load(arg, web, msg, sizeof(msg)))
		return 0;
	/* names from the file, escaped: one line whatever they hold */
	safe = esc_text(msg, strlen(msg));
	fprintf(stderr, "%s: --web-config %s\n", cmd->prog, safe ? safe : msg);
	free(safe);
	return EXIT_USAGE;
}

/* --otlp-ca, --otlp-cert, --otlp-key: a file that can be read now. */
static int otlp_file_option(const struct cli_cmd *cmd, const char *opt,
			    const char *arg, const char **out)
{
	FILE *f = *arg ? fopen(arg, "re") : NULL;

	if (!f)
		return cli_error(cmd, "%s '%s': cannot read it: %s", opt, arg,
				 *arg ? strerror(errno) : "no file named");
	fclose(f);
	*out = arg;
	return 0;
}

/* The --otlp-* options. -ENOENT: not one of them. */
static int otlp_option(const struct cli_cmd *cmd, struct daemon_opts *o, int c,
		       const char *arg)
{
	struct otlp_opts *x = &o->otlp;
	const char *why = "";
	unsigned int line;
	uint64_t v;
	int err;

	switch (c) {
	case OPT_OTLP_ENDPOINT:
		if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
			return cli_error(cmd,
					 "invalid --otlp-endpoint '%s': "
					 "expected an http:// or https:// URL "
					 "(OTLP/HTTP; gRPC is not supported)",
					 arg);
		x->endpoint = arg;
		return 0;
	case OPT_OTLP_INTERVAL:
		if (cli_parse_seconds(arg, &x->interval_s) ||
		    x->interval_s < 0.1 || x->interval_s > 3600)
			return cli_error(cmd,
					 "invalid --otlp-interval '%s': "
					 "expected 0.1 to 3600 seconds",
					 arg);
		break;
	case OPT_OTLP_TIMEOUT:
		if (cli_parse_seconds(arg, &x->timeout_s) ||
		    x->timeout_s < 0.1 || x->timeout_s > 600)
			return cli_error(cmd,
					 "invalid --otlp-timeout '%s': "
					 "expected 0.1 to 600 seconds",
					 arg);
		break;
	case OPT_OTLP_QUEUE:
		if (cli_parse_u64(arg, 1, 1000, &v))
			return cli_error(cmd,
					 "invalid --otlp-queue '%s': expected "
					 "1 to 1000",
					 arg);
		x->queue = (unsigned int)v;
		break;
	case OPT_OTLP_CA:
		err = otlp_file_option(cmd, "--otlp-ca", arg, &x->ca);
		if (err)
			return err;
		break;
	case OPT_OTLP_CERT:
		err = otlp_file_option(cmd, "--otlp-cert", arg, &x->cert);
		if (err)
			return err;
		break;
	case OPT_OTLP_KEY:
		err = otlp_file_option(cmd, "--otlp-key", arg, &x->key);
		if (err)
			return err;
		break;
	case OPT_OTLP_HEADER:
		err = otlp_opts_add_header(x, arg, &why);
		if (err == -ENOMEM)
			return cli_error(cmd, "out of memory");
		if (err) {
			/* a secret, maybe: not echoed */
			return cli_error(cmd, "invalid --otlp-header: %s", why);
		}
		break;
	case OPT_OTLP_HEADERS_FILE:
		err = otlp_opts_headers_file(x, arg, &line, &why);
		if (err == -EINVAL)
			return cli_error(cmd,
					 "--otlp-headers-file '%s', line %u: "
					 "%s",
					 arg, line, why);
		if (err)
			return cli_error(cmd,
					 "--otlp-headers-file '%s': cannot "
					 "read it: %s",
					 arg, strerror(-err));
		break;
	case OPT_OTLP_COMPRESSION:
		if (strcmp(arg, "gzip") && strcmp(arg, "none"))
			return cli_error(cmd,
					 "invalid --otlp-compression '%s': "
					 "expected gzip or none",
					 arg);
		x->gzip = !strcmp(arg, "gzip");
		break;
	default:
		return -ENOENT;
	}
	if (!o->otlp_first) {
		static const char *const names[] = {
			[OPT_OTLP_INTERVAL - OPT_OTLP_ENDPOINT] =
				"--otlp-interval",
			[OPT_OTLP_TIMEOUT - OPT_OTLP_ENDPOINT] =
				"--otlp-timeout",
			[OPT_OTLP_QUEUE - OPT_OTLP_ENDPOINT] = "--otlp-queue",
			[OPT_OTLP_CA - OPT_OTLP_ENDPOINT] = "--otlp-ca",
			[OPT_OTLP_CERT - OPT_OTLP_ENDPOINT] = "--otlp-cert",
			[OPT_OTLP_KEY - OPT_OTLP_ENDPOINT] = "--otlp-key",
			[OPT_OTLP_HEADER - OPT_OTLP_ENDPOINT] = "--otlp-header",
			[OPT_OTLP_HEADERS_FILE - OPT_OTLP_ENDPOINT] =
				"--otlp-headers-file",
			[OPT_OTLP_COMPRESSION - OPT_OTLP_ENDPOINT] =
				"--otlp-compression",
		};

		o->otlp_first = names[c - OPT_OTLP_ENDPOINT];
	}
	return 0;
}

static int daemon_option(void *ctx, int c, const char *arg)
{
	const struct cli_cmd *cmd = &daemon_cmd;
	struct daemon_opts *o = ctx;
	const char *bad;
	uint64_t v;
	int err = otlp_option(cmd, o, c, arg);

	if (err != -ENOENT)
		return err;
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
		return cli_kept_file_option(cmd, arg, "--pidfile", &o->pidfile);
	case OPT_COMM_SERIES:
		if (cli_parse_u64(arg, 0, 1000, &v))
			return cli_error(cmd,
					 "invalid --comm-series '%s': "
					 "expected 0 to 1000",
					 arg);
		o->comm_series = (unsigned int)v;
		return 0;
	case OPT_MAX_SERIES:
		if (cli_parse_u64(arg, 1, 1000, &v))
			return cli_error(cmd,
					 "invalid --max-series '%s': expected "
					 "1 to 1000 (--comm-series 0 for no "
					 "series)",
					 arg);
		o->comm_series = (unsigned int)v;
		return 0;
	case OPT_LABELS:
		if (group_parse(arg, &o->labels, &bad))
			return cli_error(cmd,
					 "invalid or repeated --labels key "
					 "'%.*s': expected comm, unit, cgroup, "
					 "container, pod or qos",
					 (int)strlist_len(bad), bad);
		if (group_has(&o->labels, GROUP_PID) ||
		    group_has(&o->labels, GROUP_TID))
			return cli_error(
				cmd,
				"--labels %s refused: a series per "
				"%s would grow without bound as "
				"processes come and go (use comm, "
				"unit, cgroup, container, pod or qos)",
				group_has(&o->labels, GROUP_PID) ? "pid" :
								   "tid",
				group_has(&o->labels, GROUP_PID) ? "process" :
								   "thread");
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
	case OPT_WEB_CONFIG:
		return daemon_web_config_option(cmd, arg, &o->web);
	case OPT_LATENCY_DUTY:
		return cli_ratio(cmd, "--latency-duty", arg, &o->latency_duty);
	case OPT_MAX_OVERHEAD:
		if (cli_parse_number(arg, 0.001, 100, &o->max_overhead))
			return cli_error(cmd,
					 "invalid --max-overhead '%s': "
					 "expected 0.001 to 100 (percent of "
					 "one CPU)",
					 arg);
		o->max_overhead /= 100;
		o->budget_given = true;
		return 0;
	case OPT_SLOW:
		return cli_slow_option(cmd, arg, &o->slow_ns);
	case OPT_PPROF_ENDPOINT:
		o->pprof_endpoint = true;
		return 0;
	case OPT_LATENCY_PERIOD:
		if (cli_parse_seconds(arg, &o->latency_period_s) ||
		    o->latency_period_s < 0.1 || o->latency_period_s > 3600)
			return cli_error(cmd,
					 "invalid --latency-period '%s': "
					 "expected 0.1 to 3600 seconds",
					 arg);
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
	o->latency_duty = -1;
	o->max_overhead = DUTY_DEFAULT_BUDGET;
	o->latency_period_s = DUTY_DEFAULT_PERIOD_S;
	o->verbosity = LOG_WARN;
	o->otlp.interval_s = OTLP_DEFAULT_INTERVAL_S;
	o->otlp.timeout_s = OTLP_DEFAULT_TIMEOUT_S;
	o->otlp.queue = OTLP_DEFAULT_QUEUE;
	o->otlp.gzip = true;
	err = cli_parse(&daemon_cmd, argc, argv, o, &sh);
	if (err)
		return err;
	if (o->otlp_first && !o->otlp.endpoint)
		return cli_error(&daemon_cmd, "%s needs --otlp-endpoint",
				 o->otlp_first);
	if (o->otlp.key && !o->otlp.cert)
		return cli_error(&daemon_cmd, "--otlp-key needs --otlp-cert");
	if (!o->addrlen)
		daemon_parse_listen(o->listen, &o->addr, &o->addrlen);
	/* a slow call is seen when it is timed: every one, unless asked */
	if (o->slow_ns && o->latency_duty < 0 && o->budget_given)
		return cli_error(&daemon_cmd,
				 "--slow times every call (--latency-duty 1): "
				 "to time a share, give --latency-duty instead "
				 "of --max-overhead");
	if (o->slow_ns && o->latency_duty < 0)
		o->latency_duty = 1;
	return 0;
}

void daemon_free_opts(struct daemon_opts *o)
{
	cli_target_free(&o->target);
	web_config_free(o->web);
	o->web = NULL;
	otlp_opts_free(&o->otlp);
}

/* ---- setup ----------------------------------------------------------- */

static int open_pidfile(struct daemon *d)
{
	int fd = pidfile_open(d->o->pidfile);

	if (fd < 0)
		return fd;
	d->pidfile_fd = fd;
	return 0;
}

static void close_pidfile(struct daemon *d)
{
	pidfile_close(d->pidfile_fd, d->o->pidfile);
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
	return caps_drop(keep_bpf);
}

/* ---- the loop -------------------------------------------------------- */

#define TRIM_EVERY_NS 60000000000ULL

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
	 * footprint is its steady state, not its largest fold; once a
	 * minute at most (under process churn a fold is every poll, and
	 * each trim's memory comes back as page faults)
	 */
	if (clock_mono_ns() - d->trimmed_ns >= TRIM_EVERY_NS) {
		malloc_trim(0);
		d->trimmed_ns = clock_mono_ns();
	}
	if (!err && d->o->target.kind == TARGET_PIDS && !d->targets_gone &&
	    collector__live_targets(d->col) <= 0) {
		d->targets_gone = true;
		pr_warn("every target process has exited: serving their final "
			"figures");
	}
	return err;
}

/* --slow: log the slow calls seen since the last look, one line each. */
static int slow_log(struct daemon *d)
{
	struct sc_slowlog got;
	int err;

	if (!d->o->slow_ns)
		return 0;
	slowlog_init(&got, SIZE_MAX);
	err = collector__slow_take(d->col, &got, &d->slow_lost);
	for (size_t i = 0; !err && i < got.n; i++) {
		char *line = slowcall_text(&got.v[i]);

		if (!line) {
			err = -ENOMEM;
			break;
		}
		pr_warn("slow call: %s", line);
		free(line);
		d->slow_logged++;
	}
	slowlog_clear(&got);
	if (err)
		pr_err("cannot log the slow calls: %s", strerror(-err));
	return err;
}

/* --otlp-endpoint: the figures of now, queued for the exporter's thread
 * (which never holds the loop up).
 */
static int otlp_export(struct daemon *d)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = daemon_otlp_payload(d, &buf, &len);

	if (err) {
		pr_err("cannot make the OTLP export: %s", strerror(-err));
		return err;
	}
	otlp_exporter__push(d->otlp, buf, len);
	return 0;
}

/* How often the loop wakes up at least, to fold early when a map is a
 * quarter full and to free dead threads' slots (reads of BPF globals).
 */
#define FULL_POLL_MS 50

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
		uint64_t now = clock_mono_ns(), next_duty, next_fold_or_duty;
		int timeout_ms, err;

		err = duty__tick(d->duty, now, &next_duty);
		err = err ?: slow_log(d);
		if (err)
			return err;
		/* dead threads' slots, for the new threads on their stacks */
		err = collector__tslots_free(d->col);
		if (err) {
			pr_err("cannot free the slots of exited threads: %s",
			       strerror(-err));
			return err;
		}
		if (now >= next_fold || collector__harvest_due(d->col)) {
			err = fold_exited(d);
			if (err) {
				pr_err("cannot fold exited processes: %s",
				       strerror(-err));
				return err;
			}
			next_fold = now + fold_ns;
		}
		if (d->otlp && now >= d->otlp_next_ns) {
			err = otlp_export(d);
			if (err)
				return err;
			d->otlp_next_ns +=
				(uint64_t)(d->o->otlp.interval_s * 1e9);
			/* behind (a stopped daemon): from now on */
			if (d->otlp_next_ns <= now)
				d->otlp_next_ns =
					now +
					(uint64_t)(d->o->otlp.interval_s * 1e9);
		}
		if (next_duty < next_fold)
			next_fold_or_duty = next_duty;
		else
			next_fold_or_duty = next_fold;
		if (d->otlp && d->otlp_next_ns < next_fold_or_duty)
			next_fold_or_duty = d->otlp_next_ns;
		timeout_ms =
			(int)((next_fold_or_duty - now + 999999) / 1000000);
		/* How full the maps are is looked at this often. */
		if (timeout_ms > FULL_POLL_MS)
			timeout_ms = FULL_POLL_MS;
		/* a profile's end (--pprof-endpoint) */
		if (d->profile.running && d->profile.end_ns > now &&
		    (d->profile.end_ns - now + 999999) / 1000000 <
			    (uint64_t)timeout_ms)
			timeout_ms = (int)((d->profile.end_ns - now + 999999) /
					   1000000);
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
		/* (before MHD_run, which then answers a profile that ended) */
		daemon_http_tick(d, clock_mono_ns(), &next_duty);
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
	/* Calls are summed per syscall in the kernel, and per process for
	 * the per-name series (per thread, no per-process cells).
	 */
	struct collector_opts copts;
	struct duty_opts dopts = {
		.ratio = d->o->latency_duty,
		.budget = d->o->max_overhead,
		.period_s = d->o->latency_period_s,
		.price = true, /* scprof_latency_cost_seconds_total */
	};
	bool keep_bpf;
	int err;

	daemon_plan(d->o, &d->found, &copts);
	err = target_attach(&d->found, &copts, &d->col);
	if (err)
		return err;
	if (d->o->slow_ns && d->o->latency_duty < 1)
		pr_warn("--slow with --latency-duty %g: only the calls timed in "
			"latency windows are seen",
			d->o->latency_duty);
	/* The first latency window opens now, before capabilities go. */
	err = duty__new(&d->duty, d->col, &dopts, clock_mono_ns());
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

/* service.instance.id: a random UUID (version 4), new each run. */
static void new_instance_id(char *out, size_t len)
{
	uint8_t u[16] = {};
	size_t got = 0;

	while (got < sizeof(u)) {
		ssize_t n = getrandom(u + got, sizeof(u) - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(u)) /* no getrandom: still unique enough a run */
		for (size_t i = 0; i < sizeof(u); i++)
			u[i] ^= (uint8_t)(clock_real_ns() >> (i % 8 * 8)) ^
				(uint8_t)getpid();
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* --otlp-endpoint: who sends (the resource), and the exporter's thread. */
static int start_otlp(struct daemon *d)
{
	struct utsname un;
	int err;

	if (!d->o->otlp.endpoint)
		return 0;
	if (gethostname(d->host_name, sizeof(d->host_name) - 1))
		snprintf(d->host_name, sizeof(d->host_name), "localhost");
	if (uname(&un))
		snprintf(un.machine, sizeof(un.machine), "unknown");
	snprintf(d->host_arch, sizeof(d->host_arch), "%s",
		 otlp_host_arch(un.machine));
	new_instance_id(d->instance_id, sizeof(d->instance_id));
	err = otlp_exporter__new(&d->otlp, &d->o->otlp);
	if (err)
		return err;
	/* the first export at once: figures from the start */
	d->otlp_next_ns = clock_mono_ns();
	return 0;
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
		.labels = &o->labels,
	};
	char where[4096];

	(void)env;
	signal(SIGPIPE, SIG_IGN); /* a scraper that hangs up is no reason */
	/* A fold's models come and go at every poll under process churn:
	 * malloc keeps their memory between polls rather than giving it back
	 * at each free (and taking it again as page faults); the trims once
	 * a minute and after each scrape give it back.
	 */
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

	if (target_find(&o->target, false, &d->found))
		return EXIT_FAIL;
	if (open_listener(d) || (o->pidfile && open_pidfile(d)))
		return EXIT_FAIL;
	if (group_needs_cgroups(&o->labels) &&
	    cgroups_v2_mount(where, sizeof(where)) == -ENOENT) {
		pr_err("--labels unit, cgroup, container, pod and qos need cgroup v2, "
		       "and no cgroup2 file system is mounted here");
		return EXIT_FAIL;
	}
	d->hold = split_hold__new();
	if (!d->hold || (o->comm_series && comm_series__new(&d->comms, &so))) {
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	d->start_unix_ns = clock_real_ns();
	d->start_mono_ns = clock_mono_ns();
	if (attach(d) || start_http(d) || start_otlp(d))
		return EXIT_FAIL;
	served_addr(d, where, sizeof(where));
	pr_warn("serving metrics at %s://%s/metrics (pid %d)",
		web_config_cert_pem(o->web) ? "https" : "http", where,
		(int)getpid());
	if (d->otlp)
		pr_warn("pushing metrics to %s every %gs (OTLP/HTTP; "
			"service.instance.id %s)",
			otlp_exporter__url(d->otlp), o->otlp.interval_s,
			d->instance_id);
	return 0;
}

static int daemon_loop(void *ctx, struct cmd_env *env)
{
	return run(ctx, env->sigfd);
}

static void daemon_teardown(void *ctx, int status)
{
	struct daemon *d = ctx;

	stop_http(d);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	/* the final figures, tried once, before the programs go */
	if (d->otlp && status == EXIT_OK)
		otlp_export(d);
	otlp_exporter__free(d->otlp);
	/* Detaches every BPF program: nothing is left in the kernel. */
	duty__free(d->duty);
	collector__destroy(d->col);
	comm_series__free(d->comms);
	split_hold__free(d->hold);
	close_pidfile(d);
	if (status == EXIT_OK)
		pr_warn("stopped: BPF programs detached");
	target_found_free(&d->found);
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

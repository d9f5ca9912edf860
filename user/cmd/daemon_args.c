// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The daemon's command line: its help, its option table and what each
 * option turns into (struct daemon_opts, cmd/cmd_daemon.h). The command
 * itself (setup, the loop, teardown) is cmd_daemon.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_daemon.h"
#include "cmd/daemon_otlp.h"
#include "collect/duty.h"
#include "render/report_prom.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/web_config.h"
#include "util/strlist.h"

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
	      "      --series-ttl DURATION  stop exporting a syscall's series once\n"
	      "                        it had no call for DURATION (default 10m;\n"
	      "                        0: never), and a group's series likewise;\n"
	      "                        back when calls resume (a syscall's counts\n"
	      "                        where they stood, a group's from zero)\n"
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
	OPT_SERIES_TTL,
};

static const struct option long_opts[] = {
	CLI_TARGET_OPTIONS,
	{ "listen", required_argument, NULL, 'l' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "comm-series", required_argument, NULL, OPT_COMM_SERIES },
	{ "max-series", required_argument, NULL, OPT_MAX_SERIES },
	{ "labels", required_argument, NULL, OPT_LABELS },
	{ "series-ttl", required_argument, NULL, OPT_SERIES_TTL },
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
	case OPT_SERIES_TTL:
		if (!strcmp(arg, "0")) {
			o->series_ttl_ns = 0;
			return 0;
		}
		if (cli_parse_duration_ns(arg, &o->series_ttl_ns) ||
		    o->series_ttl_ns < 1000000000ULL)
			return cli_error(cmd,
					 "invalid --series-ttl '%s': expected "
					 "a duration of 1s or more with its "
					 "unit (90s, 10m), or 0 for never",
					 arg);
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
	o->series_ttl_ns = DAEMON_DEFAULT_SERIES_TTL_NS;
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

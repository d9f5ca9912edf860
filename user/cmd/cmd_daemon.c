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
#include <sys/signalfd.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>

#include "cmd/cmd_daemon.h"
#include "cmd/commands.h"
#include "cmd/daemon_http.h"
#include "cmd/daemon_priv.h"
#include "collect/collector.h"
#include "collect/target.h"
#include "model/comm_series.h"
#include "render/report_prom.h"
#include "util/caps.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/pidfile.h"
#include "util/signals.h"

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

static const struct cli_cmd daemon_cmd = {
	.prog = "scprof daemon",
	.usage = usage,
	.short_opts = ":ap:fl:vqh",
};

int daemon_parse_args(int argc, char **argv, struct daemon_opts *o)
{
	const struct cli_cmd *cmd = &daemon_cmd;
	uint64_t v;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->listen = DAEMON_DEFAULT_LISTEN;
	o->comm_series = 10;
	o->fold_s = 5;
	o->http_timeout_s = 10;
	o->verbosity = LOG_WARN;
	optind = 0; /* 0: glibc resets all of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, cmd->short_opts, long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			if (daemon_parse_listen(optarg, &o->addr, &o->addrlen))
				return cli_error(cmd,
						 "invalid listen address '%s': "
						 "expected ADDR:PORT, e.g. "
						 "127.0.0.1:9733 or [::1]:9733",
						 optarg);
			o->listen = optarg;
			break;
		case OPT_PIDFILE:
			if (!*optarg)
				return cli_error(cmd, "empty pidfile name");
			o->pidfile = optarg;
			break;
		case OPT_COMM_SERIES:
			if (cli_parse_u64(optarg, 0, 1000, &v))
				return cli_error(cmd,
						 "invalid --comm-series '%s': "
						 "expected 0 to 1000",
						 optarg);
			o->comm_series = (unsigned int)v;
			break;
		case OPT_FOLD_INTERVAL:
			if (cli_parse_seconds(optarg, &o->fold_s) ||
			    o->fold_s < 0.1 || o->fold_s > 3600)
				return cli_error(
					cmd,
					"invalid --fold-interval '%s': "
					"expected 0.1 to 3600 seconds",
					optarg);
			break;
		case OPT_HTTP_TIMEOUT:
			if (cli_parse_u64(optarg, 1, 3600, &v))
				return cli_error(cmd,
						 "invalid --http-timeout '%s': "
						 "expected 1 to 3600 seconds",
						 optarg);
			o->http_timeout_s = (unsigned int)v;
			break;
		default:
			err = cli_shared_option(cmd, c, argv, &o->target,
						&o->verbosity);
			if (err)
				return err;
			break;
		}
	}
	if (optind < argc)
		return cli_error(cmd,
				 "unexpected argument '%s': the daemon runs no "
				 "command (use -p PID or --cgroup PATH)",
				 argv[optind]);
	err = cli_target_finish(cmd, &o->target, TARGET_ALL);
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

int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o;
	struct daemon d = { .o = &o, .listen_fd = -1, .pidfile_fd = -1 };
	struct collector_opts copts = { .fold = COLLECTOR_FOLD_TOTAL };
	struct log_ctx lctx = { .prog = "scprof daemon" };
	char where[80];
	sigset_t mask;
	int sigfd = -1, ret = EXIT_FAIL, err;
	bool keep_bpf;

	err = daemon_parse_args(argc, argv, &o);
	if (err) {
		daemon_free_opts(&o);
		return err == 1 ? EXIT_OK : err;
	}
	lctx.level = o.verbosity;
	log_init(&lctx);
	libbpf_set_print(log_libbpf);

	signals_block_stop(&mask, 0, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		pr_err("cannot set up signals: %s", strerror(errno));
		goto out;
	}

	if (o.target.kind == TARGET_PIDS &&
	    target_resolve_pids(o.target.pids, &o.target.npids))
		goto out;
	if (open_listener(&d))
		goto out;
	if (o.pidfile && open_pidfile(&d))
		goto out;
	if (o.comm_series) {
		struct comm_series_opts so = {
			.max_series = o.comm_series,
			.idle_ns = COMM_IDLE_NS,
		};

		if (comm_series__new(&d.comms, &so)) {
			pr_err("out of memory");
			goto out;
		}
	}
	if (target_attach(&o.target, &copts, &d.col))
		goto out;
	err = collector__maps_need_no_caps(d.col);
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
	if (start_http(&d))
		goto out;

	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		const union MHD_DaemonInfo *li =
			MHD_get_daemon_info(d.http, MHD_DAEMON_INFO_LISTEN_FD);

		if (li &&
		    !getsockname(li->listen_fd, (struct sockaddr *)&ss, &sl))
			addr_str(&ss, where, sizeof(where));
		else
			snprintf(where, sizeof(where), "%s", o.listen);
	}
	pr_warn("serving metrics at http://%s/metrics (pid %d)", where,
		(int)getpid());

	if (run(&d, sigfd))
		goto out;
	ret = EXIT_OK;
out:
	if (d.http)
		MHD_stop_daemon(d.http);
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	/* Detaches every BPF program: nothing is left in the kernel. */
	collector__destroy(d.col);
	comm_series__free(d.comms);
	close_pidfile(&d);
	if (sigfd >= 0)
		close(sigfd);
	if (ret == EXIT_OK)
		pr_warn("stopped: BPF programs detached");
	daemon_free_opts(&o);
	return ret;
}

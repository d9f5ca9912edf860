/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `scprof daemon`: attach once, fold exited processes away as they go, and
 * serve the cumulative figures as Prometheus metrics over HTTP
 * (libmicrohttpd, driven from the daemon's own single-threaded loop).
 * This header is its options, as its command line (daemon_args.c) makes
 * them.
 */
#ifndef SCPROF_DAEMON_H
#define SCPROF_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "cmd/cli.h"
#include "cmd/daemon_otlp.h"
#include "model/group.h"

struct web_config;

#define DAEMON_DEFAULT_LISTEN "127.0.0.1:9733"
#define DAEMON_DEFAULT_SERIES_TTL_NS (600ULL * 1000000000ULL) /* 10 min */

struct daemon_opts {
	struct target_spec target; /* TARGET_ALL unless -p or --cgroup */
	const char *listen;	   /* as given, for messages */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	const char *pidfile;
	unsigned int comm_series; /* 0: no per-comm series */
	struct group_by labels;	  /* --labels; n 0: comm */
	/* --series-ttl: a syscall row, or a group's series, idle this long
	 * is no longer exported; 0: never
	 */
	uint64_t series_ttl_ns;
	double fold_s; /* how often exited processes are folded */
	unsigned int http_timeout_s;
	double latency_duty; /* [0, 1]; negative: from max_overhead */
	double max_overhead; /* CPU fraction for the latency part */
	double latency_period_s;
	bool budget_given;   /* --max-overhead */
	uint64_t slow_ns;    /* --slow: log calls this long or longer; 0: off */
	bool pprof_endpoint; /* --pprof-endpoint: /debug/pprof/syscalls */
	int verbosity;
	struct web_config *web; /* --web-config: TLS, basic auth; NULL: none */
	struct otlp_opts otlp;	/* --otlp-*: endpoint NULL for none */
	const char *otlp_first; /* the first --otlp-* option given */
};

/*
 * Parse "ADDR:PORT": an IPv4 address, "[IPv6]" or "localhost", and a port
 * from 0 (the kernel picks one) to 65535. 0 or -EINVAL.
 */
int daemon_parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *len);
/* argv[0] is "daemon". 0 to run, 1 after --help (exit 0), or EXIT_USAGE
 * after a one-line error.
 */
int daemon_parse_args(int argc, char **argv, struct daemon_opts *o);
void daemon_free_opts(struct daemon_opts *o);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The daemon's state, shared by the files of `scprof daemon` and by no
 * one else: cmd_daemon.c (setup, the loop), daemon_http.c (the HTTP
 * server) and daemon_metrics.c (one scrape, rendered).
 */
#ifndef SCPROF_DAEMON_PRIV_H
#define SCPROF_DAEMON_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/cmd_daemon.h"

struct collector;
struct comm_series;
struct duty;
struct split_hold;
struct series_ttl;
struct sc_model;
struct MHD_Daemon;
struct otlp_exporter;
struct MHD_Connection;

/* --pprof-endpoint: the one profile running (daemon_profile.c). */
struct daemon_profile {
	bool running;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t start_real_ns;	   /* since the epoch */
	uint64_t windows_ns;	   /* time in latency windows at the start */
	struct sc_model *start;	   /* the snapshot at the start */
	/* The request waiting for it, suspended (daemon_http.c). */
	struct MHD_Connection *conn;
	void *answer; /* its struct profile_answer, filled at the end */
	/* Unwinding held to the budget: samples 2^shift times rarer (kept
	 * from one profile to the next), its CPU time when last paced.
	 */
	uint32_t shift;
	uint64_t paced_ns, paced_cpu_ns, start_cpu_ns;
	uint64_t served, refused; /* profiles answered, requests refused */
};

struct daemon {
	struct daemon_opts *o;
	struct target_found found; /* -p's processes, as found at start */
	struct collector *col;
	struct comm_series *comms;
	struct split_hold *hold; /* the split's counters never go back */
	struct series_ttl *ttl;	 /* idle syscall rows left out */
	struct duty *duty;	 /* latency windows and the budget */
	uint64_t trimmed_ns;	 /* malloc_trim() last called */
	struct MHD_Daemon *http;
	int listen_fd;
	int pidfile_fd; /* >= 0: locked and written, removed on exit */
	uint64_t scrapes;
	bool targets_gone;
	uint64_t slow_logged, slow_lost; /* --slow */
	/* --otlp-endpoint */
	struct otlp_exporter *otlp;
	uint64_t otlp_next_ns;	/* CLOCK_MONOTONIC of the next export */
	uint64_t start_unix_ns; /* the counters' start */
	uint64_t start_mono_ns; /* the same on CLOCK_MONOTONIC */
	char host_name[256];
	char host_arch[32];
	char instance_id[37];	       /* a UUID (v4), new each run */
	struct daemon_profile profile; /* --pprof-endpoint */
};

#endif

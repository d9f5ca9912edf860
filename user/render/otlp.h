/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The OTLP metrics payload (an ExportMetricsServiceRequest, protobuf) of
 * the same figures as the Prometheus exposition (report_prom.h): counters
 * as cumulative monotonic sums from the daemon's start, gauges, and the
 * latency histograms as explicit-bucket histograms in seconds whose
 * buckets are scprof's own (include/scprof_hist.h), so nothing is lost:
 * no exponential histogram's scale has scprof's bounds (docs/daemon.md,
 * "OTLP push").
 */
#ifndef SCPROF_OTLP_H
#define SCPROF_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "render/report_prom.h"

#define OTLP_CONTENT_TYPE "application/x-protobuf"

#include "scprof_hist.h"

/* The histograms' explicit bounds: every bucket's upper bound but the
 * last's (open above).
 */
#define OTLP_HIST_BOUNDS (SC_HIST_BUCKETS - 1)

/* Who sends: the resource's attributes (semantic conventions). */
struct otlp_resource {
	const char *host_name;	 /* host.name */
	const char *host_arch;	 /* host.arch: amd64, arm64... */
	const char *instance_id; /* service.instance.id */
};

struct otlp_input {
	const struct prom_input *prom; /* the figures, as for /metrics */
	const struct otlp_resource *res;
	uint64_t start_unix_ns; /* the counters' start: the daemon's */
	/* the same start on the clock of the per-name series' born_ns
	 * (model/comm_series.h): a series made later starts later
	 */
	uint64_t start_mono_ns;
	uint64_t now_unix_ns;
};

/* host.arch's value for a uname machine ("x86_64" -> "amd64"). */
const char *otlp_host_arch(const char *machine);

/* Explicit bound i in seconds: sc_hist_upper(i) ns, i < OTLP_HIST_BOUNDS. */
double otlp_hist_bound_s(unsigned int i);

/* The payload into a malloc'ed *buf of *len bytes. 0 or -errno. */
int otlp_render(const struct otlp_input *in, uint8_t **buf, size_t *len);

#endif

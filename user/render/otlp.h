/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The OTLP metrics payload (an ExportMetricsServiceRequest, protobuf) of
 * the same figures as the Prometheus exposition (report_prom.h): counters
 * as cumulative monotonic sums from the daemon's start, gauges, and the
 * latency histograms as exponential histograms in ns at scale 0, where
 * every exponential bucket is exactly a union of scprof's buckets
 * (docs/daemon.md, "OTLP push").
 */
#ifndef SCPROF_OTLP_H
#define SCPROF_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "render/report_prom.h"

#define OTLP_CONTENT_TYPE "application/x-protobuf"

/* The histograms' exponential scale: base 2^(2^-0) = 2. */
#define OTLP_HIST_SCALE 0

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
	uint64_t now_unix_ns;
};

/* host.arch's value for a uname machine ("x86_64" -> "amd64"). */
const char *otlp_host_arch(const char *machine);

/*
 * The exponential bucket index (scale 0, values in ns) that holds all of
 * scprof's bucket b >= 1: (2^i, 2^(i+1)] contains (sc_hist_lower(b),
 * sc_hist_upper(b)]. Bucket 0 ([0, 1] ns) is the zero bucket
 * (zero_threshold 1).
 */
int otlp_hist_index(unsigned int b);

/* The payload into a malloc'ed *buf of *len bytes. 0 or -errno. */
int otlp_render(const struct otlp_input *in, uint8_t **buf, size_t *len);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the daemon answers /metrics with: one scrape, rendered. */
#ifndef SCPROF_DAEMON_METRICS_H
#define SCPROF_DAEMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/daemon_priv.h"

/*
 * A cumulative snapshot of the maps, the per-name series brought up to
 * date and scprof's own figures, in the Prometheus text format, into a
 * malloc'ed *buf of *len bytes. 0 or -errno.
 */
int daemon_serve_metrics(struct daemon *d, char **buf, size_t *len);
/*
 * The same figures as an OTLP export request (render/otlp.h) into a
 * malloc'ed *buf of *len bytes; not counted as a scrape. 0 or -errno.
 */
int daemon_otlp_payload(struct daemon *d, uint8_t **buf, size_t *len);

#endif

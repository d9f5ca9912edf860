/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The daemon's HTTP server (libmicrohttpd, driven from the daemon's own
 * loop): GET or HEAD /metrics serves what daemon_metrics.c renders, /
 * points there, GET /debug/pprof/syscalls a profile (daemon_profile.c),
 * anything else is 404 or 405.
 */
#ifndef SCPROF_DAEMON_HTTP_H
#define SCPROF_DAEMON_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cmd/daemon_priv.h"

/* "ADDR:PORT", or "[ADDR]:PORT" for IPv6, into buf. */
void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len);
/* Bind d->o->addr into d->listen_fd: a second daemon fails here, quickly.
 * 0 or -errno, reported.
 */
int open_listener(struct daemon *d);
/* --pprof-endpoint: answer the profile's request once it is due at
 * now_ns; *next_ns lowered to when it will be.
 */
void daemon_http_tick(struct daemon *d, uint64_t now_ns, uint64_t *next_ns);
/* Start serving on d->listen_fd, which d->http then owns. 0 or -EIO. */
int start_http(struct daemon *d);
/* Stop serving: a profile running is stopped, its request closed. */
void stop_http(struct daemon *d);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --pprof-endpoint: GET /debug/pprof/syscalls?seconds=N, the call sites of
 * the calls made over N seconds as a pprof profile (render/pprof.h), the
 * way Go's net/http/pprof serves /debug/pprof/profile. One profile at a
 * time: the stacks are sampled while it runs and only then. No HTTP here:
 * daemon_http.c holds the request while the profile runs (suspended) and
 * answers it with what this file built.
 */
#ifndef SCPROF_DAEMON_PROFILE_H
#define SCPROF_DAEMON_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/daemon_priv.h"

#define PROFILE_PATH "/debug/pprof/syscalls"
#define PROFILE_DEFAULT_S 30
#define PROFILE_MAX_S 300
#define PROFILE_CONTENT_TYPE "application/octet-stream"

/* What to answer: a status, its body (owned: the server frees it). */
struct profile_answer {
	unsigned int status;
	const char *type;
	char *body;
	size_t len;
	bool owned;
};

/*
 * A request for a profile, its seconds argument as given (NULL: none).
 * true: the profile has started, and the answer comes from
 * daemon_profile_due once it ends; false: *a is the answer now (a bad
 * argument: 400, another profile running: 409, no --pprof-endpoint: 404,
 * a failure: 500), a one-line reason.
 */
bool daemon_profile_start(struct daemon *d, const char *method,
			  const char *seconds, uint64_t now_ns,
			  struct profile_answer *a);
/*
 * The running profile, if it ends by now_ns: built into *a (200 and the
 * gzip'ed profile, or 500), sampling stopped; true then. Else false, and
 * *next_ns lowered to when it ends.
 */
bool daemon_profile_due(struct daemon *d, uint64_t now_ns, uint64_t *next_ns,
			struct profile_answer *a);
/* Stop the running profile, if any, unanswered (the daemon stops). */
void daemon_profile_abort(struct daemon *d);

#endif

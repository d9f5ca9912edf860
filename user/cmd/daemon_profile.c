// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --pprof-endpoint: a profile is a snapshot at its start, the stacks
 * sampled until its end (collector__stacks_sample), and a snapshot at its
 * end; the difference of the two gives each syscall's exact calls and the
 * mean time of those timed, which its sampled stacks share out as
 * scprof --pprof does (render/pprof.c), each sample labelled as the
 * /metrics series of its process are (--labels, and comm).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/daemon_profile.h"
#include "collect/collector.h"
#include "collect/duty.h"
#include "model/delta.h"
#include "model/model.h"
#include "render/pprof.h"
#include "sc_stack.h"
#include "util/clock.h"
#include "util/log.h"

/* A one-line plain-text answer (a static message). */
static void answer_text(struct profile_answer *a, unsigned int status,
			const char *msg)
{
	*a = (struct profile_answer){ .status = status,
				      .type = "text/plain; charset=utf-8",
				      .body = (char *)msg,
				      .len = strlen(msg) };
}

/* The same, formatted (owned); out of memory: a static 500. */
static void answer_fmt(struct profile_answer *a, unsigned int status,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void answer_fmt(struct profile_answer *a, unsigned int status,
		       const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		answer_text(a, 500, "out of memory\n");
		return;
	}
	answer_text(a, status, s);
	a->owned = true;
}

/* How often the unwinding's CPU time is looked at. */
#define PACE_EVERY_NS 1000000000ULL

/*
 * What unwinding costs (the drain's CPU time: its threads, and the last
 * take) is held to the daemon's
 * budget (--max-overhead, of one CPU): after a second past it, or with
 * the profile past it so far, samples become twice as rare; under a
 * quarter of it (and half since the start), twice as frequent again,
 * down to the period. The BPF side's part of sampling is the enter
 * program's, which the latency windows' budget already holds.
 */
static void pace(struct daemon *d, uint64_t now_ns, bool start)
{
	struct daemon_profile *p = &d->profile;
	double share, total, budget = d->o->max_overhead;
	uint64_t cpu;

	if (!start && now_ns - p->paced_ns < PACE_EVERY_NS)
		return;
	if (collector__stacks_pace(d->col, p->shift, &cpu))
		return;
	if (!start) {
		share = (double)(cpu - p->paced_cpu_ns) /
			(double)(now_ns - p->paced_ns);
		/* and since the start: a binary's debug info read the first
		 * time costs most, and is paid back by rarer samples after
		 */
		total = (double)(cpu - p->start_cpu_ns) /
			(double)(now_ns - p->start_ns);
		if ((share > budget || total > budget) &&
		    p->shift < SC_STACK_MAX_SHIFT)
			p->shift++;
		else if (share < budget / 4 && total < budget / 2 && p->shift)
			p->shift--;
		collector__stacks_pace(d->col, p->shift, &cpu);
	}
	p->paced_ns = now_ns;
	p->paced_cpu_ns = cpu;
	if (start)
		p->start_cpu_ns = cpu;
}

bool daemon_profile_start(struct daemon *d, const char *method,
			  const char *seconds, uint64_t now_ns,
			  struct profile_answer *a)
{
	struct daemon_profile *p = &d->profile;
	uint64_t s = PROFILE_DEFAULT_S;
	int err;

	if (!d->o->pprof_endpoint) {
		answer_text(a, 404,
			    "not found: profiles are served with "
			    "scprof daemon --pprof-endpoint\n");
		return false;
	}
	if (strcmp(method, "GET")) {
		answer_text(
			a, 405,
			"method not allowed: a profile is taken with GET\n");
		return false;
	}
	if (seconds && cli_parse_u64(seconds, 1, PROFILE_MAX_S, &s)) {
		p->refused++;
		/* (the value is not echoed: it is the client's bytes) */
		answer_text(a, 400,
			    "bad request: seconds must be a whole number "
			    "from 1 to 300\n");
		return false;
	}
	if (p->running) {
		p->refused++;
		answer_fmt(a, 409,
			   "conflict: a profile is running, %" PRIu64
			   " s left; one at a time\n",
			   (p->end_ns -
			    (now_ns < p->end_ns ? now_ns : p->end_ns) +
			    999999999) /
				   1000000000);
		return false;
	}
	err = collector__snapshot(d->col, &p->start);
	err = err ?: collector__stacks_sample(d->col, true);
	if (err) {
		pr_err("cannot start a profile: %s", strerror(-err));
		model_free(p->start);
		p->start = NULL;
		answer_text(a, 500, "cannot start a profile\n");
		return false;
	}
	p->running = true;
	p->start_ns = now_ns;
	p->end_ns = now_ns + s * 1000000000ULL;
	p->start_real_ns = clock_real_ns();
	p->windows_ns = d->duty ? duty__timed_ns(d->duty, now_ns) : 0;
	pace(d, now_ns, true);
	pr_info("profile started: %" PRIu64 " s", s);
	return true;
}

/* The profile over its seconds, gzip'ed into *buf (malloc'ed). */
static int build(struct daemon *d, uint64_t now_ns, char **buf, size_t *len)
{
	struct daemon_profile *p = &d->profile;
	struct sc_model *end = NULL, *m = NULL;
	double secs = (double)(now_ns - p->start_ns) / 1e9, win_s = 0;
	uint64_t cpu = 0;
	char note[512];
	struct pprof_opts po = {
		.time_ns = (int64_t)p->start_real_ns,
		.target = "scprof daemon, /debug/pprof/syscalls",
		.note = note,
		.labels = &d->o->labels,
		.served = true,
	};
	FILE *f;
	int err;

	err = collector__snapshot(d->col, &end);
	if (!err && !(m = model_delta(end, p->start)))
		err = -ENOMEM;
	model_free(end);
	if (err)
		return err;
	m->meta.duration_ns = now_ns - p->start_ns;
	err = collector__stacks_take(d->col, m);
	if (!err && !m->stacks)
		err = -EINVAL;
	/* (the take's unwinding included) */
	if (!err)
		err = collector__stacks_pace(d->col, p->shift, &cpu);
	if (d->duty)
		win_s = (double)(duty__timed_ns(d->duty, now_ns) -
				 p->windows_ns) /
			1e9;
	snprintf(note, sizeof(note),
		 "stacks: sampled in the latency windows, %.3f s of the "
		 "profile's %.3f s; each syscall's calls are its exact count "
		 "over the profile, shared among its samples; the stacks' "
		 "drain (reading, unwinding) took "
		 "%.3f s of CPU, held to %g%% of one CPU (--max-overhead): "
		 "1 call in %" PRIu64 " sampled at the end",
		 win_s, secs, (double)(cpu - p->start_cpu_ns) / 1e9,
		 d->o->max_overhead * 100,
		 (uint64_t)SC_STACK_DEFAULT_PERIOD << p->shift);
	if (!err) {
		f = open_memstream(buf, len);
		if (!f) {
			err = -errno;
		} else {
			err = pprof_write(f, m, &po);
			if (fclose(f) && !err)
				err = -EIO;
			if (err) {
				free(*buf);
				*buf = NULL;
			}
		}
	}
	model_free(m);
	return err;
}

static void stop(struct daemon *d)
{
	struct daemon_profile *p = &d->profile;
	int err = collector__stacks_sample(d->col, false);

	if (err)
		pr_warn("cannot stop sampling stacks: %s", strerror(-err));
	model_free(p->start);
	p->start = NULL;
	p->running = false;
}

bool daemon_profile_due(struct daemon *d, uint64_t now_ns, uint64_t *next_ns,
			struct profile_answer *a)
{
	struct daemon_profile *p = &d->profile;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (!p->running)
		return false;
	pace(d, now_ns, false);
	if (now_ns < p->end_ns) {
		if (p->end_ns < *next_ns)
			*next_ns = p->end_ns;
		return false;
	}
	/* sampling stops first: the take drains what came before */
	err = collector__stacks_sample(d->col, false);
	err = err ?: build(d, now_ns, &buf, &len);
	stop(d);
	if (err) {
		pr_err("cannot build the profile: %s", strerror(-err));
		answer_text(a, 500, "cannot build the profile\n");
		return true;
	}
	p->served++;
	pr_info("profile served: %zu bytes", len);
	*a = (struct profile_answer){ .status = 200,
				      .type = PROFILE_CONTENT_TYPE,
				      .body = buf,
				      .len = len,
				      .owned = true };
	return true;
}

void daemon_profile_abort(struct daemon *d)
{
	if (d->profile.running)
		stop(d);
}

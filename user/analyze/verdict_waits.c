// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verdict's rules on where the calls' time went (verdict_waits.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/verdict_calls.h"
#include "analyze/verdict_waits.h"

/* The old rule, for a row whose split is not known: the process spends
 * VERDICT_BLOCKED_SHARE of its thread time asleep (as /proc leaves it),
 * and the row is a waiting call with VERDICT_BLOCKING_ROW of it.
 */
static int unsplit_blocking(struct verdict *v, size_t *cap,
			    const struct verdict_row *r)
{
	struct verdict_finding *f;
	int err;

	if (v->blocked_s < VERDICT_BLOCKED_SHARE * v->thread_s ||
	    r->share < VERDICT_BLOCKING_ROW ||
	    !(verdict_is_wait(r->name) ||
	      r->round_trip_ns >= VERDICT_WAIT_FLOORS * v->floor_ns))
		return 0;
	err = verdict_add_finding(v, cap, &f);
	if (err)
		return err;
	verdict_fill_finding(f, v, VERDICT_BLOCKING, r);
	f->avg_bytes = r->avg_bytes;
	f->in_flight = r->in_flight;
	f->flight_s = r->flight_s;
	if (verdict_is_sleep(r->name))
		f->call = VERDICT_CALL_SLEEP;
	return 0;
}

/* A part of a split row's time worth a finding: VERDICT_PART_SHARE of
 * its calls' time, and of the threads' time VERDICT_VISIBLE_SHARE
 * (waiting for a CPU, I/O, a lock: causes to name) or, for blocking
 * (which is often its purpose), VERDICT_BLOCKING_ROW.
 */
static bool part_matters(const struct verdict *v, const struct verdict_row *r,
			 double part_s, enum verdict_kind kind)
{
	double min = kind == VERDICT_BLOCKING ? VERDICT_BLOCKING_ROW :
						VERDICT_VISIBLE_SHARE;

	return r->split && part_s > 0 &&
	       part_s >= VERDICT_PART_SHARE * r->returned_s &&
	       part_s >= min * v->thread_s;
}

/*
 * The row's largest estimates of kind (where it slept: only those that
 * waited for a lock, lock 1, or not, lock 0, or all, -1) into the
 * finding's list of that kind, each with its share of the part it splits
 * (blocked or waiting), as the profile's JSON has it. 0 or -ENOMEM.
 */
static int take_whys(struct verdict_finding *f, const struct verdict_input *in,
		     const struct verdict_row *r, enum sc_why_kind kind,
		     int lock)
{
	const uint64_t whole = 1000000000ULL; /* shares in ns of it */
	struct verdict_why *out = kind == SC_WHY_SLEPT_IN ? f->slept_in :
				  kind == SC_WHY_WOKEN_BY ? f->woken_by :
							    f->ran_instead;
	size_t *n = kind == SC_WHY_SLEPT_IN ? &f->nslept_in :
		    kind == SC_WHY_WOKEN_BY ? &f->nwoken_by :
					      &f->nran_instead;
	struct sc_why *e;
	size_t m;

	*n = 0;
	if (!in->why)
		return 0;
	e = whys_of_row(in->why, r->abi, r->nr, r->fd_type, kind, whole, &m);
	if (m == SIZE_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < m && *n < VERDICT_MAX_WHYS; i++) {
		struct verdict_why *w;

		if (lock >= 0 && e[i].lock != lock)
			continue;
		if (kind == SC_WHY_RAN_INSTEAD && !e[i].opid && !*e[i].name)
			continue; /* a wait after a wake-up: no one named */
		w = &out[(*n)++];
		w->waker = e[i].waker;
		w->lock = e[i].lock;
		w->pid = e[i].opid;
		w->tid = e[i].otid;
		memcpy(w->name, e[i].name, sizeof(w->name));
		w->share = verdict_clamp01((double)e[i].ns / (double)whole);
	}
	free(e);
	return 0;
}

/* A split finding of kind on row r about part_s of its time. */
static int add_part(struct verdict *v, size_t *cap, enum verdict_kind kind,
		    const struct verdict_row *r, double part_s,
		    struct verdict_finding **out)
{
	struct verdict_finding *f;
	int err = verdict_add_finding(v, cap, &f);

	if (err)
		return err;
	verdict_fill_finding(f, v, kind, r);
	f->avg_bytes = r->avg_bytes;
	f->split = true;
	f->part_s = part_s;
	f->part_share =
		r->returned_s > 0 ? verdict_clamp01(part_s / r->returned_s) : 0;
	f->share = v->thread_s > 0 ? verdict_clamp01(part_s / v->thread_s) : 0;
	*out = f;
	return 0;
}

/* Of a split row's time: waiting for a CPU; asleep in I/O wait; asleep
 * waiting for a lock (not in I/O wait); asleep otherwise.
 */
static double wait_part(const struct verdict_row *r)
{
	return r->wait_s;
}

static double iowait_part(const struct verdict_row *r)
{
	return r->iowait_s;
}

static double lock_part(const struct verdict_row *r)
{
	double rest = r->blocked_s - r->iowait_s;

	return r->lock_s < rest ? r->lock_s : rest > 0 ? rest : 0;
}

static double other_part(const struct verdict_row *r)
{
	double rest = r->blocked_s - r->iowait_s - lock_part(r);

	return rest > 0 ? rest : 0;
}

/*
 * Blocked: a split row's time asleep that is neither I/O wait nor a
 * lock's (where it slept and who woke it), and its calls still in flight
 * (their time so far: where they wait is not known yet); a row without
 * the split by the old rule.
 */
static int rule_blocking(struct verdict *v, size_t *cap,
			 const struct verdict_input *in)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		double other = other_part(r);
		bool measured = part_matters(v, r, other, VERDICT_BLOCKING),
		     flight = r->flight_s >= VERDICT_BLOCKING_ROW * v->thread_s;
		struct verdict_finding *f;
		int err;

		if (!r->split) {
			err = unsplit_blocking(v, cap, r);
			if (err)
				return err;
			continue;
		}
		if (!measured && !flight)
			continue;
		err = add_part(v, cap, VERDICT_BLOCKING, r,
			       (measured ? other : 0) + r->flight_s, &f);
		if (err)
			return err;
		f->part_share =
			measured ? verdict_clamp01(other / r->returned_s) : 0;
		f->in_flight = r->in_flight;
		f->flight_s = r->flight_s;
		if (verdict_is_sleep(r->name))
			f->call = VERDICT_CALL_SLEEP;
		if (!measured)
			continue;
		err = take_whys(f, in, r, SC_WHY_SLEPT_IN, 0);
		err = err ?: take_whys(f, in, r, SC_WHY_WOKEN_BY, -1);
		if (err)
			return err;
	}
	return 0;
}

/* The other parts of a split row's time, a finding each where it
 * matters, with its evidence: the estimates of up to two kinds (lock: as
 * take_whys'; NO_WHY: no second).
 */
#define NO_WHY SC_WHY_KINDS
static const struct part_rule {
	enum verdict_kind kind;
	double (*part)(const struct verdict_row *r);
	struct {
		enum sc_why_kind kind;
		int lock;
	} why[2];
} part_rules[] = {
	/* waiting for a CPU inside the calls: what ran instead */
	{ VERDICT_CPU_WAIT,
	  wait_part,
	  { { SC_WHY_RAN_INSTEAD, -1 }, { NO_WHY, -1 } } },
	/* asleep in I/O wait: where */
	{ VERDICT_IO_WAIT,
	  iowait_part,
	  { { SC_WHY_SLEPT_IN, -1 }, { NO_WHY, -1 } } },
	/* asleep waiting for a lock: where, and who woke it (the holder) */
	{ VERDICT_LOCK_WAIT,
	  lock_part,
	  { { SC_WHY_SLEPT_IN, 1 }, { SC_WHY_WOKEN_BY, -1 } } },
};

static int rule_part(struct verdict *v, size_t *cap,
		     const struct verdict_input *in, const struct part_rule *p)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		struct verdict_finding *f;
		int err;

		if (!part_matters(v, r, p->part(r), p->kind))
			continue;
		err = add_part(v, cap, p->kind, r, p->part(r), &f);
		for (size_t k = 0; !err && k < 2; k++)
			if (p->why[k].kind != NO_WHY)
				err = take_whys(f, in, r, p->why[k].kind,
						p->why[k].lock);
		if (err)
			return err;
	}
	return 0;
}

/* Its cgroup held back by its CPU quota for VERDICT_THROTTLED_SHARE of
 * the run or more (inside the calls or not).
 */
static int rule_cpu_quota(struct verdict *v, size_t *cap)
{
	const struct sc_throttle *t = &v->throttle;
	double s = (double)t->throttled_ns / 1e9;
	struct verdict_finding *f;
	int err;

	if (!t->known || s <= 0 || s < VERDICT_THROTTLED_SHARE * v->wall_s)
		return 0;
	err = verdict_add_finding(v, cap, &f);
	if (err)
		return err;
	f->kind = VERDICT_CPU_QUOTA;
	f->part_s = s;
	f->share = v->thread_s > 0 ? verdict_clamp01(s / v->thread_s) : 0;
	return 0;
}

int verdict_wait_rules(struct verdict *v, size_t *cap,
		       const struct verdict_input *in)
{
	int err = rule_blocking(v, cap, in);

	for (size_t k = 0; !err && k < sizeof(part_rules) / sizeof(*part_rules);
	     k++)
		err = rule_part(v, cap, in, &part_rules[k]);
	return err ?: rule_cpu_quota(v, cap);
}

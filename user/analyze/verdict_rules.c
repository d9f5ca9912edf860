// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verdict's findings, and its rules on the calls made (verdict_rules.h):
 * open-close churn, short connections, small I/O, a high rate of cheap
 * calls. The rules on where the calls' time went are verdict_waits.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/verdict_calls.h"
#include "analyze/verdict_rules.h"

int verdict_add_finding(struct verdict *v, size_t *cap,
			struct verdict_finding **out)
{
	if (v->nfindings == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct verdict_finding *tmp =
			realloc(v->findings, ncap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		v->findings = tmp;
		*cap = ncap;
	}
	*out = &v->findings[v->nfindings++];
	memset(*out, 0, sizeof(**out));
	(*out)->avg_bytes = -1;
	return 0;
}

void verdict_fill_finding(struct verdict_finding *f, const struct verdict *v,
			  enum verdict_kind kind, const struct verdict_row *r)
{
	f->kind = kind;
	snprintf(f->syscall, sizeof(f->syscall), "%s", r->name);
	f->calls = r->calls;
	f->share = r->share;
	f->round_trip_ns = r->round_trip_ns;
	f->on_cpu_ns = r->on_cpu_ns;
	f->per_s = v->wall_s > 0 ? (double)r->calls / v->wall_s : 0;
	f->row_fd_type = r->fd_type;
}

/*
 * Is the row's time, its waits for a CPU aside, mostly on a CPU (all of
 * it, when not split)? The advice on a call's cost is for calls that
 * spend their time so: a call that sleeps is not priced by its
 * crossings; one kept waiting for a CPU costs its CPU time still (the
 * waits are a cpu-wait finding of their own).
 */
static bool mostly_on_cpu(const struct verdict_row *r)
{
	double t = r->time_s - r->flight_s - r->wait_s;

	return !r->split || (t > 0 && r->on_cpu_s >= VERDICT_ON_CPU_SHARE * t);
}

/* The CPU share a number of crossings costs; 0 when the CPU time is too
 * small to measure: no claim is made (small-io and high-rate then stay
 * silent, as open-close-churn does).
 */
double verdict_crossing_cpu(const struct verdict *v, double calls)
{
	if (v->cpu_s <= 0)
		return 0;
	return verdict_clamp01(calls * v->floor_ns / 1e9 / v->cpu_s);
}

/* A call made once per open, give or take: part of the open/close cycle
 * (stdio's fstat and terminal check, an fcntl...).
 */
static bool once_per_open(const struct verdict_row *r, uint64_t opens)
{
	double lo = (1 - VERDICT_PER_OPEN_SLACK) * (double)opens,
	       hi = (1 + VERDICT_PER_OPEN_SLACK) * (double)opens;

	return (double)r->calls >= lo && (double)r->calls <= hi;
}

static bool is_io(const struct verdict_row *r)
{
	return r->avg_bytes >= 0 &&
	       (verdict_is_read(r->name) || verdict_is_write(r->name));
}

/* Are the rows split by fd kind (verdict always splits them; a row with
 * a kind says so)?
 */
static bool rows_split(const struct verdict *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].fd_type)
			return true;
	return false;
}

/* The kinds open/openat/openat2/creat make. */
static bool opened_kind(uint32_t fd_type)
{
	return fd_type == SC_FD_FILE || fd_type == SC_FD_DIR ||
	       fd_type == SC_FD_CHR || fd_type == SC_FD_BLK;
}

/* A call on something opened by path: on a file, directory or device (or
 * a stat-family call, which has no fd kind) when the rows are split by fd
 * kind, on anything when they are not.
 */
static bool on_opened(const struct verdict_row *r, bool split)
{
	if (!split)
		return !r->fd_type;
	return opened_kind(r->fd_type) ||
	       (!r->fd_type && verdict_is_stat_path(r->name));
}

/* The most seen paths of kind fd_type, most first (insertion into at most
 * VERDICT_MAX_PATHS), and whether one is a random device.
 */
static void churn_paths(struct verdict_finding *f,
			const struct verdict_input *in)
{
	const struct verdict_path *top[VERDICT_MAX_PATHS];
	size_t n = 0;

	for (size_t i = 0; i < in->npaths; i++) {
		const struct verdict_path *p = &in->paths[i];
		size_t j;

		if (p->fd_type != f->fd_type || !p->seen || !p->path)
			continue;
		for (j = n; j > 0 && top[j - 1]->seen < p->seen; j--)
			if (j < VERDICT_MAX_PATHS)
				top[j] = top[j - 1];
		if (j < VERDICT_MAX_PATHS) {
			top[j] = p;
			if (n < VERDICT_MAX_PATHS)
				n++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(f->paths[i], sizeof(f->paths[i]), "%s", top[i]->path);
		if (!strcmp(top[i]->path, "/dev/urandom") ||
		    !strcmp(top[i]->path, "/dev/random"))
			f->random_device = true;
	}
	f->npaths = n;
}

/*
 * Files opened and closed again around a few small I/O calls. The finding
 * covers the whole cycle: opens, the closes of what they opened, the I/O
 * calls on it, and the calls on it made once per open. With rows split by
 * fd kind, closes of sockets, pipes and the like are not the opens' (an
 * accepted connection is closed too): only files, directories and devices
 * count.
 */
static int rule_churn(struct verdict *v, size_t *cap,
		      const struct verdict_input *in)
{
	const struct verdict_row *top = NULL;
	uint64_t opens = 0, closes = 0, io = 0, by_kind[SC_FD_COUNT] = {};
	double cycle_s = 0, cycle_cpu_s = 0, oc_s = 0, io_bytes = 0;
	bool split = rows_split(v);
	size_t nothers = 0;
	struct verdict_finding *f;
	int err;

	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		if (verdict_is_open(r->name)) {
			opens += r->calls;
			oc_s += r->on_cpu_s;
			if (!top || r->calls > top->calls)
				top = r;
		} else if (verdict_is_close(r->name) && on_opened(r, split)) {
			closes += r->calls;
			oc_s += r->on_cpu_s;
			if (r->fd_type < SC_FD_COUNT)
				by_kind[r->fd_type] += r->calls;
		} else if (is_io(r) && on_opened(r, split)) {
			io += r->calls;
			io_bytes += r->avg_bytes * (double)r->calls;
		}
	}
	if (!top || opens < VERDICT_MIN_OPENS || closes * 2 < opens ||
	    (double)io > VERDICT_IO_PER_OPEN * (double)opens || v->cpu_s <= 0 ||
	    oc_s < VERDICT_VISIBLE_SHARE * v->cpu_s)
		return 0;
	err = verdict_add_finding(v, cap, &f);
	if (err)
		return err;
	verdict_fill_finding(f, v, VERDICT_OPEN_CLOSE_CHURN, top);
	for (size_t i = 0; i < v->nrows; i++) {
		struct verdict_row *r = &v->rows[i];
		bool other = !verdict_is_open(r->name) &&
			     !verdict_is_close(r->name) && !is_io(r);
		size_t len = strlen(f->companions);

		if (!verdict_is_open(r->name) && !on_opened(r, split))
			continue;
		if (other && !once_per_open(r, opens))
			continue;
		r->in_churn = true;
		cycle_s += r->time_s;
		cycle_cpu_s += r->on_cpu_s;
		if (other && nothers++ < 3)
			snprintf(f->companions + len,
				 sizeof(f->companions) - len, "%s%s",
				 nothers > 1 ? ", " : "", r->name);
	}
	for (uint32_t k = 0; k < SC_FD_COUNT; k++)
		if (opened_kind(k) && by_kind[k] > by_kind[f->fd_type])
			f->fd_type = k;
	churn_paths(f, in);
	f->calls = opens;
	f->share = verdict_clamp01(cycle_s / v->thread_s);
	f->per_s = v->wall_s > 0 ? (double)opens / v->wall_s : 0;
	f->cpu_share = verdict_clamp01(cycle_cpu_s / v->cpu_s);
	f->closes = closes;
	f->io_per_open = (double)io / (double)opens;
	f->bytes_per_open = io_bytes / (double)opens;
	return 0;
}

/* A call on a connection, or on the epoll set it joins, made once per
 * accepted connection, that a reused connection would not make again:
 * not the calls moving the requests and answers (reads, writes,
 * sendfile).
 */
static bool per_connection(const struct verdict_row *r, uint64_t accepts)
{
	return r->avg_bytes < 0 &&
	       (r->fd_type == SC_FD_SOCKET ||
		(r->fd_type == SC_FD_EPOLL && !strcmp(r->name, "epoll_ctl"))) &&
	       once_per_open(r, accepts);
}

/*
 * Connections accepted and closed again, one per request: the accept and
 * the close (of a socket: the rows must be split by fd kind) cost at least
 * VERDICT_VISIBLE_SHARE of its CPU time. The finding's cycle, what reusing
 * connections saves, adds the calls on the connection made once per accept
 * other than its reads and writes (epoll_ctl, setsockopt...).
 */
static int rule_short_connections(struct verdict *v, size_t *cap)
{
	const struct verdict_row *top = NULL;
	uint64_t accepts = 0, closes = 0;
	double ac_s = 0, cycle_s = 0, cycle_cpu_s = 0;
	size_t nothers = 0;
	struct verdict_finding *f;
	int err;

	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		if (verdict_is_accept(r->name)) {
			accepts += r->calls;
			ac_s += r->on_cpu_s;
			if (!top || r->calls > top->calls)
				top = r;
		} else if (verdict_is_close(r->name) &&
			   r->fd_type == SC_FD_SOCKET) {
			closes += r->calls;
			ac_s += r->on_cpu_s;
		}
	}
	if (!top || accepts < VERDICT_MIN_ACCEPTS || closes * 2 < accepts ||
	    v->cpu_s <= 0 || ac_s < VERDICT_VISIBLE_SHARE * v->cpu_s)
		return 0;
	err = verdict_add_finding(v, cap, &f);
	if (err)
		return err;
	verdict_fill_finding(f, v, VERDICT_SHORT_CONNECTIONS, top);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		bool ends = verdict_is_accept(r->name) ||
			    (verdict_is_close(r->name) &&
			     r->fd_type == SC_FD_SOCKET);
		size_t len = strlen(f->companions);

		if (!ends && !per_connection(r, accepts))
			continue;
		cycle_s += r->time_s;
		cycle_cpu_s += r->on_cpu_s;
		if (!ends && nothers++ < 3)
			snprintf(f->companions + len,
				 sizeof(f->companions) - len, "%s%s",
				 nothers > 1 ? ", " : "", r->name);
	}
	f->calls = accepts;
	f->closes = closes;
	f->fd_type = SC_FD_SOCKET;
	f->share = verdict_clamp01(cycle_s / v->thread_s);
	f->per_s = v->wall_s > 0 ? (double)accepts / v->wall_s : 0;
	f->cpu_share = verdict_clamp01(cycle_cpu_s / v->cpu_s);
	return 0;
}

static int rule_small_io(struct verdict *v, size_t *cap)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		bool rd = verdict_is_read(r->name),
		     wr = verdict_is_write(r->name);
		struct verdict_finding *f;
		double bytes, need;
		uint64_t saved;
		int err;

		/* Buffering replaces the calls that moved data, not the
		 * ones that failed.
		 */
		if ((!rd && !wr) || r->avg_bytes < 0 ||
		    r->ok_calls < VERDICT_MIN_CALLS ||
		    r->avg_bytes >= VERDICT_SMALL_IO_BYTES ||
		    verdict_crossing_cpu(v, (double)r->calls) <
			    VERDICT_VISIBLE_SHARE)
			continue;
		/* A few small reads per open are the churn's doing; calls
		 * that wait more than they run are not priced by crossings.
		 */
		if (r->in_churn || !mostly_on_cpu(r))
			continue;
		bytes = r->avg_bytes * (double)r->ok_calls;
		need = ceil(bytes / VERDICT_BUFFER_BYTES);
		if (need < 1)
			need = 1;
		saved = (double)r->ok_calls > need ?
				r->ok_calls - (uint64_t)need :
				0;
		err = verdict_add_finding(v, cap, &f);
		if (err)
			return err;
		verdict_fill_finding(f, v, VERDICT_SMALL_IO, r);
		f->call = rd ? VERDICT_CALL_READ : VERDICT_CALL_WRITE;
		f->avg_bytes = r->avg_bytes;
		f->buffered_calls = (uint64_t)need;
		f->saved_calls = saved;
		f->cpu_share = verdict_crossing_cpu(v, (double)saved);
	}
	return 0;
}

static int rule_high_rate(struct verdict *v, size_t *cap)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		enum verdict_call call = verdict_cheap_call(r->name);
		struct verdict_finding *f;
		double cost;
		int err;

		if (r->in_churn || verdict_is_read(r->name) ||
		    verdict_is_write(r->name) || verdict_is_open(r->name) ||
		    verdict_is_close(r->name) || verdict_is_wait(r->name) ||
		    r->calls < VERDICT_MIN_CALLS || !mostly_on_cpu(r))
			continue;
		/* Cheap by nature, or measured within a few floors (on a
		 * CPU: a cheap call kept waiting for one is still cheap).
		 */
		if (call == VERDICT_CALL_OTHER &&
		    r->on_cpu_ns > VERDICT_CHEAP_FLOORS * v->floor_ns)
			continue;
		cost = verdict_crossing_cpu(v, (double)r->calls);
		if (cost < VERDICT_VISIBLE_SHARE)
			continue;
		err = verdict_add_finding(v, cap, &f);
		if (err)
			return err;
		verdict_fill_finding(f, v, VERDICT_HIGH_RATE, r);
		f->call = call;
		f->cpu_share = cost;
	}
	return 0;
}

int verdict_call_rules(struct verdict *v, size_t *cap,
		       const struct verdict_input *in)
{
	int err = rule_churn(v, cap, in);

	err = err ?: rule_short_connections(v, cap);
	err = err ?: rule_small_io(v, cap);
	return err ?: rule_high_rate(v, cap);
}

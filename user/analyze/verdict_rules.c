// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verdict's rules: from a verdict's rows and figures, its findings. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/verdict_rules.h"

static bool is_read(const char *name)
{
	static const char *const l[] = { "read",    "pread64", "readv",
					 "preadv",  "preadv2", "recvfrom",
					 "recvmsg", "recv",    NULL };

	return names_in_list(l, name);
}

static bool is_write(const char *name)
{
	static const char *const l[] = { "write",   "pwrite64", "writev",
					 "pwritev", "pwritev2", "sendto",
					 "sendmsg", "send",	NULL };

	return names_in_list(l, name);
}

static bool is_open(const char *name)
{
	static const char *const l[] = { "open", "openat", "openat2", "creat",
					 NULL };

	return names_in_list(l, name);
}

static bool is_wait(const char *name)
{
	static const char *const l[] = {
		"nanosleep",	 "clock_nanosleep",
		"epoll_wait",	 "epoll_pwait",
		"epoll_pwait2",	 "poll",
		"ppoll",	 "select",
		"pselect6",	 "_newselect",
		"futex",	 "futex_waitv",
		"wait4",	 "waitid",
		"waitpid",	 "pause",
		"rt_sigsuspend", "rt_sigtimedwait",
		"accept",	 "accept4",
		"msgrcv",	 "semop",
		"semtimedop",	 "io_getevents",
		"io_pgetevents", "io_uring_enter",
		"flock",	 NULL,
	};

	return names_in_list(l, name);
}

static bool is_sleep(const char *name)
{
	return !strcmp(name, "nanosleep") || !strcmp(name, "clock_nanosleep") ||
	       !strcmp(name, "pause");
}

static bool is_id_call(const char *name)
{
	static const char *const l[] = {
		"getpid",    "getppid",	    "gettid",  "getuid",  "geteuid",
		"getgid",    "getegid",	    "getpgrp", "getpgid", "getsid",
		"getresuid", "getresgid",   "uname",   "getcwd",  "getrlimit",
		"prlimit64", "getpriority", "sysinfo", NULL,
	};

	return names_in_list(l, name);
}

static bool is_clock_call(const char *name)
{
	static const char *const l[] = { "clock_gettime", "gettimeofday",
					 "time",	  "getcpu",
					 "clock_getres",  NULL };

	return names_in_list(l, name);
}

static int add_finding(struct verdict *v, size_t *cap,
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

static void fill(struct verdict_finding *f, const struct verdict *v,
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
	return r->avg_bytes >= 0 && (is_read(r->name) || is_write(r->name));
}

static bool is_close(const char *name)
{
	return !strcmp(name, "close");
}

static bool is_accept(const char *name)
{
	return !strcmp(name, "accept") || !strcmp(name, "accept4");
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

/* Calls on a path, or on an fd given as a dirfd with an empty path (the C
 * library's fstat is newfstatat(fd, "", AT_EMPTY_PATH)): their rows have
 * no fd kind, and they go with opening a file.
 */
static bool is_stat_path(const char *name)
{
	static const char *const l[] = {
		"newfstatat", "fstatat64",  "statx",	"stat",	      "lstat",
		"newstat",    "newlstat",   "stat64",	"lstat64",    "access",
		"faccessat",  "faccessat2", "readlink", "readlinkat", NULL,
	};

	return names_in_list(l, name);
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
	       (!r->fd_type && is_stat_path(r->name));
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

		if (is_open(r->name)) {
			opens += r->calls;
			oc_s += r->on_cpu_s;
			if (!top || r->calls > top->calls)
				top = r;
		} else if (is_close(r->name) && on_opened(r, split)) {
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
	err = add_finding(v, cap, &f);
	if (err)
		return err;
	fill(f, v, VERDICT_OPEN_CLOSE_CHURN, top);
	for (size_t i = 0; i < v->nrows; i++) {
		struct verdict_row *r = &v->rows[i];
		bool other = !is_open(r->name) && !is_close(r->name) &&
			     !is_io(r);
		size_t len = strlen(f->companions);

		if (!is_open(r->name) && !on_opened(r, split))
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

		if (is_accept(r->name)) {
			accepts += r->calls;
			ac_s += r->on_cpu_s;
			if (!top || r->calls > top->calls)
				top = r;
		} else if (is_close(r->name) && r->fd_type == SC_FD_SOCKET) {
			closes += r->calls;
			ac_s += r->on_cpu_s;
		}
	}
	if (!top || accepts < VERDICT_MIN_ACCEPTS || closes * 2 < accepts ||
	    v->cpu_s <= 0 || ac_s < VERDICT_VISIBLE_SHARE * v->cpu_s)
		return 0;
	err = add_finding(v, cap, &f);
	if (err)
		return err;
	fill(f, v, VERDICT_SHORT_CONNECTIONS, top);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		bool ends = is_accept(r->name) ||
			    (is_close(r->name) && r->fd_type == SC_FD_SOCKET);
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
		bool rd = is_read(r->name), wr = is_write(r->name);
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
		err = add_finding(v, cap, &f);
		if (err)
			return err;
		fill(f, v, VERDICT_SMALL_IO, r);
		f->call = rd ? VERDICT_CALL_READ : VERDICT_CALL_WRITE;
		f->avg_bytes = r->avg_bytes;
		f->buffered_calls = (uint64_t)need;
		f->saved_calls = saved;
		f->cpu_share = verdict_crossing_cpu(v, (double)saved);
	}
	return 0;
}

/* Which advice a cheap call gets. */
static enum verdict_call cheap_call(const char *name)
{
	if (is_id_call(name))
		return VERDICT_CALL_ID;
	if (is_clock_call(name))
		return VERDICT_CALL_CLOCK;
	if (!strcmp(name, "sched_yield"))
		return VERDICT_CALL_YIELD;
	return VERDICT_CALL_OTHER;
}

static int rule_high_rate(struct verdict *v, size_t *cap)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		enum verdict_call call = cheap_call(r->name);
		struct verdict_finding *f;
		double cost;
		int err;

		if (r->in_churn || is_read(r->name) || is_write(r->name) ||
		    is_open(r->name) || is_close(r->name) || is_wait(r->name) ||
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
		err = add_finding(v, cap, &f);
		if (err)
			return err;
		fill(f, v, VERDICT_HIGH_RATE, r);
		f->call = call;
		f->cpu_share = cost;
	}
	return 0;
}

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
	    !(is_wait(r->name) ||
	      r->round_trip_ns >= VERDICT_WAIT_FLOORS * v->floor_ns))
		return 0;
	err = add_finding(v, cap, &f);
	if (err)
		return err;
	fill(f, v, VERDICT_BLOCKING, r);
	f->avg_bytes = r->avg_bytes;
	f->in_flight = r->in_flight;
	f->flight_s = r->flight_s;
	if (is_sleep(r->name))
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
 * waited for a lock, lock 1, or not, lock 0, or all, -1), each with its
 * share of the part it splits (blocked or waiting), as the profile's
 * JSON has it. 0 or -ENOMEM.
 */
static int take_whys(const struct verdict_input *in,
		     const struct verdict_row *r, enum sc_why_kind kind,
		     int lock, struct verdict_why *out, size_t *n)
{
	const uint64_t whole = 1000000000ULL; /* shares in ns of it */
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
	int err = add_finding(v, cap, &f);

	if (err)
		return err;
	fill(f, v, kind, r);
	f->avg_bytes = r->avg_bytes;
	f->split = true;
	f->part_s = part_s;
	f->part_share =
		r->returned_s > 0 ? verdict_clamp01(part_s / r->returned_s) : 0;
	f->share = v->thread_s > 0 ? verdict_clamp01(part_s / v->thread_s) : 0;
	*out = f;
	return 0;
}

/* Of a split row's time asleep: in I/O wait; waiting for a lock (not in
 * I/O wait); the rest.
 */
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
		if (is_sleep(r->name))
			f->call = VERDICT_CALL_SLEEP;
		if (!measured)
			continue;
		err = take_whys(in, r, SC_WHY_SLEPT_IN, 0, f->slept_in,
				&f->nslept_in);
		err = err   ?:
			      take_whys(in, r, SC_WHY_WOKEN_BY, -1, f->woken_by,
					&f->nwoken_by);
		if (err)
			return err;
	}
	return 0;
}

/* Waiting for a CPU inside the calls: what ran instead. */
static int rule_cpu_wait(struct verdict *v, size_t *cap,
			 const struct verdict_input *in)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		struct verdict_finding *f;
		int err;

		if (!part_matters(v, r, r->wait_s, VERDICT_CPU_WAIT))
			continue;
		err = add_part(v, cap, VERDICT_CPU_WAIT, r, r->wait_s, &f);
		err = err   ?:
			      take_whys(in, r, SC_WHY_RAN_INSTEAD, -1,
					f->ran_instead, &f->nran_instead);
		if (err)
			return err;
	}
	return 0;
}

/* Asleep in I/O wait: where. */
static int rule_io_wait(struct verdict *v, size_t *cap,
			const struct verdict_input *in)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		struct verdict_finding *f;
		int err;

		if (!part_matters(v, r, r->iowait_s, VERDICT_IO_WAIT))
			continue;
		err = add_part(v, cap, VERDICT_IO_WAIT, r, r->iowait_s, &f);
		err = err   ?:
			      take_whys(in, r, SC_WHY_SLEPT_IN, -1, f->slept_in,
					&f->nslept_in);
		if (err)
			return err;
	}
	return 0;
}

/* Asleep waiting for a lock: where, and who woke it (the holder). */
static int rule_lock_wait(struct verdict *v, size_t *cap,
			  const struct verdict_input *in)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];
		struct verdict_finding *f;
		int err;

		if (!part_matters(v, r, lock_part(r), VERDICT_LOCK_WAIT))
			continue;
		err = add_part(v, cap, VERDICT_LOCK_WAIT, r, lock_part(r), &f);
		err = err   ?:
			      take_whys(in, r, SC_WHY_SLEPT_IN, 1, f->slept_in,
					&f->nslept_in);
		err = err   ?:
			      take_whys(in, r, SC_WHY_WOKEN_BY, -1, f->woken_by,
					&f->nwoken_by);
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
	err = add_finding(v, cap, &f);
	if (err)
		return err;
	f->kind = VERDICT_CPU_QUOTA;
	f->part_s = s;
	f->share = v->thread_s > 0 ? verdict_clamp01(s / v->thread_s) : 0;
	return 0;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct verdict_finding *x = a, *y = b;
	int c;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = strcmp(x->syscall, y->syscall);
	if (c)
		return c;
	return x->row_fd_type < y->row_fd_type ?
		       -1 :
		       x->row_fd_type > y->row_fd_type;
}

/* Every rule's findings, largest share first. */
int verdict_apply_rules(struct verdict *v, const struct verdict_input *in)
{
	size_t cap = 0;
	int err;

	err = rule_churn(v, &cap, in);
	err = err ?: rule_short_connections(v, &cap);
	err = err ?: rule_small_io(v, &cap);
	err = err ?: rule_high_rate(v, &cap);
	err = err ?: rule_blocking(v, &cap, in);
	err = err ?: rule_cpu_wait(v, &cap, in);
	err = err ?: rule_io_wait(v, &cap, in);
	err = err ?: rule_lock_wait(v, &cap, in);
	err = err ?: rule_cpu_quota(v, &cap);
	if (err)
		return err;
	if (v->nfindings > 1)
		qsort(v->findings, v->nfindings, sizeof(*v->findings),
		      cmp_finding);
	return 0;
}

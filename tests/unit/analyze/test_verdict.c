// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the verdict's rules (user/analyze/verdict.c) on synthetic
 * processes: each one is what a known workload looks like to scprof.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze/verdict.h"
#include "model/names.h"
#include "render/verdict_report.h"

#define FLOOR 100.0   /* ns: the calibrated floor */
#define REPORTED 60.0 /* ns: scprof's latency for the floor call */
#define PROBE 50.0    /* ns: probe_overhead_ns */

struct proc {
	struct sc_row rows[16];
	size_t n;
	struct verdict_input in;
	struct sc_whys why;    /* the split's estimates (split_on) */
	struct sc_throttle th; /* its cgroup's throttling (throttled) */
};

static void proc_init(struct proc *p, double wall, double utime, double stime)
{
	memset(p, 0, sizeof(*p));
	p->in.rows = p->rows;
	p->in.wall_s = wall;
	p->in.thread_s = wall;
	p->in.utime_s = utime;
	p->in.stime_s = stime;
	p->in.floor_ns = FLOOR;
	p->in.vdso_ns = 20;
	p->in.probe_ns = PROBE;
	p->in.probe_reported_ns = REPORTED;
}

/* A syscall made calls times, each reported at avg_ns, moving bytes. */
static void add(struct proc *p, const char *name, uint64_t calls, double avg_ns,
		uint64_t bytes, uint64_t errors)
{
	struct sc_row *r = &p->rows[p->n++];
	int nr = names_syscall_nr(SC_ABI_NATIVE, name);

	assert_true(nr >= 0);
	memset(r, 0, sizeof(*r));
	r->nr = (uint32_t)nr;
	r->abi = SC_ABI_NATIVE;
	r->st.calls = calls;
	r->st.errors = errors;
	r->st.total_ns = (uint64_t)(avg_ns * (double)calls);
	r->st.bytes = bytes;
	r->st.hist[sc_hist_bucket((uint64_t)avg_ns)] = calls;
	p->in.nrows = p->n;
}

/* The same, on one kind of fd (enum sc_fd_type), as verdict collects. */
static void add_fd(struct proc *p, const char *name, uint32_t fd_type,
		   uint64_t calls, double avg_ns, uint64_t bytes)
{
	add(p, name, calls, avg_ns, bytes, 0);
	p->rows[p->n - 1].fd_type = fd_type;
}

/* The split measured for the row added last: shares of its time waiting
 * for a CPU, asleep, and of that in I/O wait.
 */
static void split_on(struct proc *p, double wait, double blocked, double io)
{
	struct sc_row *r = &p->rows[p->n - 1];

	p->in.split = true;
	p->in.why = &p->why;
	p->in.pid = 100;
	r->st.wait_ns = (uint64_t)(wait * (double)r->st.total_ns);
	r->st.blocked_ns = (uint64_t)(blocked * (double)r->st.total_ns);
	r->st.iowait_ns = (uint64_t)(io * (double)r->st.total_ns);
}

/* An estimate for the row added last: kind, name (a function or a comm),
 * the task's ids, ns its samples stand for.
 */
static void why(struct proc *p, enum sc_why_kind kind, const char *name,
		uint32_t pid, uint32_t tid, enum sc_waker waker, bool lock,
		uint64_t ns)
{
	const struct sc_row *r = &p->rows[p->n - 1];
	struct sc_why e = { .pid = 100,
			    .abi = r->abi,
			    .nr = r->nr,
			    .fd_type = r->fd_type,
			    .kind = (uint8_t)kind,
			    .waker = (uint8_t)waker,
			    .lock = lock,
			    .opid = pid,
			    .otid = tid,
			    .ns = ns,
			    .samples = 1 };

	strncpy(e.name, name, sizeof(e.name) - 1);
	assert_int_equal(whys_add(&p->why, &e), 0);
}

/* Its cgroup throttled for throttled_s, in 18 of 20 periods. */
static void throttled(struct proc *p, bool v1, double throttled_s)
{
	memset(&p->th, 0, sizeof(p->th));
	p->th.known = true;
	p->th.v1 = v1;
	strcpy(p->th.cgroup, "/box");
	p->th.quota_us = 10000;
	p->th.period_us = 100000;
	p->th.throttled_ns = (uint64_t)(throttled_s * 1e9);
	p->th.nr_throttled = 18;
	p->th.nr_periods = 20;
	p->in.throttle = &p->th;
}

static struct verdict *judge(struct proc *p)
{
	struct verdict *v = NULL;

	assert_int_equal(verdict_judge(&p->in, &v), 0);
	assert_non_null(v);
	return v;
}

static const struct verdict_finding *
find(const struct verdict *v, enum verdict_kind k, const char *syscall)
{
	for (size_t i = 0; i < v->nfindings; i++) {
		if (v->findings[i].kind == k &&
		    (!syscall || !strcmp(v->findings[i].syscall, syscall)))
			return &v->findings[i];
	}
	return NULL;
}

/* A finding's advice, as both reports word it. */
static const char *advice(const struct verdict *v,
			  const struct verdict_finding *f)
{
	static char buf[VERDICT_ADVICE_LEN];

	verdict_advice(v, f, buf, sizeof(buf));
	return buf;
}

static bool has_kind(const struct verdict *v, enum verdict_kind k)
{
	return find(v, k, NULL) != NULL;
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(verdict_kind_name(VERDICT_CPU_WAIT), "cpu-wait");
	assert_string_equal(verdict_kind_name(VERDICT_IO_WAIT), "io-wait");
	assert_string_equal(verdict_kind_name(VERDICT_LOCK_WAIT), "lock-wait");
	assert_string_equal(verdict_kind_name(VERDICT_CPU_QUOTA), "cpu-quota");
	assert_string_equal(verdict_kind_name(VERDICT_SMALL_IO), "small-io");
	assert_string_equal(verdict_kind_name(VERDICT_OPEN_CLOSE_CHURN),
			    "open-close-churn");
	assert_string_equal(verdict_kind_name(VERDICT_HIGH_RATE), "high-rate");
	assert_string_equal(verdict_kind_name(VERDICT_BLOCKING), "blocking");
	assert_string_equal(verdict_kind_name(VERDICT_SHORT_CONNECTIONS),
			    "short-connections");
}

/* No syscalls, all user time: not syscall-bound, nothing found. */
static void test_compute(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 2, 0);
	add(&p, "write", 2, 5000, 20, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	assert_true(v->syscall_share < 0.01);
	assert_int_equal(v->nfindings, 0);
	verdict_free(v);
}

/*
 * One-byte reads for a whole second of one thread: 4 million calls whose
 * reported latency is 160 ns, i.e. a 200 ns round trip (floor 100 plus
 * 100 above what the floor call reports).
 */
static void test_one_byte_reader(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "read", 4000000, REPORTED + 100, 4000000, 0);
	v = judge(&p);
	assert_true(fabs(v->rows[0].round_trip_ns - 200) < 1e-6);
	/* 4e6 x 200 ns = 0.8 s of the thread's 1 s less 4e6 x 50 ns */
	assert_true(fabs(v->syscall_s - 0.8) < 1e-6);
	assert_true(fabs(v->probe_s - 0.2) < 1e-6);
	assert_true(fabs(v->thread_s - 0.8) < 1e-6);
	assert_true(fabs(v->cpu_s - 0.8) < 1e-6);
	assert_true(v->syscall_bound);
	assert_true(v->syscall_share > 0.99);
	/* 4e6 crossings x 100 ns = 0.4 s of 0.8 s of CPU */
	assert_true(fabs(v->crossing_share - 0.5) < 1e-6);
	f = find(v, VERDICT_SMALL_IO, "read");
	assert_non_null(f);
	assert_int_equal(f->calls, 4000000);
	assert_true(fabs(f->avg_bytes - 1) < 1e-9);
	/* 4e6 bytes fit in 62 reads of 64 KiB */
	assert_int_equal(f->saved_calls, 4000000 - 62);
	assert_non_null(strstr(advice(v, f), "64 KiB"));
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	verdict_free(v);
}

/* 64 KiB reads: as syscall-heavy, but not small I/O. */
static void test_64k_reader(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "read", 200000, 4000, 200000ULL * 65536, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	assert_int_equal(v->nfindings, 0);
	/* 200000 x 100 ns = 0.02 s of 0.99 s of CPU */
	assert_true(v->crossing_share < 0.03);
	verdict_free(v);
}

/* Failed reads move no bytes and do not make the rest look small. */
static void test_small_io_counts_successes(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "read", 300000, 500, 100000ULL * 8192, 200000);
	v = judge(&p);
	assert_true(fabs(v->rows[0].avg_bytes - 8192) < 1e-9);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
}

/*
 * The small-io rule counts the calls that moved data (docs/verdict.md: "at least
 * 1000 successful calls"): a non-blocking reader whose reads mostly fail
 * with EAGAIN, with 400 reads of one byte, is not small I/O.
 */
static void test_small_io_needs_successful_calls(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.001, 0.004);
	add(&p, "read", 5000, 300, 400, 4600);
	v = judge(&p);
	/* the crossings are visible: only the successes are too few */
	assert_true(5000 * FLOOR / 1e9 / v->cpu_s > VERDICT_VISIBLE_SHARE);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
}

/* Buffering saves successful calls, not failed ones. */
static void test_small_io_saves_successful_calls(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.02, 0.18);
	/* 100000 one-byte reads and 200000 that failed: 3e5 crossings of
	 * 100 ns are 16% of the CPU time
	 */
	add(&p, "read", 300000, 300, 100000, 200000);
	v = judge(&p);
	f = find(v, VERDICT_SMALL_IO, "read");
	assert_non_null(f);
	/* 100000 bytes fit in 2 reads of 64 KiB */
	assert_int_equal(f->saved_calls, 100000 - 2);
	assert_non_null(strstr(advice(v, f), "would need 2 calls instead of "
					     "100000: 99998 fewer"));
	verdict_free(v);
}

/* A few small writes a second are not worth a finding. */
static void test_small_io_needs_visible_cost(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 10, 5, 5);
	add(&p, "write", 5000, 2000, 5000 * 10, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
}

/* fopen/fread/fclose per request: one finding for the whole cycle. */
static void test_fopen_loop(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "openat", 50000, 2500, 0, 0);
	add(&p, "newfstatat", 50000, 200, 0, 0);
	add(&p, "ioctl", 50001, 150, 0, 50001);
	add(&p, "read", 50000, 8000, 50000ULL * 4096, 0);
	add(&p, "close", 50000, 400, 0, 0);
	add(&p, "brk", 3, 1000, 0, 0);
	v = judge(&p);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_int_equal(f->calls, 50000);
	assert_non_null(strstr(advice(v, f), "newfstatat"));
	assert_non_null(strstr(advice(v, f), "ioctl"));
	/* the cycle's companions are not reported on their own */
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	/* the finding covers every call of the cycle, not brk */
	assert_true(f->share >
		    0.99 * (v->syscall_s - v->rows[v->nrows - 1].time_s) /
			    v->thread_s);
	assert_true(v->syscall_bound);
	verdict_free(v);
}

/* Reading a small file whole on each open: still churn, not small-io. */
static void test_fopen_small_file(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.35);
	add(&p, "openat", 100000, 500, 0, 0);
	add(&p, "read", 400000, 250, 400000ULL * 16, 0);
	add(&p, "close", 100000, 200, 0, 0);
	v = judge(&p);
	assert_non_null(find(v, VERDICT_OPEN_CLOSE_CHURN, "openat"));
	/* the reads alone would be small-io: 4e5 x 100 ns is 11% of the CPU */
	assert_true(0.04 / v->cpu_s > 0.1);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
}

/* A file kept open and read many times is not churn. */
static void test_no_churn_when_reused(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "openat", 1000, 2500, 0, 0);
	add(&p, "close", 1000, 400, 0, 0);
	add(&p, "read", 200000, 3000, 200000ULL * 65536, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_OPEN_CLOSE_CHURN));
	verdict_free(v);
}

/*
 * A web server on short connections, opening one small file per request
 * (nginx without keep-alive or an open-file cache): as many socket closes
 * as file closes. The churn counts the file closes only and its cycle has
 * no socket call; the connections get their own finding.
 */
static void nginx_like(struct proc *p, uint64_t n)
{
	proc_init(p, 1, 0.2, 0.8);
	add_fd(p, "accept4", SC_FD_SOCKET, n, 2000, 0);
	add_fd(p, "recvfrom", SC_FD_SOCKET, n, 1500, n * 80);
	add(p, "openat", n, 2500, 0, 0);
	add_fd(p, "fstat", SC_FD_FILE, n, 300, 0);
	/* glibc's fstat: no fd kind, part of the cycle all the same */
	add(p, "newfstatat", n, 300, 0, 0);
	/* once per request too, but no file's: not part of the cycle */
	add(p, "getpid", n, 100, 0, 0);
	add_fd(p, "writev", SC_FD_SOCKET, n, 6000, n * 400);
	add_fd(p, "sendfile", SC_FD_SOCKET, n, 5000, n * 12);
	add_fd(p, "close", SC_FD_FILE, n, 500, 0);
	add_fd(p, "close", SC_FD_SOCKET, n, 9000, 0);
	add_fd(p, "epoll_wait", SC_FD_EPOLL, 2 * n + 7, 900, 0);
	add_fd(p, "epoll_ctl", SC_FD_EPOLL, n, 600, 0);
}

static void test_socket_closes_are_not_the_opens(void **state)
{
	const struct verdict_finding *f;
	double cycle = 0, conn = 0;
	struct proc p;
	struct verdict *v;

	(void)state;
	nginx_like(&p, 50000);
	v = judge(&p);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	/* the file closes only, not the sockets' too */
	assert_int_equal(f->closes, 50000);
	assert_int_equal(f->fd_type, SC_FD_FILE);
	/* no socket call in the cycle: fstat is, recvfrom and writev not */
	assert_non_null(strstr(advice(v, f), "fstat"));
	assert_non_null(strstr(advice(v, f), "newfstatat"));
	assert_null(strstr(advice(v, f), "getpid"));
	assert_null(strstr(advice(v, f), "recvfrom"));
	assert_null(strstr(advice(v, f), "writev"));
	assert_non_null(strstr(advice(v, f), "of files"));
	assert_non_null(strstr(advice(v, f), "Open the file once"));
	assert_null(strstr(advice(v, f), "getrandom"));
	/* the cycle: openat, fstat and close (file), no socket call */
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		assert_true(r->in_churn == (r->fd_type == SC_FD_FILE ||
					    !strcmp(r->name, "openat") ||
					    !strcmp(r->name, "newfstatat")));
		if (r->in_churn)
			cycle += r->time_s;
	}
	assert_true(fabs(f->cpu_share - cycle / v->cpu_s) < 1e-9);
	f = find(v, VERDICT_SHORT_CONNECTIONS, "accept4");
	assert_non_null(f);
	assert_int_equal(f->calls, 50000);
	assert_int_equal(f->closes, 50000);
	assert_int_equal(f->row_fd_type, SC_FD_SOCKET);
	assert_non_null(strstr(advice(v, f), "keep-alive"));
	/* the cycle: what reuse saves, not the requests' reads and writes */
	assert_non_null(strstr(advice(v, f), "epoll_ctl"));
	assert_null(strstr(advice(v, f), "recvfrom"));
	assert_null(strstr(advice(v, f), "writev"));
	assert_null(strstr(advice(v, f), "sendfile"));
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		if (!strcmp(r->name, "accept4") ||
		    !strcmp(r->name, "epoll_ctl") ||
		    (!strcmp(r->name, "close") && r->fd_type == SC_FD_SOCKET))
			conn += r->time_s;
	}
	assert_true(fabs(f->cpu_share - conn / v->cpu_s) < 1e-9);
	assert_null(strstr(advice(v, f), "Open the file"));
	/* the socket's closes belong to neither small-io nor high-rate */
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	verdict_free(v);
}

/* Socket closes alone never make churn, whatever the opens. */
static void test_socket_closes_alone_are_not_churn(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.2, 0.8);
	add_fd(&p, "accept4", SC_FD_SOCKET, 50000, 2000, 0);
	add(&p, "openat", 50000, 2500, 0, 0);
	add_fd(&p, "close", SC_FD_SOCKET, 50000, 9000, 0);
	add_fd(&p, "close", SC_FD_FILE, 20, 500, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_OPEN_CLOSE_CHURN));
	assert_true(has_kind(v, VERDICT_SHORT_CONNECTIONS));
	verdict_free(v);
	/* unsplit rows (no kinds): every close counts, as before */
	proc_init(&p, 1, 0.2, 0.8);
	add(&p, "accept4", 50000, 2000, 0, 0);
	add(&p, "openat", 50000, 2500, 0, 0);
	add(&p, "close", 50020, 9000, 0, 0);
	v = judge(&p);
	assert_true(has_kind(v, VERDICT_OPEN_CLOSE_CHURN));
	/* and socket closes cannot be told: no short-connections */
	assert_false(has_kind(v, VERDICT_SHORT_CONNECTIONS));
	verdict_free(v);
}

/* Files opened and closed, no connection: no short-connections. */
static void test_short_connections_not_on_files(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "openat", 50000, 2500, 0, 0);
	add_fd(&p, "read", SC_FD_FILE, 50000, 800, 50000ULL * 100);
	add_fd(&p, "close", SC_FD_FILE, 50000, 9000, 0);
	v = judge(&p);
	assert_true(has_kind(v, VERDICT_OPEN_CLOSE_CHURN));
	assert_false(has_kind(v, VERDICT_SHORT_CONNECTIONS));
	verdict_free(v);
	/* connections accepted and kept: many requests, few closes */
	proc_init(&p, 1, 0.05, 0.95);
	add_fd(&p, "accept4", SC_FD_SOCKET, 50000, 2000, 0);
	add_fd(&p, "close", SC_FD_SOCKET, 20000, 9000, 0);
	add_fd(&p, "close", SC_FD_FILE, 50000, 9000, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_SHORT_CONNECTIONS));
	verdict_free(v);
	/* too few accepts to matter */
	proc_init(&p, 1, 0.0005, 0.0005);
	add_fd(&p, "accept4", SC_FD_SOCKET, 99, 2000, 0);
	add_fd(&p, "close", SC_FD_SOCKET, 99, 9000, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_SHORT_CONNECTIONS));
	verdict_free(v);
}

/* open, read 16 bytes, close of a device, with the paths /proc showed. */
static struct verdict *device_churn(struct proc *p, uint32_t fd_type,
				    const struct verdict_path *paths,
				    size_t npaths)
{
	proc_init(p, 1, 0.05, 0.95);
	add(p, "openat", 50000, 2500, 0, 0);
	add_fd(p, "read", fd_type, 50000, 800, 50000ULL * 16);
	add_fd(p, "close", fd_type, 50000, 400, 0);
	p->in.paths = paths;
	p->in.npaths = npaths;
	return judge(p);
}

/* getrandom(2) is advice for random devices, nothing else. */
static void test_getrandom_only_for_random_devices(void **state)
{
	const struct verdict_path urandom[] = {
		{ "/etc/hosts", 40, SC_FD_FILE },
		{ "/dev/null", 3, SC_FD_CHR },
		{ "/dev/urandom", 30, SC_FD_CHR },
	};
	const struct verdict_path null[] = { { "/dev/null", 30, SC_FD_CHR } };
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	/* a character device, path unknown: said as a condition */
	v = device_churn(&p, SC_FD_CHR, NULL, 0);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "if it is read for random bytes"));
	verdict_free(v);
	/* /dev/urandom seen: said outright, with the paths of its kind */
	v = device_churn(&p, SC_FD_CHR, urandom, 3);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_true(f->random_device);
	assert_int_equal(f->npaths, 2);
	assert_string_equal(f->paths[0], "/dev/urandom");
	assert_string_equal(f->paths[1], "/dev/null");
	assert_non_null(strstr(advice(v, f), "for random bytes, getrandom(2)"));
	assert_non_null(strstr(advice(v, f), "/dev/urandom, /dev/null"));
	assert_null(strstr(advice(v, f), "/etc/hosts"));
	verdict_free(v);
	/* another device: no getrandom */
	v = device_churn(&p, SC_FD_CHR, null, 1);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_false(f->random_device);
	assert_null(strstr(advice(v, f), "getrandom"));
	verdict_free(v);
	/* files and directories: no getrandom either */
	v = device_churn(&p, SC_FD_FILE, urandom, 3);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_null(strstr(advice(v, f), "getrandom"));
	assert_non_null(strstr(advice(v, f), "/etc/hosts"));
	verdict_free(v);
	v = device_churn(&p, SC_FD_DIR, NULL, 0);
	f = find(v, VERDICT_OPEN_CLOSE_CHURN, "openat");
	assert_non_null(f);
	assert_null(strstr(advice(v, f), "getrandom"));
	assert_non_null(strstr(advice(v, f), "directory"));
	verdict_free(v);
}

/* Both reports name rows by kind and keep the new fields. */
static void test_report_fd_kinds(void **state)
{
	const struct verdict_path evil[] = {
		{ "/tmp/\x1b]evil", 9, SC_FD_FILE },
	};
	struct verdict_meta meta = { .pid = 42, .comm = "nginx", .threads = 1 };
	char *buf = NULL;
	size_t len = 0;
	struct proc p;
	struct verdict *v;
	FILE *f;

	(void)state;
	nginx_like(&p, 50000);
	/* a raw escape byte in a path reaches neither report */
	p.in.paths = evil;
	p.in.npaths = 1;
	v = judge(&p);
	f = open_memstream(&buf, &len);
	assert_int_equal(verdict_write_table(f, v, &meta), 0);
	fclose(f);
	assert_non_null(strstr(buf, "short-connections accept4 (socket)"));
	assert_non_null(strstr(buf, "close (socket)"));
	assert_non_null(strstr(buf, "writev (socket)"));
	assert_null(strchr(buf, '\x1b'));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(verdict_write_json(f, v, &meta), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"kind\": \"short-connections\""));
	assert_non_null(strstr(buf, "\"closed_fd_type\": \"socket\""));
	assert_non_null(strstr(buf, "\"closed_fd_type\": \"file\""));
	assert_non_null(strstr(buf, "\"fd_type\": \"socket\""));
	assert_non_null(strstr(buf, "\"fd_type\": \"file\""));
	assert_non_null(strstr(buf, "\"paths\": ["));
	assert_null(strchr(buf, '\x1b'));
	free(buf);
	verdict_free(v);
}

/* getppid and clock_gettime as raw syscalls, as fast as they go. */
static void test_high_rate(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "getppid", 3000000, REPORTED + 10, 0, 0);
	add(&p, "clock_gettime", 3000000, REPORTED + 30, 0, 0);
	v = judge(&p);
	f = find(v, VERDICT_HIGH_RATE, "getppid");
	assert_non_null(f);
	assert_true(fabs(f->per_s - 3000000) < 1);
	assert_non_null(strstr(advice(v, f), "keep it"));
	f = find(v, VERDICT_HIGH_RATE, "clock_gettime");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "vDSO"));
	assert_true(v->syscall_bound);
	verdict_free(v);
}

/* An expensive call made often is not "high-rate": the work dominates. */
static void test_high_rate_needs_cheap_calls(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "fsync", 100000, 8000, 0, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	verdict_free(v);
}

/* Sleeping 2 ms at a time: waits, not overhead. */
static void test_sleeper(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.001, 0.01);
	add(&p, "clock_nanosleep", 950, 2100000, 0, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	assert_true(v->syscall_share > 0.95);
	assert_true(v->blocked_share > 0.9);
	f = find(v, VERDICT_BLOCKING, "clock_nanosleep");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "sleeps on purpose"));
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	verdict_free(v);
}

/* Blocked in reads of a socket or pipe: slow reads, not small ones. */
static void test_blocking_on_reads(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.02, 0.03);
	add(&p, "read", 1000, 900000, 1000 * 100, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	assert_non_null(find(v, VERDICT_BLOCKING, "read"));
	verdict_free(v);
}

/* Two threads asleep in read and wait4 for the whole run, no call
 * returned: their time in flight is the threads' time, all blocked.
 */
static void test_blocked_in_flight(void **state)
{
	struct proc p;
	struct verdict *v;
	struct sc_row *r;

	(void)state;
	proc_init(&p, 2, 0, 0);
	p.in.thread_s = 4; /* two threads over 2 s */
	add(&p, "read", 0, 0, 0, 0);
	add(&p, "wait4", 0, 0, 0, 0);
	for (size_t i = 0; i < p.n; i++) {
		r = &p.rows[i];
		r->st.total_ns = 2000000000ULL;
		r->flight_ns = 2000000000LL;
		r->flight_calls = 1;
	}
	v = judge(&p);
	assert_int_equal(v->calls, 0);
	assert_true(v->syscall_share > 0.99);
	assert_true(v->blocked_share > 0.99);
	assert_false(v->syscall_bound);
	assert_non_null(find(v, VERDICT_BLOCKING, "read"));
	assert_non_null(find(v, VERDICT_BLOCKING, "wait4"));
	assert_int_equal(v->rows[0].in_flight, 1);
	verdict_free(v);
}

/* Busy in the kernel, with run-queue waits: still bound, not blocked. */
static void test_runqueue_is_not_blocking(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	/* half the second on a CPU, half waiting for one */
	proc_init(&p, 1, 0.025, 0.475);
	p.in.runq_s = 0.5;
	add(&p, "read", 1000000, 800, 1000000ULL * 1024, 0);
	v = judge(&p);
	assert_true(v->syscall_bound);
	assert_true(v->blocked_share < 0.05);
	assert_false(has_kind(v, VERDICT_BLOCKING));
	verdict_free(v);
}

/*
 * Woken every 2 ms, then kept waiting for a CPU on a busy machine: the
 * waits happen inside clock_nanosleep, yet it is not syscall-bound.
 */
static void test_sleeper_on_a_busy_machine(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.002, 0.02);
	p.in.runq_s = 1.2;
	add(&p, "clock_nanosleep", 800, 2500000, 0, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	assert_true(v->blocked_share > 0.2);
	assert_non_null(find(v, VERDICT_BLOCKING, "clock_nanosleep"));
	verdict_free(v);
}

/* All its time in syscalls, but hardly running: not syscall-bound. */
static void test_idle_is_not_bound(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 10, 0.001, 0.05);
	add(&p, "epoll_wait", 100, 99000000, 0, 0);
	add(&p, "read", 200, 2000, 200 * 10, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	verdict_free(v);
}

/* Table and JSON of a verdict, for the tests that read both. */
static void render_both(const struct verdict *v, char **table, char **json)
{
	struct verdict_meta meta = { .pid = 42, .comm = "idle", .threads = 1 };
	size_t len = 0;
	FILE *f;

	*table = *json = NULL;
	f = open_memstream(table, &len);
	assert_int_equal(verdict_write_table(f, v, &meta), 0);
	fclose(f);
	f = open_memstream(json, &len);
	assert_int_equal(verdict_write_json(f, v, &meta), 0);
	fclose(f);
}

/* No calls and no CPU time: idle, and no share of anything is claimed. */
static void test_idle_process(void **state)
{
	char ans[256], *table, *json;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0, 0);
	v = judge(&p);
	assert_true(v->idle);
	assert_false(v->cpu_measured);
	assert_false(v->syscall_bound);
	assert_int_equal(v->nfindings, 0);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "NO: it was idle"));
	render_both(v, &table, &json);
	assert_non_null(strstr(table, "Is it the syscalls? NO: it was idle"));
	assert_non_null(strstr(table, "crossing cost   none: no calls"));
	assert_null(strstr(table, "of its CPU time"));
	assert_non_null(strstr(json, "\"idle\": true"));
	assert_non_null(strstr(json, "\"cpu_syscall_share\": null"));
	assert_non_null(strstr(json, "\"crossing_share\": null"));
	free(table);
	free(json);
	verdict_free(v);

	/* calls but no CPU time is not idle; CPU time but no calls neither */
	proc_init(&p, 2, 0, 0);
	add(&p, "getppid", 10, 200, 0, 0);
	v = judge(&p);
	assert_false(v->idle);
	verdict_free(v);
	proc_init(&p, 2, 0.5, 0);
	v = judge(&p);
	assert_false(v->idle);
	assert_true(v->cpu_measured);
	verdict_free(v);
}

/*
 * CPU time that rounds to 0 (/proc counts ticks) under many cheap calls:
 * small-io and high-rate make no "share of its CPU time" claim, just as
 * open-close-churn does not, and the reports state none.
 */
static void test_cpu_rounds_to_zero(void **state)
{
	char *table, *json;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0, 0);
	add(&p, "read", 5000, REPORTED + 20, 5000, 0);
	add(&p, "getppid", 5000, REPORTED, 0, 0);
	add(&p, "openat", 200, REPORTED + 500, 0, 0);
	add(&p, "close", 200, REPORTED + 50, 0, 0);
	v = judge(&p);
	assert_false(v->idle);
	assert_false(v->cpu_measured);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	assert_false(has_kind(v, VERDICT_HIGH_RATE));
	assert_false(has_kind(v, VERDICT_OPEN_CLOSE_CHURN));
	assert_true(v->crossing_share == 0 && v->cpu_syscall_share == 0);
	render_both(v, &table, &json);
	assert_null(strstr(table, "of its CPU time"));
	assert_non_null(strstr(table, "too small to measure"));
	assert_non_null(strstr(json, "\"idle\": false"));
	assert_non_null(strstr(json, "\"crossing_share\": null"));
	free(table);
	free(json);
	verdict_free(v);

	/* the same calls with CPU time to weigh them against do fire */
	proc_init(&p, 1, 0.0002, 0.0008);
	add(&p, "read", 5000, REPORTED + 20, 5000, 0);
	add(&p, "getppid", 5000, REPORTED, 0, 0);
	v = judge(&p);
	assert_true(v->cpu_measured);
	assert_true(has_kind(v, VERDICT_SMALL_IO));
	assert_true(has_kind(v, VERDICT_HIGH_RATE));
	verdict_free(v);
}

/* Without a probe measurement nothing is taken off. */
static void test_uncorrected(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	p.in.probe_ns = 0;
	p.in.probe_reported_ns = 0;
	add(&p, "read", 1000000, 300, 1000000, 0);
	v = judge(&p);
	assert_false(v->corrected);
	assert_true(fabs(v->rows[0].round_trip_ns - 400) < 1e-6);
	assert_true(fabs(v->cpu_s - 1.0) < 1e-9);
	verdict_free(v);
}

/* A call reported faster than the floor call is still a whole crossing. */
static void test_round_trip_at_least_floor(void **state)
{
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.5, 0.5);
	add(&p, "getpid", 10, 10, 0, 0);
	v = judge(&p);
	assert_true(fabs(v->rows[0].round_trip_ns - FLOOR) < 1e-9);
	verdict_free(v);
}

/* Rows are named as the table names them; other ABIs say which. */
static void test_row_names(void **state)
{
	struct proc p;
	struct verdict *v;
	int nr = names_syscall_nr(SC_ABI_COMPAT, "read");
	bool seen[3] = {};

	(void)state;
	assert_true(nr >= 0);
	proc_init(&p, 1, 0.5, 0.5);
	add(&p, "getppid", 10, 100, 0, 0);
	add(&p, "getppid", 20, 100, 0, 0);
	p.rows[1].abi = SC_ABI_COMPAT;
	p.rows[1].nr = (uint32_t)nr;
	p.rows[1].st.bytes = 40;
	add(&p, "getppid", 30, 100, 0, 0);
	p.rows[2].nr = 4000;
	v = judge(&p);
	assert_int_equal(v->nrows, 3);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct verdict_row *r = &v->rows[i];

		if (!strcmp(r->name, "getppid"))
			seen[0] = r->calls == 10 && r->avg_bytes < 0;
		else if (!strcmp(r->name, "read/32"))
			seen[1] = r->calls == 20 &&
				  fabs(r->avg_bytes - 2) < 1e-9;
		else if (!strcmp(r->name, "syscall_0xfa0"))
			seen[2] = r->calls == 30;
		else
			fail_msg("unexpected row '%s'", r->name);
	}
	assert_true(seen[0] && seen[1] && seen[2]);
	verdict_free(v);
}

static void test_bad_input(void **state)
{
	struct proc p;
	struct verdict *v = NULL;

	(void)state;
	proc_init(&p, 1, 0.5, 0.5);
	p.in.floor_ns = 0;
	assert_int_equal(verdict_judge(&p.in, &v), -EINVAL);
	proc_init(&p, NAN, 0.5, 0.5);
	assert_int_equal(verdict_judge(&p.in, &v), -EINVAL);
	proc_init(&p, 1, -1, 0.5);
	assert_int_equal(verdict_judge(&p.in, &v), -EINVAL);
	assert_null(v);
	/* nothing at all: a valid, empty verdict */
	proc_init(&p, 0, 0, 0);
	v = judge(&p);
	assert_false(v->syscall_bound);
	assert_int_equal(v->calls, 0);
	verdict_free(v);
}

static void test_report(void **state)
{
	struct verdict_meta meta = { .pid = 42,
				     .comm = "evil\x1b[2J",
				     .threads = 1 };
	char *buf = NULL;
	size_t len = 0;
	struct proc p;
	struct verdict *v;
	FILE *f;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "read", 4000000, REPORTED + 100, 4000000, 0);
	v = judge(&p);
	f = open_memstream(&buf, &len);
	assert_int_equal(verdict_write_table(f, v, &meta), 0);
	fclose(f);
	assert_non_null(strstr(buf, "Is it the syscalls? YES"));
	assert_non_null(strstr(buf, "small-io"));
	/* the name is escaped: no raw escape byte reaches the terminal */
	assert_null(strchr(buf, '\x1b'));
	assert_non_null(strstr(buf, "evil\\x1b[2J"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(verdict_write_json(f, v, &meta), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"syscall_share\": "));
	assert_non_null(strstr(buf, "\"syscall_bound\": true"));
	assert_non_null(strstr(buf, "\"kind\": \"small-io\""));
	assert_non_null(strstr(buf, "\"avg_bytes\": 1.0"));
	assert_non_null(strstr(buf, "\"calibration\": null"));
	assert_null(strchr(buf, '\x1b'));
	free(buf);
	verdict_free(v);
}

/* The one-line answer says whether the crossings or the work dominate. */
static void test_answer(void **state)
{
	char ans[256];
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "read", 4000000, REPORTED + 100, 4000000, 0);
	v = judge(&p);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "YES"));
	assert_non_null(strstr(ans, "fewer calls would help"));
	verdict_free(v);

	proc_init(&p, 1, 0.05, 0.95);
	add(&p, "read", 200000, 4000, 200000ULL * 65536, 0);
	v = judge(&p);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "YES"));
	assert_non_null(strstr(ans, "the work the calls do"));
	verdict_free(v);

	proc_init(&p, 2, 2, 0);
	v = judge(&p);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "NO: only 0%"));
	verdict_free(v);

	proc_init(&p, 2, 0.002, 0.02);
	add(&p, "clock_nanosleep", 950, 2100000, 0, 0);
	v = judge(&p);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "NO: it barely runs"));
	assert_non_null(strstr(ans, "waiting"));
	verdict_free(v);
}

/* Render a verdict (meta: pid 100) into a table and JSON. */
static void render_split(const struct verdict *v, char **table, char **json)
{
	struct verdict_meta meta = { .pid = 100, .comm = "w", .threads = 1 };
	size_t len = 0;
	FILE *f;

	*table = *json = NULL;
	f = open_memstream(table, &len);
	assert_int_equal(verdict_write_table(f, v, &meta), 0);
	fclose(f);
	f = open_memstream(json, &len);
	assert_int_equal(verdict_write_json(f, v, &meta), 0);
	fclose(f);
}

/*
 * Issue 41's case: 8 MiB reads of /dev/zero on a CPU shared with a spinning
 * neighbour, half of each call waiting for the CPU. The CPU time is all in
 * syscalls and none in the crossings, as before; now the waits are a
 * cpu-wait finding naming the spinner and the throttling, the read is
 * priced on a CPU, and no finding about blocking or a lock comes.
 */
static void test_split_cpu_wait(void **state)
{
	const struct verdict_finding *f;
	char ans[VERDICT_ANSWER_LEN], *table, *json;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 0.99);
	add_fd(&p, "read", SC_FD_CHR, 10000, 200000, 10000ULL << 23);
	split_on(&p, 0.5, 0, 0);
	why(&p, SC_WHY_RAN_INSTEAD, "spin\x1b[0m", 200, 0, 0, false, 900);
	why(&p, SC_WHY_RAN_INSTEAD, "kworker/1:0", 0, 0, 0, false, 50);
	why(&p, SC_WHY_RAN_INSTEAD, "helper", 100, 0, 0, false, 50);
	throttled(&p, true, 0.5);
	v = judge(&p);
	/* a 200 us round trip, half of it waiting: 100 us on a CPU */
	assert_true(fabs(v->rows[0].on_cpu_ns -
			 (200000 + FLOOR - REPORTED - 100000)) < 1);
	assert_true(fabs(v->wait_share - 0.5) < 1e-6);
	assert_true(v->syscall_bound);
	f = find(v, VERDICT_CPU_WAIT, "read");
	assert_non_null(f);
	assert_true(fabs(f->part_s - 1.0) < 1e-6);
	assert_true(fabs(f->part_share - 0.5) < 1e-6);
	assert_int_equal(f->nran_instead, 3);
	assert_true(fabs(f->ran_instead[0].share - 0.9) < 1e-6);
	assert_non_null(strstr(advice(v, f), "wait for a CPU: contention or "
					     "throttling, not syscall cost"));
	assert_non_null(strstr(advice(v, f), "spin\\x1b[0m [200] 90%"));
	assert_non_null(strstr(advice(v, f), "helper [100, its own thread]"));
	assert_non_null(strstr(advice(v, f), "(0.50 s throttled by the CFS "
					     "quota of /box)"));
	assert_non_null(strstr(advice(v, f), "On a CPU a call takes 100.0 us"));
	assert_false(has_kind(v, VERDICT_BLOCKING));
	assert_false(has_kind(v, VERDICT_LOCK_WAIT));
	assert_false(has_kind(v, VERDICT_IO_WAIT));
	/* 0.5 s of 2: a quarter of the run, a finding of its own */
	assert_non_null(find(v, VERDICT_CPU_QUOTA, ""));
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "YES: "));
	assert_non_null(strstr(ans, "50% of their time waiting for a CPU: "
				    "contention"));
	render_split(v, &table, &json);
	assert_null(strchr(table, '\x1b'));
	assert_null(strchr(json, '\x1b'));
	assert_non_null(strstr(table, "cpu-wait          read (chr)"));
	assert_non_null(strstr(table, "50% waiting\n"));
	assert_non_null(strstr(json, "\"kind\": \"cpu-wait\""));
	assert_non_null(strstr(json, "\"ran_instead\": ["));
	assert_non_null(strstr(json, "\"cpu_throttling\": {"));
	assert_non_null(strstr(json, "\"round_trip_on_cpu_ns\": 100040.0"));
	assert_non_null(strstr(json, "\"cpu_wait_s\": 1.000000"));
	assert_non_null(strstr(json, "\"split\": true"));
	free(table);
	free(json);
	verdict_free(v);
	whys_free(&p.why);
}

/* The same reads on a CPU of their own: no cpu-wait, the old answer. */
static void test_split_on_cpu(void **state)
{
	char ans[VERDICT_ANSWER_LEN];
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 1.99);
	add_fd(&p, "read", SC_FD_CHR, 10000, 200000, 10000ULL << 23);
	split_on(&p, 0.02, 0, 0);
	v = judge(&p);
	assert_int_equal(v->nfindings, 0);
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "the work the calls do."));
	assert_null(strstr(ans, "waiting for a CPU"));
	verdict_free(v);
	whys_free(&p.why);
}

/* O_DIRECT reads of a disk: I/O wait, where they slept. */
static void test_split_io_wait(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 0.1);
	add_fd(&p, "pread64", SC_FD_FILE, 200, 10000000, 200ULL << 22);
	split_on(&p, 0.03, 0.92, 0.9);
	why(&p, SC_WHY_SLEPT_IN, "__iomap_dio_rw", 0, 0, 0, false, 100);
	why(&p, SC_WHY_WOKEN_BY, "", 0, 0, SC_WAKER_INTERRUPT, false, 100);
	v = judge(&p);
	f = find(v, VERDICT_IO_WAIT, "pread64");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "Blocked in I/O wait on the "
					     "disk"));
	assert_non_null(strstr(advice(v, f), "in __iomap_dio_rw 100%"));
	assert_false(has_kind(v, VERDICT_CPU_WAIT));
	assert_false(has_kind(v, VERDICT_LOCK_WAIT));
	/* 2% of its time asleep outside I/O wait is no blocking */
	assert_false(has_kind(v, VERDICT_BLOCKING));
	verdict_free(v);
	whys_free(&p.why);
}

/* A mutex another thread holds: lock-wait names the holder. */
static void test_split_lock_wait(void **state)
{
	const struct verdict_finding *f;
	char *table, *json;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 0.02);
	p.in.thread_s = 4;
	add(&p, "futex", 400, 4000000, 0, 0);
	split_on(&p, 0.01, 0.98, 0);
	why(&p, SC_WHY_SLEPT_IN, "futex_do_wait", 0, 0, 0, true, 100);
	why(&p, SC_WHY_WOKEN_BY, "holder", 100, 102, SC_WAKER_TASK, false, 100);
	v = judge(&p);
	f = find(v, VERDICT_LOCK_WAIT, "futex");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "Blocked on a lock held by "
					     "thread 102 (holder):"));
	assert_non_null(strstr(advice(v, f), "in futex_do_wait 100%"));
	assert_false(has_kind(v, VERDICT_BLOCKING));
	assert_false(has_kind(v, VERDICT_CPU_WAIT));
	assert_false(has_kind(v, VERDICT_IO_WAIT));
	render_split(v, &table, &json);
	assert_non_null(strstr(json, "\"function\": \"futex_do_wait\""));
	assert_non_null(strstr(json, "\"lock\": true"));
	assert_non_null(strstr(json, "\"tid\": 102"));
	free(table);
	free(json);
	verdict_free(v);
	whys_free(&p.why);
	/* held by another process's thread: said so */
	proc_init(&p, 2, 0.01, 0.02);
	add(&p, "futex", 400, 4000000, 0, 0);
	split_on(&p, 0.01, 0.98, 0);
	why(&p, SC_WHY_SLEPT_IN, "futex_do_wait", 0, 0, 0, true, 100);
	why(&p, SC_WHY_WOKEN_BY, "other", 300, 301, SC_WAKER_TASK, false, 100);
	v = judge(&p);
	f = find(v, VERDICT_LOCK_WAIT, "futex");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "held by thread 301 (other) of "
					     "process 300"));
	verdict_free(v);
	whys_free(&p.why);
}

/* A pipe read woken by its writer: blocking, where and who. */
static void test_split_blocking(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 0.02);
	add_fd(&p, "read", SC_FD_PIPE, 200, 10000000, 200);
	split_on(&p, 0.002, 0.99, 0);
	why(&p, SC_WHY_SLEPT_IN, "anon_pipe_read", 0, 0, 0, false, 100);
	why(&p, SC_WHY_WOKEN_BY, "writer", 100, 101, SC_WAKER_TASK, false, 100);
	v = judge(&p);
	f = find(v, VERDICT_BLOCKING, "read");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "in anon_pipe_read 100%"));
	assert_non_null(strstr(advice(v, f), "woken by writer [100/101] "
					     "100%"));
	assert_false(has_kind(v, VERDICT_LOCK_WAIT));
	assert_false(has_kind(v, VERDICT_CPU_WAIT));
	assert_false(has_kind(v, VERDICT_IO_WAIT));
	/* 1-byte reads, but asleep: no advice to buffer them */
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
	whys_free(&p.why);
}

/*
 * The advice on cost only for calls whose time is on a CPU: 1-byte reads
 * that mostly wait are no small-io; a cheap call kept waiting for a CPU
 * is still high-rate, priced on a CPU.
 */
static void test_split_cost_advice_on_cpu(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	/* 400000 reads of 1040 ns, 800 of it asleep: the crossings are 8%
	 * of the CPU time, but most of the calls' time sleeps
	 */
	proc_init(&p, 1, 0.05, 0.45);
	add(&p, "read", 400000, 1000, 400000, 0);
	split_on(&p, 0, 0.8, 0);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_SMALL_IO));
	verdict_free(v);
	/* the same 800 ns waiting for a CPU: their CPU cost is there still */
	proc_init(&p, 1, 0.05, 0.45);
	add(&p, "read", 400000, 1000, 400000, 0);
	split_on(&p, 0.8, 0, 0);
	v = judge(&p);
	assert_non_null(find(v, VERDICT_SMALL_IO, "read"));
	assert_non_null(find(v, VERDICT_CPU_WAIT, "read"));
	verdict_free(v);
	proc_init(&p, 1, 0.05, 0.45);
	add(&p, "read", 400000, 1000, 400000, 0);
	split_on(&p, 0.1, 0.1, 0);
	v = judge(&p);
	assert_non_null(find(v, VERDICT_SMALL_IO, "read"));
	verdict_free(v);
	/* getppid: 2000 ns reported, 1850 of it waiting: 190 ns on a CPU,
	 * within 4 floors: high-rate, priced so
	 */
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "getppid", 2000000, 2000, 0, 0);
	split_on(&p, 0.925, 0, 0);
	v = judge(&p);
	f = find(v, VERDICT_HIGH_RATE, "getppid");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "at 190 ns each"));
	assert_non_null(find(v, VERDICT_CPU_WAIT, "getppid"));
	verdict_free(v);
	proc_init(&p, 1, 0.1, 0.9);
	add(&p, "sysinfo", 2000000, 390, 0, 0);
	split_on(&p, 0.3, 0, 0);
	v = judge(&p);
	f = find(v, VERDICT_HIGH_RATE, "sysinfo");
	assert_non_null(f);
	/* 390 + 100 - 60 = 430 ns round trip, 117 of it waiting */
	assert_non_null(strstr(advice(v, f), "at 313 ns each"));
	verdict_free(v);
}

/* A split row with a call in flight for the whole run: a blocking
 * finding about the call in flight, with no evidence made up.
 */
static void test_split_in_flight(void **state)
{
	const struct verdict_finding *f;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0.01, 0.02);
	p.in.thread_s = 4;
	add(&p, "futex", 10, 1000, 0, 0);
	split_on(&p, 0, 0, 0);
	p.rows[0].st.total_ns += 2000000000ULL;
	p.rows[0].flight_ns = 2000000000LL;
	p.rows[0].flight_calls = 1;
	v = judge(&p);
	f = find(v, VERDICT_BLOCKING, "futex");
	assert_non_null(f);
	assert_int_equal(f->in_flight, 1);
	assert_int_equal(f->nslept_in + f->nwoken_by, 0);
	assert_non_null(strstr(advice(v, f), "in 1 futex call still in "
					     "flight at the end (2.00 s so "
					     "far"));
	/* asleep: the call in flight, with the split */
	assert_true(v->blocked_share > 0.49);
	verdict_free(v);
}

/* A cgroup throttled by its quota for most of the run, the calls on a
 * CPU: cpu-quota, from cgroup v2's cpu.max; none for a little throttling.
 */
static void test_cpu_quota(void **state)
{
	const struct verdict_finding *f;
	char ans[VERDICT_ANSWER_LEN], *table, *json;
	struct proc p;
	struct verdict *v;

	(void)state;
	proc_init(&p, 2, 0, 0.2);
	add_fd(&p, "read", SC_FD_CHR, 200, 1000000, 200ULL << 23);
	split_on(&p, 0.02, 0, 0);
	throttled(&p, false, 1.8);
	v = judge(&p);
	f = find(v, VERDICT_CPU_QUOTA, "");
	assert_non_null(f);
	assert_non_null(strstr(advice(v, f), "throttled for 1.80 s of the "
					     "2.0 s profiled (in 18 of 20 "
					     "periods) by cpu.max of /box: "
					     "10.00 ms of CPU every 100.00 "
					     "ms"));
	assert_false(has_kind(v, VERDICT_CPU_WAIT));
	assert_false(has_kind(v, VERDICT_BLOCKING));
	verdict_answer(v, ans, sizeof(ans));
	assert_non_null(strstr(ans, "CPU quota held it back for 1.80 s"));
	render_split(v, &table, &json);
	assert_non_null(strstr(table, "cpu-quota         (its cgroup)"));
	assert_non_null(strstr(table, "cpu quota       throttled 1.80 s"));
	assert_non_null(strstr(json, "\"kind\": \"cpu-quota\",\n"
				     "      \"syscall\": null"));
	assert_non_null(strstr(json, "\"throttled_ns\": 1800000000"));
	free(table);
	free(json);
	verdict_free(v);
	throttled(&p, false, 0.1);
	v = judge(&p);
	assert_false(has_kind(v, VERDICT_CPU_QUOTA));
	verdict_free(v);
	whys_free(&p.why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_compute),
		cmocka_unit_test(test_one_byte_reader),
		cmocka_unit_test(test_64k_reader),
		cmocka_unit_test(test_small_io_counts_successes),
		cmocka_unit_test(test_small_io_needs_successful_calls),
		cmocka_unit_test(test_small_io_saves_successful_calls),
		cmocka_unit_test(test_small_io_needs_visible_cost),
		cmocka_unit_test(test_fopen_loop),
		cmocka_unit_test(test_fopen_small_file),
		cmocka_unit_test(test_no_churn_when_reused),
		cmocka_unit_test(test_socket_closes_are_not_the_opens),
		cmocka_unit_test(test_socket_closes_alone_are_not_churn),
		cmocka_unit_test(test_short_connections_not_on_files),
		cmocka_unit_test(test_getrandom_only_for_random_devices),
		cmocka_unit_test(test_report_fd_kinds),
		cmocka_unit_test(test_high_rate),
		cmocka_unit_test(test_high_rate_needs_cheap_calls),
		cmocka_unit_test(test_sleeper),
		cmocka_unit_test(test_blocking_on_reads),
		cmocka_unit_test(test_blocked_in_flight),
		cmocka_unit_test(test_runqueue_is_not_blocking),
		cmocka_unit_test(test_sleeper_on_a_busy_machine),
		cmocka_unit_test(test_idle_is_not_bound),
		cmocka_unit_test(test_idle_process),
		cmocka_unit_test(test_cpu_rounds_to_zero),
		cmocka_unit_test(test_uncorrected),
		cmocka_unit_test(test_round_trip_at_least_floor),
		cmocka_unit_test(test_row_names),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_split_cpu_wait),
		cmocka_unit_test(test_split_on_cpu),
		cmocka_unit_test(test_split_io_wait),
		cmocka_unit_test(test_split_lock_wait),
		cmocka_unit_test(test_split_blocking),
		cmocka_unit_test(test_split_cost_advice_on_cpu),
		cmocka_unit_test(test_split_in_flight),
		cmocka_unit_test(test_cpu_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

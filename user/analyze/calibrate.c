// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The calibration loops, their timing and statistics, and the probe effect. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "analyze/calibrate.h"
#include "collect/collector.h"
#include "collect/sysinfo.h"
#include "util/log.h"

#define KIB 1024U
/* The page-cached file the read and copy loops go through: larger than
 * the caches near a core, so copies come from memory as in a real read.
 */
#define FILE_SIZE (16U * KIB * KIB)
#define BUF_SIZE (64U * KIB)
#define POOL_SIZE (4U * KIB)

/* Runs per loop and the length of one run. */
#define QUICK_RUNS 7
#define QUICK_RUN_NS 80000000ULL
#define FULL_RUNS 15
#define FULL_RUN_NS 200000000ULL
/* Scaling stops once a trial run lasts this fraction of a run. */
#define SCALE_DIVISOR 8

/* Keep the compiler from removing or merging what a loop does. */
#define barrier() __asm__ __volatile__("" ::: "memory")

struct cal_env {
	int fd; /* FILE_SIZE bytes, in the page cache */
	int devnull;
	char *buf;   /* BUF_SIZE destination, hot in the cache */
	size_t size; /* read and mmap loops: bytes per call, the loop's */
	uint64_t off;
	char *map; /* mmap loops: the file, mapped for one pass */
	size_t map_off;
	unsigned char *pool; /* getrandom-16B-buffered's buffer */
	size_t pool_pos;
	int err; /* -errno of the first failure inside a loop */
};

typedef void (*cal_fn)(struct cal_env *e, uint64_t n);

static void fail(struct cal_env *e, int err)
{
	if (!e->err)
		e->err = err ? err : -EIO;
}

static void loop_empty(struct cal_env *e, uint64_t n)
{
	(void)e;
	for (uint64_t i = 0; i < n; i++)
		barrier();
}

static void loop_getppid(struct cal_env *e, uint64_t n)
{
	(void)e;
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void loop_getpid(struct cal_env *e, uint64_t n)
{
	(void)e;
	for (uint64_t i = 0; i < n; i++) {
		getpid();
		barrier();
	}
}

static void loop_vdso(struct cal_env *e, uint64_t n)
{
	struct timespec ts;

	for (uint64_t i = 0; i < n; i++) {
		if (clock_gettime(CLOCK_MONOTONIC, &ts)) {
			fail(e, -errno);
			return;
		}
		barrier();
	}
}

/* pread e->size bytes at an offset that walks through the file. */
static void loop_pread(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (pread(e->fd, e->buf, e->size, (off_t)e->off) !=
		    (ssize_t)e->size) {
			fail(e, -errno);
			return;
		}
		e->off += e->size;
		if (e->off + e->size > FILE_SIZE)
			e->off = 0;
	}
}

static void loop_write_devnull(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (write(e->devnull, e->buf, 1) != 1) {
			fail(e, -errno);
			return;
		}
	}
}

/*
 * Copy e->size bytes from the file mapped in memory. The file is mapped
 * for one pass and unmapped after it, so each pass takes the page faults
 * (and the mmap and munmap) that a program reading the file once would.
 */
static void loop_mmap(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (!e->map || e->map_off + e->size > FILE_SIZE) {
			if (e->map)
				munmap(e->map, FILE_SIZE);
			e->map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_PRIVATE,
				      e->fd, 0);
			if (e->map == MAP_FAILED) {
				e->map = NULL;
				fail(e, -errno);
				return;
			}
			e->map_off = 0;
		}
		memcpy(e->buf, e->map + e->map_off, e->size);
		barrier();
		e->map_off += e->size;
	}
}

/* Raw syscalls: a libc with a vDSO getrandom would not cross at all. */
static void loop_getrandom(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (syscall(SYS_getrandom, e->buf, 16, 0) != 16) {
			fail(e, -errno);
			return;
		}
	}
}

static void loop_getrandom_buffered(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (e->pool_pos + 16 > POOL_SIZE) {
			if (syscall(SYS_getrandom, e->pool, POOL_SIZE, 0) !=
			    POOL_SIZE) {
				fail(e, -errno);
				return;
			}
			e->pool_pos = 0;
		}
		memcpy(e->buf, e->pool + e->pool_pos, 16);
		barrier();
		e->pool_pos += 16;
	}
}

static void loop_fopen(struct cal_env *e, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		FILE *f = fopen("/dev/urandom", "rbe");

		if (!f) {
			fail(e, -errno);
			return;
		}
		if (fread(e->buf, 1, 16, f) != 16)
			fail(e, -EIO);
		fclose(f);
		if (e->err)
			return;
	}
}

/* What each loop of the catalogue (model/calibration.c) runs. */
static const cal_fn loop_fns[CAL_NLOOPS] = {
	[CAL_LOOP_GETPPID] = loop_getppid,
	[CAL_LOOP_LIBC_GETPID] = loop_getpid,
	[CAL_LOOP_VDSO] = loop_vdso,
	[CAL_LOOP_READ_1B] = loop_pread,
	[CAL_LOOP_READ_64KIB] = loop_pread,
	[CAL_LOOP_WRITE_DEVNULL] = loop_write_devnull,
	[CAL_LOOP_READ_COPY_4KIB] = loop_pread,
	[CAL_LOOP_MMAP_COPY_4KIB] = loop_mmap,
	[CAL_LOOP_READ_COPY_8KIB] = loop_pread,
	[CAL_LOOP_MMAP_COPY_8KIB] = loop_mmap,
	[CAL_LOOP_READ_COPY_16KIB] = loop_pread,
	[CAL_LOOP_MMAP_COPY_16KIB] = loop_mmap,
	[CAL_LOOP_GETRANDOM] = loop_getrandom,
	[CAL_LOOP_GETRANDOM_BUFFERED] = loop_getrandom_buffered,
	[CAL_LOOP_FOPEN] = loop_fopen,
};

/* ---- statistics ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void cal_stats_compute(double *v, size_t n, struct cal_stats *out)
{
	qsort(v, n, sizeof(*v), cmp_double);
	out->min = v[0];
	out->max = v[n - 1];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t cal_scale_iters(uint64_t iters, uint64_t elapsed_ns,
			 uint64_t target_ns)
{
	double want;

	if (!iters)
		iters = 1;
	if (!elapsed_ns)
		return iters > UINT64_MAX / 1000 ? UINT64_MAX : iters * 1000;
	want = (double)iters * (double)target_ns / (double)elapsed_ns;
	if (want > (double)iters * 1000)
		want = (double)iters * 1000;
	if (want > 1e15)
		want = 1e15;
	return want < 1 ? 1 : (uint64_t)want;
}

double cal_per_call(uint64_t elapsed_ns, uint64_t iters, double overhead_ns)
{
	double v =
		(double)elapsed_ns / (double)(iters ? iters : 1) - overhead_ns;

	return v > 0 ? v : 0;
}

/* ---- running loops --------------------------------------------------- */

/*
 * Loops are timed by the thread's CPU clock: on a busy machine, time spent
 * preempted by other programs would otherwise count as the loop's. What a
 * call costs the caller, in user and kernel mode, is all CPU time.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t timed(cal_fn fn, struct cal_env *e, uint64_t n)
{
	uint64_t t0 = now_ns();

	fn(e, n);
	return now_ns() - t0;
}

/* Grow the iteration count until a trial run is long enough to time,
 * then size it for one run of run_ns.
 */
static uint64_t scale(cal_fn fn, struct cal_env *e, uint64_t run_ns)
{
	uint64_t n = 16, t;

	fn(e, n); /* warm up: caches, page tables, the branch predictor */
	for (;;) {
		t = timed(fn, e, n);
		if (e->err || t >= run_ns / SCALE_DIVISOR)
			break;
		n = cal_scale_iters(n, t, run_ns / (SCALE_DIVISOR / 2));
	}
	return cal_scale_iters(n, t, run_ns);
}

struct plan {
	uint32_t runs;
	uint64_t run_ns;
};

static int report_loop_error(const char *name, int err)
{
	pr_err("calibration loop %s failed: %s", name, strerror(-err));
	return err;
}

static int measure(size_t i, struct cal_env *e, const struct plan *p,
		   double overhead_ns, struct cal_loop_result *out,
		   double *samples)
{
	const struct cal_loop *d = cal_loop(i);
	cal_fn fn = loop_fns[i];
	struct cal_stats st;
	uint64_t n;

	e->size = d->bytes;
	e->off = 0;
	n = scale(fn, e, p->run_ns);
	if (e->err)
		return report_loop_error(d->name, e->err);
	for (uint32_t r = 0; r < p->runs; r++) {
		uint64_t t = timed(fn, e, n);

		if (e->err)
			return report_loop_error(d->name, e->err);
		samples[r] = cal_per_call(t, n, overhead_ns);
	}
	cal_stats_compute(samples, p->runs, &st);
	out->name = d->name;
	out->ns_per_call = st.median;
	out->min_ns = st.min;
	out->max_ns = st.max;
	out->calls = n * p->runs;
	out->runs = p->runs;
	out->bytes_per_call = d->bytes;
	return 0;
}

/* The empty loop's cost per iteration, which every figure has taken off. */
static double measure_overhead(struct cal_env *e, const struct plan *p,
			       double *samples)
{
	struct cal_stats st;
	uint64_t n = scale(loop_empty, e, p->run_ns / 4);

	for (uint32_t r = 0; r < p->runs; r++)
		samples[r] = cal_per_call(timed(loop_empty, e, n), n, 0);
	cal_stats_compute(samples, p->runs, &st);
	return st.median;
}

/* What scprof reported for this process's getppid calls: the mean. */
static double reported_floor(struct collector *c)
{
	struct sc_model *m = NULL;
	double v = 0;
	pid_t self = getpid();

	if (collector__snapshot(c, &m))
		return 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *p = &m->procs[i];

		if (p->pid != (uint32_t)self)
			continue;
		for (size_t j = 0; j < p->nrows; j++) {
			const struct sc_row *r = &p->rows[j];

			if (r->abi == SC_ABI_NATIVE && r->nr == SYS_getppid &&
			    r->st.calls)
				v = (double)r->st.total_ns /
				    (double)r->st.calls;
		}
	}
	model_free(m);
	return v;
}

/*
 * The probe effect: the floor loop bare and with scprof's programs
 * attached and targeting this process, in pairs whose order alternates so
 * that a drift in the machine's speed falls on both sides alike.
 */
static int measure_probe(struct cal_env *e, const struct plan *p,
			 double overhead_ns, struct cal_probe *out,
			 double *samples)
{
	struct collector_opts co = { .mode = SC_FILTER_TGID };
	struct collector *c = NULL;
	double *bare = samples, *probed = samples + p->runs,
	       *diff = samples + 2 * p->runs;
	struct cal_stats st;
	uint64_t n;
	int err;

	err = collector__open(&c, &co);
	if (err)
		return err;
	err = collector__add_target(c, getpid());
	if (err)
		goto out;
	n = scale(loop_getppid, e, p->run_ns);
	for (uint32_t i = 0; i < p->runs; i++) {
		for (int k = 0; k < 2; k++) {
			bool with = (k == 0) == (i % 2 == 1);
			uint64_t t;

			if (with) {
				err = collector__attach(c);
				if (err)
					goto out;
			}
			t = timed(loop_getppid, e, n);
			if (with)
				collector__detach(c);
			(with ? probed : bare)[i] =
				cal_per_call(t, n, overhead_ns);
		}
		diff[i] = probed[i] - bare[i];
	}
	out->reported_ns = reported_floor(c);
	cal_stats_compute(diff, p->runs, &st);
	out->overhead_ns = st.median > 0 ? st.median : 0;
	cal_stats_compute(bare, p->runs, &st);
	out->bare_ns = st.median;
	cal_stats_compute(probed, p->runs, &st);
	out->probed_ns = st.median;
	out->pairs = p->runs;
	out->measured = true;
out:
	collector__destroy(c);
	return err;
}

/* A FILE_SIZE file with no name, written and read once into the cache;
 * env_close closes it.
 */
static int make_file(struct cal_env *e)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int err;

	if (!dir || !*dir)
		dir = "/tmp";
	e->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (e->fd < 0) {
		snprintf(path, sizeof(path), "%s/scprof-calibrate.XXXXXX", dir);
		e->fd = mkostemp(path, O_CLOEXEC);
		if (e->fd < 0) {
			err = -errno;
			pr_err("cannot create a file in %s for the read loops: "
			       "%s",
			       dir, strerror(-err));
			return err;
		}
		unlink(path);
	}
	for (size_t i = 0; i < BUF_SIZE; i++)
		e->buf[i] = (char)(i * 131 + 7);
	for (size_t off = 0; off < FILE_SIZE; off += BUF_SIZE) {
		ssize_t n = pwrite(e->fd, e->buf, BUF_SIZE, (off_t)off);

		if (n != BUF_SIZE) {
			err = n < 0 ? -errno : -EIO;
			pr_err("cannot write the read loops' file in %s: %s",
			       dir, strerror(-err));
			return err;
		}
	}
	for (size_t off = 0; off < FILE_SIZE; off += BUF_SIZE) {
		if (pread(e->fd, e->buf, BUF_SIZE, (off_t)off) != BUF_SIZE)
			break;
	}
	return 0;
}

/* e starts with both descriptors at -1; env_close undoes what was done. */
static int env_open(struct cal_env *e)
{
	int err;

	e->buf = malloc(BUF_SIZE);
	e->pool = malloc(POOL_SIZE);
	if (!e->buf || !e->pool) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	e->pool_pos = POOL_SIZE;
	e->devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (e->devnull < 0) {
		err = -errno;
		pr_err("cannot open /dev/null: %s", strerror(-err));
		return err;
	}
	return make_file(e);
}

static void env_close(struct cal_env *e)
{
	if (e->map)
		munmap(e->map, FILE_SIZE);
	if (e->fd >= 0)
		close(e->fd);
	if (e->devnull >= 0)
		close(e->devnull);
	free(e->buf);
	free(e->pool);
}

/* Pin to the CPU we run on; *old keeps the mask to restore. -1 if not. */
static int pin(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -1;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		pr_info("cannot pin to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return cpu;
}

static void progress(const struct calibrate_opts *o, size_t i, size_t n,
		     const char *what)
{
	if (o->progress)
		o->progress(o->progress_ctx, i, n, what);
}

int calibrate__run(const struct calibrate_opts *o, struct calibration **out)
{
	struct plan p = {
		.runs = o->quick ? QUICK_RUNS : FULL_RUNS,
		.run_ns = o->quick ? QUICK_RUN_NS : FULL_RUN_NS,
	};
	struct cal_env e = { .fd = -1, .devnull = -1 };
	struct calibration *c;
	double *samples = NULL;
	cpu_set_t old;
	size_t steps = 0, step = 0;
	int err;

	*out = NULL;
	c = calibration__new();
	if (!c) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	c->quick = o->quick;
	c->created = (long long)time(NULL);
	c->loops = calloc(CAL_NLOOPS, sizeof(*c->loops));
	samples = calloc(3 * (size_t)p.runs, sizeof(*samples));
	err = c->loops && samples ? machine_read(&c->machine) : -ENOMEM;
	if (err) {
		pr_err("out of memory");
		goto cleanup;
	}
	err = env_open(&e);
	if (err)
		goto cleanup;
	for (size_t i = 0; i < CAL_NLOOPS; i++)
		steps += !o->want || o->want[i];
	steps += o->probe;

	c->pinned_cpu = pin(&old);
	c->loop_overhead_ns = measure_overhead(&e, &p, samples);
	for (size_t i = 0; !err && i < CAL_NLOOPS; i++) {
		if (o->want && !o->want[i])
			continue;
		progress(o, step++, steps, cal_loop(i)->name);
		err = measure(i, &e, &p, c->loop_overhead_ns,
			      &c->loops[c->nloops], samples);
		if (!err)
			c->nloops++;
	}
	if (!err && o->probe) {
		progress(o, step++, steps, "probe effect");
		if (measure_probe(&e, &p, c->loop_overhead_ns, &c->probe,
				  samples))
			pr_warn("the probe effect was not measured: "
				"probe_overhead_ns is unknown");
	}
	if (c->pinned_cpu >= 0)
		sched_setaffinity(0, sizeof(old), &old);
cleanup:
	env_close(&e);
	free(samples);
	if (err) {
		calibration__free(c);
		return err;
	}
	*out = c;
	return 0;
}

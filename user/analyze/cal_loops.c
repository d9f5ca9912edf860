// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The calibration loops, their environment and their timing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "analyze/cal_loops.h"
#include "analyze/cal_stats.h"
#include "model/calibration.h"
#include "util/log.h"

#define KIB 1024U
/* The page-cached file the read and copy loops go through: larger than
 * the caches near a core, so copies come from memory as in a real read.
 */
#define FILE_SIZE (16U * KIB * KIB)
#define BUF_SIZE (64U * KIB)
#define POOL_SIZE (4U * KIB)

/* Scaling stops once a trial run lasts this fraction of a run. */
#define SCALE_DIVISOR 8

/* Keep the compiler from removing or merging what a loop does. */
#define barrier() __asm__ __volatile__("" ::: "memory")

static void fail(struct cal_env *e, int err)
{
	if (!e->err)
		e->err = err ? err : -EIO;
}

void cal_loop_empty(struct cal_env *e, uint64_t n)
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

cal_fn cal_loop_fn(size_t i)
{
	return loop_fns[i];
}

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

uint64_t cal_timed(cal_fn fn, struct cal_env *e, uint64_t n)
{
	uint64_t t0 = now_ns();

	fn(e, n);
	return now_ns() - t0;
}

uint64_t cal_scale(cal_fn fn, struct cal_env *e, uint64_t run_ns)
{
	uint64_t n = 16, t;

	fn(e, n); /* warm up: caches, page tables, the branch predictor */
	for (;;) {
		t = cal_timed(fn, e, n);
		if (e->err || t >= run_ns / SCALE_DIVISOR)
			break;
		n = cal_scale_iters(n, t, run_ns / (SCALE_DIVISOR / 2));
	}
	return cal_scale_iters(n, t, run_ns);
}

/* A FILE_SIZE file with no name, written and read once into the cache;
 * cal_env_close closes it.
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

int cal_env_open(struct cal_env *e)
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

void cal_env_close(struct cal_env *e)
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

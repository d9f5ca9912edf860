// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark's victim: tight syscall loops pinned to one CPU, timed from
 * the inside.
 *
 *   sysloop CPU SECONDS KIND[,KIND...]     KIND: getppid, read, write
 *
 * Pins itself to CPU, opens /dev/zero and /dev/null, prints "ready" and
 * waits for one line on stdin (the driver attaches its tracer meanwhile).
 * Then, for each KIND in turn, it warms up for a tenth of SECONDS and makes
 * that syscall for SECONDS, reading the clock every BATCH calls, and prints
 *
 *   KIND NS_PER_CALL MEDIAN_BATCH_NS TIMED_CALLS TOTAL_CALLS
 *
 * NS_PER_CALL is the mean over the whole run; MEDIAN_BATCH_NS the median
 * of the per-call time of each batch, which interrupts, other tasks and
 * other probes' bursts move much less. TOTAL_CALLS counts the warm-up too:
 * a tracer attached before the start must have seen at least that many.
 * Last it waits for EOF on stdin, so the driver stops its tracer while the
 * loop is still alive.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define BATCH 256
#define MAX_BATCHES (1 << 22)
#define MAX_KINDS 16

static const char *const kind_names[] = { "getppid", "read", "write" };
static int fd_zero, fd_null;
static double batch_ns[MAX_BATCHES]; /* per-call ns of each timed batch */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* BATCH calls of one kind; raw syscall(2) so libc caches nothing. */
static void batch(int kind)
{
	char c = 'x';

	for (int i = 0; i < BATCH; i++) {
		switch (kind) {
		case 0:
			syscall(SYS_getppid);
			break;
		case 1:
			syscall(SYS_read, fd_zero, &c, 1);
			break;
		default:
			syscall(SYS_write, fd_null, &c, 1);
		}
	}
}

/* Run batches for secs; returns the number of calls, *elapsed their time
 * and, when times is set, the per-call ns of each batch there (*nb of them).
 */
static long run_for(int kind, double secs, double *elapsed, double *times,
		    long *nb)
{
	double t0 = now_s(), t, prev = t0;
	long n = 0;

	*nb = 0;
	do {
		batch(kind);
		n += BATCH;
		t = now_s();
		if (times && *nb < MAX_BATCHES)
			times[(*nb)++] = (t - prev) * 1e9 / BATCH;
		prev = t;
	} while (t - t0 < secs);
	*elapsed = t - t0;
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int kinds[MAX_KINDS], nkinds = 0, cpu;
	char line[64], *end, *list, *name;
	double secs;
	cpu_set_t set;

	if (argc != 4) {
		fprintf(stderr, "usage: sysloop CPU SECONDS KIND[,KIND...]\n");
		return 2;
	}
	cpu = (int)strtol(argv[1], &end, 10);
	if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "sysloop: bad CPU '%s'\n", argv[1]);
		return 2;
	}
	secs = strtod(argv[2], &end);
	if (*end || !(secs > 0 && secs < 3600)) {
		fprintf(stderr, "sysloop: bad SECONDS '%s'\n", argv[2]);
		return 2;
	}
	list = strdup(argv[3]);
	while (list && (name = strsep(&list, ","))) {
		int k = 0;

		while (k < 3 && strcmp(name, kind_names[k]))
			k++;
		if (k == 3 || nkinds == MAX_KINDS) {
			fprintf(stderr, "sysloop: bad KIND list '%s'\n",
				argv[3]);
			return 2;
		}
		kinds[nkinds++] = k;
	}

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "sysloop: cannot pin to CPU %d: %s\n", cpu,
			strerror(errno));
		return 1;
	}
	fd_zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	fd_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd_zero < 0 || fd_null < 0) {
		fprintf(stderr,
			"sysloop: cannot open /dev/zero or /dev/null\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;

	for (int i = 0; i < nkinds; i++) {
		double el, warm_el;
		long nb, warm = run_for(kinds[i], secs / 10, &warm_el, NULL,
					&nb);
		long n = run_for(kinds[i], secs, &el, batch_ns, &nb);

		qsort(batch_ns, (size_t)nb, sizeof(*batch_ns), cmp_double);
		printf("%s %.2f %.2f %ld %ld\n", kind_names[kinds[i]],
		       el * 1e9 / (double)n, batch_ns[nb / 2], n, n + warm);
	}
	/* Stay alive until the driver has stopped its tracer. */
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A steady workload for interval reports, top and the daemon:
 *   pacer N_GETPPID N_BADOPEN TICK_MS TICKS
 * every TICK_MS milliseconds makes N_GETPPID getppid calls and N_BADOPEN
 * openat calls that fail with ENOENT (raw syscalls, no libc caching), for
 * TICKS ticks (0: until killed). Ticks are paced on absolute times, so the
 * rate stays steady. Run it under another name (a symlink) to choose its
 * comm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long arg(char **argv, int i)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (*end || v < 0) {
		fprintf(stderr, "pacer: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long n_getppid, n_badopen, tick_ms, ticks;
	struct timespec next;

	if (argc != 5) {
		fprintf(stderr,
			"usage: pacer N_GETPPID N_BADOPEN TICK_MS TICKS\n");
		return 2;
	}
	n_getppid = arg(argv, 1);
	n_badopen = arg(argv, 2);
	tick_ms = arg(argv, 3);
	ticks = arg(argv, 4);
	if (tick_ms < 1) {
		fprintf(stderr, "pacer: TICK_MS must be >= 1\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long t = 0; !ticks || t < ticks; t++) {
		for (long i = 0; i < n_getppid; i++)
			syscall(SYS_getppid);
		for (long i = 0; i < n_badopen; i++)
			syscall(SYS_openat, AT_FDCWD,
				"/nonexistent/scprof-pacer", O_RDONLY);
		if (ticks && t == ticks - 1)
			break;
		next.tv_nsec += tick_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
	}
	return 0;
}

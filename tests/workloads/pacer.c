// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A steady workload for interval reports, top and the daemon:
 *   pacer N_GETPPID N_BADOPEN TICK_MS TICKS [N_SLEEP SLEEP_US]
 * every TICK_MS milliseconds makes N_GETPPID getppid calls and N_BADOPEN
 * openat calls that fail with ENOENT (raw syscalls, no libc caching), and
 * N_SLEEP nanosleep calls of SLEEP_US microseconds each (a call whose time
 * is set: scprof diff's tests), for TICKS ticks (0: until killed). Ticks
 * are paced on absolute times with clock_nanosleep, so the rate stays
 * steady. Run it under another name (a symlink) to choose its comm.
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
	long n_getppid, n_badopen, tick_ms, ticks, n_sleep = 0, sleep_us = 0;
	struct timespec next, nap;

	if (argc != 5 && argc != 7) {
		fprintf(stderr,
			"usage: pacer N_GETPPID N_BADOPEN TICK_MS TICKS "
			"[N_SLEEP SLEEP_US]\n");
		return 2;
	}
	n_getppid = arg(argv, 1);
	n_badopen = arg(argv, 2);
	tick_ms = arg(argv, 3);
	ticks = arg(argv, 4);
	if (argc == 7) {
		n_sleep = arg(argv, 5);
		sleep_us = arg(argv, 6);
	}
	nap.tv_sec = sleep_us / 1000000;
	nap.tv_nsec = sleep_us % 1000000 * 1000;
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
		/* nanosleep itself: libc's goes through clock_nanosleep,
		 * which the ticks use
		 */
		for (long i = 0; i < n_sleep; i++)
			syscall(SYS_nanosleep, &nap, NULL);
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

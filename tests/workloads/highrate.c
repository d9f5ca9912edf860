// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cheap syscalls at a high rate, for scprof verdict:
 *   highrate [SECONDS]
 * loops on getppid and clock_gettime, both as raw syscalls (so the clock
 * bypasses the vDSO), for SECONDS (0 or absent: until killed). Prints
 * "ready" first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	long secs = argc > 1 ? atol(argv[1]) : 0;

	if (argc > 2 || secs < 0) {
		fprintf(stderr, "usage: highrate [SECONDS]\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		syscall(SYS_getppid);
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	}
	return 0;
}

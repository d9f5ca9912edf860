// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that mostly waits, for scprof verdict:
 *   sleeper [SECONDS]
 * sleeps 2 ms at a time (nanosleep), for SECONDS (0 or absent: until
 * killed). Prints "ready" first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 2000000 };
	long secs = argc > 1 ? atol(argv[1]) : 0;

	if (argc > 2 || secs < 0) {
		fprintf(stderr, "usage: sleeper [SECONDS]\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		nanosleep(&ts, NULL);
	return 0;
}

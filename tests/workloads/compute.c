// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A compute-bound loop that makes no syscalls, for scprof verdict:
 *   compute [SECONDS]
 * runs for SECONDS (0 or absent: until killed). Prints "ready" first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	volatile unsigned long long x = 1;
	long secs = argc > 1 ? atol(argv[1]) : 0;

	if (argc > 2 || secs < 0) {
		fprintf(stderr, "usage: compute [SECONDS]\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	return (int)(x & 0);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The open/read/close-per-request anti-pattern, for scprof verdict:
 *   fopenloop [SECONDS]
 * takes 16 random bytes per request with fopen, fread and fclose of
 * /dev/urandom, for SECONDS (0 or absent: until killed). Prints "ready".
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
	unsigned char out[16];
	long secs = argc > 1 ? atol(argv[1]) : 0;

	if (argc > 2 || secs < 0) {
		fprintf(stderr, "usage: fopenloop [SECONDS]\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		FILE *f = fopen("/dev/urandom", "rb");

		if (!f) {
			perror("fopenloop: /dev/urandom");
			return 1;
		}
		if (fread(out, 1, sizeof(out), f) != sizeof(out)) {
			fprintf(stderr, "fopenloop: short read\n");
			return 1;
		}
		fclose(f);
	}
	return 0;
}

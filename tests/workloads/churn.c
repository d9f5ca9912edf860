// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Many short-lived processes or threads, for the fold-and-forget paths:
 *   churn procs N K MS   fork N children, one every MS milliseconds, each
 *                         making K getppid calls and exiting
 *   churn threads N K    start N threads (16 at a time), each making K
 *                         getppid calls
 * Calls go through syscall(2), so the getppid count is exactly N * K.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long k_calls;

static long arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < 0) {
		fprintf(stderr, "churn: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void calls(void)
{
	for (long i = 0; i < k_calls; i++)
		syscall(SYS_getppid);
}

static void *thread_fn(void *unused)
{
	(void)unused;
	calls();
	return NULL;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 4) {
		fprintf(stderr,
			"usage: churn procs N K MS | churn threads N K\n");
		return 2;
	}
	n = arg(argv[2]);
	k_calls = arg(argv[3]);
	if (!strcmp(argv[1], "procs") && argc == 5) {
		struct timespec gap = { 0, arg(argv[4]) * 1000000L };

		for (long i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0)
				return 1;
			if (pid == 0) {
				calls();
				_exit(0);
			}
			waitpid(pid, NULL, 0);
			nanosleep(&gap, NULL);
		}
		return 0;
	}
	if (!strcmp(argv[1], "threads")) {
		pthread_t t[16];

		for (long done = 0; done < n;) {
			int batch = n - done < 16 ? (int)(n - done) : 16;

			for (int i = 0; i < batch; i++)
				if (pthread_create(&t[i], NULL, thread_fn,
						   NULL))
					return 1;
			for (int i = 0; i < batch; i++)
				pthread_join(t[i], NULL);
			done += batch;
		}
		return 0;
	}
	fprintf(stderr, "churn: unknown mode '%s'\n", argv[1]);
	return 2;
}

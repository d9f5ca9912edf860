// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Named threads with known counts, for --by tid / -T / -p TID:
 *   threads N [wait]
 * starts N threads; thread K (1..N) names itself "worker-K"
 * (prctl PR_SET_NAME), then makes 100*K getppid calls and K close(-1)
 * calls (EBADF), and ends. The main thread joins them, makes 7 getppid
 * calls and exits. With "wait", each thread prints "K TID" once named and
 * the calls wait for a line on stdin (so a profiler can attach first).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static pthread_barrier_t named, go;
static int waiting;

static void *worker(void *arg)
{
	long k = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", k);
	prctl(PR_SET_NAME, name);
	if (waiting) {
		printf("%ld %ld\n", k, (long)syscall(SYS_gettid));
		fflush(stdout);
		pthread_barrier_wait(&named);
		pthread_barrier_wait(&go);
	}
	for (long i = 0; i < 100 * k; i++)
		syscall(SYS_getppid);
	for (long i = 0; i < k; i++)
		syscall(SYS_close, -1);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 3;
	pthread_t *t;
	char line[16];

	if (n < 1 || n > 64)
		return 2;
	waiting = argc > 2;
	t = calloc(n, sizeof(*t));
	pthread_barrier_init(&named, NULL, n + 1);
	pthread_barrier_init(&go, NULL, n + 1);
	for (long k = 1; k <= n; k++)
		if (pthread_create(&t[k - 1], NULL, worker, (void *)k))
			return 1;
	if (waiting) {
		pthread_barrier_wait(&named);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		pthread_barrier_wait(&go);
	}
	for (long k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	for (int i = 0; i < 7; i++)
		syscall(SYS_getppid);
	free(t);
	return 0;
}

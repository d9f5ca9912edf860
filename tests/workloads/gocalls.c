// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A workload that waits to be profiled, for -p tests:
 *   gocalls N_THREADS N_GETPPID N_BADOPEN N_READ1
 * prints "ready" and waits for a line on stdin; then each of N_THREADS
 * threads (the main thread is one of them) makes N_GETPPID getppid calls,
 * N_BADOPEN openat calls that fail with ENOENT and N_READ1 one-byte
 * pread64 calls on /dev/zero (pread64: nothing else here makes one), all
 * through syscall(2); then it prints "done" and exits
 * when stdin reaches EOF.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

static long n_getppid, n_badopen, n_read1;

static long arg(char **argv, int i)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (*end || v < 0) {
		fprintf(stderr, "gocalls: bad count '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

static void *calls(void *fd_arg)
{
	int fd = *(int *)fd_arg;
	char c;

	for (long i = 0; i < n_getppid; i++)
		syscall(SYS_getppid);
	for (long i = 0; i < n_badopen; i++)
		syscall(SYS_openat, AT_FDCWD, "/nonexistent/scprof-gocalls",
			O_RDONLY);
	for (long i = 0; i < n_read1; i++)
		syscall(SYS_pread64, fd, &c, 1, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *th;
	char line[64];
	long n_threads;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: gocalls N_THREADS N_GETPPID N_BADOPEN "
				"N_READ1\n");
		return 2;
	}
	n_threads = arg(argv, 1);
	n_getppid = arg(argv, 2);
	n_badopen = arg(argv, 3);
	n_read1 = arg(argv, 4);
	if (n_threads < 1 || n_threads > 64) {
		fprintf(stderr, "gocalls: 1 to 64 threads\n");
		return 2;
	}
	th = calloc((size_t)n_threads, sizeof(*th));
	fd = open("/dev/zero", O_RDONLY);
	if (!th || fd < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (long i = 1; i < n_threads; i++)
		if (pthread_create(&th[i], NULL, calls, &fd))
			return 1;
	calls(&fd);
	for (long i = 1; i < n_threads; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A reader with a known pattern, for scprof verdict:
 *   reader BYTES [SECONDS]
 * reads a page-cached 8 MiB file with read(2) of BYTES bytes per call,
 * rewinding at the end, for SECONDS (0 or absent: until killed). Prints
 * "ready" once the loop starts.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_SIZE (8 << 20)

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static long arg(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v < min || v > max) {
		fprintf(stderr, "reader: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static int make_file(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], *buf = calloc(1, 1 << 16);
	int fd;

	snprintf(path, sizeof(path), "%s/scprof-reader.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || !buf) {
		perror("reader: mkstemp");
		exit(1);
	}
	unlink(path);
	for (int i = 0; i < FILE_SIZE; i += 1 << 16) {
		memset(buf, 'a' + (i >> 16) % 26, 1 << 16);
		if (write(fd, buf, 1 << 16) != 1 << 16) {
			perror("reader: write");
			exit(1);
		}
	}
	free(buf);
	return fd;
}

int main(int argc, char **argv)
{
	long bytes, secs = 0;
	char *buf;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: reader BYTES [SECONDS]\n");
		return 2;
	}
	bytes = arg(argv[1], 1, FILE_SIZE);
	if (argc == 3)
		secs = arg(argv[2], 0, 1000000);
	buf = malloc((size_t)bytes);
	if (!buf)
		return 1;
	fd = make_file();
	lseek(fd, 0, SEEK_SET);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		ssize_t n = read(fd, buf, (size_t)bytes);

		if (n < 0) {
			perror("reader: read");
			return 1;
		}
		if (n == 0)
			lseek(fd, 0, SEEK_SET);
	}
	return 0;
}

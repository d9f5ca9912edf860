// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks ground truth: write(2) from two known call sites in a known
 * ratio, built with -O2 -fomit-frame-pointer (see the Makefile), so the
 * stacks can only be unwound with CFI.
 *
 * stackmix N [RATIO [SLEEP_MS]]: N rounds; each makes RATIO (default 3)
 * writes through stdio (fprintf + fflush, from log_line <- run_logger)
 * and one write(2) (from raw_write <- run_raw), to /dev/null; then
 * sleeps SLEEP_MS (so a test can tell the process ends before the
 * report). Prints nothing else.
 *
 * stackmix N RATIO SLEEP_MS phased: the same calls in two phases, all the
 * N * RATIO stdio writes first, then the N direct ones (a program whose
 * behaviour changes while the ring buffer is filling).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char buf[64] = "raw line\n";

/* noinline and a use of every result: no frame disappears into a tail
 * call or an inlined body.
 */
__attribute__((noinline)) static void log_line(FILE *f, int i)
{
	if (fprintf(f, "log line %d\n", i) < 0 || fflush(f))
		abort();
}

__attribute__((noinline)) static void run_logger(FILE *f, int i, int ratio)
{
	for (int k = 0; k < ratio; k++)
		log_line(f, i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void raw_write(int fd)
{
	if (write(fd, buf, 9) != 9)
		abort();
}

__attribute__((noinline)) static void run_raw(int fd)
{
	raw_write(fd);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int ratio = argc > 2 ? atoi(argv[2]) : 3;
	long sleep_ms = argc > 3 ? atol(argv[3]) : 0;
	int phased = argc > 4;
	int fd = open("/dev/null", O_WRONLY);
	FILE *f = fdopen(dup(fd), "w");

	if (fd < 0 || !f)
		return 1;
	for (long i = 0; i < n; i++) {
		run_logger(f, (int)i, ratio);
		if (!phased)
			run_raw(fd);
	}
	for (long i = 0; phased && i < n; i++)
		run_raw(fd);
	if (sleep_ms > 0)
		usleep((useconds_t)(sleep_ms * 1000));
	return 0;
}

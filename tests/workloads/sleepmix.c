// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks-by blocked ground truth: two call sites that block on a pipe,
 * one three times as long per call as the other.
 *
 * sleepmix N MS: N rounds of a read of pipe B from short_wait, then a
 * read of pipe A from long_wait, made by the main thread; a thread
 * ("sleepmix-write") sleeps MS ms, writes a byte to B, sleeps 3 x MS ms,
 * writes a byte to A, N times. Each read starts as the other one returns,
 * so it waits for about MS (short_wait) or 3 x MS (long_wait).
 *
 * The main thread times each read itself (CLOCK_MONOTONIC, the vDSO: no
 * syscall) and prints, at the end, one line a call site:
 *   truth short_wait calls=N ns=TOTAL
 *   truth long_wait calls=N ns=TOTAL
 * and "thread writer TID COMM" for the writer. A read is asleep for
 * nearly all of its time: TOTAL is the site's blocked time, give or take
 * the wake-ups.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipe_a[2], pipe_b[2];
static long rounds, ms;
static long writer_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long n)
{
	struct timespec ts = { .tv_sec = n / 1000,
			       .tv_nsec = (n % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *writer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "sleepmix-write");
	writer_tid = syscall(SYS_gettid);
	for (long i = 0; i < rounds; i++) {
		sleep_ms(ms);
		if (write(pipe_b[1], "b", 1) != 1)
			abort();
		sleep_ms(3 * ms);
		if (write(pipe_a[1], "a", 1) != 1)
			abort();
	}
	return NULL;
}

/* One read of fd, timed: the ns it took. */
static uint64_t timed_read(int fd)
{
	uint64_t t0 = now_ns();
	char c;

	if (read(fd, &c, 1) != 1)
		abort();
	return now_ns() - t0;
}

__attribute__((noinline)) static uint64_t short_wait(void)
{
	uint64_t ns = timed_read(pipe_b[0]);

	__asm__ volatile("" ::: "memory");
	return ns;
}

__attribute__((noinline)) static uint64_t long_wait(void)
{
	uint64_t ns = timed_read(pipe_a[0]);

	__asm__ volatile("" ::: "memory");
	return ns;
}

int main(int argc, char **argv)
{
	uint64_t short_ns = 0, long_ns = 0;
	pthread_t t;

	rounds = argc > 1 ? atol(argv[1]) : 20;
	ms = argc > 2 ? atol(argv[2]) : 5;
	if (argc > 3 || rounds <= 0 || ms <= 0) {
		fprintf(stderr, "usage: sleepmix [N [MS]]\n");
		return 2;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (pipe(pipe_a) || pipe(pipe_b) ||
	    pthread_create(&t, NULL, writer, NULL))
		return 1;
	for (long i = 0; i < rounds; i++) {
		short_ns += short_wait();
		long_ns += long_wait();
	}
	pthread_join(t, NULL);
	printf("thread writer %ld sleepmix-write\n", writer_tid);
	printf("truth short_wait calls=%ld ns=%llu\n", rounds,
	       (unsigned long long)short_ns);
	printf("truth long_wait calls=%ld ns=%llu\n", rounds,
	       (unsigned long long)long_ns);
	return 0;
}

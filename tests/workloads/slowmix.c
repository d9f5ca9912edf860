// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks-by time ground truth: a few slow calls hold most of the time
 * in calls, many fast ones most of the calls.
 *
 * slowmix N_FAST N_SLOW SLOW_US: N_FAST getppid calls from fast_path,
 * and N_SLOW nanosleep calls of SLOW_US each from slow_path, interleaved
 * (one slow call after every N_FAST / N_SLOW fast ones). With 20000 200 450
 * about 1% of the calls hold about 90% of the time. Timer slack is set to
 * 1 ns so that a sleep lasts what it asks.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

__attribute__((noinline)) static void fast_path(void)
{
	if (syscall(SYS_getppid) < 0)
		abort();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void slow_path(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (us % 1000000) * 1000 };

	if (syscall(SYS_nanosleep, &ts, NULL))
		abort();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n_fast = argc > 1 ? atol(argv[1]) : 20000;
	long n_slow = argc > 2 ? atol(argv[2]) : 200;
	long us = argc > 3 ? atol(argv[3]) : 450;
	long every = n_slow > 0 ? n_fast / n_slow : 0;

	prctl(PR_SET_TIMERSLACK, 1UL);
	for (long i = 0, s = 0; i < n_fast; i++) {
		fast_path();
		if (every && (i + 1) % every == 0 && s < n_slow) {
			slow_path(us);
			s++;
		}
	}
	return 0;
}

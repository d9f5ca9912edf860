// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Distinct syscalls a few at a time, for the daemon's --series-ttl tests
 * (x86_64 numbers):
 *   syschurn PER_ROUND ROUNDS PAUSE_MS
 * writes "ready" and waits for a line on stdin (so that a daemon can be
 * attached to it with -p first), then makes ROUNDS rounds: round r calls
 * PER_ROUND syscalls once each, the next ones of a list, going round it,
 * writes "r T_NS NR..." (T_NS: CLOCK_MONOTONIC read before the round's
 * first call) and sleeps PAUSE_MS. The list is every number allsys calls
 * (each fails at once or does nothing harmful with arguments of -1) but
 * read, write and clock_nanosleep, the workload's own calls, and sync,
 * which would write every file system back. Calls are raw syscall(2).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static int listed(long nr)
{
	static const long skip[] = {
		SYS_read,   SYS_write,	      SYS_clock_nanosleep,
		SYS_sync,   SYS_rt_sigreturn, SYS_pause,
		SYS_clone,  SYS_fork,	      SYS_vfork,
		SYS_exit,   SYS_vhangup,      SYS_exit_group,
		SYS_clone3,
	};

	if (nr >= 335 && nr < 424) /* the uprobe trampolines' and none */
		return 0;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (skip[i] == nr)
			return 0;
	return 1;
}

static long arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v <= 0) {
		fprintf(stderr, "syschurn: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long list[451], n = 0, per_round, rounds, pause_ms, next = 0;
	struct timespec nap, t;
	char line[64];

	if (argc != 4) {
		fprintf(stderr, "usage: syschurn PER_ROUND ROUNDS PAUSE_MS\n");
		return 2;
	}
	per_round = arg(argv[1]);
	rounds = arg(argv[2]);
	pause_ms = arg(argv[3]);
	for (long nr = 0; nr <= 450; nr++)
		if (listed(nr))
			list[n++] = nr;
	/* a stray signal from a call with odd arguments must not end us */
	signal(SIGALRM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready %ld\n", n);
	if (read(0, line, sizeof(line)) <= 0)
		return 1;
	nap.tv_sec = pause_ms / 1000;
	nap.tv_nsec = pause_ms % 1000 * 1000000;
	for (long r = 0; r < rounds; r++) {
		char out[4096];
		int len;

		clock_gettime(CLOCK_MONOTONIC, &t);
		len = snprintf(out, sizeof(out), "%ld %lld", r,
			       (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
		for (long i = 0; i < per_round; i++, next++) {
			long nr = list[next % n];

			syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L);
			if (len < (int)sizeof(out) - 16)
				len += snprintf(out + len, sizeof(out) - len,
						" %ld", nr);
		}
		out[len++] = '\n';
		if (write(1, out, (size_t)len) != len)
			return 1;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
	}
	return 0;
}

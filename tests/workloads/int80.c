// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A 64-bit program making 32-bit compat syscalls:
 *   int80 N
 * issues `int $0x80` with eax = 20 (getpid in the i386 table) N times. On
 * x86_64 the kernel runs them through the ia32 entry, so scprof must name
 * them from the i386 table (getpid), not the 64-bit one (20 is writev).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, ret = 0;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: int80 N\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (!*argv[1] || *end || n < 0) {
		fprintf(stderr, "int80: bad count '%s'\n", argv[1]);
		return 2;
	}
#if defined(__x86_64__)
	for (long i = 0; i < n; i++) {
		/* The ia32 entry may clobber r8-r11 when called from 64 bits. */
		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(20L)
				 : "r8", "r9", "r10", "r11", "memory", "cc");
	}
	/* getpid must have answered, not failed with -ENOSYS. */
	return ret == (long)getpid() || n == 0 ? 0 : 1;
#else
	fprintf(stderr, "int80: x86_64 only\n");
	return 77;
#endif
}

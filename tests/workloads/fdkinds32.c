// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --fd-types on the i386 ABI, whose first argument is in ebx, not rdi:
 *   fdkinds32 N
 * a 64-bit program that makes, through `int $0x80`, N one-byte writes to a
 * pipe (write is 4 in the i386 table) and N closes of an fd that is not
 * open (close is 6), which fail with EBADF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

static long int80(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return r;
}

int main(int argc, char **argv)
{
	char *buf;
	long n;
	int p[2];

	if (argc != 2 || (n = atol(argv[1])) < 0) {
		fprintf(stderr, "usage: fdkinds32 N\n");
		return 2;
	}
	/* The i386 ABI passes 32-bit pointers. */
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (buf == MAP_FAILED || pipe(p)) {
		perror("fdkinds32");
		return 1;
	}
	buf[0] = 'x';
	for (long i = 0; i < n; i++) {
		if (int80(4, p[1], (long)buf, 1) != 1 ||
		    int80(6, 1 << 20, 0, 0) != -9 /* EBADF */) {
			fprintf(stderr, "fdkinds32: unexpected return\n");
			return 1;
		}
	}
	return 0;
}

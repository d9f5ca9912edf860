// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A container's batch job, linked statically (a runc bundle's root holds
 * only it): ctrjob [N] makes N getppid calls (7000 when not given) and
 * exits 0.
 */
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 7000;

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}

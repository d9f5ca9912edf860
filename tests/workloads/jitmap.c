// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT'd code for --stacks: copies a tiny getppid function into anonymous
 * executable memory, names it in /tmp/perf-PID.map as node
 * --perf-basic-prof does ("jit_getppid"), and calls it N times:
 *   jitmap N [SLEEP_MS]
 * then sleeps SLEEP_MS (so that a loaded machine's scprof still finds it
 * alive). x86_64 only (elsewhere: exits 77).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov eax, 110 (getppid); syscall; ret */
	static const unsigned char code[] = { 0xb8, 0x6e, 0x00, 0x00,
					      0x00, 0x0f, 0x05, 0xc3 };
	long n = argc > 1 ? atol(argv[1]) : 10000;
	long sleep_ms = argc > 2 ? atol(argv[2]) : 0;
	char path[64];
	long (*fn)(void);
	void *mem;
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_getppid\n", (unsigned long)mem, sizeof(code));
	fclose(f);
	fn = (long (*)(void))mem;
	for (long i = 0; i < n; i++)
		if (fn() <= 0)
			return 1;
	if (sleep_ms > 0)
		usleep((useconds_t)(sleep_ms * 1000));
	/* the report names it after we are gone: the map file stays until
	 * the caller removes it, as a JIT's does
	 */
	return 0;
#else
	(void)argc;
	(void)argv;
	return 77;
#endif
}

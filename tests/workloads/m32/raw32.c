// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A 32-bit (i386) program with no C library, for the ABI tests:
 *   raw32 N [PATH ARGS...]
 * makes N getpid calls (20 in the i386 table), then, with PATH, execs
 * PATH ARGS (execve, 11), else exits (exit_group, 252). Every call is an
 * `int $0x80` of the 32-bit ABI. Built with -m32 -nostdlib -static, so it
 * needs no 32-bit libraries (see the Makefile).
 */
#define NR_EXIT_GROUP 252
#define NR_GETPID 20
#define NR_EXECVE 11

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "cc");
	return ret;
}

static long count(const char *s)
{
	long n = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		n = n * 10 + (*s - '0');
	}
	return n;
}

/* The stack at _start: argc, argv[], NULL, envp[], NULL. */
__attribute__((used)) static void start(long *sp)
{
	long argc = sp[0], n;
	char **argv = (char **)(sp + 1), **envp = argv + argc + 1;

	n = argc > 1 ? count(argv[1]) : -1;
	if (n < 0)
		sys3(NR_EXIT_GROUP, 2, 0, 0);
	for (long i = 0; i < n; i++)
		sys3(NR_GETPID, 0, 0, 0);
	if (argc > 2) {
		sys3(NR_EXECVE, (long)argv[2], (long)(argv + 2), (long)envp);
		sys3(NR_EXIT_GROUP, 127, 0, 0);
	}
	sys3(NR_EXIT_GROUP, 0, 0, 0);
}

__asm__(".globl _start\n"
	"_start:\n"
	"	xorl %ebp, %ebp\n"
	"	movl %esp, %eax\n"
	"	andl $-16, %esp\n"
	"	subl $12, %esp\n"
	"	pushl %eax\n"
	"	call start\n"
	"	hlt\n");

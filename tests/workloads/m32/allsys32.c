// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every i386 syscall number strace 6.1 knows (0 to 450, but for the
 * unused 222, 223, 251, 285, 387-392 and 415: strace -c crashes summing
 * numbers it does not know) once, from a
 * 32-bit program with no C library, for the -e trace=%CLASS tests of the
 * 32-bit table: each is an `int $0x80` with every argument -1, so it fails
 * at once or does nothing harmful. Left out, as in allsys: the calls that
 * end, stop or fork the process (exit, fork, pause, sigsuspend, sigreturn,
 * clone, rt_sigreturn, vfork, exit_group, clone3) and vhangup; then it
 * exits with exit_group(0).
 */
static long sys6(long nr)
{
	long ret;

	__asm__ volatile("push %%ebp\n\t"
			 "movl $-1, %%ebp\n\t"
			 "int $0x80\n\t"
			 "pop %%ebp"
			 : "=a"(ret)
			 : "a"(nr), "b"(-1), "c"(-1), "d"(-1), "S"(-1), "D"(-1)
			 : "memory", "cc");
	return ret;
}

static int skipped(long nr)
{
	static const long skip[] = { 1,	  2,   29,  72,	 111, 119, 120, 173,
				     190, 252, 435, 222, 223, 251, 285, 387,
				     388, 389, 390, 391, 392, 415 };

	for (unsigned int i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (skip[i] == nr)
			return 1;
	return 0;
}

__attribute__((used)) static void start(void)
{
	/* SIGALRM, SIGPIPE, SIGHUP ignored first (signal(2), 48), so that
	 * no call with odd arguments ends the program
	 */
	static const long ignored[] = { 14, 13, 1 };

	for (unsigned int i = 0; i < 3; i++) {
		long ret;

		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(48L), "b"(ignored[i]), "c"(1L)
				 : "memory", "cc");
	}
	for (long nr = 0; nr <= 450; nr++)
		if (!skipped(nr))
			sys6(nr);
	__asm__ volatile("int $0x80" : : "a"(252L), "b"(0L) : "memory");
}

__asm__(".globl _start\n"
	"_start:\n"
	"	xorl %ebp, %ebp\n"
	"	andl $-16, %esp\n"
	"	call start\n"
	"	hlt\n");

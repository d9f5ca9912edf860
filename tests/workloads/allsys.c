// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every x86_64 syscall number once, for the -e trace=%CLASS tests:
 *   allsys
 * calls syscall(nr, -1, -1, -1, -1, -1, -1) for every nr strace 6.1 knows
 * (0 to 334 and 424 to 450: strace -c crashes summing numbers it does not
 * know), so that each call fails at once (EBADF, EFAULT, EINVAL, ENOSYS...)
 * or does nothing harmful, then exits. Left out: the calls that would end
 * or stop the process or make a new one (exit, exit_group, fork, vfork,
 * clone, clone3, pause, rt_sigreturn), vhangup (hangs up the terminal as
 * root) and the uprobe trampolines' calls (SIGILL when called directly).
 * strace -c -f -e trace=%CLASS on it lists the members of a class.
 */
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

static int skipped(long nr)
{
	static const long skip[] = {
		SYS_rt_sigreturn, SYS_pause,
		SYS_clone,	  SYS_fork,
		SYS_vfork,	  SYS_exit,
		SYS_vhangup,	  SYS_exit_group,
		SYS_clone3,	  335 /* uretprobe */,
		336 /* uprobe */,
	};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (skip[i] == nr)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* a stray signal from a call with odd arguments must not end us */
	signal(SIGALRM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	for (long nr = 0; nr <= 450; nr++)
		if (!skipped(nr) && (nr < 335 || nr >= 424))
			syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L);
	return 0;
}

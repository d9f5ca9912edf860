// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Threads that block and stay blocked, for the calls-in-flight tests:
 *   blocked [-]
 * (with "-", after a line on stdin) one thread blocks in read() on an empty
 * pipe, one in epoll_wait() with no timeout, and the main thread in
 * wait4() for a child that sleeps in pause(). Prints "ready" once the
 * threads are started (each blocks right after) and stays so until
 * killed; the child dies with it (PR_SET_PDEATHSIG). SIGUSR1 writes a byte
 * to the pipe: the read returns and the reader blocks in the next one.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipe_rd[2], pipe_ep[2], epfd;

static void on_usr1(int sig)
{
	(void)sig;
	if (write(pipe_rd[1], "x", 1) < 0)
		_exit(1);
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	for (;;)
		if (read(pipe_rd[0], &c, 1) <= 0)
			pause();
	return NULL;
}

static void *poller(void *arg)
{
	struct epoll_event ev;

	(void)arg;
	for (;;)
		epoll_wait(epfd, &ev, 1, -1);
	return NULL;
}

int main(int argc, char **argv)
{
	char line[16];
	struct epoll_event ev = { .events = EPOLLIN };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t t1, t2;
	pid_t child;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-"))) {
		fprintf(stderr, "usage: blocked [-]\n");
		return 2;
	}
	if (argc == 2 && !fgets(line, sizeof(line), stdin))
		return 1;
	if (pipe(pipe_rd) || pipe(pipe_ep))
		return 1;
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	epfd = epoll_create1(0);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, pipe_ep[0], &ev))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	if (pthread_create(&t1, NULL, reader, NULL) ||
	    pthread_create(&t2, NULL, poller, NULL))
		return 1;
	printf("ready %d\n", (int)child);
	fflush(stdout);
	for (;;)
		if (wait4(child, NULL, 0, NULL) == child)
			return 0;
}

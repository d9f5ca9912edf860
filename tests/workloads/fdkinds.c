// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A workload with known calls on every kind of fd, for --fd-types:
 *   fdkinds N DIR
 * Every call below is a raw syscall(2), so the C library adds none and
 * substitutes none (glibc's fstat() is newfstatat). With N the scale:
 *
 *   kind      fd                      calls
 *   file      DIR/file (created)      fstat N, write N, pread64 N, lseek N,
 *                                     fsync 1, close 1
 *   dir       DIR                     fstat 2N, lseek N, getdents64 1, close 1
 *   socket    socketpair              fstat 3N (on one end), write N, read N,
 *                                     sendto N, recvfrom N, close 2
 *   pipe      pipe2                   fstat 4N, write N, read N, close 2
 *   pipe      DIR/fifo (mkfifo)       fstat 5N, write N, read N, close 1
 *   chr       /dev/null               fstat 6N, write N, read N, close 1
 *   eventfd   eventfd2                fstat 7N, write N, read N, close 1
 *   timerfd   timerfd_create          fstat 8N, timerfd_gettime N, close 1
 *   signalfd  signalfd4               fstat 9N, close 1
 *   epoll     epoll_create1           fstat 10N, epoll_wait N, close 1
 *   inotify   inotify_init1           fstat 11N, close 1
 *   pidfd     pidfd_open (itself)     fstat 12N, pidfd_send_signal N (0),
 *                                     close 1
 *   bad       closed or never opened  fstat N, close N, read N (all EBADF)
 *
 * The files are made with openat, mknodat and the creating calls above,
 * none of which take an fd first. The dynamic loader's own calls on the
 * libraries it maps add to the file kind only.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>

#define CHECK(x)                    \
	do {                        \
		if ((x) < 0) {      \
			perror(#x); \
			exit(1);    \
		}                   \
	} while (0)

static struct stat st;

static void fstats(int fd, long n)
{
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_fstat, fd, &st));
}

/* n one-byte writes then n one-byte reads, the reads on rfd. */
static void rw(int wfd, int rfd, long n)
{
	char c = 'x';

	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_write, wfd, &c, 1));
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_read, rfd, &c, 1));
}

static void closefd(int fd)
{
	CHECK(syscall(SYS_close, fd));
}

int main(int argc, char **argv)
{
	char path[4096], buf[4096], c = 'x';
	uint64_t one = 1;
	sigset_t mask;
	struct itimerspec its;
	int fd, sv[2], p[2];
	long n;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: fdkinds N DIR\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "fdkinds: bad count '%s'\n", argv[1]);
		return 2;
	}

	/* file */
	snprintf(path, sizeof(path), "%s/file", argv[2]);
	CHECK(fd = (int)syscall(SYS_openat, AT_FDCWD, path,
				O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
	fstats(fd, n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_write, fd, &c, 1));
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_pread64, fd, &c, 1, 0));
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_lseek, fd, 0, SEEK_SET));
	CHECK(syscall(SYS_fsync, fd));
	closefd(fd);

	/* dir */
	CHECK(fd = (int)syscall(SYS_openat, AT_FDCWD, argv[2],
				O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	fstats(fd, 2 * n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_lseek, fd, 0, SEEK_SET));
	CHECK(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
	closefd(fd);

	/* socket */
	CHECK(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		      sv));
	fstats(sv[0], 3 * n);
	rw(sv[0], sv[1], n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_sendto, sv[0], &c, 1, 0, NULL, 0));
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_recvfrom, sv[1], &c, 1, 0, NULL, NULL));
	closefd(sv[0]);
	closefd(sv[1]);

	/* pipe */
	CHECK(syscall(SYS_pipe2, p, O_CLOEXEC));
	fstats(p[0], 4 * n);
	rw(p[1], p[0], n);
	closefd(p[0]);
	closefd(p[1]);

	/* FIFO: O_RDWR does not wait for a peer on Linux */
	snprintf(path, sizeof(path), "%s/fifo", argv[2]);
	CHECK(syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | 0600, 0));
	CHECK(fd = (int)syscall(SYS_openat, AT_FDCWD, path,
				O_RDWR | O_CLOEXEC));
	fstats(fd, 5 * n);
	rw(fd, fd, n);
	closefd(fd);

	/* chr */
	CHECK(fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null",
				O_RDWR | O_CLOEXEC));
	fstats(fd, 6 * n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_write, fd, &c, 1));
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_read, fd, &c, 1)); /* 0: end of file */
	closefd(fd);

	/* eventfd */
	CHECK(fd = (int)syscall(SYS_eventfd2, 0, O_CLOEXEC));
	fstats(fd, 7 * n);
	for (long i = 0; i < n; i++) {
		CHECK(syscall(SYS_write, fd, &one, sizeof(one)));
		CHECK(syscall(SYS_read, fd, &one, sizeof(one)));
	}
	closefd(fd);

	/* timerfd */
	CHECK(fd = (int)syscall(SYS_timerfd_create, CLOCK_MONOTONIC,
				O_CLOEXEC));
	fstats(fd, 8 * n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_timerfd_gettime, fd, &its));
	closefd(fd);

	/* signalfd */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	CHECK(fd = (int)syscall(SYS_signalfd4, -1, &mask, 8, O_CLOEXEC));
	fstats(fd, 9 * n);
	closefd(fd);

	/* epoll */
	CHECK(fd = (int)syscall(SYS_epoll_create1, O_CLOEXEC));
	fstats(fd, 10 * n);
	for (long i = 0; i < n; i++) {
		char ev[16];

		CHECK(syscall(SYS_epoll_wait, fd, ev, 1, 0));
	}
	closefd(fd);

	/* inotify */
	CHECK(fd = (int)syscall(SYS_inotify_init1, O_CLOEXEC));
	fstats(fd, 11 * n);
	closefd(fd);

	/* pidfd */
	CHECK(fd = (int)syscall(SYS_pidfd_open, getpid(), 0));
	fstats(fd, 12 * n);
	for (long i = 0; i < n; i++)
		CHECK(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
	closefd(fd);

	/* bad: numbers never opened, inside the fd table (60 < 64, its
	 * first size) and beyond it
	 */
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_fstat, 60, &st) == 0 ||
		    syscall(SYS_close, 1 << 20) == 0 ||
		    syscall(SYS_read, -1, &c, 1) == 0) {
			fprintf(stderr, "fdkinds: a bad fd worked\n");
			return 1;
		}
	}
	return 0;
}

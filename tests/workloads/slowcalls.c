// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --slow ground truth: three calls that block for a known time, on three
 * kinds of fd, among many fast calls.
 *
 *  - wait_pipe: read() on a pipe, written by a child 30 ms after the read
 *    started;
 *  - wait_lock: fcntl(F_SETLKW) on a regular file, which a child holds
 *    locked until 50 ms after the fcntl started;
 *  - wait_socket: recv() on a TCP loopback connection, whose peer (a
 *    child) sends 40 ms after the recv started.
 *
 * Each child waits until /proc/PPID/syscall shows the parent inside the
 * call before it starts its sleep, so each call lasts at least its sleep
 * however late the child runs. The children are other processes: without
 * -f they are not profiled, and their sleeps are not the parent's calls.
 * The parent waits for them with non-blocking calls only (spins), so the
 * three are its only slow calls. Fast calls: getppid, writes to
 * /dev/null, fcntl(F_GETLK), reads of a small file.
 *
 * slowcalls [N_FAST] prints what the test checks on stdout:
 *   pipe FD
 *   file FD PATH
 *   tcp FD LOCAL_PORT PEER_PORT
 * and after each call how long it took as the workload saw it, from just
 * before to just after (the vDSO's clock: no syscall), an upper bound on
 * the call's own time however loaded the machine:
 *   took pipe|file|tcp NS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NR_READ 0
#define NR_RECVFROM 45
#define NR_FCNTL 72

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* In a child: wait until the parent is inside syscall nr on fd. */
static void wait_parent_in(long nr, int fd)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)getppid());
	for (int tries = 0; tries < 100000; tries++) {
		int f = open(path, O_RDONLY);
		ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
		long got_nr;
		unsigned long arg;

		if (f >= 0)
			close(f);
		if (n > 0) {
			buf[n] = '\0';
			if (sscanf(buf, "%ld %lx", &got_nr, &arg) == 2 &&
			    got_nr == nr && (int)arg == fd)
				return;
		}
		sleep_ms(1);
	}
	fprintf(stderr, "slowcalls: the parent never blocked in %ld\n", nr);
	_exit(1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void took(const char *kind, uint64_t t0)
{
	uint64_t t1 = mono_ns();

	printf("took %s %llu\n", kind, (unsigned long long)(t1 - t0));
}

static void reap(pid_t pid)
{
	int st;

	/* non-blocking: a blocking wait would be a slow call itself */
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0)
			die("waitpid");
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		exit(1);
}

__attribute__((noinline)) static void fast_calls(long n)
{
	char buf[64];
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int self = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (null < 0 || self < 0)
		die("open");
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_getppid) < 0)
			abort();
		if (write(null, buf, sizeof(buf)) != sizeof(buf))
			abort();
		if (i % 16 == 0 && pread(self, buf, sizeof(buf), 0) < 0)
			abort();
	}
	close(null);
	close(self);
}

__attribute__((noinline, noipa)) static ssize_t wait_pipe(int fd, char *buf,
							  size_t len)
{
	ssize_t n = read(fd, buf, len);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void pipe_case(void)
{
	char buf[4096];
	uint64_t t0;
	int p[2];
	pid_t pid;

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(p[0]);
		wait_parent_in(NR_READ, p[0]);
		sleep_ms(30);
		if (write(p[1], "hello", 5) != 5)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	printf("pipe %d\n", p[0]);
	t0 = mono_ns();
	if (wait_pipe(p[0], buf, sizeof(buf)) != 5)
		die("read pipe");
	took("pipe", t0);
	close(p[0]);
	reap(pid);
}

__attribute__((noinline, noipa)) static int wait_lock(int fd)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int r = fcntl(fd, F_SETLKW, &l);

	__asm__ volatile("" ::: "memory");
	return r;
}

static void lock_case(void)
{
	char path[] = "/tmp/scprof-slowcalls-XXXXXX";
	struct flock l;
	uint64_t t0;
	int fd = mkstemp(path);
	pid_t pid;

	if (fd < 0)
		die("mkstemp");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		struct flock w = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (fcntl(fd, F_SETLK, &w))
			_exit(1);
		wait_parent_in(NR_FCNTL, fd);
		sleep_ms(50);
		_exit(0); /* the lock goes with the process */
	}
	/* fast calls until the child holds the lock */
	do {
		l = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET };
		if (fcntl(fd, F_GETLK, &l))
			die("F_GETLK");
	} while (l.l_type == F_UNLCK);
	printf("file %d %s\n", fd, path);
	t0 = mono_ns();
	if (wait_lock(fd))
		die("F_SETLKW");
	took("file", t0);
	reap(pid);
	close(fd);
	unlink(path);
}

__attribute__((noinline, noipa)) static ssize_t wait_socket(int fd, char *buf,
							    size_t len)
{
	ssize_t n = recv(fd, buf, len, 0);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void socket_case(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, l, p;
	socklen_t len = sizeof(a);
	uint64_t t0;
	int lfd, cfd, sfd;
	char buf[64];
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&a, &len))
		die("listen");
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	sfd = accept(lfd, NULL, NULL);
	if (sfd < 0)
		die("accept");
	len = sizeof(l);
	if (getsockname(cfd, (struct sockaddr *)&l, &len))
		die("getsockname");
	len = sizeof(p);
	if (getpeername(cfd, (struct sockaddr *)&p, &len))
		die("getpeername");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		wait_parent_in(NR_RECVFROM, cfd);
		sleep_ms(40);
		if (send(sfd, "pong", 4, 0) != 4)
			_exit(1);
		_exit(0);
	}
	close(sfd);
	close(lfd);
	printf("tcp %d %u %u\n", cfd, ntohs(l.sin_port), ntohs(p.sin_port));
	t0 = mono_ns();
	if (wait_socket(cfd, buf, sizeof(buf)) != 4)
		die("recv");
	took("tcp", t0);
	close(cfd);
	reap(pid);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;

	setvbuf(stdout, NULL, _IONBF, 0);
	fast_calls(n);
	pipe_case();
	fast_calls(n / 4);
	lock_case();
	fast_calls(n / 4);
	socket_case();
	fast_calls(n);
	return 0;
}

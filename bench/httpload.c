// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A keep-alive HTTP load generator that times itself in batches, for the
 * budget check on nginx (bench/cost.py): what ab -k does, plus the time of
 * every BATCH responses, so that the requests served while a daemon's
 * latency window was open can be told from the others.
 *
 *   httpload PORT CONNS SECONDS
 *
 * Opens CONNS connections to 127.0.0.1:PORT and keeps one "GET /" in
 * flight on each for SECONDS, from one thread (epoll). At the end it
 * prints
 *
 *   requests N seconds S rps R
 *
 * and exits 0; any error (a refused or closed connection, a status other
 * than 200, a response it cannot parse) is one line on stderr and exit 1.
 * With HTTPLOAD_BATCHES=FILE in the environment it writes each batch to
 * FILE, one line each, "http END NS_PER_REQUEST": END is when the batch's
 * last response came in, in seconds of CLOCK_MONOTONIC, as sysloop's
 * SYSLOOP_BATCHES lines, written after the run so that the load makes no
 * calls but its requests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define BATCH 256 /* as sysloop.c's */
#define BUF 16384
#define MAX_CONNS 1024

static const char request[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

struct conn {
	int fd;
	size_t have; /* bytes of the current response read so far */
	char buf[BUF];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "httpload: %s\n", what);
	exit(1);
}

static void send_request(struct conn *c)
{
	ssize_t n = send(c->fd, request, sizeof(request) - 1, MSG_NOSIGNAL);

	/* One small request on an idle connection always fits. */
	if (n != (ssize_t)sizeof(request) - 1)
		die(n < 0 ? strerror(errno) : "short send");
}

/* The length of a whole response at the start of c->buf, 0 while it is not
 * all in yet; dies on one it cannot read.
 */
static size_t response_len(struct conn *c)
{
	char *end, *p, *line;
	long body = -1;

	c->buf[c->have] = '\0';
	end = strstr(c->buf, "\r\n\r\n");
	if (!end) {
		if (c->have >= BUF - 1)
			die("response header too long");
		return 0;
	}
	if (strncmp(c->buf, "HTTP/1.1 200 ", 13) != 0)
		die("a response other than 200");
	for (line = strstr(c->buf, "\r\n"); line && line < end;
	     line = strstr(line + 2, "\r\n")) {
		if (strncasecmp(line + 2, "Content-Length:", 15) == 0) {
			body = strtol(line + 17, &p, 10);
			break;
		}
	}
	if (body < 0 || (size_t)(end + 4 - c->buf) + body >= BUF)
		die("a response without a Content-Length that fits");
	if (c->have < (size_t)(end + 4 - c->buf) + body)
		return 0;
	return (size_t)(end + 4 - c->buf) + body;
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[64];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	double secs, t0, t, prev, *batch_ns, *batch_end;
	long requests = 0, nb = 0, max_batches;
	struct conn *conns;
	int port, nconns, ep, one = 1;
	const char *path;

	if (argc != 4)
		die("usage: httpload PORT CONNS SECONDS");
	port = atoi(argv[1]);
	nconns = atoi(argv[2]);
	secs = atof(argv[3]);
	if (port <= 0 || port > 65535 || nconns <= 0 || nconns > MAX_CONNS ||
	    !(secs > 0 && secs < 86400))
		die("usage: httpload PORT CONNS SECONDS (1-1024 connections)");
	/* 1M responses a second at most */
	max_batches = (long)(secs * 1e6 / BATCH) + 2;
	batch_ns = calloc(max_batches, sizeof(*batch_ns));
	batch_end = calloc(max_batches, sizeof(*batch_end));
	conns = calloc(nconns, sizeof(*conns));
	ep = epoll_create1(0);
	if (!batch_ns || !batch_end || !conns || ep < 0)
		die("out of memory");
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		c->fd = socket(AF_INET, SOCK_STREAM, 0);
		if (c->fd < 0 ||
		    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die(strerror(errno));
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
			die(strerror(errno));
	}
	t0 = prev = now_s();
	for (int i = 0; i < nconns; i++)
		send_request(&conns[i]);
	for (;;) {
		int n = epoll_wait(ep, evs, 64, 100);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die(strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t got = recv(c->fd, c->buf + c->have,
					   BUF - 1 - c->have, 0);
			size_t len;

			if (got == 0)
				die("the server closed a connection");
			if (got < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die(strerror(errno));
			}
			c->have += got;
			len = response_len(c);
			if (!len)
				continue;
			if (len != c->have)
				die("bytes after a response");
			c->have = 0;
			send_request(c);
			if (++requests % BATCH)
				continue;
			t = now_s();
			if (nb < max_batches) {
				batch_ns[nb] = (t - prev) * 1e9 / BATCH;
				batch_end[nb++] = t;
			}
			prev = t;
		}
		if (now_s() - t0 >= secs)
			break;
	}
	t = now_s() - t0;
	printf("requests %ld seconds %.6f rps %.1f\n", requests, t,
	       requests / t);
	path = getenv("HTTPLOAD_BATCHES");
	if (path) {
		FILE *f = fopen(path, "w");

		if (!f)
			die(strerror(errno));
		for (long i = 0; i < nb; i++)
			fprintf(f, "http %.6f %.1f\n", batch_end[i],
				batch_ns[i]);
		if (fclose(f) != 0)
			die(strerror(errno));
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --slow: a slow call as its event comes from the kernel side
 * (bpf/slow.bpf.h), all but its stack: when it ended, who made it, what
 * it returned, what its fd was (the path the kernel side walked, else
 * /proc's while the process likely still has the fd; a socket's
 * addresses), its split and where its longest sleep slept and who woke
 * it, named as the split names sleeps (kstack.h). stack_drain.c unwinds
 * its stack and keeps it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/kstack.h"
#include "collect/slow_event.h"
#include "util/clock.h"
#include "util/fdinfo.h"

/* "127.0.0.1:80", "[::1]:80". */
static char *inet_str(uint16_t family, const uint8_t *addr, uint16_t port)
{
	char a[INET6_ADDRSTRLEN], *s;

	if (!inet_ntop(family, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (asprintf(&s, family == AF_INET ? "%s:%u" : "[%s]:%u", a, port) < 0)
		return NULL;
	return s;
}

static const char *proto_name(uint16_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "TCP";
	case IPPROTO_UDP:
		return "UDP";
	case IPPROTO_UDPLITE:
		return "UDPLITE";
	case IPPROTO_SCTP:
		return "SCTP";
	case IPPROTO_MPTCP:
		return "MPTCP";
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return "ICMP";
	case IPPROTO_RAW:
		return "RAW";
	default:
		return "INET";
	}
}

/* A unix socket's path from its sun_path of len bytes: "/run/x.sock",
 * "@name" (abstract: a NUL first). NULL: unbound, or out of memory.
 */
static char *unix_name(const char *p, uint16_t len)
{
	char *s;

	if (!len || len > SC_SLOW_UNIX_LEN)
		return NULL;
	if (p[0]) /* a path: up to its NUL */
		return strndup(p, len);
	s = malloc(len + 1u);
	if (!s)
		return NULL;
	for (uint16_t i = 0; i < len; i++)
		s[i] = p[i] ? p[i] : '@';
	s[len] = '\0';
	return s;
}

/* The path the kernel side walked, "/tmp/x" (".../x" when the walk did
 * not reach the root); *complete: it did, and no name was cut. NULL: no
 * path (or out of memory).
 */
static char *kernel_path(const struct sc_stack_event *e, bool *complete)
{
	size_t n = e->name_parts, len = 8;
	char *s;

	*complete = false;
	if (!n || n > SC_SLOW_PARTS || (e->name_flags & SC_SLOW_PSEUDO))
		return NULL;
	*complete = e->name_flags & SC_SLOW_ROOT;
	for (size_t i = 0; i < n; i++) {
		size_t l = strnlen(&e->name[i * SC_SLOW_PART_LEN],
				   SC_SLOW_PART_LEN);

		if (l >= SC_SLOW_PART_LEN - 1)
			*complete = false;
		len += l + 1;
	}
	s = calloc(1, len);
	if (!s)
		return NULL;
	if (!(e->name_flags & SC_SLOW_ROOT))
		strcat(s, "...");
	for (size_t i = n; i-- > 0;) {
		if (!e->name[i * SC_SLOW_PART_LEN])
			continue; /* a mount crossed */
		strcat(s, "/");
		strncat(s, &e->name[i * SC_SLOW_PART_LEN], SC_SLOW_PART_LEN);
	}
	if (!*s)
		strcat(s, "/");
	return s;
}

/* A file with no directory: "pipe:[INO]", "anon_inode:[eventfd]", as
 * /proc/PID/fd shows them. NULL: out of memory.
 */
static char *pseudo_name(const struct sc_stack_event *e)
{
	char name[SC_SLOW_PART_LEN + 1] = "", *s;
	int n;

	memcpy(name, e->name, SC_SLOW_PART_LEN);
	if (e->fd_type == SC_FD_PIPE)
		n = asprintf(&s, "pipe:[%llu]", (unsigned long long)e->ino);
	else if (name[0] == '/')
		n = asprintf(&s, "%s", name);
	else
		n = asprintf(&s, "anon_inode:%s", name);
	return n < 0 ? NULL : s;
}

/* What a file's fd is: the kernel side's path when whole, else /proc's
 * (if it still is the same file), else what the kernel side has of it.
 */
static int file_fd(struct sc_slow_call *c, const struct sc_stack_event *e)
{
	bool complete;
	char *kpath = kernel_path(e, &complete), buf[4096];
	int err;

	if (e->name_flags & SC_SLOW_PSEUDO) {
		c->what = SC_SLOW_FD_PATH;
		c->desc = pseudo_name(e);
		return c->desc ? 0 : -ENOMEM;
	}
	if (complete) {
		c->what = SC_SLOW_FD_PATH;
		c->desc = kpath;
		return 0;
	}
	/* the thread's own table (a thread may have unshared it), else the
	 * process's once the thread is gone
	 */
	err = fdinfo_target((pid_t)e->tid, e->fd, e->ino, buf, sizeof(buf));
	if (err == -ESRCH)
		err = fdinfo_target((pid_t)e->pid, e->fd, e->ino, buf,
				    sizeof(buf));
	if (!err) {
		free(kpath);
		c->what = SC_SLOW_FD_PATH;
		c->desc = strdup(buf);
		return c->desc ? 0 : -ENOMEM;
	}
	if (kpath) {
		c->what = SC_SLOW_FD_PATH;
		c->desc = kpath;
		return 0;
	}
	c->what = err == -ENOENT ? SC_SLOW_FD_CLOSED :
		  err == -ESTALE ? SC_SLOW_FD_REUSED :
				   SC_SLOW_FD_UNKNOWN;
	return 0;
}

/* What the slow call's fd is, from what the kernel side read at its
 * return (and /proc, for a path it could not read whole). 0 or -ENOMEM.
 */
static int slow_fd(struct sc_slow_call *c, const struct sc_stack_event *e)
{
	int n;

	if (e->fd < 0) {
		c->what = SC_SLOW_FD_NONE;
		return 0;
	}
	if (!e->ino) { /* no open file at its return */
		c->what = SC_SLOW_FD_CLOSED;
		return 0;
	}
	if (e->fd_type != SC_FD_SOCKET)
		return file_fd(c, e);
	if (e->family == AF_INET || e->family == AF_INET6) {
		c->what = SC_SLOW_FD_INET;
		c->proto = proto_name(e->protocol);
		c->local = inet_str(e->family, e->laddr, e->lport);
		c->peer = inet_str(e->family, e->raddr, e->rport);
		return c->local && c->peer ? 0 : -ENOMEM;
	}
	if (e->family == AF_UNIX) {
		c->what = SC_SLOW_FD_UNIX;
		c->local = unix_name(e->name, e->name_len[0]);
		c->peer =
			unix_name(&e->name[SC_SLOW_UNIX_PEER], e->name_len[1]);
		if ((e->name_len[0] && !c->local) ||
		    (e->name_len[1] && !c->peer))
			return -ENOMEM;
	} else {
		c->what = SC_SLOW_FD_SOCKET;
	}
	n = asprintf(&c->desc, "socket:[%llu]", (unsigned long long)e->ino);
	if (n < 0)
		c->desc = NULL;
	return n < 0 ? -ENOMEM : 0;
}

/* The slow call's split, and where its longest sleep slept and who woke
 * it. 0 or -ENOMEM.
 */
static int slow_split(const struct ksyms *ksyms, struct sc_slow_call *c,
		      const struct sc_stack_event *e)
{
	const struct sc_sleep *z = &e->sleep;
	const char *f;

	if (e->flags & SC_STACK_F_SPLIT) {
		c->has_split = true;
		c->wait_ns = e->split_wait_ns;
		c->blocked_ns = e->split_blocked_ns;
		c->iowait_ns = e->split_iowait_ns;
	}
	if (!(e->flags & SC_STACK_F_SLEEP) || !z->ns)
		return 0;
	/* (one of its sleeps: no longer than their sum, clamped to the
	 * call's time at its exit)
	 */
	c->sleep_ns = c->has_split && z->ns > c->blocked_ns ? c->blocked_ns :
							      z->ns;
	f = kstack_slept_in(ksyms, z->sleeper, z->nsleeper, NULL);
	if (f && !(c->slept_in = strdup(f)))
		return -ENOMEM;
	c->waker = (uint8_t)kstack_waker(ksyms, z->waker_comm, z->waker,
					 z->nwaker);
	if (c->waker == SC_WAKER_TASK) {
		c->waker_pid = z->waker_pid;
		c->waker_tid = z->waker_tid;
		memcpy(c->waker_comm, z->waker_comm, sizeof(c->waker_comm));
	}
	return 0;
}

struct sc_slow_call *slow_event_call(const struct ksyms *ksyms,
				     const struct sc_stack_event *e)
{
	struct sc_slow_call *c = calloc(1, sizeof(*c));
	uint64_t mono = clock_mono_ns(), real = clock_real_ns();

	if (!c)
		return NULL;
	c->mono_ns = e->end_ns;
	c->time_ns = real - (mono > e->end_ns ? mono - e->end_ns : 0);
	c->dur_ns = e->delta_ns;
	c->pid = e->pid;
	c->tid = e->tid;
	memcpy(c->comm, e->comm, sizeof(c->comm));
	c->nr = e->nr;
	c->abi = e->abi;
	c->ret = e->ret;
	c->fd = e->fd;
	c->fd_type = e->fd_type;
	if (slow_fd(c, e) || slow_split(ksyms, c, e)) {
		slow_call_free(c);
		free(c);
		return NULL;
	}
	return c;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --slow: the calls that took longer than the threshold, one record each
 * with what was known of them when they returned: who, which call, how
 * long, its result, its fd and the call site. Built by the collector
 * (collect/stack_drain.c), printed as they come and written as a trace by
 * the renderers (render/slowcalls.h).
 */
#ifndef SCPROF_MODEL_SLOWLOG_H
#define SCPROF_MODEL_SLOWLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/stacks.h"
#include "model/why.h"
#include "scprof.h"

/* What the call's fd was, as far as it could be told. */
enum sc_slow_fd {
	SC_SLOW_FD_NONE = 0, /* not a call on an fd */
	SC_SLOW_FD_PATH,     /* desc: what /proc/PID/fd/N would link to (a
			      * path, "pipe:[INO]", "anon_inode:[eventfd]");
			      * a path the kernel side could not read whole
			      * starts with "..."
			      */
	SC_SLOW_FD_INET,     /* an IPv4 or IPv6 socket: proto, local, peer */
	SC_SLOW_FD_UNIX,     /* a unix socket: local, peer its paths (NULL:
			      * unbound; "@name" abstract), desc
			      * "socket:[INO]"
			      */
	SC_SLOW_FD_SOCKET,   /* another socket: desc "socket:[INO]" */
	SC_SLOW_FD_CLOSED,   /* closed before it could be looked up (or
			      * closed by the call)
			      */
	SC_SLOW_FD_REUSED,   /* the fd was another file by then */
	SC_SLOW_FD_UNKNOWN,  /* /proc could not be read (the process had
			      * exited)
			      */
};

/* Calls the collector holds between two takes by the command (the rest
 * is counted lost), and the calls a --trace-out file holds at most.
 */
#define SC_SLOW_MAX_PENDING 10000
#define SC_SLOW_MAX_TRACE 100000

/* Frames of the call site kept per call: the label's (model/stacks.h). */
#define SC_SLOW_FRAMES STACK_LABEL_FRAMES

struct sc_slow_call {
	uint64_t time_ns; /* its return, CLOCK_REALTIME */
	uint64_t mono_ns; /* its return, CLOCK_MONOTONIC */
	uint64_t dur_ns;
	uint32_t pid, tid;
	char comm[SC_COMM_LEN]; /* raw bytes: escape to print */
	uint32_t nr, abi;
	int64_t ret;	  /* -errno on failure */
	int32_t fd;	  /* -1: not a call on an fd */
	uint32_t fd_type; /* enum sc_fd_type */
	enum sc_slow_fd what;
	char *desc;	    /* SC_SLOW_FD_PATH, _UNIX, _SOCKET; raw bytes */
	char *local, *peer; /* SC_SLOW_FD_INET: "127.0.0.1:80", "[::1]:80" */
	const char *proto;  /* SC_SLOW_FD_INET: "TCP", "UDP", ... */
	/* The call site: the label's frame names, innermost first (raw
	 * bytes), the first one's file:line (NULL unknown), the runtimes
	 * skipped below them ("libc"; "" none). nframes 0: no stack.
	 */
	char *frames[SC_SLOW_FRAMES];
	size_t nframes;
	char *source;
	char *via;
	/* The split of dur_ns (has_split: the split was on): waiting for a
	 * CPU, blocked and of that in I/O wait; on a CPU the rest.
	 */
	bool has_split;
	uint64_t wait_ns, blocked_ns, iowait_ns;
	/* Its longest sleep (sleep_ns 0: none seen): where it slept, the
	 * first telling kernel function (raw; NULL: unnamed), and who woke
	 * it: a task (waker_pid, waker_tid, waker_comm: raw bytes), an
	 * interrupt or a timer.
	 */
	uint64_t sleep_ns;
	char *slept_in;
	uint8_t waker; /* enum sc_waker */
	uint32_t waker_pid, waker_tid;
	char waker_comm[SC_COMM_LEN];
};

/* On a CPU: what the split leaves of the call's time. */
uint64_t slow_call_on_cpu_ns(const struct sc_slow_call *c);

/* A list of calls, in the order they were added, holding at most max. */
struct sc_slowlog {
	struct sc_slow_call *v;
	size_t n, cap;
	size_t max;
	uint64_t dropped; /* added when full: not kept */
};

void slowlog_init(struct sc_slowlog *l, size_t max);
/* Free the calls (not l itself). */
void slowlog_clear(struct sc_slowlog *l);
/* Take c (its strings become the list's; c is zeroed). When the list is
 * full, c is freed and counted dropped. 0 or -ENOMEM (c freed).
 */
int slowlog_push(struct sc_slowlog *l, struct sc_slow_call *c);
/* Move every call of src to the end of dst (as slowlog_push each). */
int slowlog_move(struct sc_slowlog *dst, struct sc_slowlog *src);
void slow_call_free(struct sc_slow_call *c);
/* The call site of st into c's frames, source and via. 0 or -ENOMEM. */
int slow_call_site(struct sc_slow_call *c, const struct sc_stack *st);

#endif

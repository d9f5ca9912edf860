// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks: the stack_events ring buffer, drained by two threads of its
 * own. The reader copies samples out as they come (woken up when the ring
 * is a quarter full, else every STACKS_POLL_MS), into a bounded queue:
 * when it is full, the rest waits in the ring, whose fill lowers the
 * sampling rate. The unwinder names the copies (unwind.c), from the
 * process's mappings while it runs.
 *
 * Unwinding is slow (a binary's debug info read for the first time) and
 * may be far behind: a short-lived process would exit before its samples
 * are unwound. So a process's new mappings (its first sample, code
 * mapped, an exec) come as a notice on a ring of their own (maps_events),
 * which wakes the reader up and which it drains even when the queue is
 * full: it copies /proc/PID/maps at once, and the unwinder reads that
 * copy once the process has gone.
 *
 * The lock keeps snapshots away from the unwinder; qlock guards the stack
 * ring and the queue between the threads, mlock the copies.
 *
 * --slow: slow calls come on the same ring, each one waking the thread up.
 * What its fd is comes from the kernel side (a path it could not read
 * whole is read from /proc at once, while the process likely still has
 * the fd), with its split and its longest sleep, named as the split
 * names sleeps (kstack.h); its stack is unwound like a sample's, not
 * counted as one, and the call waits in a bounded list until the command
 * takes it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "collect/kstack.h"
#include "collect/unwind.h"
#include "model/slowlog.h"
#include "model/stacks.h"
#include "util/caps.h"
#include "util/clock.h"
#include "util/fdinfo.h"
#include "util/log.h"

/* A copied event, and for a slow call what is known of it but its stack. */
struct queued {
	struct sc_stack_event *e;
	struct sc_slow_call *slow;
};

/* Copies of mappings not handed to the unwinder yet, at most. */
#define MAPS_MAX 512

/* A copy of a process's /proc/PID/maps, for one program image. */
struct maps_copy {
	uint32_t pid, exec_id;
	uint64_t start_ns;
	uint64_t seq; /* the newest is the highest */
	char *text;   /* NULL: a free slot */
};

struct stack_drain {
	struct scprof_bpf *skel; /* stack_lost, slow_lost */
	struct ring_buffer *rb;	 /* stack_events */
	struct ring_buffer *mrb; /* maps_events */
	int efd;		 /* both rings */
	struct unwinder *unwinder;
	const struct ksyms *ksyms; /* the collector's; NULL: none */
	struct sc_stacks *stacks;  /* NULL: no sampling (--slow only) */
	struct sc_slowlog slow;	   /* slow calls not taken yet */
	uint64_t slow_failed; /* slow calls not kept: out of memory (atomic) */
	int err;	      /* the first error of unwinding (lock) */
	int qerr;	    /* the first error of the ring's callback (qlock) */
	uint64_t unwind_ns; /* CPU time spent unwinding (atomic) */
	pthread_t reader;   /* copies out of rb into the queue */
	pthread_t thread;   /* unwinds the queue */
	pthread_mutex_t lock;  /* unwinder, stacks, slow; taken before qlock */
	pthread_mutex_t qlock; /* rb, queue */
	pthread_mutex_t mlock; /* maps */
	struct maps_copy maps[MAPS_MAX];
	uint64_t maps_seq;
	uint64_t maps_unread; /* processes gone before their copy was taken */
	pthread_cond_t queued_cv; /* (qlock) the queue has events */
	bool running, stop;
	bool paused;	       /* stacks_paused: look rarely (atomic) */
	bool on_demand;	       /* paused at times (the daemon): less often */
	uint64_t take_ns;      /* CPU time of takes (the caller's thread) */
	uint64_t *lost_taken;  /* stack_lost at the last take, by syscall */
	bool few_caps;	       /* the threads drop all but what they need */
	unsigned int delay_ms; /* tests: the unwinder thread's lag */
	struct queued *queue;  /* copied out, to unwind, oldest first */
	size_t nqueued, queue_cap;
};

/* A slow call, unwound: its call site, then into the list. */
static int slow_done(struct stack_drain *d, const struct sc_stack_event *e,
		     struct sc_slow_call *c)
{
	struct sc_stack st;
	int err = 0;

	if (e->len && e->regs[SC_STACK_REG_IP]) {
		err = unwinder_stack(d->unwinder, e, &st);
		if (!err)
			err = slow_call_site(c, &st);
		stack_frames_free(st.frames, st.nframes);
	}
	if (err) {
		slow_call_free(c);
		__atomic_fetch_add(&d->slow_failed, 1, __ATOMIC_RELAXED);
		return err;
	}
	return slowlog_push(&d->slow, c);
}

/* Samples copied out of the ring and not unwound yet, at most. */
#define QUEUE_MAX 256

/* With the lock held: unwind the oldest queued events, at most max of
 * them. The number unwound.
 */
static size_t unwind_queued(struct stack_drain *d, size_t max)
{
	uint64_t t0 = clock_thread_ns(); /* (CPU: not what it waited) */
	size_t done = 0;

	for (; done < max; done++) {
		struct queued q;
		int err;

		pthread_mutex_lock(&d->qlock);
		if (!d->nqueued) {
			pthread_mutex_unlock(&d->qlock);
			break;
		}
		q = d->queue[0];
		memmove(d->queue, d->queue + 1,
			--d->nqueued * sizeof(*d->queue));
		pthread_mutex_unlock(&d->qlock);
		if (q.e->flags & SC_STACK_F_NEW_MAPS)
			unwinder_note_maps(d->unwinder, q.e);
		if (q.slow)
			err = slow_done(d, q.e, q.slow);
		else
			err = unwinder_add(d->unwinder, q.e, d->stacks);
		if (err && !d->err)
			d->err = err;
		free(q.slow);
		free(q.e);
	}
	__atomic_fetch_add(&d->unwind_ns, clock_thread_ns() - t0,
			   __ATOMIC_RELAXED);
	return done;
}

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
static int slow_split(const struct stack_drain *d, struct sc_slow_call *c,
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
	f = kstack_slept_in(d->ksyms, z->sleeper, z->nsleeper, NULL);
	if (f && !(c->slept_in = strdup(f)))
		return -ENOMEM;
	c->waker = (uint8_t)kstack_waker(d->ksyms, z->waker_comm, z->waker,
					 z->nwaker);
	if (c->waker == SC_WAKER_TASK) {
		c->waker_pid = z->waker_pid;
		c->waker_tid = z->waker_tid;
		memcpy(c->waker_comm, z->waker_comm, sizeof(c->waker_comm));
	}
	return 0;
}

/* A slow call as it comes: all but its stack. NULL: out of memory. */
static struct sc_slow_call *slow_new(const struct stack_drain *d,
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
	if (slow_fd(c, e) || slow_split(d, c, e)) {
		slow_call_free(c);
		free(c);
		return NULL;
	}
	return c;
}

/* A copy of /proc/PID/maps; NULL: the process has gone (or no memory). */
static char *maps_read(uint32_t pid)
{
	char path[32], *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				n = -1;
				break;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	close(fd);
	if (n < 0 || !len) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* With mlock held: the copy of a process's program image, or NULL. */
static struct maps_copy *maps_find(struct stack_drain *d, uint32_t pid,
				   uint64_t start_ns, uint32_t exec_id)
{
	for (size_t i = 0; i < MAPS_MAX; i++) {
		struct maps_copy *m = &d->maps[i];

		if (m->text && m->pid == pid && m->start_ns == start_ns &&
		    m->exec_id == exec_id)
			return m;
	}
	return NULL;
}

/* A notice of new mappings (reader thread): copy them now. The copy of
 * the same image replaces an older one; with no room, the oldest goes.
 */
static int on_maps_event(void *ctx, void *data, size_t size)
{
	const struct sc_maps_event *n = data;
	struct stack_drain *d = ctx;
	struct maps_copy *slot = NULL;
	char *text;

	if (size < sizeof(*n))
		return 0;
	text = maps_read(n->pid);
	pthread_mutex_lock(&d->mlock);
	if (!text) {
		d->maps_unread++;
		pthread_mutex_unlock(&d->mlock);
		return 0;
	}
	slot = maps_find(d, n->pid, n->start_ns, n->exec_id);
	if (!slot) { /* a free slot, else the oldest copy's */
		slot = &d->maps[0];
		for (size_t i = 1; i < MAPS_MAX && slot->text; i++)
			if (!d->maps[i].text || d->maps[i].seq < slot->seq)
				slot = &d->maps[i];
	}
	free(slot->text);
	*slot = (struct maps_copy){ .pid = n->pid,
				    .exec_id = n->exec_id,
				    .start_ns = n->start_ns,
				    .seq = ++d->maps_seq,
				    .text = text };
	pthread_mutex_unlock(&d->mlock);
	return 0;
}

/* unwinder_maps_fn: hand the unwinder a copy of a process's copy (with
 * the lock held: lock, then mlock). The copy stays: a process let go
 * while its samples wait (idle, exited) reads it again.
 */
static char *maps_take(void *ctx, uint32_t pid, uint64_t start_ns,
		       uint32_t exec_id)
{
	struct stack_drain *d = ctx;
	struct maps_copy *m;
	char *text = NULL;

	pthread_mutex_lock(&d->mlock);
	m = maps_find(d, pid, start_ns, exec_id);
	if (m)
		text = strdup(m->text);
	pthread_mutex_unlock(&d->mlock);
	return text;
}

/* With qlock held: copy a sample out of the ring, for the unwinder. */
static int on_stack_event(void *ctx, void *data, size_t size)
{
	const struct sc_stack_event *e = data;
	struct stack_drain *d = ctx;
	struct sc_stack_event *copy;
	struct sc_slow_call *slow = NULL;
	struct queued *q;
	size_t n;

	if (size < sizeof(*e) || e->len > SC_STACK_BYTES)
		return 0;
	if ((e->flags & SC_STACK_F_SLOW) && !(slow = slow_new(d, e))) {
		__atomic_fetch_add(&d->slow_failed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (!(e->flags & SC_STACK_F_SLOW) && !d->stacks)
		return 0;
	n = offsetof(struct sc_stack_event, data) + e->len;
	if (d->nqueued == d->queue_cap) {
		size_t cap = d->queue_cap ? d->queue_cap * 2 : 64;

		q = realloc(d->queue, cap * sizeof(*q));
		if (!q)
			goto nomem;
		d->queue = q;
		d->queue_cap = cap;
	}
	copy = malloc(n);
	if (!copy)
		goto nomem;
	memcpy(copy, e, n);
	d->queue[d->nqueued++] = (struct queued){ .e = copy, .slow = slow };
	/* Enough to unwind for now: the rest waits in the ring, whose fill
	 * is what lowers the sampling rate (bpf/stacks.bpf.h).
	 */
	return d->nqueued >= QUEUE_MAX ? -EAGAIN : 0;
nomem:
	if (slow) {
		slow_call_free(slow);
		free(slow);
		__atomic_fetch_add(&d->slow_failed, 1, __ATOMIC_RELAXED);
	}
	if (!d->qerr)
		d->qerr = -ENOMEM;
	return 0;
}

/* With qlock held: copy the notices' mappings, and copy out what the
 * stack ring has, up to a full queue. >= 0, or a negative errno of the
 * ring.
 */
static int consume(struct stack_drain *d)
{
	int n;

	ring_buffer__consume(d->mrb); /* notices first, always */
	if (d->nqueued >= QUEUE_MAX)
		return 1;
	n = ring_buffer__consume(d->rb);
	if (n == -EAGAIN) /* the queue is full */
		n = 1;
	/* and those sent just before the samples now queued (a notice goes
	 * out before its sample), while their processes most likely run
	 */
	if (n > 0)
		ring_buffer__consume(d->mrb);
	if (d->nqueued)
		pthread_cond_signal(&d->queued_cv);
	return n;
}

/* Samples unwound at a time with the lock held: a snapshot waits for
 * no more.
 */
#define UNWIND_BATCH 32

/* Rounds of a drain, at most: a target that makes samples faster than
 * they are unwound must not keep a drain (and the lock) forever.
 */
#define DRAIN_ROUNDS 64

/* With the lock held, for a snapshot: copy out and unwind, in rounds of
 * UNWIND_BATCH, until the ring and the queue are empty or DRAIN_ROUNDS
 * have passed; what is left waits for the threads.
 */
static int drain(struct stack_drain *d)
{
	int n, rounds = 0;
	size_t left;

	do {
		pthread_mutex_lock(&d->qlock);
		n = consume(d);
		pthread_mutex_unlock(&d->qlock);
		unwind_queued(d, UNWIND_BATCH);
		pthread_mutex_lock(&d->qlock);
		left = d->nqueued;
		pthread_mutex_unlock(&d->qlock);
	} while (n >= 0 && (n > 0 || left) && ++rounds < DRAIN_ROUNDS);
	return n < 0 ? n : 0;
}

/* An absolute time ms from now, for pthread_cond_timedwait. */
static struct timespec deadline_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static bool stopping(struct stack_drain *d)
{
	return __atomic_load_n(&d->stop, __ATOMIC_RELAXED);
}

#define STACKS_POLL_MS 5
/* While sampling is paused (the daemon between profiles): a look at the
 * stop flag, nothing else to do.
 */
#define STACKS_PAUSED_POLL_MS 250

/* Sampling on demand (the daemon's profiles): the ring wakes the reader
 * when a quarter full and for each new process; its timer is the rest.
 */
#define STACKS_LAZY_POLL_MS 50

static long poll_ms(struct stack_drain *d)
{
	if (__atomic_load_n(&d->paused, __ATOMIC_RELAXED))
		return STACKS_PAUSED_POLL_MS;
	return __atomic_load_n(&d->on_demand, __ATOMIC_RELAXED) ?
		       STACKS_LAZY_POLL_MS :
		       STACKS_POLL_MS;
}

/* What the drain thread needs to read other processes' mappings, fds and
 * binaries.
 */
#define DRAIN_CAPS ((1ULL << CAP_SYS_PTRACE) | (1ULL << CAP_DAC_READ_SEARCH))

static void sync_free(struct stack_drain *d)
{
	pthread_cond_destroy(&d->queued_cv);
	pthread_mutex_destroy(&d->qlock);
	pthread_mutex_destroy(&d->mlock);
	pthread_mutex_destroy(&d->lock);
}

static void drop_caps(struct stack_drain *d)
{
	int err;

	/* capabilities are each thread's own: this one drops its own */
	if (d->few_caps && (err = caps_drop_to(DRAIN_CAPS)))
		pr_warn("the stack drain cannot drop capabilities: %s",
			strerror(-err));
}

/* Copies samples out as they come (the BPF side wakes it up). */
static void *reader_thread(void *arg)
{
	struct stack_drain *d = arg;
	int mefd = ring_buffer__epoll_fd(d->mrb);

	drop_caps(d);
	while (!stopping(d)) {
		struct epoll_event ev;
		bool full;

		pthread_mutex_lock(&d->qlock);
		full = d->nqueued >= QUEUE_MAX;
		pthread_mutex_unlock(&d->qlock);
		/* full: only notices, and a look at the queue every ms */
		epoll_wait(full ? mefd : d->efd, &ev, 1,
			   full ? 1 : (int)poll_ms(d));
		pthread_mutex_lock(&d->qlock);
		consume(d);
		pthread_mutex_unlock(&d->qlock);
	}
	return NULL;
}

/* Unwinds what the reader copied out. */
static void *drain_thread(void *arg)
{
	struct stack_drain *d = arg;

	drop_caps(d);
	while (!stopping(d)) {
		struct timespec ts = deadline_ms(poll_ms(d));

		if (d->delay_ms)
			usleep(d->delay_ms * 1000U);

		pthread_mutex_lock(&d->qlock);
		if (!d->nqueued)
			pthread_cond_timedwait(&d->queued_cv, &d->qlock, &ts);
		pthread_mutex_unlock(&d->qlock);
		pthread_mutex_lock(&d->lock);
		unwind_queued(d, UNWIND_BATCH);
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

void stack_drain_configure(struct scprof_bpf *skel, const struct sc_settings *s)
{
	/* each call's longest sleep, for a slow call's or a sample's */
	if (!s->sleep_on)
		bpf_map__set_max_entries(skel->maps.sleeps, 1);
	/* nothing sent: the smallest ring buffers, a page */
	if (!s->stack_period && !s->slow_ns) {
		bpf_map__set_max_entries(skel->maps.stack_events,
					 (__u32)sysconf(_SC_PAGESIZE));
		bpf_map__set_max_entries(skel->maps.maps_events,
					 (__u32)sysconf(_SC_PAGESIZE));
	}
}

/*
 * Tests only: SCPROF_TEST_UNWIND_DELAY_MS=N has the unwinder thread wait N
 * ms (at most 10 s) before each batch, as a slow unwinder on a busy
 * machine does, so that processes are gone before their samples are
 * unwound.
 */
static unsigned int test_delay_ms(void)
{
	const char *v = getenv("SCPROF_TEST_UNWIND_DELAY_MS");
	unsigned long ms = v ? strtoul(v, NULL, 10) : 0;

	if (ms)
		pr_info("testing: the unwinder waits %lu ms before each batch",
			ms > 10000 ? 10000 : ms);
	return ms > 10000 ? 10000 : (unsigned int)ms;
}

static int epoll_add(int efd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	return epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev);
}

int stack_drain_new(struct stack_drain **out, struct scprof_bpf *skel,
		    uint32_t period, enum sc_stack_weighting by, bool slow,
		    bool demangle, bool few_caps, const struct ksyms *ksyms)
{
	struct stack_drain *d;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!period && !slow)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*out = d;
	d->efd = -1;
	d->skel = skel;
	d->ksyms = ksyms;
	d->few_caps = few_caps;
	d->delay_ms = test_delay_ms();
	slowlog_init(&d->slow, SC_SLOW_MAX_PENDING);
	if (period) {
		d->stacks = stacks_new(period);
		if (!d->stacks)
			return -ENOMEM;
		d->stacks->by = by;
	}
	d->unwinder = unwinder_new(demangle);
	if (!d->unwinder)
		return -ENOMEM;
	unwinder_set_maps_source(d->unwinder, maps_take, d);
	unwinder_set_ksyms(d->unwinder, ksyms);
	d->rb = ring_buffer__new(bpf_map__fd(skel->maps.stack_events),
				 on_stack_event, d, NULL);
	d->mrb = d->rb ? ring_buffer__new(bpf_map__fd(skel->maps.maps_events),
					  on_maps_event, d, NULL) :
			 NULL;
	if (!d->rb || !d->mrb) {
		err = -errno;
		pr_err("cannot open the stack ring buffers: %s",
		       strerror(-err));
		return err;
	}
	d->efd = epoll_create1(EPOLL_CLOEXEC);
	if (d->efd < 0 || epoll_add(d->efd, ring_buffer__epoll_fd(d->rb)) ||
	    epoll_add(d->efd, ring_buffer__epoll_fd(d->mrb))) {
		err = -errno;
		pr_err("cannot wait for the stack ring buffers: %s",
		       strerror(-err));
		return err;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->qlock, NULL);
	pthread_mutex_init(&d->mlock, NULL);
	pthread_cond_init(&d->queued_cv, NULL);
	/* Signals are the main thread's (sigtimedwait): none comes here. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&d->thread, NULL, drain_thread, d);
	if (!err) {
		err = -pthread_create(&d->reader, NULL, reader_thread, d);
		if (err) {
			__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
			pthread_join(d->thread, NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the stack drain: %s", strerror(-err));
		sync_free(d);
		return err;
	}
	d->running = true;
	return 0;
}

int stack_drain_error(struct stack_drain *d)
{
	int err;

	if (!d->running)
		return 0;
	pthread_mutex_lock(&d->lock);
	pthread_mutex_lock(&d->qlock);
	err = d->err ?: d->qerr;
	pthread_mutex_unlock(&d->qlock);
	pthread_mutex_unlock(&d->lock);
	return err;
}

/* With the lock held: everything in the ring and the queue unwound into
 * d->stacks. 0 or -errno.
 */
static int drain_all(struct stack_drain *d)
{
	int err = drain(d);

	unwind_queued(d, SIZE_MAX); /* (at most QUEUE_MAX) */
	pthread_mutex_lock(&d->qlock);
	err = err ?: d->err ?: d->qerr;
	pthread_mutex_unlock(&d->qlock);
	return err ?: unwinder_flush(d->unwinder, d->stacks);
}

/* m's stacks' losses: stack_lost less what base had (NULL: nothing), base
 * brought up to date.
 */
static void lost_since(struct stack_drain *d, struct sc_stacks *s,
		       uint64_t *base)
{
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t lost = __atomic_load_n(&d->skel->bss->stack_lost[nr],
						__ATOMIC_RELAXED);

		s->lost[nr] = base ? lost - base[nr] : lost;
		s->lost_total += s->lost[nr];
		if (base)
			base[nr] = lost;
	}
	stacks_sort(s);
}

int stack_drain_add(struct stack_drain *d, struct sc_model *m)
{
	int err;

	if (!d->running || !d->stacks)
		return 0;
	pthread_mutex_lock(&d->lock);
	err = drain_all(d);
	m->stacks = err ? NULL : stacks_clone(d->stacks);
	if (m->stacks) {
		struct unwinder_stats st;

		unwinder_stats(d->unwinder, &st);
		m->stacks->gaps = (struct sc_stack_gaps){
			.unmapped = st.no_maps,
			.procs_evicted = st.procs_evicted,
			.files_over_cap = st.files_over_cap,
			.files_unopened = st.files_unopened,
			.names_cut = st.names_cut,
		};
	}
	pthread_mutex_unlock(&d->lock);
	if (err)
		return err;
	if (!m->stacks)
		return -ENOMEM;
	lost_since(d, m->stacks, NULL);
	return 0;
}

/* A thread's CPU time so far, 0 if unknown. */
static uint64_t thread_cpu_ns(pthread_t t)
{
	struct timespec ts;
	clockid_t id;

	if (pthread_getcpuclockid(t, &id) || clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t stack_drain_cpu_ns(struct stack_drain *d)
{
	if (!d->running)
		return 0;
	return thread_cpu_ns(d->reader) + thread_cpu_ns(d->thread) +
	       __atomic_load_n(&d->take_ns, __ATOMIC_RELAXED);
}

void stack_drain_pace(struct stack_drain *d, uint32_t shift)
{
	__atomic_store_n(&d->skel->bss->stack_shift_min,
			 shift > SC_STACK_MAX_SHIFT ? SC_STACK_MAX_SHIFT :
						      shift,
			 __ATOMIC_RELAXED);
}

void stack_drain_pause(struct stack_drain *d, bool paused)
{
	__atomic_store_n(&d->skel->bss->stacks_paused, paused,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&d->paused, paused, __ATOMIC_RELAXED);
	__atomic_store_n(&d->on_demand, true, __ATOMIC_RELAXED);
}

int stack_drain_take(struct stack_drain *d, struct sc_model *m)
{
	struct sc_stacks *fresh;
	uint64_t t0;
	int err;

	if (!d->running || !d->stacks)
		return 0;
	if (!d->lost_taken &&
	    !(d->lost_taken = calloc(SC_NR_MAX, sizeof(*d->lost_taken))))
		return -ENOMEM;
	fresh = stacks_new(d->stacks->period);
	if (!fresh)
		return -ENOMEM;
	fresh->by = d->stacks->by;
	t0 = clock_thread_ns();
	pthread_mutex_lock(&d->lock);
	err = drain_all(d);
	if (!err) { /* the samples so far are the caller's */
		m->stacks = d->stacks;
		d->stacks = fresh;
		fresh = NULL;
	}
	pthread_mutex_unlock(&d->lock);
	__atomic_fetch_add(&d->take_ns, clock_thread_ns() - t0,
			   __ATOMIC_RELAXED);
	stacks_free(fresh);
	if (!err)
		lost_since(d, m->stacks, d->lost_taken);
	return err;
}

int stack_drain_slow_take(struct stack_drain *d, struct sc_slowlog *out,
			  uint64_t *lost)
{
	int err = 0;

	*lost = __atomic_load_n(&d->skel->bss->slow_lost, __ATOMIC_RELAXED);
	if (!d->running)
		return 0;
	pthread_mutex_lock(&d->lock);
	err = drain(d);
	err = err ?: slowlog_move(out, &d->slow);
	*lost += d->slow.dropped +
		 __atomic_load_n(&d->slow_failed, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	return err;
}

void stack_drain_free(struct stack_drain *d)
{
	struct unwinder_stats st = {};

	if (!d)
		return;
	if (d->running) {
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		pthread_mutex_lock(&d->qlock);
		pthread_cond_broadcast(&d->queued_cv);
		pthread_mutex_unlock(&d->qlock);
		pthread_join(d->reader, NULL);
		pthread_join(d->thread, NULL);
		sync_free(d);
		d->running = false;
	}
	if (d->unwinder) {
		unwinder_stats(d->unwinder, &st);
		pr_info("stacks: %llu samples unwound (%llu frames; %llu of "
			"processes gone with no copy of their mappings: "
			"%llu notices lost, %llu processes gone before the "
			"copy) in %.3f s of CPU: %.0f samples/s",
			(unsigned long long)st.samples,
			(unsigned long long)st.frames,
			(unsigned long long)st.no_maps,
			(unsigned long long)__atomic_load_n(
				&d->skel->bss->maps_lost, __ATOMIC_RELAXED),
			(unsigned long long)d->maps_unread,
			(double)d->unwind_ns / 1e9,
			d->unwind_ns ? (double)st.samples * 1e9 /
					       (double)d->unwind_ns :
				       0.0);
	}
	ring_buffer__free(d->rb);
	ring_buffer__free(d->mrb);
	if (d->efd >= 0)
		close(d->efd);
	for (size_t i = 0; i < MAPS_MAX; i++)
		free(d->maps[i].text);
	for (size_t i = 0; i < d->nqueued; i++) {
		if (d->queue[i].slow)
			slow_call_free(d->queue[i].slow);
		free(d->queue[i].slow);
		free(d->queue[i].e);
	}
	free(d->queue);
	free(d->lost_taken);
	slowlog_clear(&d->slow);
	unwinder_free(d->unwinder);
	stacks_free(d->stacks);
	free(d);
}

void stack_drain_stats(struct stack_drain *d, uint64_t *samples,
		       uint64_t *frames)
{
	struct unwinder_stats st = {};

	if (d && d->running) {
		pthread_mutex_lock(&d->lock);
		unwinder_stats(d->unwinder, &st);
		pthread_mutex_unlock(&d->lock);
	}
	*samples = st.samples;
	*frames = st.frames;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks: the stack_events ring buffer, drained by a thread of its own,
 * each sample unwound as it comes (unwind.c) while its process's mappings
 * can still be read: the BPF side wakes the thread up at the first sample
 * of a process and when the ring fills up; otherwise it drains every
 * STACKS_POLL_MS. The lock keeps snapshots away from a drain.
 *
 * --slow: slow calls come on the same ring, each one waking the thread up.
 * What its fd is comes from the kernel side (a path it could not read
 * whole is read from /proc at once, while the process likely still has
 * the fd); its stack is unwound like a sample's, not counted as one, and
 * the call waits in a bounded list until the command takes it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
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

struct stack_drain {
	struct scprof_bpf *skel; /* stack_lost, slow_lost */
	struct ring_buffer *rb;
	struct unwinder *unwinder;
	struct sc_stacks *stacks; /* NULL: no sampling (--slow only) */
	struct sc_slowlog slow;	  /* slow calls not taken yet */
	uint64_t slow_failed;	  /* slow calls not kept: out of memory */
	int err;	    /* the first error of the ring buffer's callback */
	uint64_t unwind_ns; /* time spent draining (unwinding) */
	pthread_t thread;   /* drains rb */
	pthread_mutex_t lock; /* rb, unwinder, stacks */
	bool running, stop;
	bool few_caps;	      /* the thread drops all but what it needs */
	struct queued *queue; /* copied out, to unwind */
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
		d->slow_failed++;
		return err;
	}
	return slowlog_push(&d->slow, c);
}

/* Unwind the queued events of one process (all with pid 0), at most max
 * of them, oldest first.
 */
static void unwind_queued(struct stack_drain *d, uint32_t pid, uint64_t start,
			  size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < d->nqueued; i++) {
		struct queued *q = &d->queue[i];
		int err;

		if ((pid && (q->e->pid != pid || q->e->start_ns != start)) ||
		    !max) {
			d->queue[k++] = *q;
			continue;
		}
		max--;
		if (q->slow)
			err = slow_done(d, q->e, q->slow);
		else
			err = unwinder_add(d->unwinder, q->e, d->stacks);
		if (err && !d->err)
			d->err = err;
		free(q->slow);
		free(q->e);
	}
	d->nqueued = k;
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

/* A slow call as it comes: all but its stack. NULL: out of memory. */
static struct sc_slow_call *slow_new(const struct sc_stack_event *e)
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
	if (slow_fd(c, e)) {
		slow_call_free(c);
		free(c);
		return NULL;
	}
	return c;
}

/* Samples copied out of the ring and not unwound yet, at most. */
#define QUEUE_MAX 256

/*
 * Two passes: the ring's samples are copied out first, and a process that
 * has new mappings (its first sample, or code mapped since) has them read
 * at once, before it can exit; then the copies are unwound.
 */
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
	if ((e->flags & SC_STACK_F_SLOW) && !(slow = slow_new(e))) {
		d->slow_failed++;
		return 0;
	}
	if (!(e->flags & SC_STACK_F_SLOW) && !d->stacks)
		return 0;
	if (unwinder_new_maps(d->unwinder, e)) {
		/* the process's queued samples belong to its old mappings */
		unwind_queued(d, e->pid, e->start_ns, SIZE_MAX);
		unwinder_note_maps(d->unwinder, e);
	}
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
		d->slow_failed++;
	}
	d->err = -ENOMEM;
	return 0;
}

/* Samples unwound between two looks at the ring: unwinding is slow, and
 * a process whose new mappings wait in the ring may exit meanwhile.
 */
#define UNWIND_BATCH 32

/* Rounds of a drain, at most: a target that makes samples faster than
 * they are unwound must not keep a drain (and the lock) forever.
 */
#define DRAIN_ROUNDS 64

/* With the lock held. Copy out (at most QUEUE_MAX waiting) and unwind, in
 * rounds of UNWIND_BATCH, until the ring and the queue are empty or
 * DRAIN_ROUNDS have passed; what is left waits for the next drain.
 */
static int drain(struct stack_drain *d)
{
	uint64_t t0 = clock_mono_ns();
	int n, rounds = 0;

	do {
		n = ring_buffer__consume(d->rb);
		if (n == -EAGAIN) /* the queue is full: unwind first */
			n = 1;
		unwind_queued(d, 0, 0, UNWIND_BATCH);
	} while (n >= 0 && (n > 0 || d->nqueued) && ++rounds < DRAIN_ROUNDS);
	d->unwind_ns += clock_mono_ns() - t0;
	return n < 0 ? n : 0;
}

#define STACKS_POLL_MS 5

/* What the drain thread needs to read other processes' mappings, fds and
 * binaries.
 */
#define DRAIN_CAPS ((1ULL << CAP_SYS_PTRACE) | (1ULL << CAP_DAC_READ_SEARCH))

static void *drain_thread(void *arg)
{
	struct stack_drain *d = arg;
	int efd = ring_buffer__epoll_fd(d->rb);
	int err;

	/* capabilities are each thread's own: this one drops its own */
	if (d->few_caps && (err = caps_drop_to(DRAIN_CAPS)))
		pr_warn("the stack drain cannot drop capabilities: %s",
			strerror(-err));

	while (!__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
		struct epoll_event ev;

		epoll_wait(efd, &ev, 1, STACKS_POLL_MS);
		pthread_mutex_lock(&d->lock);
		drain(d);
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

void stack_drain_configure(struct scprof_bpf *skel, uint32_t period,
			   bool by_time, uint64_t slow_ns)
{
	skel->rodata->stack_period = period;
	skel->rodata->stack_by_time = by_time && period;
	skel->rodata->stack_budget_ns = by_time ? period * 1000ULL : 0;
	skel->rodata->slow_ns = slow_ns;
	if (!period && !slow_ns) /* the smallest ring buffer: a page */
		bpf_map__set_max_entries(skel->maps.stack_events,
					 (__u32)sysconf(_SC_PAGESIZE));
}

int stack_drain_new(struct stack_drain **out, struct scprof_bpf *skel,
		    uint32_t period, bool by_time, bool slow, bool demangle,
		    bool few_caps)
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
	d->skel = skel;
	d->few_caps = few_caps;
	slowlog_init(&d->slow, SC_SLOW_MAX_PENDING);
	if (period) {
		d->stacks = stacks_new(period);
		if (!d->stacks)
			return -ENOMEM;
		d->stacks->by_time = by_time;
	}
	d->unwinder = unwinder_new(demangle);
	if (!d->unwinder)
		return -ENOMEM;
	d->rb = ring_buffer__new(bpf_map__fd(skel->maps.stack_events),
				 on_stack_event, d, NULL);
	if (!d->rb) {
		err = -errno;
		pr_err("cannot open the stack ring buffer: %s", strerror(-err));
		return err;
	}
	pthread_mutex_init(&d->lock, NULL);
	/* Signals are the main thread's (sigtimedwait): none comes here. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&d->thread, NULL, drain_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the stack drain: %s", strerror(-err));
		pthread_mutex_destroy(&d->lock);
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
	err = d->err;
	pthread_mutex_unlock(&d->lock);
	return err;
}

int stack_drain_add(struct stack_drain *d, struct sc_model *m)
{
	int err;

	if (!d->running || !d->stacks)
		return 0;
	pthread_mutex_lock(&d->lock);
	err = drain(d);
	unwind_queued(d, 0, 0, SIZE_MAX); /* (at most QUEUE_MAX) */
	err = err ?: d->err;
	err = err ?: unwinder_flush(d->unwinder, d->stacks);
	m->stacks = err ? NULL : stacks_clone(d->stacks);
	pthread_mutex_unlock(&d->lock);
	if (err)
		return err;
	if (!m->stacks)
		return -ENOMEM;
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t lost = __atomic_load_n(&d->skel->bss->stack_lost[nr],
						__ATOMIC_RELAXED);

		m->stacks->lost[nr] = lost;
		m->stacks->lost_total += lost;
	}
	stacks_sort(m->stacks);
	return 0;
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
	*lost += d->slow.dropped + d->slow_failed;
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
		pthread_join(d->thread, NULL);
		pthread_mutex_destroy(&d->lock);
		d->running = false;
	}
	if (d->unwinder) {
		unwinder_stats(d->unwinder, &st);
		pr_info("stacks: %llu samples unwound (%llu frames, %llu of "
			"processes gone before their first sample) in %.3f s "
			"of CPU: %.0f samples/s",
			(unsigned long long)st.samples,
			(unsigned long long)st.frames,
			(unsigned long long)st.no_maps,
			(double)d->unwind_ns / 1e9,
			d->unwind_ns ? (double)st.samples * 1e9 /
					       (double)d->unwind_ns :
				       0.0);
	}
	ring_buffer__free(d->rb);
	for (size_t i = 0; i < d->nqueued; i++) {
		if (d->queue[i].slow)
			slow_call_free(d->queue[i].slow);
		free(d->queue[i].slow);
		free(d->queue[i].e);
	}
	free(d->queue);
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

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
 * full: it copies /proc/PID/maps at once (maps_copies.c), and the
 * unwinder reads that copy once the process has gone.
 *
 * The lock keeps snapshots away from the unwinder; qlock guards the stack
 * ring and the queue between the threads (the copies have their own:
 * maps_copies.c).
 *
 * --slow: slow calls come on the same ring, each one waking the thread up.
 * The reader describes each as it comes (slow_event.c: its fd, while the
 * process likely still has it, its split, its longest sleep); its stack
 * is unwound like a sample's, not counted as one, and the call waits in
 * a bounded list until the command takes it (stack_take.c, as the
 * samples are).
 */
#include <errno.h>
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
#include "collect/maps_copies.h"
#include "collect/slow_event.h"
#include "collect/stack_drain_priv.h"
#include "collect/unwind.h"
#include "model/slowlog.h"
#include "model/stacks.h"
#include "util/caps.h"
#include "util/clock.h"
#include "util/log.h"

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

/* A notice of new mappings (reader thread): copy them now. */
static int on_maps_event(void *ctx, void *data, size_t size)
{
	const struct sc_maps_event *n = data;
	struct stack_drain *d = ctx;

	if (size >= sizeof(*n))
		maps_copies_note(d->maps, n->pid, n->start_ns, n->exec_id);
	return 0;
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
	if ((e->flags & SC_STACK_F_SLOW) &&
	    !(slow = slow_event_call(d->ksyms, e))) {
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

int stack_drain_rounds(struct stack_drain *d)
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
		    bool demangle, bool cgroups, bool few_caps,
		    const struct ksyms *ksyms)
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
	d->maps = maps_copies_new();
	if (!d->maps)
		return -ENOMEM;
	unwinder_set_maps_source(d->unwinder, maps_copies_take, d->maps);
	unwinder_set_ksyms(d->unwinder, ksyms);
	unwinder_set_cgroups(d->unwinder, cgroups);
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

int stack_drain_all(struct stack_drain *d)
{
	int err = stack_drain_rounds(d);

	unwind_queued(d, SIZE_MAX); /* (at most QUEUE_MAX) */
	pthread_mutex_lock(&d->qlock);
	err = err ?: d->err ?: d->qerr;
	pthread_mutex_unlock(&d->qlock);
	return err ?: unwinder_flush(d->unwinder, d->stacks);
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
			(unsigned long long)maps_copies_unread(d->maps),
			(double)d->unwind_ns / 1e9,
			d->unwind_ns ? (double)st.samples * 1e9 /
					       (double)d->unwind_ns :
				       0.0);
	}
	ring_buffer__free(d->rb);
	ring_buffer__free(d->mrb);
	if (d->efd >= 0)
		close(d->efd);
	maps_copies_free(d->maps);
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

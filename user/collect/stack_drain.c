// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks: the stack_events ring buffer, drained by a thread of its own,
 * each sample unwound as it comes (unwind.c) while its process's mappings
 * can still be read: the BPF side wakes the thread up at the first sample
 * of a process and when the ring fills up; otherwise it drains every
 * STACKS_POLL_MS. The lock keeps snapshots away from a drain.
 */
#include <errno.h>
#include <stddef.h>
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
#include "model/stacks.h"
#include "util/clock.h"
#include "util/log.h"

struct stack_drain {
	struct scprof_bpf *skel; /* stack_lost */
	struct ring_buffer *rb;
	struct unwinder *unwinder;
	struct sc_stacks *stacks;
	int err;	    /* the first error of the ring buffer's callback */
	uint64_t unwind_ns; /* time spent draining (unwinding) */
	pthread_t thread;   /* drains rb */
	pthread_mutex_t lock; /* rb, unwinder, stacks */
	bool running, stop;
	struct sc_stack_event **queue; /* copied out, to unwind */
	size_t nqueued, queue_cap;
};

/* Unwind the queued samples of one process (all with pid 0), at most max
 * of them, oldest first.
 */
static void unwind_queued(struct stack_drain *d, uint32_t pid, uint64_t start,
			  size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < d->nqueued; i++) {
		struct sc_stack_event *q = d->queue[i];
		int err;

		if ((pid && (q->pid != pid || q->start_ns != start)) || !max) {
			d->queue[k++] = q;
			continue;
		}
		max--;
		err = unwinder_add(d->unwinder, q, d->stacks);
		if (err && !d->err)
			d->err = err;
		free(q);
	}
	d->nqueued = k;
}

/*
 * Two passes: the ring's samples are copied out first, and a process that
 * has new mappings (its first sample, or code mapped since) has them read
 * at once, before it can exit; then the copies are unwound.
 */
static int on_stack_event(void *ctx, void *data, size_t size)
{
	const struct sc_stack_event *e = data;
	struct stack_drain *d = ctx;
	struct sc_stack_event *copy, **q;
	size_t n;

	if (size < sizeof(*e) || e->len > SC_STACK_BYTES)
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
		if (!q) {
			d->err = -ENOMEM;
			return 0;
		}
		d->queue = q;
		d->queue_cap = cap;
	}
	copy = malloc(n);
	if (!copy) {
		d->err = -ENOMEM;
		return 0;
	}
	memcpy(copy, e, n);
	d->queue[d->nqueued++] = copy;
	return 0;
}

/* Samples unwound between two looks at the ring: unwinding is slow, and
 * a process whose new mappings wait in the ring may exit meanwhile.
 */
#define UNWIND_BATCH 32

/* With the lock held. */
static int drain(struct stack_drain *d)
{
	uint64_t t0 = clock_mono_ns();
	int n;

	do {
		n = ring_buffer__consume(d->rb);
		unwind_queued(d, 0, 0, UNWIND_BATCH);
	} while (n >= 0 && d->nqueued);
	d->unwind_ns += clock_mono_ns() - t0;
	return n < 0 ? n : 0;
}

#define STACKS_POLL_MS 5

static void *drain_thread(void *arg)
{
	struct stack_drain *d = arg;
	int efd = ring_buffer__epoll_fd(d->rb);

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
			   bool by_time)
{
	skel->rodata->stack_period = period;
	skel->rodata->stack_by_time = by_time && period;
	skel->rodata->stack_budget_ns = by_time ? period * 1000ULL : 0;
	if (!period) /* the smallest ring buffer: a page */
		bpf_map__set_max_entries(skel->maps.stack_events,
					 (__u32)sysconf(_SC_PAGESIZE));
}

int stack_drain_new(struct stack_drain **out, struct scprof_bpf *skel,
		    uint32_t period, bool by_time, bool demangle)
{
	struct stack_drain *d;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!period)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*out = d;
	d->skel = skel;
	d->stacks = stacks_new(period);
	if (d->stacks)
		d->stacks->by_time = by_time;
	d->unwinder = unwinder_new(demangle);
	if (!d->stacks || !d->unwinder)
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

	if (!d->running)
		return 0;
	pthread_mutex_lock(&d->lock);
	err = drain(d);
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
	for (size_t i = 0; i < d->nqueued; i++)
		free(d->queue[i]);
	free(d->queue);
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

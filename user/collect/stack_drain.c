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
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "collect/collector_priv.h"
#include "collect/unwind.h"
#include "model/stacks.h"
#include "util/clock.h"
#include "util/log.h"

/* Unwind the queued samples of one process (all with pid 0). */
static void unwind_queued(struct collector *c, uint32_t pid, uint64_t start)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nqueued; i++) {
		struct sc_stack_event *q = c->queue[i];
		int err;

		if (pid && (q->pid != pid || q->start_ns != start)) {
			c->queue[k++] = q;
			continue;
		}
		err = unwinder_add(c->unwinder, q, c->stacks);
		if (err && !c->stacks_err)
			c->stacks_err = err;
		free(q);
	}
	c->nqueued = k;
}

/*
 * Two passes: the ring's samples are copied out first, and a process that
 * has new mappings (its first sample, or code mapped since) has them read
 * at once, before it can exit; then the copies are unwound.
 */
static int on_stack_event(void *ctx, void *data, size_t size)
{
	const struct sc_stack_event *e = data;
	struct collector *c = ctx;
	struct sc_stack_event *copy, **q;
	size_t n;

	if (size < sizeof(*e) || e->len > SC_STACK_BYTES)
		return 0;
	if (unwinder_new_maps(c->unwinder, e)) {
		/* the process's queued samples belong to its old mappings */
		unwind_queued(c, e->pid, e->start_ns);
		unwinder_note_maps(c->unwinder, e);
	}
	n = offsetof(struct sc_stack_event, data) + e->len;
	if (c->nqueued == c->queue_cap) {
		size_t cap = c->queue_cap ? c->queue_cap * 2 : 64;

		q = realloc(c->queue, cap * sizeof(*q));
		if (!q) {
			c->stacks_err = -ENOMEM;
			return 0;
		}
		c->queue = q;
		c->queue_cap = cap;
	}
	copy = malloc(n);
	if (!copy) {
		c->stacks_err = -ENOMEM;
		return 0;
	}
	memcpy(copy, e, n);
	c->queue[c->nqueued++] = copy;
	return 0;
}

/* With the lock held. */
static int collector_stacks_drain(struct collector *c)
{
	uint64_t t0 = clock_mono_ns();
	int n = ring_buffer__consume(c->stack_rb);

	unwind_queued(c, 0, 0);
	c->unwind_ns += clock_mono_ns() - t0;
	return n < 0 ? n : 0;
}

#define STACKS_POLL_MS 5

static void *drain_thread(void *arg)
{
	struct collector *c = arg;
	int efd = ring_buffer__epoll_fd(c->stack_rb);

	while (!__atomic_load_n(&c->stacks_stop, __ATOMIC_RELAXED)) {
		struct epoll_event ev;

		epoll_wait(efd, &ev, 1, STACKS_POLL_MS);
		pthread_mutex_lock(&c->stacks_lock);
		collector_stacks_drain(c);
		pthread_mutex_unlock(&c->stacks_lock);
	}
	return NULL;
}

void collector_stacks_configure(struct collector *c)
{
	struct scprof_bpf *skel = c->skel;

	skel->rodata->stack_period = c->opts.stack_period;
	if (!c->opts.stack_period) /* the smallest ring buffer: a page */
		bpf_map__set_max_entries(skel->maps.stack_events,
					 (__u32)sysconf(_SC_PAGESIZE));
}

int collector_stacks_setup(struct collector *c)
{
	sigset_t all, old;
	int err;

	if (!c->opts.stack_period)
		return 0;
	c->stacks = stacks_new(c->opts.stack_period);
	c->unwinder = unwinder_new();
	if (!c->stacks || !c->unwinder)
		return -ENOMEM;
	c->stack_rb = ring_buffer__new(bpf_map__fd(c->skel->maps.stack_events),
				       on_stack_event, c, NULL);
	if (!c->stack_rb) {
		err = -errno;
		pr_err("cannot open the stack ring buffer: %s", strerror(-err));
		return err;
	}
	pthread_mutex_init(&c->stacks_lock, NULL);
	/* Signals are the main thread's (sigtimedwait): none comes here. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&c->stacks_thread, NULL, drain_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the stack drain: %s", strerror(-err));
		pthread_mutex_destroy(&c->stacks_lock);
		return err;
	}
	c->stacks_running = true;
	return 0;
}

int collector__stacks_poll(struct collector *c)
{
	int err;

	if (!c->stacks_running)
		return 0;
	pthread_mutex_lock(&c->stacks_lock);
	err = c->stacks_err;
	pthread_mutex_unlock(&c->stacks_lock);
	if (err)
		pr_err("cannot unwind the sampled stacks: %s", strerror(-err));
	return err;
}

int collector_stacks_add(struct collector *c, struct sc_model *m)
{
	int err;

	if (!c->stacks_running)
		return 0;
	pthread_mutex_lock(&c->stacks_lock);
	err = collector_stacks_drain(c);
	err = err ?: c->stacks_err;
	m->stacks = err ? NULL : stacks_clone(c->stacks);
	pthread_mutex_unlock(&c->stacks_lock);
	if (err)
		return err;
	if (!m->stacks)
		return -ENOMEM;
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t lost = __atomic_load_n(&c->skel->bss->stack_lost[nr],
						__ATOMIC_RELAXED);

		m->stacks->lost[nr] = lost;
		m->stacks->lost_total += lost;
	}
	stacks_sort(m->stacks);
	return 0;
}

void collector_stacks_free(struct collector *c)
{
	struct unwinder_stats st = {};

	if (c->stacks_running) {
		__atomic_store_n(&c->stacks_stop, true, __ATOMIC_RELAXED);
		pthread_join(c->stacks_thread, NULL);
		pthread_mutex_destroy(&c->stacks_lock);
		c->stacks_running = false;
	}
	if (c->unwinder) {
		unwinder_stats(c->unwinder, &st);
		pr_info("stacks: %llu samples unwound (%llu frames, %llu of "
			"processes gone before their first sample) in %.3f s "
			"of CPU: %.0f samples/s",
			(unsigned long long)st.samples,
			(unsigned long long)st.frames,
			(unsigned long long)st.no_maps,
			(double)c->unwind_ns / 1e9,
			c->unwind_ns ? (double)st.samples * 1e9 /
					       (double)c->unwind_ns :
				       0.0);
	}
	ring_buffer__free(c->stack_rb);
	for (size_t i = 0; i < c->nqueued; i++)
		free(c->queue[i]);
	free(c->queue);
	unwinder_free(c->unwinder);
	stacks_free(c->stacks);
}

void collector__unwind_stats(struct collector *c, uint64_t *samples,
			     uint64_t *frames)
{
	struct unwinder_stats st = {};

	if (c->stacks_running) {
		pthread_mutex_lock(&c->stacks_lock);
		unwinder_stats(c->unwinder, &st);
		pthread_mutex_unlock(&c->stacks_lock);
	}
	*samples = st.samples;
	*frames = st.frames;
}

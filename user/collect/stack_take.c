// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks and --slow: what the commands take from the drain
 * (stack_drain.c): a snapshot's stacks, the stacks since the last take
 * and what sampling costs (the daemon's profiles, paced and paused
 * through the mapped .bss), the slow calls not taken yet, and the losses
 * of each.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "collect/collector_priv.h"
#include "collect/stack_drain_priv.h"
#include "collect/unwind.h"
#include "model/slowlog.h"
#include "model/stacks.h"
#include "util/clock.h"

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
	err = stack_drain_all(d);
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
	err = stack_drain_all(d);
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
	err = stack_drain_rounds(d);
	err = err ?: slowlog_move(out, &d->slow);
	*lost += d->slow.dropped +
		 __atomic_load_n(&d->slow_failed, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	return err;
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

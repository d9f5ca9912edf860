/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks and --slow: the drain's state, shared by stack_drain.c (the
 * ring buffers and the threads that copy out and unwind) and
 * stack_take.c (what the commands take: a snapshot's stacks, the stacks
 * since the last take, the slow calls). Include it from those only.
 */
#ifndef SCPROF_STACK_DRAIN_PRIV_H
#define SCPROF_STACK_DRAIN_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/slowlog.h"
#include "model/stacks.h"
#include "sc_stack.h"

struct ksyms;
struct maps_copies;
struct ring_buffer;
struct scprof_bpf;
struct unwinder;

/* A copied event, and for a slow call what is known of it but its stack. */
struct queued {
	struct sc_stack_event *e;
	struct sc_slow_call *slow;
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
	struct maps_copies *maps; /* of processes noticed (maps_events) */
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

/* With the lock held: copy out and unwind, in rounds, until the ring and
 * the queue are empty or enough rounds have passed (a target that makes
 * samples faster than they are unwound must not keep the lock forever);
 * what is left waits for the threads. 0 or -errno.
 */
int stack_drain_rounds(struct stack_drain *d);
/* With the lock held: everything in the ring and the queue unwound into
 * d->stacks. 0 or -errno.
 */
int stack_drain_all(struct stack_drain *d);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The split's samples, drained and named (split_drain.h). A sample's
 * names come from its kernel stacks (collect/kstack.h): where it slept,
 * who woke it, and whether it waited for a lock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "collect/kstack.h"
#include "collect/split_drain.h"
#include "collect/throttle.h"
#include "sc_split.h"
#include "util/caps.h"
#include "util/ksyms.h"
#include "util/clock.h"
#include "util/log.h"

#define SPLIT_POLL_MS 50

#define SPLIT_BUCKETS 16384

struct split_drain {
	struct scprof_bpf *skel;
	struct ring_buffer *rb;
	const struct ksyms *ksyms; /* the collector's; NULL: none */
	pthread_t thread;
	pthread_mutex_t lock; /* rb's consuming, whys and their index */
	struct sc_whys whys;
	uint32_t *bucket; /* SPLIT_BUCKETS heads: an entry's index + 1 */
	uint32_t *next;	  /* the next entry in its bucket (index + 1) */
	size_t next_cap;
	uint64_t dropped;	   /* no room (lock) */
	struct throttle *throttle; /* (lock) */
	bool running, stop, few_caps;
};

/* ---- the estimates ---- */

static uint32_t key_hash(const struct sc_why *e)
{
	uint64_t h = e->pid * 0x9E3779B97F4A7C15ULL ^ e->start_ns;

	h = (h ^ ((uint64_t)e->nr << 32 | e->abi << 16 | e->fd_type)) *
	    0xC2B2AE3D27D4EB4FULL;
	h ^= (uint64_t)e->kind << 8 | e->waker;
	h = (h ^ ((uint64_t)e->opid << 32 | e->otid)) * 0x9E3779B97F4A7C15ULL;
	for (const char *p = e->name; *p && p < e->name + SC_WHY_NAME_LEN; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001B3ULL;
	return (uint32_t)(h >> 40) % SPLIT_BUCKETS;
}

static bool same_what(const struct sc_why *a, const struct sc_why *b)
{
	return a->pid == b->pid && a->start_ns == b->start_ns &&
	       a->cgtag == b->cgtag && a->abi == b->abi && a->nr == b->nr &&
	       a->fd_type == b->fd_type && a->kind == b->kind &&
	       a->waker == b->waker && a->lock == b->lock &&
	       a->opid == b->opid && a->otid == b->otid &&
	       !strncmp(a->name, b->name, SC_WHY_NAME_LEN);
}

/* With the lock held: add e to its estimate. false: no room. */
static bool add(struct split_drain *d, const struct sc_why *e)
{
	uint32_t h = key_hash(e);
	struct sc_why *v;

	for (uint32_t i = d->bucket[h]; i; i = d->next[i - 1]) {
		v = &d->whys.v[i - 1];
		if (same_what(v, e)) {
			v->ns += e->ns;
			v->samples += e->samples;
			return true;
		}
	}
	if (d->whys.n >= SPLIT_MAX_ENTRIES)
		return false;
	if (d->whys.n == d->whys.cap) {
		size_t cap = d->whys.cap ? d->whys.cap * 2 : 256;
		struct sc_why *nv = realloc(d->whys.v, cap * sizeof(*nv));
		uint32_t *nn;

		if (!nv)
			return false;
		d->whys.v = nv;
		d->whys.cap = cap;
		nn = realloc(d->next, cap * sizeof(*nn));
		if (!nn)
			return false;
		d->next = nn;
	}
	d->whys.v[d->whys.n] = *e;
	d->next[d->whys.n] = d->bucket[h];
	d->bucket[h] = (uint32_t)++d->whys.n;
	return true;
}

/* With the lock held: e, or (no room) e under no process. */
static void add_or_fold(struct split_drain *d, struct sc_why *e)
{
	if (add(d, e))
		return;
	e->pid = e->cgtag = 0;
	e->start_ns = 0;
	if (!add(d, e))
		d->dropped++;
}

static void copy_comm(char *dst, const char *src)
{
	memset(dst, 0, SC_WHY_NAME_LEN);
	memcpy(dst, src, strnlen(src, SC_COMM_LEN));
}

/* With the lock held (ring_buffer__consume's callback). */
static int on_event(void *ctx, void *data, size_t size)
{
	const struct sc_split_event *e = data;
	struct split_drain *d = ctx;
	struct sc_why w = { 0 };
	const char *f;
	bool lock;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == SC_SPLIT_MOVED) { /* where its quota is now */
		throttle_poll(d->throttle);
		return 0;
	}
	w.pid = e->proc.tgid;
	w.cgtag = e->proc.cgtag;
	w.start_ns = e->proc.start_ns;
	w.abi = e->abi;
	w.nr = e->nr;
	w.fd_type = e->fd_type;
	w.ns = e->weight_ns;
	w.samples = 1;
	if (e->kind == SC_SPLIT_SLEEP) {
		w.kind = SC_WHY_SLEPT_IN;
		f = kstack_slept_in(d->ksyms, e->sleeper, e->nsleeper, &lock);
		snprintf(w.name, sizeof(w.name), "%s", f ? f : "?");
		w.lock = lock;
		add_or_fold(d, &w);
		memset(w.name, 0, sizeof(w.name));
		w.lock = 0;
		w.kind = SC_WHY_WOKEN_BY;
		w.waker = (uint8_t)kstack_waker(d->ksyms, e->other_comm,
						e->waker, e->nwaker);
		if (w.waker == SC_WAKER_TASK) {
			w.opid = e->other_pid;
			w.otid = e->other_tid;
			copy_comm(w.name, e->other_comm);
		}
		add_or_fold(d, &w);
	} else if (e->other_pid || e->other_tid) { /* not the idle task */
		w.kind = SC_WHY_RAN_INSTEAD;
		w.opid = e->other_pid;
		copy_comm(w.name, e->other_comm);
		add_or_fold(d, &w);
	}
	return 0;
}

/* ---- the thread ---- */

static void *drain_thread(void *arg)
{
	struct split_drain *d = arg;
	int efd = ring_buffer__epoll_fd(d->rb), err;

	/* capabilities are each thread's own: kallsyms needs none more */
	if (d->few_caps && (err = caps_drop_to(0)))
		pr_warn("the split's drain cannot drop capabilities: %s",
			strerror(-err));
	while (!__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
		struct epoll_event ev;

		/* woken by the kernel side (a target's move to another
		 * cgroup at once), else every SPLIT_POLL_MS
		 */
		epoll_wait(efd, &ev, 1, SPLIT_POLL_MS);
		pthread_mutex_lock(&d->lock);
		err = ring_buffer__consume(d->rb);
		throttle_poll(d->throttle);
		pthread_mutex_unlock(&d->lock);
		if (err < 0 && err != -EINTR) {
			pr_warn("the split's ring buffer: %s", strerror(-err));
			break;
		}
	}
	return NULL;
}

int split_drain_new(struct split_drain **out, struct scprof_bpf *skel,
		    bool samples, const struct ksyms *ksyms, bool few_caps)
{
	struct split_drain *d;
	sigset_t all, old;
	int err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->skel = skel;
	d->few_caps = few_caps;
	pthread_mutex_init(&d->lock, NULL);
	if (!samples) { /* the throttling only, read when taken */
		*out = d;
		return 0;
	}
	d->bucket = calloc(SPLIT_BUCKETS, sizeof(*d->bucket));
	if (!d->bucket) {
		split_drain_free(d);
		return -ENOMEM;
	}
	d->ksyms = ksyms;
	d->rb = ring_buffer__new(bpf_map__fd(skel->maps.split_events), on_event,
				 d, NULL);
	if (!d->rb) {
		err = -errno;
		pr_err("cannot open the split's ring buffer: %s",
		       strerror(-err));
		split_drain_free(d);
		return err;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&d->thread, NULL, drain_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the split's drain: %s", strerror(-err));
		split_drain_free(d);
		return err;
	}
	d->running = true;
	*out = d;
	return 0;
}

void split_drain_free(struct split_drain *d)
{
	if (!d)
		return;
	if (d->running) {
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		pthread_join(d->thread, NULL);
	}
	pthread_mutex_destroy(&d->lock);
	ring_buffer__free(d->rb);
	throttle_free(d->throttle);
	whys_free(&d->whys);
	free(d->bucket);
	free(d->next);
	free(d);
}

void split_drain_watch(struct split_drain *d, pid_t pid, const char *dir)
{
	struct throttle *t = throttle_start(pid, dir);

	pthread_mutex_lock(&d->lock);
	throttle_free(d->throttle);
	d->throttle = t;
	pthread_mutex_unlock(&d->lock);
}

int split_drain_take(struct split_drain *d, struct sc_whys *out,
		     struct sc_throttle *throttle)
{
	int err;

	/* what the ring holds now, then a copy */
	pthread_mutex_lock(&d->lock);
	if (d->rb)
		ring_buffer__consume(d->rb);
	err = whys_copy(out, &d->whys);
	throttle_read(d->throttle, throttle);
	pthread_mutex_unlock(&d->lock);
	if (!err)
		whys_sort(out);
	return err;
}

uint64_t split_drain_dropped(const struct split_drain *d)
{
	uint64_t lost =
		__atomic_load_n(&d->skel->bss->split_lost, __ATOMIC_RELAXED);

	return lost + __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector's state, shared by the files that make it up and by no
 * one else (include it only from the .c files of collect/):
 *  - collector.c: the lifecycle, open -> set rodata and map sizes -> load
 *    -> attach -> destroy;
 *  - features.c: what this kernel and these privileges allow, and which
 *    program variants load;
 *  - drain.c: reading the maps into the model (per-CPU sums, snapshots);
 *  - fold.c: moving exited processes out of the maps into userspace.
 */
#ifndef SCPROF_COLLECTOR_PRIV_H
#define SCPROF_COLLECTOR_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "model/model.h"
#include "scprof.skel.h"

struct sc_stack_event;

struct collector {
	struct scprof_bpf *skel;
	struct collector_opts opts;
	struct sc_model *folded; /* processes that exited, out of the maps */
	int cgroup_fd;
	size_t ntargets; /* distinct tgids added before attach */
	pid_t first_target;
	/* The single target process, when there is one and forks are not
	 * followed: its cells are in the solo arrays, not in stats.
	 */
	pid_t solo;
	bool solo_folded; /* it exited: its cells moved to folded */
	bool solo_decided;
	bool attached;
	struct sc_stats *solo_stats; /* full mode: solo_stats, mmapped */
	size_t solo_stats_len;
	uint64_t procs_folded;
	/* opts.in_flight: the task iterator's link, and when the programs
	 * were attached (CLOCK_MONOTONIC), the start of a call that was
	 * running then.
	 */
	struct bpf_link *inflight_link;
	uint64_t attach_ns;
	/* Calls running since before attach, seen in flight at the last
	 * snapshot; their exit is never recorded, so the time they were
	 * credited with is kept in pre_gone once they have ended, and
	 * cumulative snapshots do not go back.
	 */
	struct sc_flight_call *pre;
	size_t npre;
	uint64_t pre_ns; /* when pre was taken (CLOCK_MONOTONIC) */
	struct sc_model *pre_gone;
	/* opts.thread_totals: what dead threads left, by process, until
	 * their process exits (one row each, see tslots.c).
	 */
	struct sc_model *tdone;
	/* opts.stack_period: the sampled stacks (stack_drain.c) */
	struct ring_buffer *stack_rb;
	struct unwinder *unwinder;
	struct sc_stacks *stacks;
	int stacks_err;	    /* the first error of the ring buffer's callback */
	uint64_t unwind_ns; /* time spent draining (unwinding) */
	pthread_t stacks_thread;     /* drains stack_rb */
	pthread_mutex_t stacks_lock; /* stack_rb, unwinder, stacks */
	bool stacks_running, stacks_stop;
	struct sc_stack_event **queue; /* copied out, to unwind */
	size_t nqueued, queue_cap;
};

/* Can this run have a solo target? Decided before load, to size maps. */
static inline bool collector_solo_capable(const struct collector_opts *o)
{
	return o->mode == SC_FILTER_TGID && !o->follow &&
	       o->key_kind == SC_KEY_PROCESS && !o->read_cgid;
}

/* Are the solo arrays in use: a solo target, or every target's calls? */
static inline bool collector_uses_arrays(const struct collector_opts *o)
{
	return collector_solo_capable(o) || o->aggregate;
}

/* cgroups.c */

/* Name the cgroup ids of m's processes (--by cgroup, unit, container):
 * the ones not named yet are looked up under the cgroup2 mount and kept
 * in c->folded, so a cgroup removed later keeps its path; then m gets
 * them all. 0 or -ENOMEM.
 */
int collector_cgroups_name(struct collector *c, struct sc_model *m);

/* features.c */

/* The reasons BPF tracing cannot work here, each said in one line. */
int collector_preflight(void);
/* Before load: choose the programs that load and the fast paths this
 * kernel allows. 0 or -ENOTSUP, reported.
 */
int collector_choose_progs(struct scprof_bpf *skel,
			   const struct collector_opts *o);

/* drain.c */

/* Call fn for every entry of a hash map; fn returns 0 to go on. */
int collector_map_walk(int fd, size_t ksz, size_t vsz,
		       int (*fn)(void *ctx, const void *key, const void *val),
		       void *ctx);
void collector_proc_set_info(struct sc_proc *p,
			     const struct sc_proc_info *info);
/* The solo target's process key, once the programs have seen it. */
bool collector_solo_key(const struct collector *c, struct sc_proc_key *k);
/* Add the solo target's cells to p (its process in some model). */
int collector_solo_add(struct collector *c, struct sc_proc *p);

/* tslots.c */

/* Take the counts of dead threads' slots into c->tdone, free the slots. */
int collector_tslots_reap(struct collector *c);
/* Processes that exited (exited): their final totals into the matching
 * processes of out (when not NULL), and out of the maps and c->tdone.
 */
int collector_tslots_fold(struct collector *c, const struct sc_model *exited,
			  struct sc_model *out);

/* inflight.c */

/* After attach: make the task iterator (opts.in_flight). 0 or -errno. */
int collector_inflight_attach(struct collector *c);
/* Add the calls in flight at now_ns to m (before model_finalize). */
int collector_inflight_add(struct collector *c, uint64_t now_ns,
			   struct sc_model *m);

/* stack_drain.c (--stacks) */

/* Before load: the sampling period (rodata) and the ring buffer's size. */
void collector_stacks_configure(struct collector *c);
/* After load: the ring buffer and the unwinder. 0 or -errno. */
int collector_stacks_setup(struct collector *c);
/* Drain the ring buffer and add the stacks so far to m. 0 or -errno. */
int collector_stacks_add(struct collector *c, struct sc_model *m);
void collector_stacks_free(struct collector *c);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector's state, shared by the files that make it up and by no
 * one else (include it only from the .c files of collect/ and their unit
 * tests):
 *  - collector.c: the lifecycle, open -> set rodata and map sizes -> load
 *    -> attach -> destroy;
 *  - settings.c: the BPF settings (rodata), decided in one place;
 *  - features.c: what this kernel and these privileges allow, and which
 *    program variants load;
 *  - windows.c: sampled mode's latency and cost windows, what the
 *    programs cost;
 *  - drain.c: reading the maps into the model (per-CPU sums, snapshots);
 *  - fold.c: moving exited processes out of the maps into userspace;
 *  - tslots.c, inflight.c, stack_drain.c and stack_take.c, cgroups.c:
 *    per-thread totals, the calls in flight, the sampled stacks and slow
 *    calls, cgroup names.
 */
#ifndef SCPROF_COLLECTOR_PRIV_H
#define SCPROF_COLLECTOR_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "collect/facilities.h"
#include "collect/settings.h"
#include "model/model.h"
#include "sc_settings.h" /* (before the skeleton, which uses it) */
#include "scprof.skel.h"

struct cgroups;
struct inflight;
struct sc_slowlog;
struct stack_drain;

struct collector {
	struct scprof_bpf *skel;
	struct kernel_facilities kern; /* what the kernel offers */
	struct collector_opts opts;    /* the plan's, never changed */
	struct sc_settings settings;   /* the BPF side's, as loaded */
	struct sc_model *folded; /* processes that exited, out of the maps */
	int cgroup_fd;
	size_t ntargets; /* distinct tgids added */
	pid_t one;	 /* SC_CELLS_ONE_TARGET: the target */
	bool one_folded; /* it exited: its cells moved to folded */
	bool attached;
	/* sampled mode: the counting exit program is attached, and
	 * tail-calls the timing one in windows (a latency or cost one)
	 */
	bool counting_exit;
	struct sc_stats *nr_stats; /* the latency array by syscall number,
				     * mmapped (arrays in use, not count-only)
				     */
	size_t nr_stats_len;
	uint64_t procs_folded;
	uint64_t exited_kept, exited_merged, exited_bytes_max; /* for -v */
	uint64_t exited_bytes;	    /* what the exited processes kept one by one
				* in folded hold (fold.c)
				*/
	struct proc_counts *tdone;  /* opts.thread_totals: what dead threads
				      * left, by process, until their process
				      * exits (tslots.c)
				      */
	struct inflight *inflight;  /* opts.in_flight (inflight.c) */
	struct stack_drain *stacks; /* opts.stack_period (stack_drain.c) */
	struct split_drain *split;  /* opts.split (split_drain.c) */
	pid_t first;		    /* the first target added */
	struct cgroups *cgroups;    /* opts.read_cgid: names (cgroups.c) */
	struct ksyms *ksyms;	    /* opts.split: the kernel's names, for both
			      * drains (NULL: unreadable)
			      */
};

/* cgroups.c */

/* Before load: the removed cgroups' ring buffer, a page when not on
 * (opts.read_cgid).
 */
void cgroups_configure(struct scprof_bpf *skel, bool on);
/* After load, when on: the cgroup names the collector keeps, and the
 * reader of the removed cgroups' paths (*out NULL when not on). 0 or
 * -errno, reported.
 */
int cgroups_new(struct cgroups **out, struct scprof_bpf *skel, bool on);
void cgroups_free(struct cgroups *g);
/* Name the cgroup ids of m's processes (--by cgroup, unit, container, pod,
 * qos): m gets the path of each from the names kept (those of cgroups
 * removed while scprof ran among them), else from its directory under the
 * cgroup2 mount; an id found nowhere is counted once in
 * m->meta.cgroups_unnamed, which m gets. 0 or -ENOMEM.
 */
int collector_cgroups_name(struct collector *c, struct sc_model *m);

/* features.c */

/* drain.c */

/* Call fn for every entry of a hash map; fn returns 0 to go on. */
int collector_map_walk(int fd, size_t ksz, size_t vsz,
		       int (*fn)(void *ctx, const void *key, const void *val),
		       void *ctx);
/* Delete n keys of ksz bytes from map fd, in batches (one by one where
 * the kernel has no batch API). How many were there and went.
 */
int collector_map_delete(int fd, const void *keys, size_t ksz, size_t n);
void collector_proc_set_info(struct sc_proc *p,
			     const struct sc_proc_info *info);
/* The one target's process key, once the programs have seen it. */
bool collector_one_key(const struct collector *c, struct sc_proc_key *k);
/* Add the cells of the arrays by syscall number to p: the one target's
 * (its process in some model) or the aggregate's (pid 0).
 */
int collector_arrays_add(struct collector *c, struct sc_proc *p);

/* tslots.c */

/* Take the counts of dead threads' slots into c->tdone, free the slots. */
int collector_tslots_reap(struct collector *c);
/* Processes that exited (exited): their dead slots' final totals into
 * the matching processes of out (when not NULL), and out of c->tdone.
 */
int collector_tslots_fold(struct collector *c, const struct sc_model *exited,
			  struct sc_model *out);
/* With thread_totals: the counts of the threads without a slot, kept in
 * the process's procs entry info, into p's one row (ABI 0, number 0).
 */
int collector_tslots_add_info(const struct collector *c, struct sc_proc *p,
			      const struct sc_proc_info *info);

/* inflight.c */

/* After load: the calls-in-flight reader, when the iterator program
 * loaded (NULL otherwise). 0 or -ENOMEM.
 */
int inflight_new(struct inflight **out, struct scprof_bpf *skel,
		 enum sc_key_kind key_kind);
/* At attach: the iterator's link, and the attach time. 0 or -errno. */
int inflight_attach(struct inflight *f);
/* Add the calls in flight at now_ns to m (before model_finalize). */
int inflight_add(struct inflight *f, uint64_t now_ns, struct sc_model *m);
void inflight_free(struct inflight *f);

/* stack_drain.c and stack_take.c (--stacks, --slow) */

/* Before load: the ring buffers' sizes and the longest sleeps' map, as the
 * settings s want them (stack_period, slow_ns, sleep_on).
 */
void stack_drain_configure(struct scprof_bpf *skel,
			   const struct sc_settings *s);
/* After load: the ring buffer, the unwinder (demangling names or not;
 * keeping stacks apart by cgroup or not, unwinder_set_cgroups) and the
 * thread that drains them (period 0 and no slow: *out NULL), with
 * few_caps keeping only the capabilities it needs; ksyms names kernel
 * frames (kept, not owned; NULL: unnamed). 0 or -errno, reported.
 */
int stack_drain_new(struct stack_drain **out, struct scprof_bpf *skel,
		    uint32_t period, enum sc_stack_weighting by, bool slow,
		    bool demangle, bool cgroups, bool few_caps,
		    const struct ksyms *ksyms);
/* Has the draining thread failed? 0 or its first error (not reported). */
int stack_drain_error(struct stack_drain *d);
/* Drain the ring buffer and add the stacks so far to m. 0 or -errno. */
int stack_drain_add(struct stack_drain *d, struct sc_model *m);
/* Sampling on (false) or off (true) from now, through the mapped .bss;
 * the drain's threads look rarely while it is off.
 */
void stack_drain_pause(struct stack_drain *d, bool paused);
/* The drain's CPU time so far: its two threads', and its takes' (the
 * caller's thread).
 */
uint64_t stack_drain_cpu_ns(struct stack_drain *d);
/* Sample at least 2^shift times less often (at most SC_STACK_MAX_SHIFT). */
void stack_drain_pace(struct stack_drain *d, uint32_t shift);
/* Drain the ring buffer and move the stacks since the last take (or the
 * start) into m, their losses too; the drain starts afresh. 0 or -errno.
 */
int stack_drain_take(struct stack_drain *d, struct sc_model *m);
/* --slow: drain the ring buffer and move the slow calls not taken yet to
 * the end of out; *lost: the slow calls so far that could not be kept
 * (ring buffer or list full, out of memory). 0 or -errno.
 */
int stack_drain_slow_take(struct stack_drain *d, struct sc_slowlog *out,
			  uint64_t *lost);
/* Samples unwound so far and their frames. */
void stack_drain_stats(struct stack_drain *d, uint64_t *samples,
		       uint64_t *frames);
/* Stop the thread and free; safe on NULL. */
void stack_drain_free(struct stack_drain *d);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector owns the BPF side: open, configure, load and attach the
 * programs, then read their maps into the record model. Exited processes
 * are folded out of the maps into userspace as the run goes, so maps hold
 * only live processes.
 */
#ifndef SCPROF_COLLECTOR_H
#define SCPROF_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/facilities.h"
#include "collect/opts.h"
#include "model/facility.h"
#include "model/model.h"
#include "model/slowlog.h"
#include "model/trace_set.h"

/* Sampled mode: what the syscall programs cost, by enum sc_cost_kind,
 * summed over CPUs (cumulative).
 */
struct collector_cost {
	uint64_t runs[SC_COST_COUNT];
	uint64_t timed_runs[SC_COST_COUNT];
	uint64_t timed_ns[SC_COST_COUNT];
};

/* The collector's own state, for self-monitoring. */
struct collector_info {
	unsigned int progs_attached;	   /* BPF links held */
	uint32_t stats_entries, stats_max; /* (process, syscall) cells */
	uint32_t procs_entries, procs_max;
	uint64_t map_bytes;    /* kernel memory of the maps (fdinfo memlock) */
	uint64_t procs_folded; /* exited processes folded out of the maps */
};

struct collector;

/* Checks the kernel and privileges, opens and loads. 0 or -errno, with
 * the reason already reported in one line.
 */
int collector__open(struct collector **out, const struct collector_opts *opts);
/* SC_FILTER_TGID: add a process to the targets; before attach. With
 * SC_CELLS_ONE_TARGET, the first one added is the one target, and no
 * other may be (-EINVAL).
 */
int collector__add_target(struct collector *c, pid_t tgid);
int collector__attach(struct collector *c);
/* Detach the programs, keeping the maps and what they hold; a later
 * collector__attach attaches them again (calibrate's probe effect).
 */
void collector__detach(struct collector *c);
/* Does the sampled mode's window open and close (else the enter program
 * is attached for good, or not at all)?
 */
bool collector__has_windows(const struct collector *c);
/*
 * Sampled mode: open (attach the enter program) or close (detach it) a
 * latency window. Calls are timed only when they begin and end inside
 * one window. 0 or -errno (reported).
 */
int collector__latency_window(struct collector *c, bool open);
/*
 * Sampled mode with tail calls: the counting exit program has no
 * self-timing; what its runs cost is measured in cost windows, where
 * every call goes to the timing program (the enter program detached, so
 * none is timed: the timing program's untimed runs, self-timed).
 */
bool collector__has_cost_windows(const struct collector *c);
void collector__cost_window(struct collector *c, bool open);
/* Sampled mode: the programs' own cost so far. 0 or -errno. */
int collector__cost(struct collector *c, struct collector_cost *out);
/* Move what exited processes left in the maps into userspace. */
int collector__harvest(struct collector *c);
/* Are the maps filling up (a quarter full or more) with exited processes to
 * fold, so that a harvest is due now rather than at the next period? A
 * read of BPF globals.
 */
bool collector__harvest_due(const struct collector *c);
/* Like collector__harvest; when exited is not NULL, also add to it each
 * process folded now, with its final rows, comm and exit code.
 */
int collector__harvest_exited(struct collector *c, struct sc_model *exited);
/* Everything seen so far (folded and live), finalized. Caller frees.
 * With opts.in_flight, the calls in flight are in the model (its flights,
 * and their time so far in their rows), as of now.
 */
int collector__snapshot(struct collector *c, struct sc_model **out);
/* The same, the calls in flight timed up to now_ns (CLOCK_MONOTONIC), so
 * that consecutive reports split a call's time at their boundaries.
 */
int collector__snapshot_at(struct collector *c, uint64_t now_ns,
			   struct sc_model **out);
/* The same for the last report of a run: the exited processes move into
 * it, not copied, and are in no later snapshot.
 */
int collector__snapshot_last(struct collector *c, uint64_t now_ns,
			     struct sc_model **out);
/* opts.thread_totals: each process's totals so far (one row: the sum
 * over its syscalls), its name and state as known; exited processes are
 * in it until they are folded. Caller frees. 0 or -errno.
 */
int collector__proc_totals(struct collector *c, struct sc_model **out);
/* opts.thread_totals: free the slots of threads that exited, if any (one
 * read of a BPF global when none did). A new thread often runs on a dead
 * one's kernel stack and so maps to its slot, which it takes only once
 * freed: until then it counts by process, a hash update a call. Call it
 * often (the daemon: every wake-up), from the thread that folds.
 * 0 or -errno.
 */
int collector__tslots_free(struct collector *c);
/* Fill in the collector's own figures (walks map keys, not values). */
int collector__info(struct collector *c, struct collector_info *out);
/*
 * Can a process without any capability still read and fold these maps
 * through the open descriptors? Recent kernels check privileges when maps
 * and programs are created, not when an open one is used. Tried in a
 * child that drops every capability. 1 yes, 0 no, -errno.
 */
int collector__maps_need_no_caps(struct collector *c);
/* Target processes still alive (SC_FILTER_TGID). */
long collector__live_targets(const struct collector *c);
/* With -v: one line on the exited processes folded, kept one by one and
 * merged so far (nothing when none exited).
 */
void collector__report_folded(const struct collector *c);
/* --stacks: has the unwinding thread failed? 0 or -errno, reported. */
int collector__stacks_poll(struct collector *c);
/* opts.stacks_on_demand: start (on) or stop sampling stacks. Samples
 * come from the calls the enter program sees: in sampled mode, those of
 * the latency windows. 0, or -EINVAL without stacks on demand.
 */
int collector__stacks_sample(struct collector *c, bool on);
/* opts.stacks_on_demand: sample 2^shift times less often than the period
 * (shift 0 to SC_STACK_MAX_SHIFT, more is taken as that), and *cpu_ns:
 * the CPU time the stacks' drain took so far (reading the ring and the
 * processes' mappings, unwinding). 0, or -EINVAL.
 */
int collector__stacks_pace(struct collector *c, uint32_t shift,
			   uint64_t *cpu_ns);
/* opts.stacks_on_demand: the stacks sampled since the last take (or the
 * start), and the samples lost meanwhile, into m->stacks (which the
 * caller frees with m). 0 or -errno.
 */
int collector__stacks_take(struct collector *c, struct sc_model *m);
/* --slow: the slow calls seen since the last take, added to the end of
 * out (which keeps at most its max; the rest it counts dropped); *lost:
 * the slow calls so far the collector could not keep (ring buffer full,
 * its own list full, out of memory). 0 or -errno.
 */
int collector__slow_take(struct collector *c, struct sc_slowlog *out,
			 uint64_t *lost);
/* Samples unwound so far and their frames (for -v). */
void collector__unwind_stats(struct collector *c, uint64_t *samples,
			     uint64_t *frames);
/* Detach and free; safe on NULL. */
void collector__destroy(struct collector *c);

#endif

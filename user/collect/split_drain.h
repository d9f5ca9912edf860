/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split's samples (include/sc_split.h): the split_events ring buffer,
 * drained by a thread of its own, each sample named (the first telling
 * kernel function the sleeper slept in, the waker or the waking context,
 * what ran instead) and added up per row (model/why.h).
 *
 * Bounded: at most SPLIT_MAX_ENTRIES estimates are kept; past that, new
 * ones are kept under no process (pid 0: the row's sum), and those that
 * find no room there either are counted (split_drain_dropped).
 */
#ifndef SCPROF_SPLIT_DRAIN_H
#define SCPROF_SPLIT_DRAIN_H

#include <stdint.h>
#include <sys/types.h>

#include "model/model.h"
#include "model/why.h"

#define SPLIT_MAX_ENTRIES 65536

struct ksyms;
struct scprof_bpf;
struct split_drain;

/* Start draining skel's split_events (the split on, with samples),
 * naming kernel stacks with ksyms (NULL: unnamed; kept, not owned), or
 * without samples (none are sent) keep the throttling only, which
 * split_drain_take reads (no thread). 0 or -errno.
 */
int split_drain_new(struct split_drain **out, struct scprof_bpf *skel,
		    bool samples, const struct ksyms *ksyms, bool few_caps);
void split_drain_free(struct split_drain *d);
/* Watch the CPU quota throttling of pid's cgroup (or, pid 0, of the
 * cgroup v2 directory dir), following pid when it moves (collect/
 * throttle.h), looked at with every drain (SPLIT_POLL_MS at least).
 */
void split_drain_watch(struct split_drain *d, pid_t pid, const char *dir);
/* The estimates so far (cumulative), into out (empty), and the
 * throttling since the start. 0 or -ENOMEM.
 */
int split_drain_take(struct split_drain *d, struct sc_whys *out,
		     struct sc_throttle *throttle);
/* Samples lost: the ring buffer full, or no room for their estimate. */
uint64_t split_drain_dropped(const struct split_drain *d);

#endif

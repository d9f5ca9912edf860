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

#include "model.h"

struct collector_opts {
	enum sc_filter_mode mode;
	const char *cgroup_path; /* SC_FILTER_CGROUP: a cgroup v2 directory */
	bool follow;             /* SC_FILTER_TGID: add children on fork */
	uint32_t max_stats;      /* stats map entries, 0: default */
	uint32_t max_procs;      /* procs map entries, 0: default */
};

struct collector;

/* Checks the kernel and privileges, opens and loads. 0 or -errno, with
 * the reason already reported in one line.
 */
int collector__open(struct collector **out, const struct collector_opts *opts);
/* SC_FILTER_TGID: add a process to the targets; before attach. */
int collector__add_target(struct collector *c, pid_t tgid);
int collector__attach(struct collector *c);
/* Detach the programs, keeping the maps and what they hold; a later
 * collector__attach attaches them again (calibrate's probe effect).
 */
void collector__detach(struct collector *c);
/* Move what exited processes left in the maps into userspace. */
int collector__harvest(struct collector *c);
/* Everything seen so far (folded and live), finalized. Caller frees. */
int collector__snapshot(struct collector *c, struct sc_model **out);
/* Target processes still alive (SC_FILTER_TGID). */
long collector__live_targets(const struct collector *c);
/* Detach and free; safe on NULL. */
void collector__destroy(struct collector *c);

#endif

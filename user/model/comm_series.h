/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-comm counters for a long-running consumer (the daemon): cumulative,
 * never going backwards, and bounded in number.
 *
 * The maps hold each live process under its current name, which changes
 * (exec, prctl), and exited processes are folded away. Summing snapshots by
 * name would therefore make counters go down. Instead every process's
 * growth since it was last seen is attributed to the name it has when it is
 * seen: live processes at each update, exited ones once, with their final
 * figures, when they are folded out of the maps. Only what this remembers
 * per live process is kept (a few counters), and forgotten when the
 * process goes.
 *
 * At most max_series names get a series of their own: the busiest names of
 * an update get free slots, a series that has not grown for idle_ns gives
 * its slot up (and disappears), and everything else is summed into one
 * "other" series. Names are compared after invalid UTF-8 is replaced, so
 * two series never render to the same label value.
 */
#ifndef SCPROF_COMM_SERIES_H
#define SCPROF_COMM_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/group.h"
#include "model/model.h"

/* A series' label: the UTF-8 of a comm (15 bytes, each at worst 3, U+FFFD)
 * or, with --labels, of its label values, each cut to fit, separated by
 * COMM_LABEL_SEP (a byte no UTF-8 has).
 */
#define COMM_LABEL_LEN 512
#define COMM_LABEL_SEP '\xff'

/* Counters only, all uint64_t (summed and subtracted word by word). */
struct comm_counts {
	uint64_t calls, errors, total_ns, bytes;
	/* Of total_ns (the split, sc_split.h): on a CPU, waiting for one,
	 * blocked, of blocked in I/O wait. On a CPU is a counter of its
	 * own (each process's time less its parts), so that it never goes
	 * back when the parts are seen to grow before the total is.
	 */
	uint64_t on_cpu_ns, wait_ns, blocked_ns, iowait_ns;
};

struct comm_series_row {
	char label[COMM_LABEL_LEN]; /* valid UTF-8, not escaped; "" for other */
	bool other;		    /* the bucket of everything else */
	struct comm_counts c;
	uint64_t changed_ns; /* last update that saw it grow */
};

struct comm_series_opts {
	unsigned int max_series; /* names with their own series; 0: only other */
	unsigned int
		max_pending; /* distinct names between two updates (0: auto) */
	uint64_t idle_ns;    /* 0: series are never given up */
	/* the daemon's --labels (comm, cgroup, unit, container); NULL or n
	 * 0: comm
	 */
	const struct group_by *labels;
};

struct comm_series;

int comm_series__new(struct comm_series **out,
		     const struct comm_series_opts *opts);
void comm_series__free(struct comm_series *s);
/* Attribute to their final names what exited processes did since they
 * were last seen. exited: processes with their final rows.
 */
void comm_series__fold(struct comm_series *s, const struct sc_model *exited);
/* Attribute the growth of the live processes of a cumulative snapshot
 * (processes with pid 0, aggregates, are skipped) and settle the series.
 * 0, or -ENOMEM with nothing changed.
 */
int comm_series__update(struct comm_series *s, const struct sc_model *snap,
			uint64_t now_ns);
/* The series in no particular order, then other (always present, last). */
const struct comm_series_row *comm_series__rows(const struct comm_series *s,
						size_t *n);
/* Name-updates whose figures went to other for want of a series (one per
 * name and update), and series given up for being idle.
 */
uint64_t comm_series__folded(const struct comm_series *s);
uint64_t comm_series__evicted(const struct comm_series *s);
/* Processes currently remembered (for self-monitoring and tests). */
size_t comm_series__tracked(const struct comm_series *s);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof top's frame: the processes with calls in an interval delta, with
 * their rates, error share, p99 and top syscalls, sorted by a key; and the
 * frame as lines of text, shared by the full-screen and the batch output.
 */
#ifndef SCPROF_TOP_FRAME_H
#define SCPROF_TOP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/names.h"

enum top_sort {
	TOP_SORT_CALLS,	 /* calls/s */
	TOP_SORT_ERRORS, /* errors/s */
	TOP_SORT_P99,	 /* p99 latency in the interval */
	TOP_SORT_TIME,	 /* time inside syscalls */
	TOP_SORT_COUNT,
};

/* A sort key by its -s name (calls, errors, p99, time). 0 or -EINVAL. */
int top_sort_parse(const char *s, enum top_sort *out);
/* A sort key by its interactive key (c, e, p, t). 0 or -EINVAL. */
int top_sort_by_key(int ch, enum top_sort *out);

/* What a row is: a process, a thread, or the processes of one comm,
 * cgroup, systemd unit or container (as --by defines them); the g key
 * cycles through them.
 */
enum top_group {
	TOP_GROUP_PROCESS,
	TOP_GROUP_THREAD,
	TOP_GROUP_COMM,
	TOP_GROUP_CGROUP,
	TOP_GROUP_UNIT,
	TOP_GROUP_CONTAINER,
	TOP_GROUP_POD,
	TOP_GROUP_QOS,
	TOP_GROUP_COUNT,
};

/* A grouping by its --by key (pid, tid, comm, cgroup, unit, container,
 * pod, qos) or an old name (process, thread). 0 or -EINVAL.
 */
int top_group_parse(const char *s, enum top_group *out);
/* Its --by key. */
const char *top_group_name(enum top_group g);
/* Rows that stand for several processes (comm, cgroup, unit, container). */
bool top_group_is_label(enum top_group g);
/* Rows that need each process's cgroup (cgroup, unit, container). */
bool top_group_needs_cgroups(enum top_group g);

#define TOP_NTOP 3 /* syscalls named per process */

struct top_proc {
	uint32_t pid;	 /* a thread's tid per thread; 0 per label group */
	char label[128]; /* per comm, cgroup, unit, container: raw bytes */
	char comm[SC_COMM_LEN];
	bool exited;
	double calls_s, errors_s;
	double err_pct;
	uint64_t p99_ns;
	double busy_pct; /* wall time inside syscalls / interval, all threads */
	/* Of the time of its calls that returned in the interval (timed:
	 * --latency-duty), the shares waiting for a CPU and blocked (the
	 * split); split false: not known (not measured, or no call
	 * returned timed)
	 */
	bool split;
	double wait_pct, blk_pct;
	struct {
		const char *name;
		char buf[SC_NAME_LEN];
		double calls_s;
	} top[TOP_NTOP];
	int ntop;
	/* Its threads inside a syscall right now, and the longest such
	 * call (name, time so far).
	 */
	unsigned int in_flight;
	char flight_name[SC_NAME_LEN];
	uint64_t flight_ns;
};

struct top_frame {
	uint64_t interval_ns;
	double calls_s, errors_s; /* everything, exited processes included */
	uint64_t dropped;	  /* calls lost in the interval */
	char *lost; /* what the interval lacks, and why; NULL: nothing */
	struct top_proc *procs; /* those with calls in the interval, sorted */
	size_t nprocs;
	bool targets_gone;
	size_t in_flight; /* threads inside a syscall right now */
	/* Share of the interval that calls were timed in (--latency-duty):
	 * p99 and IN-SYS% come from that time only. 1: all of it.
	 */
	double timed_share;
	enum top_group group;
};

/* Build a frame from an interval delta (model_delta). 0 or -ENOMEM. */
int top_frame_build(const struct sc_model *delta, uint64_t interval_ns,
		    enum top_sort sort, struct top_frame *out);
/* The same, rows by group: the delta's entries are threads with
 * TOP_GROUP_THREAD, processes with cgroup ids per unit or container.
 */
int top_frame_build_by(const struct sc_model *delta, uint64_t interval_ns,
		       enum top_sort sort, enum top_group group,
		       struct top_frame *out);
/* The same when calls were timed for timed_ns of the interval only
 * (latency on a duty cycle): IN-SYS% is the share of that time.
 */
int top_frame_build_timed(const struct sc_model *delta, uint64_t interval_ns,
			  uint64_t timed_ns, enum top_sort sort,
			  enum top_group group, struct top_frame *out);
void top_frame_sort(struct top_frame *fr, enum top_sort sort);
void top_frame_free(struct top_frame *fr);
/* The frame as text lines: title, summary, column header, then one line
 * per process (at most max_rows, 0: all). Each line is NUL-terminated
 * without a newline, printable (names escaped). 0 or -ENOMEM; either way
 * the caller frees the lines with top_frame_lines_free.
 */
int top_frame_lines(const struct top_frame *fr, enum top_sort sort,
		    unsigned int max_rows, bool interactive, char ***lines,
		    size_t *n);
void top_frame_lines_free(char **lines, size_t n);

#endif

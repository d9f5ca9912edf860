/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Why calls took their time, beside the split in their rows (struct
 * sc_stats' wait_ns, blocked_ns, iowait_ns): where their blocked time
 * slept in the kernel, who woke them, and what ran while they waited for
 * a CPU. Estimated from time-weighted samples (include/sc_split.h): each
 * entry's ns is what its samples stand for, and the shares among a row's
 * entries of one kind are the shares of that row's blocked (or waiting)
 * time.
 */
#ifndef SCPROF_MODEL_WHY_H
#define SCPROF_MODEL_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sc_why_kind {
	SC_WHY_SLEPT_IN,    /* name: the first telling kernel function */
	SC_WHY_WOKEN_BY,    /* waker: a task (pid, tid, name: its comm), an
			     * interrupt or a timer
			     */
	SC_WHY_RAN_INSTEAD, /* pid, name: the comm of what ran before the
			     * call ran again
			     */
	SC_WHY_KINDS,
};

enum sc_waker {
	SC_WAKER_TASK,
	SC_WAKER_INTERRUPT,
	SC_WAKER_TIMER,
};

#define SC_WHY_NAME_LEN 64

/* One estimate: of a row (a process's, or no process's in a sum), of
 * one kind.
 */
struct sc_why {
	/* the row: its process's key (pid 0 in a sum) and syscall */
	uint32_t pid;
	uint32_t cgtag;
	uint64_t start_ns;
	uint32_t abi;
	uint32_t nr;
	uint32_t fd_type;
	/* what */
	uint8_t kind;  /* enum sc_why_kind */
	uint8_t waker; /* enum sc_waker (SC_WHY_WOKEN_BY) */
	/* SC_WHY_SLEPT_IN: it slept waiting for a lock (a futex, or a
	 * kernel mutex, rwsem or semaphore: their frames, skipped as
	 * generic, lie between the scheduler and the function named)
	 */
	uint8_t lock;
	uint32_t opid; /* the waker's or the other task's (tgid) */
	uint32_t otid;
	char name[SC_WHY_NAME_LEN]; /* raw bytes (a comm): escape to print */
	/* how much */
	uint64_t ns;	  /* the time its samples stand for */
	uint64_t samples; /* how many */
};

/* A list of estimates; sorted: by row (whys_sort), which finding a
 * process's entries uses.
 */
struct sc_whys {
	struct sc_why *v;
	size_t n, cap;
	bool sorted;
};

void whys_free(struct sc_whys *w);
/* A deep copy into dst (empty). 0 or -ENOMEM. */
int whys_copy(struct sc_whys *dst, const struct sc_whys *src);
/* Add e (its ns and samples) to the entry of w with the same row and
 * what, made if missing. 0 or -ENOMEM.
 */
int whys_add(struct sc_whys *w, const struct sc_why *e);
/* Sort w by row and what. */
void whys_sort(struct sc_whys *w);
/* Add src's entries to dst, each under no process (pid 0: a sum). */
int whys_add_anonymous(struct sc_whys *dst, const struct sc_whys *src);
/* Add src's entries of process (pid, start_ns, cgtag) to dst, under no
 * process.
 */
int whys_add_process(struct sc_whys *dst, const struct sc_whys *src,
		     uint32_t pid, uint64_t start_ns, uint32_t cgtag);
/* dst = cur - prev, entry by entry (an interval's); entries that did not
 * grow are left out. 0 or -ENOMEM.
 */
int whys_delta(struct sc_whys *dst, const struct sc_whys *cur,
	       const struct sc_whys *prev);

/*
 * The estimates of kind of one row (abi, nr, fd_type) in w, summed over
 * processes, largest first, each one's ns its share of part (the row's
 * blocked time for where it slept and who woke it, its waiting time for
 * what preempted it) as the samples give it: a new array (the caller
 * frees it), *n of them. NULL with *n 0: none (or out of memory: *n
 * SIZE_MAX).
 */
struct sc_why *whys_of_row(const struct sc_whys *w, uint32_t abi, uint32_t nr,
			   uint32_t fd_type, enum sc_why_kind kind,
			   uint64_t part, size_t *n);

/* "task", "interrupt", "timer". */
const char *why_waker_name(unsigned int waker);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hot path's recording: the one cell update of a call. Cells are per
 * (process, ABI, syscall) in stats, or, for the one target and the
 * aggregate (enum sc_cells), per syscall in nr_counts (per CPU, plain
 * adds) and nr_stats (latency, shared).
 * A cell counts calls, errors (and those by errno, in errnos), interrupted
 * calls, bytes, and in full mode the latency: total, min, max, histogram.
 *
 * Uses the settings progs, cells (settings.bpf.h), and one_ready
 * (filter.bpf.h).
 */
#ifndef SCPROF_RECORD_BPF_H
#define SCPROF_RECORD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "settings.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"
#include "trace_filter.bpf.h"

/* Entries created in stats, less those deleted (userspace takes off what
 * it folds): how full the map is, so userspace folds early.
 */
__s64 stats_used = 0;

/* The general cells, per (process, ABI, syscall), created on first use. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct sc_stats_key);
	__type(value, struct sc_stats);
} stats SEC(".maps");

/*
 * Per (ABI, syscall) cells of no process (key: proc zero): the calls of
 * SC_CELLS_AGGREGATE that the arrays do not take, and the calls of a
 * process that found stats full. Sized for every number of every ABI, plus room
 * for numbers beyond SC_NR_MAX (bogus calls, ENOSYS), which alone can
 * fill it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	/* with --fd-types, room for up to 128 fd calls per ABI in each kind */
	__uint(max_entries, SC_ABI_COUNT *SC_NR_MAX +
				    SC_ABI_COUNT * 128 * SC_FD_COUNT + 1024);
	__type(key, struct sc_stats_key);
	__type(value, struct sc_stats);
} merged SEC(".maps");

/* The arrays by syscall number (SC_CELLS_ONE_TARGET, SC_CELLS_AGGREGATE),
 * full and sampled modes: the native calls' histogram, min and max (the
 * other calls go to stats or merged); the counters are in nr_counts.
 * Sized to one entry by userspace when not in use.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* userspace reads it in place */
	__uint(max_entries, SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_stats);
} nr_stats SEC(".maps");

/* The counters by syscall number, at ABI * SC_NR_MAX + number, per CPU
 * (plain adds); the full and sampled modes use the native ABI's only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SC_ABI_COUNT *SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct sc_counts);
} nr_counts SEC(".maps");

/* Errors by (syscall, ABI, errno), over all processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct sc_errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

static const struct sc_stats zero_stats = {};
static const __u64 zero_count = 0;

/*
 * A process's own cell is written only from its threads. When it has one
 * thread, nothing else can write it meanwhile (a second thread is made by
 * this one, and a thread that exits has run its programs before it leaves
 * the count), so plain adds are exact and spare the locked ones.
 */
static __always_inline bool single_threaded(struct task_struct *task)
{
	return task_nr_threads(task) == 1;
}

static __always_inline void cell_add(__u64 *p, __u64 v, bool own)
{
	if (own)
		*p += v;
	else
		__sync_fetch_and_add(p, v);
}

static __always_inline void count_errno(__u32 nr, __u32 abi, long ret,
					__u32 fd_type)
{
	struct sc_errno_key key = {
		.nr = nr,
		.abi = (__u16)abi,
		.err = (__u16)-ret,
		.fd_type = fd_type,
	};
	__u64 *cnt;

	cnt = lookup_or_init(&errnos, &key, &zero_count, SC_MAP_ERRNOS);
	if (!cnt) {
		count_drop(SC_DROP_ERRNO_DETAIL);
		return;
	}
	__sync_fetch_and_add(cnt, 1);
}

/* The merged cell of (abi, nr, fd_type): no process's. NULL only when
 * merged is full, which takes more than a thousand bogus syscall numbers.
 */
static __always_inline struct sc_stats *merged_cell(__u32 nr, __u32 abi,
						    __u32 fd_type)
{
	struct sc_stats_key key = {
		.nr = nr,
		.abi = abi,
		.fd_type = fd_type,
	};
	struct sc_stats *st;

	st = lookup_or_init(&merged, &key, &zero_stats, SC_MAP_MERGED);
	if (!st)
		count_drop(SC_DROP_CALLS);
	return st;
}

/* The general cell of call c's (process, abi, nr, fd_type) under its
 * cgroup tag, created on first use; when stats is full, the merged cell of
 * (abi, nr, fd_type), so the totals stay exact.
 */
static __always_inline struct sc_stats *
stats_cell(struct task_struct *task, const struct ended_call *c, bool *own)
{
	__u32 nr = c->nr, abi = c->abi, fd_type = c->fd_type;
	struct sc_stats_key key = {
		.nr = nr,
		.abi = abi,
		.fd_type = fd_type,
	};
	struct sc_stats *st;
	int err;

	proc_key_of(task, c->cgtag, &key.proc);
	st = bpf_map_lookup_elem(&stats, &key);
	if (st) {
		*own = single_threaded(task);
		return st;
	}
	/* A new cell: the first call of this syscall by this process. */
	proc_init(task, &key.proc);
	err = map_update(SC_MAP_STATS, &stats, &key, &zero_stats, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&stats_used, 1);
	else if (err != -17 /* EEXIST: another CPU won the race */) {
		map_failed(SC_MAP_STATS, err);
		st = merged_cell(nr, abi, fd_type);
		if (st)
			__sync_fetch_and_add(&unattributed, 1);
		return st;
	}
	return bpf_map_lookup_elem(&stats, &key);
}

/* The cell of a call that the arrays do not take; *own: written by
 * this thread alone (plain adds).
 */
static __always_inline struct sc_stats *
cell_of(struct task_struct *task, const struct ended_call *c, bool *own)
{
	*own = false;
	if (settings.cells == SC_CELLS_AGGREGATE && c->w != WANT_ONE)
		return merged_cell(c->nr, c->abi, c->fd_type);
	return stats_cell(task, c, own);
}

/* The latency part of a cell: min, max and histogram. */
static __always_inline void add_latency(struct sc_stats *st, __u64 delta_ns,
					bool own)
{
	__u32 idx;

	/* min and max race only between threads of one process making the
	 * same syscall at the same instant; a lost update there is benign.
	 */
	if (delta_ns > st->max_ns)
		st->max_ns = delta_ns;
	if (!st->min_ns || delta_ns < st->min_ns)
		st->min_ns = delta_ns;
	idx = sc_hist_bucket(delta_ns);
	barrier_var(idx);
	if (idx >= SC_HIST_BUCKETS)
		idx = SC_HIST_BUCKETS - 1;
	cell_add(&st->hist[idx], 1, own);
}

/* What a call's return value says, into per-CPU counters (plain adds). */
static __always_inline void counts_ret(struct sc_counts *c, __u32 nr, __u32 abi,
				       __u8 fl, long ret)
{
	if (is_error(ret)) {
		c->errors++;
		if (is_interrupted(ret))
			c->interrupted++;
		count_errno(nr, abi, ret, SC_FD_NONE);
	} else if (ret > 0 && (fl & SC_NR_IO)) {
		c->bytes += ret;
	}
}

/* The same into a cell (atomic adds unless own). */
static __always_inline void stats_ret(struct sc_stats *st, __u32 nr, __u32 abi,
				      __u8 fl, long ret, __u32 fd_type,
				      bool own)
{
	if (is_error(ret)) {
		cell_add(&st->errors, 1, own);
		if (is_interrupted(ret))
			cell_add(&st->interrupted, 1, own);
		count_errno(nr, abi, ret, fd_type);
	} else if (ret > 0 && (fl & SC_NR_IO)) {
		cell_add(&st->bytes, ret, own);
	}
}

/* A timed call's split into a cell (nothing for a call never switched
 * out: its time was all on a CPU).
 */
static __always_inline void add_split(struct sc_stats *st,
				      const struct ended_call *call, bool own)
{
	if (!call->wait_ns && !call->blocked_ns)
		return;
	cell_add(&st->wait_ns, call->wait_ns, own);
	cell_add(&st->blocked_ns, call->blocked_ns, own);
	cell_add(&st->iowait_ns, call->iowait_ns, own);
}

/* The arrays' cell update: counters per CPU (plain adds), latency shared. */
static __always_inline void record_in_arrays(struct sc_counts *c,
					     struct sc_stats *st, __u32 nr,
					     __u32 abi, __u8 fl, long ret,
					     const struct ended_call *call,
					     bool timed, bool counted)
{
	if (counted) {
		c->calls++;
		counts_ret(c, nr, abi, fl, ret);
	}
	if (!timed)
		return;
	c->total_ns += call->delta_ns;
	if (call->wait_ns || call->blocked_ns) {
		c->wait_ns += call->wait_ns;
		c->blocked_ns += call->blocked_ns;
		c->iowait_ns += call->iowait_ns;
	}
	add_latency(st, call->delta_ns, false);
}

/*
 * Does a call go to the arrays by syscall number? The one target's and
 * the aggregate's calls do, when the arrays have a cell for them: every
 * ABI's counters in count-only mode; native calls not split by fd kind
 * otherwise (the latency array, nr_stats, has one cell a number).
 */
static __always_inline bool in_arrays(enum want w, __u32 nr, __u32 abi,
				      __u32 fd_type)
{
	if (w != WANT_ONE && settings.cells != SC_CELLS_AGGREGATE)
		return false;
	if (nr >= SC_NR_MAX)
		return false;
	if (settings.progs == SC_PROGS_COUNT_ONLY)
		return abi < SC_ABI_COUNT;
	return abi == SC_ABI_NATIVE && fd_type == SC_FD_NONE;
}

/*
 * The one cell update of a call c (its verdict, number, ABI and fd kind;
 * fl: its flags_of(), which its caller has already read) that returned
 * ret. timed: c->delta_ns is its latency (untimed: a call that never
 * returns, recorded with ret 0; count-only mode; in sampled mode, a call
 * made outside a window). counted: the call is counted here (calls,
 * errors, bytes); not counted: only its latency is added, for a call
 * counted elsewhere (sampled mode's exec, counted at rename). task may be
 * NULL: it is fetched only when needed (a helper call).
 */
static __always_inline void record_call(struct task_struct *task,
					const struct ended_call *c, __u8 fl,
					long ret, bool timed, bool counted)
{
	__u32 nr = c->nr, abi = c->abi;
	struct sc_stats *st = NULL;
	bool own = false;

	if (!counted && !timed)
		return;
	if (in_arrays(c->w, nr, abi, c->fd_type)) {
		__u32 idx = abi * SC_NR_MAX + nr;
		struct sc_counts *cnt;

		if (c->w == WANT_ONE && !one_ready) {
			if (!task)
				task = current_task();
			one_init(task);
		}
		cnt = bpf_map_lookup_elem(&nr_counts, &idx);
		/* (an untimed call touches no latency cell: sampled mode's
		 * calls outside windows are counted as count-only's are)
		 */
		if (settings.progs == SC_PROGS_COUNT_ONLY || !timed) {
			if (!cnt)
				return;
			cnt->calls++;
			counts_ret(cnt, nr, abi, fl, ret);
			return;
		}
		st = bpf_map_lookup_elem(&nr_stats, &nr);
		if (cnt && st) {
			record_in_arrays(cnt, st, nr, abi, fl, ret, c, timed,
					 counted);
			return;
		}
	}
	if (!task)
		task = current_task();
	st = cell_of(task, c, &own);
	if (!st)
		return;
	if (counted) {
		cell_add(&st->calls, 1, own);
		stats_ret(st, nr, abi, fl, ret, c->fd_type, own);
	}
	if (!timed)
		return;
	cell_add(&st->total_ns, c->delta_ns, own);
	add_split(st, c, own);
	add_latency(st, c->delta_ns, own);
}

/* A call counted and, if timed, timed: record_call()'s common case. */
static __always_inline void record(struct task_struct *task,
				   const struct ended_call *c, __u8 fl,
				   long ret, bool timed)
{
	record_call(task, c, fl, ret, timed, true);
}

/*
 * The call the current thread p is in, read from its registers at a
 * tracepoint other than raw_syscalls (a thread leaving through exit, an
 * exec past its point of no return): its verdict, number, ABI and cgroup
 * tag into *c, its flags into *fl. False: not a call to count (p is not
 * the current thread, or not the thread of -p TID, or not a target, or in
 * no call).
 */
static __always_inline bool current_call(struct task_struct *p,
					 struct ended_call *c, __u8 *fl)
{
	if ((__u32)bpf_get_current_pid_tgid() != task_tid(p) || !thread_ok())
		return false;
	c->w = wanted(p);
	if (c->w == WANT_NO || !task_syscall(p, &c->nr, &c->abi))
		return false;
	c->cgtag = cgtag_of(p);
	*fl = flags_of(c->nr, c->abi);
	return true;
}

/* Record such a call as one that returns 0, if -e and -z/-Z want it. */
static __always_inline bool record_current(struct task_struct *p,
					   const struct ended_call *c, __u8 fl)
{
	if (!trace_ok(c->nr, c->abi) || !status_ok(0))
		return false;
	record(p, c, fl, 0, false);
	return true;
}

#endif /* SCPROF_RECORD_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The record model: what was collected, per process and syscall, with the
 * aggregate over all processes. Built by the collector, read by renderers.
 */
#ifndef SCPROF_MODEL_H
#define SCPROF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scprof.h"
#include "model/why.h"

struct sc_stacks;

/* One syscall's figures, in one process or summed over all. */
struct sc_row {
	uint32_t nr;
	uint32_t abi;
	struct sc_stats st;
	uint32_t fd_type; /* enum sc_fd_type: 0 unless split by fd kind */
	/* Time of calls that had not returned when the snapshot was taken,
	 * included in st.total_ns (time shares count it; calls do not), and
	 * how many such calls: st.total_ns - flight_ns is the returned
	 * calls' time, the one per-call averages use. In an interval delta
	 * it is the interval's time less its returned calls' whole latency,
	 * negative when a call returning in it began in an earlier one.
	 */
	int64_t flight_ns;
	uint64_t flight_calls;
};

struct sc_proc {
	uint32_t pid;	   /* with --by tid, a thread: its tid */
	uint64_t start_ns; /* identity beside the pid: pids are reused */
	/* and beside them, the cgroup tag of its calls (struct
	 * sc_proc_key): a process that changed cgroup has one entry per
	 * cgroup (0 unless cgroups are read)
	 */
	uint32_t cgtag;
	uint32_t ppid;
	char comm[SC_COMM_LEN]; /* raw bytes from the kernel: escape to print */
	bool exited;
	int exit_code; /* kernel encoding, as wait(2) reports it */
	/* pid 0 is the aggregate of exited processes not kept one by one:
	 * merged counts them (0 elsewhere, except as a mark while folding).
	 */
	uint32_t merged;
	struct sc_row *rows;
	size_t nrows, cap;
	uint32_t tgid; /* the process of a thread (--by tid); else pid or 0 */
	uint64_t cgid; /* its cgroup v2 id (--by cgroup...), else 0 */
};

struct sc_errno_row {
	uint32_t nr;
	uint32_t abi;
	uint32_t err;
	uint64_t count;
	uint32_t fd_type; /* enum sc_fd_type, as the row it belongs to */
};

/* A call in flight when the snapshot was taken. */
struct sc_flight_call {
	uint32_t pid;
	uint32_t tid;
	uint64_t proc_start_ns;
	uint32_t cgtag; /* its process's (struct sc_proc's) */
	uint32_t nr;
	uint32_t abi;
	uint64_t ns;		/* time inside it so far (since attach, if
			     * it was running then)
			     */
	bool before_attach;	/* running when profiling started */
	char comm[SC_COMM_LEN]; /* raw bytes: escape to print */
};

/* A cgroup's id (its directory's inode number) and path. */
struct sc_cgname {
	uint64_t id;
	char *path; /* raw bytes: escape to print */
};

/* Failed map updates on the BPF side: the map (enum sc_map), the errno (0:
 * one beyond SC_ERRNO_SLOTS), how many.
 */
struct sc_map_fail {
	uint16_t map;
	uint16_t err;
	uint64_t count;
};

#define SC_MAP_FAILS_MAX 32

/* A target's CPU quota throttling over the run (collect/throttle.h): the
 * cgroup holding its quota (its directory), the quota, and what cpu.stat
 * counted.
 */
struct sc_throttle {
	bool known;
	bool v1;	   /* cgroup v1's cpu controller, else v2's */
	char cgroup[4096]; /* raw bytes: escape to print */
	int64_t quota_us;  /* -1: none ("max") */
	uint64_t period_us;
	uint64_t throttled_ns;
	uint64_t nr_throttled; /* periods it was throttled in */
	uint64_t nr_periods;   /* periods it was runnable in */
};

/* A model's figures beside its rows: how it was collected, and what it
 * lacks. Copied whole (model_copy_meta), so no field is forgotten.
 */
struct sc_model_meta {
	uint64_t duration_ns;
	/* Collected with --count-only: calls, errors and bytes are real,
	 * every time field (and so the histograms) is zero.
	 */
	bool count_only;
	/* The calls in flight are known (not in count-only mode, nor in the
	 * daemon).
	 */
	bool flights_known;
	/* What the rows are, as collected: calls on an fd split by its kind
	 * (--fd-types), and entries per thread rather than per process.
	 */
	bool fd_types;
	bool by_threads;
	/* What the BPF side could not keep, by enum sc_drop. */
	uint64_t drops[SC_DROP_COUNT];
	/* Calls of live processes that found no room for a cell of their
	 * own (--max-entries) and were counted in pid 0 instead: the totals
	 * are exact, those processes' rows are not.
	 */
	uint64_t unattributed;
	/* --by and --labels cgroup keys: the cgroups of processes that could
	 * not be named (removed before their path was kept), each counted
	 * once; their keys are "(cgroup id N)".
	 */
	uint64_t cgroups_unnamed;
	/* Why: the failed map updates, by map and errno. */
	struct sc_map_fail fails[SC_MAP_FAILS_MAX];
	uint32_t nfails;
	/* --slow: the threshold (0: off), the slow calls reported one by one
	 * over the run, and those that could not be (ring buffer or list
	 * full). Set by the command that printed them.
	 */
	uint64_t slow_ns;
	uint64_t slow_reported;
	uint64_t slow_lost;
	/* The split of calls' time was measured; its samples (model/why.h)
	 * that were lost (ring buffer full, no room).
	 */
	bool split;
	uint64_t split_lost;
	struct sc_throttle throttle;
};

struct sc_model {
	struct sc_proc *procs;
	size_t nprocs, procs_cap;
	size_t *index; /* open addressing over procs; index_cap slots */
	size_t index_cap;

	/* Filled in by model_finalize(): sums over procs, by (abi, nr). */
	struct sc_row *total;
	size_t ntotal;

	struct sc_errno_row *errnos;
	size_t nerrnos, errnos_cap;

	struct sc_model_meta meta;
	/* The calls in flight at the snapshot (and, in a delta, at its end),
	 * longest first once sorted (known: meta.flights_known).
	 */
	struct sc_flight_call *flights;
	size_t nflights, flights_cap;
	/* The cgroup v2 paths of the processes' cgid (--by cgroup, unit,
	 * container), relative to the cgroup2 mount ("/a.slice/b.service").
	 */
	struct sc_cgname *cgnames;
	size_t ncgnames;
	/* --stacks: the sampled call sites; NULL when not sampled (and in
	 * interval deltas).
	 */
	struct sc_stacks *stacks;
	/* The split's estimates (meta.split): where calls slept, who woke
	 * them, what ran instead.
	 */
	struct sc_whys why;
};

struct sc_model *model_new(void);
void model_free(struct sc_model *m);
/* Deep copy; NULL on allocation failure. */
struct sc_model *model_clone(const struct sc_model *m);
/* dst's meta from src's (dst's rows and lists untouched). */
void model_copy_meta(struct sc_model *dst, const struct sc_model *src);
/* The meta of the interval from prev (NULL: the start) to cur: counters
 * subtracted, the rest cur's.
 */
void model_meta_delta(struct sc_model_meta *d, const struct sc_model_meta *cur,
		      const struct sc_model_meta *prev);
/* Add count failed updates of map with errno err. */
void model_map_fail_add(struct sc_model_meta *meta, uint32_t map, uint32_t err,
			uint64_t count);

/* Hash of a process identity (pid, start_ns, cgtag), for open addressing. */
size_t model_proc_hash(uint32_t pid, uint64_t start_ns, uint32_t cgtag);
/* Find or create the process (pid, start_ns) under cgroup tag cgtag. NULL
 * on allocation failure.
 */
struct sc_proc *model_proc(struct sc_model *m, uint32_t pid, uint64_t start_ns,
			   uint32_t cgtag);
/* The process (pid, start_ns, cgtag) if the model has it, else NULL. */
struct sc_proc *model_find_proc(const struct sc_model *m, uint32_t pid,
				uint64_t start_ns, uint32_t cgtag);
/* The same for the identity of key (a BPF map's). */
static inline struct sc_proc *model_key_proc(struct sc_model *m,
					     const struct sc_proc_key *k)
{
	return model_proc(m, k->tgid, k->start_ns, k->cgtag);
}

static inline struct sc_proc *model_find_key(const struct sc_model *m,
					     const struct sc_proc_key *k)
{
	return model_find_proc(m, k->tgid, k->start_ns, k->cgtag);
}

/* The key of p's entry in the BPF maps. */
static inline struct sc_proc_key model_proc_key(const struct sc_proc *p)
{
	struct sc_proc_key k = { .tgid = p->pid,
				 .cgtag = p->cgtag,
				 .start_ns = p->start_ns };

	return k;
}
/* Add a stats cell to a process. 0 or -ENOMEM. */
int model_proc_add(struct sc_proc *p, uint32_t abi, uint32_t nr,
		   const struct sc_stats *st);
/* The same for calls on one kind of fd (enum sc_fd_type; 0: not split). */
int model_proc_add_fd(struct sc_proc *p, uint32_t abi, uint32_t nr,
		      uint32_t fd_type, const struct sc_stats *st);
/* A call in flight in a process: ns more time in its row, no call. */
int model_proc_add_flight(struct sc_proc *p, uint32_t abi, uint32_t nr,
			  uint32_t fd_type, uint64_t ns, uint64_t ncalls);
/* Add a call to the model's list of calls in flight. 0 or -ENOMEM. */
int model_flight_add(struct sc_model *m, const struct sc_flight_call *f);
/* Sort the calls in flight, longest first. */
void model_flights_sort(struct sc_model *m);
/* Merge all rows of src into dst (both of one process). 0 or -ENOMEM. */
int model_proc_merge(struct sc_proc *dst, const struct sc_proc *src);
int model_errno_add(struct sc_model *m, uint32_t abi, uint32_t nr, uint32_t err,
		    uint64_t count);
int model_errno_add_fd(struct sc_model *m, uint32_t abi, uint32_t nr,
		       uint32_t fd_type, uint32_t err, uint64_t count);

/* Name cgroup id path (a copy); a known id keeps its path. 0 or -ENOMEM. */
int model_cgroup_set(struct sc_model *m, uint64_t id, const char *path);
/* The path of cgroup id, or NULL. */
const char *model_cgroup_path(const struct sc_model *m, uint64_t id);
/* Copy every cgroup name of src into dst. 0 or -ENOMEM. */
int model_cgroups_copy(struct sc_model *dst, const struct sc_model *src);

/* Sum two stats cells into dst. */
void stats_add(struct sc_stats *dst, const struct sc_stats *src);
/* Add row src to dst: its cell and its calls in flight. */
void row_add(struct sc_row *dst, const struct sc_row *src);

/* Compute the totals over all processes. 0 or -ENOMEM. */
int model_finalize(struct sc_model *m);

/* Is anything missing from the model (a drop, or calls not in their
 * process's row)? The report says so first, and a profile's exit status.
 */
bool model_incomplete(const struct sc_model *m);

/* Total calls in rows of an ABI (to decide which tables to print). */
uint64_t model_abi_calls(const struct sc_row *rows, size_t n, uint32_t abi);
/* Does an ABI have a row with calls or time (calls in flight)? */
bool model_abi_seen(const struct sc_row *rows, size_t n, uint32_t abi);

/* A row to show: calls returned, or time spent in calls still in flight. */
static inline bool row_seen(const struct sc_row *r)
{
	return r->st.calls || r->st.total_ns;
}

/* The time of the calls that returned (per-call averages use it). */
static inline uint64_t row_returned_ns(const struct sc_row *r)
{
	int64_t ret = (int64_t)r->st.total_ns - r->flight_ns;

	return ret > 0 ? (uint64_t)ret : 0;
}

/* Of time_ns of a cell's calls (all their time, or the returned calls'),
 * the part on a CPU: less their waits for a CPU and their sleeps, never
 * below zero.
 */
static inline uint64_t stats_on_cpu_ns(const struct sc_stats *st,
				       uint64_t time_ns)
{
	uint64_t off = st->wait_ns + st->blocked_ns;

	return time_ns > off ? time_ns - off : 0;
}

/* The parts of a cell's time the split measures, in the order the
 * Prometheus exposition and the OTLP payload list them.
 */
enum sc_split_part {
	SC_PART_ON_CPU,	  /* of all the calls' time */
	SC_PART_CPU_WAIT, /* waiting for a CPU */
	SC_PART_BLOCKED,  /* asleep */
	SC_PART_IO_WAIT,  /* of blocked, in I/O wait */
	SC_PARTS,
};

static inline uint64_t stats_part_ns(const struct sc_stats *st,
				     enum sc_split_part k)
{
	return k == SC_PART_ON_CPU   ? stats_on_cpu_ns(st, st->total_ns) :
	       k == SC_PART_CPU_WAIT ? st->wait_ns :
	       k == SC_PART_BLOCKED  ? st->blocked_ns :
				       st->iowait_ns;
}

/* cur - prev for a counter that only grows; 0 if it seems to go back
 * (model_meta_delta's, delta.c's and comm_series.c's differences).
 */
static inline uint64_t delta_u64(uint64_t cur, uint64_t prev)
{
	return cur > prev ? cur - prev : 0;
}

#endif

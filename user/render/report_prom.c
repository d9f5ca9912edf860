// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prometheus text format: one HELP and TYPE line per family, then samples
 * `name{label="value",...} number`. Label values are valid UTF-8 with \\,
 * \" and \n escaped (escape.c); counters are cumulative since the daemon
 * attached; histograms are cumulative over `le`, end with +Inf and have
 * _count equal to it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "render/report_prom.h"
#include "render/drops.h"
#include "model/hist.h"
#include "model/names.h"
#include "render/view.h"
#include "util/escape.h"

uint64_t prom_le_ns(unsigned int i)
{
	return 1ULL << (8 + 2 * i);
}

/* ns as exact decimal seconds: 256 -> "0.000000256", 2e9 -> "2". */
static const char *secs(uint64_t ns, char *buf, size_t len)
{
	uint64_t frac = ns % 1000000000ULL;
	int n = snprintf(buf, len, "%" PRIu64, (uint64_t)(ns / 1000000000ULL));

	if (frac && n > 0 && (size_t)n < len) {
		char *p = buf + n;

		snprintf(p, len - (size_t)n, ".%09" PRIu64, (uint64_t)frac);
		p += strlen(p) - 1;
		while (*p == '0')
			*p-- = '\0';
	}
	return buf;
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The finite bounds as label values, "0.000000256" to "68.719476736":
 * made once per exposition.
 */
struct le_labels {
	char s[PROM_LE_COUNT][24];
};

static void histogram(FILE *f, const char *lbl, const struct le_labels *le,
		      const struct sc_stats *st)
{
	uint64_t cum = 0;
	unsigned int b = 0;
	char buf[48];

	for (unsigned int k = 0; k < PROM_LE_COUNT; k++) {
		/* Each bound ends a BPF bucket (which holds (lo, hi]): the
		 * calls up to it are those of that bucket and the ones
		 * before it.
		 */
		unsigned int end = sc_hist_bucket(prom_le_ns(k)) + 1;

		for (; b < end; b++)
			cum += st->hist[b];
		fprintf(f,
			"scprof_syscall_duration_seconds_bucket{%s,le=\"%s\"} "
			"%" PRIu64 "\n",
			lbl, le->s[k], cum);
	}
	for (; b < SC_HIST_BUCKETS; b++)
		cum += st->hist[b];
	fprintf(f,
		"scprof_syscall_duration_seconds_bucket{%s,le=\"+Inf\"} %" PRIu64
		"\n",
		lbl, cum);
	fprintf(f, "scprof_syscall_duration_seconds_sum{%s} %s\n", lbl,
		secs(st->total_ns, buf, sizeof(buf)));
	fprintf(f, "scprof_syscall_duration_seconds_count{%s} %" PRIu64 "\n",
		lbl, cum);
}

/* The split of the time of the calls timed (sc_split.h), per syscall,
 * each row labelled lbl[i]: on a CPU + waiting + blocked is the
 * histogram's _sum.
 */
static void split(FILE *f, const struct sc_model *m, const struct row_view *v,
		  const char (*lbl)[96])
{
	static const struct {
		const char *name, *help;
	} fam[SC_PARTS] = {
		[SC_PART_ON_CPU] = { "scprof_syscall_on_cpu_seconds_total",
				     "Of the wall time inside the system calls timed "
				     "(scprof_syscall_duration_seconds_sum; the daemon samples: "
				     "see scprof_latency_sample_ratio), the time they ran on a "
				     "CPU." },
		[SC_PART_CPU_WAIT] = { "scprof_syscall_cpu_wait_seconds_total",
				       "Of the wall time inside the system calls timed, the time "
				       "they waited for a CPU: runnable, preempted or woken and "
				       "not yet run (CPU quota throttling included)." },
		[SC_PART_BLOCKED] = { "scprof_syscall_blocked_seconds_total",
				      "Of the wall time inside the system calls timed, the time "
				      "they were blocked: asleep until woken." },
		[SC_PART_IO_WAIT] = { "scprof_syscall_io_wait_seconds_total",
				      "Of the time the system calls timed were blocked, the time "
				      "asleep in I/O wait (disk and other block I/O)." },
	};
	char buf[48];

	for (int k = 0; k < SC_PARTS; k++) {
		family(f, fam[k].name, "counter", fam[k].help);
		for (size_t i = 0; i < m->ntotal; i++) {
			uint64_t ns = stats_part_ns(&v[i].row->st, k);

			fprintf(f, "%s{%s} %s\n", fam[k].name, lbl[i],
				secs(ns, buf, sizeof(buf)));
		}
	}
}

static int syscalls(FILE *f, const struct sc_model *m)
{
	struct row_view *v = view_rows(m->total, m->ntotal, COL_NONE);
	char(*lbl)[96];
	struct le_labels le;

	if (m->ntotal && !v)
		return -ENOMEM;
	lbl = calloc(m->ntotal ? m->ntotal : 1, sizeof(*lbl));
	if (!lbl) {
		free(v);
		return -ENOMEM;
	}
	/* Syscall names come from our own tables: nothing to escape. */
	for (size_t i = 0; i < m->ntotal; i++)
		snprintf(lbl[i], sizeof(lbl[i]), "syscall=\"%s\",abi=\"%s\"",
			 v[i].name, names_abi(v[i].row->abi));

	family(f, "scprof_syscalls_total", "counter",
	       "System calls made by the targets, counted when they return "
	       "(exit and exit_group when they are entered).");
	for (size_t i = 0; i < m->ntotal; i++)
		fprintf(f, "scprof_syscalls_total{%s} %" PRIu64 "\n", lbl[i],
			(uint64_t)v[i].row->st.calls);
	family(f, "scprof_syscall_errors_total", "counter",
	       "System calls that returned an error (-4095..-1).");
	for (size_t i = 0; i < m->ntotal; i++)
		fprintf(f, "scprof_syscall_errors_total{%s} %" PRIu64 "\n",
			lbl[i], (uint64_t)v[i].row->st.errors);
	family(f, "scprof_syscall_bytes_total", "counter",
	       "Bytes moved by read/write-family system calls (their positive "
	       "return values).");
	for (size_t i = 0; i < m->ntotal; i++) {
		if (v[i].has_bytes)
			fprintf(f,
				"scprof_syscall_bytes_total{%s} %" PRIu64 "\n",
				lbl[i], (uint64_t)v[i].row->st.bytes);
	}
	family(f, "scprof_syscall_duration_seconds", "histogram",
	       "Wall time inside the system calls that were timed (the "
	       "daemon samples: see scprof_latency_sample_ratio); a bucket "
	       "counts the calls that took at most its bound.");
	for (unsigned int k = 0; k < PROM_LE_COUNT; k++)
		secs(prom_le_ns(k), le.s[k], sizeof(le.s[k]));
	for (size_t i = 0; i < m->ntotal; i++)
		histogram(f, lbl[i], &le, &v[i].row->st);
	if (m->meta.split)
		split(f, m, v, lbl);
	free(lbl);
	free(v);
	return 0;
}

/* The label set of a series: {comm="..."}, or with --labels each label
 * (values split at COMM_LABEL_SEP); other's values are "(other
 * processes)" for comm and "(other)" for the rest. Caller frees.
 */
static char *series_labels(const struct comm_series_row *r,
			   const struct group_by *by)
{
	static const struct group_by comm_only = { { GROUP_COMM }, 1 };
	const char *v = r->label;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	if (!by || !by->n)
		by = &comm_only;
	f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < by->n && !err; i++) {
		const char *end = strchr(v, COMM_LABEL_SEP);
		size_t n = end ? (size_t)(end - v) : strlen(v);
		char *e;

		if (r->other) {
			/* 16+ bytes of ASCII: no comm can be named like
			 * this; no unit, path or container id either
			 */
			v = by->keys[i] == GROUP_COMM ? "(other processes)" :
							"(other)";
			n = strlen(v);
		}
		e = esc_prom_label(v, n);
		if (!e)
			err = -ENOMEM;
		else
			fprintf(f, "%s%s=\"%s\"", i ? "," : "",
				group_key_name(by->keys[i]), e);
		free(e);
		v = r->other || !end ? "" : end + 1;
	}
	if (fclose(f) || err) {
		free(out);
		return NULL;
	}
	return out;
}

static int comms(FILE *f, const struct comm_series_row *rows, size_t n,
		 const struct group_by *labels, bool with_split)
{
	static const struct {
		const char *name, *help;
		size_t off; /* of the counter in struct comm_counts */
		bool ns;    /* a time in ns, shown in seconds */
		bool split; /* a part of the time (sc_split.h) */
	} fam[] = {
		{ "scprof_group_syscalls_total",
		  "System calls by group of processes, grouped by the "
		  "daemon's --labels (comm by default; the busiest groups, "
		  "the others in one series of \"(other)\" values).",
		  offsetof(struct comm_counts, calls), false, false },
		{ "scprof_group_syscall_errors_total",
		  "Failed system calls by group of processes (--labels).",
		  offsetof(struct comm_counts, errors), false, false },
		{ "scprof_group_syscall_seconds_total",
		  "Wall time inside system calls by group of processes "
		  "(of the calls timed: see scprof_latency_sample_ratio).",
		  offsetof(struct comm_counts, total_ns), true, false },
		{ "scprof_group_syscall_bytes_total",
		  "Bytes moved by read/write-family calls by group of "
		  "processes.",
		  offsetof(struct comm_counts, bytes), false, false },
		{ "scprof_group_syscall_on_cpu_seconds_total",
		  "Of the wall time inside the system calls timed by group of "
		  "processes, the time they ran on a CPU.",
		  offsetof(struct comm_counts, on_cpu_ns), true, true },
		{ "scprof_group_syscall_cpu_wait_seconds_total",
		  "Of the wall time inside the system calls timed by group of "
		  "processes, the time they waited for a CPU.",
		  offsetof(struct comm_counts, wait_ns), true, true },
		{ "scprof_group_syscall_blocked_seconds_total",
		  "Of the wall time inside the system calls timed by group of "
		  "processes, the time they were blocked (asleep).",
		  offsetof(struct comm_counts, blocked_ns), true, true },
		{ "scprof_group_syscall_io_wait_seconds_total",
		  "Of that blocked time by group of processes, the time "
		  "asleep in I/O wait.",
		  offsetof(struct comm_counts, iowait_ns), true, true },
	};
	char **lbl = calloc(n ? n : 1, sizeof(*lbl));
	char buf[48];
	int err = 0;

	if (!lbl)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		lbl[i] = series_labels(&rows[i], labels);
		if (!lbl[i])
			err = -ENOMEM;
	}
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]) && !err; k++) {
		if (fam[k].split && !with_split)
			continue;
		family(f, fam[k].name, "counter", fam[k].help);
		for (size_t i = 0; i < n; i++) {
			uint64_t v;

			memcpy(&v, (const char *)&rows[i].c + fam[k].off,
			       sizeof(v));
			if (fam[k].ns)
				secs(v, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "%" PRIu64, v);
			fprintf(f, "%s{%s} %s\n", fam[k].name, lbl[i], buf);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(lbl[i]);
	free(lbl);
	return err;
}

/* The CPU quota throttling of the cgroup holding the first target's
 * quota (or --cgroup's), since the start, when known: labelled with that
 * cgroup's directory.
 */
static int throttling(FILE *f, const struct sc_throttle *t)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "scprof_cgroup_cpu_throttled_seconds_total",
		  "Time the tasks of the cgroup holding the CPU quota of the "
		  "first target (or of --cgroup) were throttled, as its "
		  "cpu.stat counts it (throttled_usec; v1 throttled_time), "
		  "since the daemon attached." },
		{ "scprof_cgroup_cpu_throttled_periods_total",
		  "Quota periods in which that cgroup was throttled "
		  "(cpu.stat nr_throttled)." },
		{ "scprof_cgroup_cpu_periods_total",
		  "Quota periods in which that cgroup had tasks to run "
		  "(cpu.stat nr_periods)." },
	};
	char buf[48], *cg;

	if (!t->known)
		return 0;
	cg = esc_prom_label(t->cgroup, strnlen(t->cgroup, sizeof(t->cgroup)));
	if (!cg)
		return -ENOMEM;
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		family(f, fam[k].name, "counter", fam[k].help);
		if (k == 0)
			secs(t->throttled_ns, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%" PRIu64,
				 k == 1 ? t->nr_throttled : t->nr_periods);
		fprintf(f, "%s{cgroup=\"%s\"} %s\n", fam[k].name, cg, buf);
	}
	free(cg);
	return 0;
}

/* A family of one sample without labels. */
static void single(FILE *f, const char *name, const char *type,
		   const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* A gauge family with a sample for each of the stats and procs maps. */
static void per_map(FILE *f, const char *name, const char *help, uint32_t stats,
		    uint32_t procs)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s{map=\"stats\"} %" PRIu32 "\n", name, stats);
	fprintf(f, "%s{map=\"procs\"} %" PRIu32 "\n", name, procs);
}

/* Seconds or a ratio, as a sample value. */
static const char *num(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.9g", v);
	return buf;
}

/* The duty cycle and what the BPF programs cost. */
/* One sample of a number (seconds or a ratio), labelled or not. */
static void sample(FILE *f, const char *name, const char *labels, double v)
{
	char buf[48];

	fprintf(f, "%s%s %s\n", name, labels, num(v, buf, sizeof(buf)));
}

static void latency_metrics(FILE *f, const struct prom_self *s)
{
	family(f, "scprof_bpf_run_seconds_total", "counter",
	       "CPU time of scprof's syscall programs, and of the split's "
	       "scheduler programs (attached in latency windows), as they "
	       "measure it themselves (one run in 256 timed on each CPU, "
	       "without the tracepoint's own dispatch).");
	sample(f, "scprof_bpf_run_seconds_total", "{program=\"sys_enter\"}",
	       s->enter_s);
	sample(f, "scprof_bpf_run_seconds_total", "{program=\"sys_exit\"}",
	       s->exit_s);
	if (s->split) {
		sample(f, "scprof_bpf_run_seconds_total",
		       "{program=\"sched_switch\"}", s->switch_s);
		sample(f, "scprof_bpf_run_seconds_total",
		       "{program=\"sched_waking\"}", s->waking_s);
	}
	family(f, "scprof_bpf_cost_seconds_total", "counter",
	       "The same CPU time by part: count (every call counted, "
	       "always) and latency (timing calls and splitting their time, "
	       "kept within the budget).");
	sample(f, "scprof_bpf_cost_seconds_total", "{part=\"count\"}",
	       s->count_s);
	sample(f, "scprof_bpf_cost_seconds_total", "{part=\"latency\"}",
	       s->latency_s);
	family(f, "scprof_latency_cost_seconds_total", "counter",
	       "CPU time the latency windows cost: the latency part above and "
	       "the tracepoint's dispatch of every call (and of every context "
	       "switch and wake-up the split's programs run on) while a window "
	       "is open, which the programs cannot time (measured with a "
	       "getppid loop with and without a window, at the start and "
	       "every 5 minutes). --max-overhead holds this.");
	sample(f, "scprof_latency_cost_seconds_total", "", s->latency_cost_s);
	if (s->dispatch_known) {
		family(f, "scprof_latency_dispatch_seconds", "gauge",
		       "That dispatch, per call, as last measured.");
		sample(f, "scprof_latency_dispatch_seconds", "",
		       s->dispatch_ns / 1e9);
	}
	family(f, "scprof_latency_sample_ratio", "gauge",
	       "Share of time that calls were timed, over the last period "
	       "(latency figures come from those calls only).");
	sample(f, "scprof_latency_sample_ratio", "", s->sample_ratio);
	family(f, "scprof_latency_duty_ratio", "gauge",
	       "Share of the current period planned for timing calls.");
	sample(f, "scprof_latency_duty_ratio", "", s->duty_ratio);
	if (s->budgeted) {
		family(f, "scprof_latency_budget_ratio", "gauge",
		       "CPU the latency part may use, as a fraction of one "
		       "CPU (--max-overhead).");
		sample(f, "scprof_latency_budget_ratio", "", s->budget);
	}
	single(f, "scprof_latency_windows_total", "counter",
	       "Latency windows opened.", s->windows);
	single(f, "scprof_latency_windows_closed_early_total", "counter",
	       "Latency windows closed early because the period's budget was "
	       "spent.",
	       s->windows_closed_early);
	if (s->cost_windows) {
		family(f, "scprof_bpf_cost_window_seconds_total", "counter",
		       "Time in cost windows, where the exit program that "
		       "counts hands every call to the one that times, which "
		       "measures what the counting runs cost (the last 1% of "
		       "each period, once 256 runs are timed). Absent where the "
		       "kernel lacks tail calls: the timing program counts "
		       "every call.");
		sample(f, "scprof_bpf_cost_window_seconds_total", "",
		       s->cost_window_s);
	}
}

static void self_metrics(FILE *f, const struct prom_self *s,
			 const struct sc_model *m, bool with_comms)
{
	char buf[48];

	family(f, "scprof_dropped_total", "counter",
	       "What the BPF side could not keep: calls (lost), untimed_calls "
	       "(not timed), process_info (process names), errno_detail "
	       "(errno breakdown), cgroup_moves (moves between cgroups not "
	       "followed), unattributed_calls (counted, not in their "
	       "process's series), cgroup_names (cgroups named by their id "
	       "only); why is in scprof_map_update_failures_total.");
	for (int r = 0; r < DROP_REASONS; r++)
		fprintf(f, "scprof_dropped_total{reason=\"%s\"} %" PRIu64 "\n",
			drop_key(r), drop_count(&m->meta, r));
	family(f, "scprof_map_update_failures_total", "counter",
	       "Failed updates of scprof's BPF maps, by map and errno: E2BIG "
	       "is a full map, any other errno (EBUSY, ENOMEM...) another "
	       "failure.");
	for (uint32_t i = 0; i < m->meta.nfails; i++) {
		const struct sc_map_fail *x = &m->meta.fails[i];
		const char *name = names_errno((int)x->err);

		if (!name) {
			snprintf(buf, sizeof(buf), "%u", x->err);
			name = buf;
		}
		fprintf(f,
			"scprof_map_update_failures_total{map=\"%s\","
			"errno=\"%s\"} %" PRIu64 "\n",
			drop_map_name(x->map), name, x->count);
	}
	single(f, "scprof_bpf_programs_attached", "gauge",
	       "BPF programs attached (links held).", s->progs_attached);
	per_map(f, "scprof_bpf_map_entries",
		"Entries in the BPF maps that hold live processes.",
		s->stats_entries, s->procs_entries);
	per_map(f, "scprof_bpf_map_max_entries", "Capacity of those BPF maps.",
		s->stats_max, s->procs_max);
	single(f, "scprof_bpf_map_memory_bytes", "gauge",
	       "Kernel memory of scprof's BPF maps (fdinfo memlock).",
	       s->map_bytes);
	single(f, "scprof_processes_folded_total", "counter",
	       "Exited processes whose figures were folded out of the BPF "
	       "maps into the totals.",
	       s->procs_folded);
	if (with_comms) {
		single(f, "scprof_group_series_folded_total", "counter",
		       "Groups of processes whose figures went to the other "
		       "series for want of one (once per group and scrape).",
		       s->comm_folded);
		single(f, "scprof_group_series_evicted_total", "counter",
		       "Per-group series dropped after being idle.",
		       s->comm_evicted);
	}
	if (s->sampled)
		latency_metrics(f, s);
	if (s->slow) {
		single(f, "scprof_slow_calls_total", "counter",
		       "Calls that took --slow's threshold or longer, logged "
		       "one by one.",
		       s->slow_calls);
		single(f, "scprof_slow_calls_lost_total", "counter",
		       "Slow calls that could not be logged (the ring buffer "
		       "or the list of calls to log was full).",
		       s->slow_lost);
	}
	if (s->otlp) {
		single(f, "scprof_otlp_exports_sent_total", "counter",
		       "OTLP exports (--otlp-endpoint) the receiver accepted.",
		       s->otlp_sent);
		single(f, "scprof_otlp_exports_failed_total", "counter",
		       "OTLP exports given up: refused for good, or still "
		       "failing after every retry.",
		       s->otlp_failed);
		single(f, "scprof_otlp_exports_dropped_total", "counter",
		       "OTLP exports dropped unsent: the queue was full (the "
		       "oldest goes; the figures are cumulative, the next "
		       "export has them).",
		       s->otlp_dropped);
		single(f, "scprof_otlp_retries_total", "counter",
		       "OTLP export attempts repeated (429, 502, 503, 504, "
		       "connection errors and timeouts).",
		       s->otlp_retries);
		single(f, "scprof_otlp_points_rejected_total", "counter",
		       "Data points the receiver rejected in exports it "
		       "accepted (partial success).",
		       s->otlp_rejected);
		single(f, "scprof_otlp_queued_exports", "gauge",
		       "OTLP exports waiting to be sent.", s->otlp_queued);
	}
	single(f, "scprof_scrapes_total", "counter",
	       "Scrapes of /metrics served.", s->scrapes);
	family(f, "scprof_scrape_duration_seconds", "gauge",
	       "Time this scrape took to read the BPF maps.");
	fprintf(f, "scprof_scrape_duration_seconds %s\n",
		secs(s->scrape_ns, buf, sizeof(buf)));
	family(f, "scprof_cpu_seconds_total", "counter",
	       "CPU time used by the scprof daemon itself (user + system).");
	fprintf(f, "scprof_cpu_seconds_total %s\n",
		secs(s->cpu_ns, buf, sizeof(buf)));
	single(f, "scprof_resident_memory_bytes", "gauge",
	       "Resident memory of the scprof daemon.", s->rss_bytes);
	family(f, "scprof_build_info", "gauge", "scprof's version.");
	fprintf(f, "scprof_build_info{version=\"%s\"} 1\n", SCPROF_VERSION);
}

int report_prom(FILE *f, const struct prom_input *in)
{
	int err = syscalls(f, in->model);

	if (!err && in->comms)
		err = comms(f, in->comms, in->ncomms, in->labels,
			    in->model->meta.split);
	if (!err)
		err = throttling(f, &in->model->meta.throttle);
	if (!err && in->self)
		self_metrics(f, in->self, in->model, in->comms != NULL);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}

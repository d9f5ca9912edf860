// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * OTLP metrics (opentelemetry-proto's metrics/v1, packed by protobuf-c):
 * one ResourceMetrics (the daemon: host, service) with one ScopeMetrics
 * ("scprof") holding a Metric per family of report_prom.c, in its order.
 * Names are chosen so that the OTLP-to-Prometheus translation (dots to
 * underscores, the unit's word added, _total on monotonic sums, _ratio on
 * gauges of unit "1") gives /metrics' names back. The histogram
 * (scprof_syscall_duration_seconds) carries scprof's own buckets, exactly:
 * /metrics' 15 bounds are among them, so its buckets add up from these.
 *
 * Everything the message points to lives in one arena, freed at once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "model/hist.h"
#include "model/names.h"
#include "render/drops.h"
#include "render/otlp.h"
#include "render/view.h"
#include "util/escape.h"

typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberPoint;
typedef Opentelemetry__Proto__Metrics__V1__HistogramDataPoint HistPoint;
typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;

const char *otlp_host_arch(const char *machine)
{
	static const struct {
		const char *uname, *arch;
	} map[] = {
		{ "x86_64", "amd64" },	{ "aarch64", "arm64" },
		{ "arm64", "arm64" },	{ "i386", "x86" },
		{ "i486", "x86" },	{ "i586", "x86" },
		{ "i686", "x86" },	{ "ppc64", "ppc64" },
		{ "ppc64le", "ppc64" }, { "ppc", "ppc32" },
		{ "s390x", "s390x" },	{ "ia64", "ia64" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(machine, map[i].uname))
			return map[i].arch;
	if (!strncmp(machine, "arm", 3))
		return "arm32";
	return machine; /* riscv64, loongarch64...: as the kernel says */
}

/* ---- an arena: every piece of the message, freed at once ------------ */

struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct builder {
	struct chunk *chunks;
	int err;
	Metric **metrics;
	size_t nmetrics, cap;
	uint64_t start_ns, now_ns;
	uint64_t start_mono_ns; /* start_ns on comm_series' clock */
};

#define CHUNK_MIN (64 * 1024)

static void *alloc(struct builder *b, size_t n)
{
	struct chunk *c = b->chunks;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;

		c = malloc(sizeof(*c) + size);
		if (!c) {
			b->err = -ENOMEM;
			return NULL;
		}
		c->size = size;
		c->used = 0;
		c->next = b->chunks;
		b->chunks = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

static void arena_free(struct builder *b)
{
	while (b->chunks) {
		struct chunk *c = b->chunks;

		b->chunks = c->next;
		free(c);
	}
	free(b->metrics);
}

/* Append p to the array *v of *n pointers (grown in the arena). */
static bool push(struct builder *b, void ***v, size_t *n, void *p)
{
	/* capacity: the next power of two from 4 */
	if (*n >= 4 && !(*n & (*n - 1))) {
		void **w = alloc(b, 2 * *n * sizeof(*w));

		if (!w)
			return false;
		memcpy(w, *v, *n * sizeof(*w));
		*v = w;
	} else if (*n == 0) {
		*v = alloc(b, 4 * sizeof(**v));
		if (!*v)
			return false;
	}
	(*v)[(*n)++] = p;
	return true;
}

/* A string as valid UTF-8, in the arena. */
static char *str(struct builder *b, const char *s, size_t len)
{
	char *u = esc_utf8(s, len), *out;

	if (!u) {
		b->err = -ENOMEM;
		return NULL;
	}
	out = alloc(b, strlen(u) + 1);
	if (out)
		strcpy(out, u);
	free(u);
	return out;
}

static KeyValue *kv(struct builder *b, const char *key, const char *val)
{
	KeyValue *k = alloc(b, sizeof(*k));
	AnyValue *v = alloc(b, sizeof(*v));

	if (!k || !v)
		return NULL;
	opentelemetry__proto__common__v1__key_value__init(k);
	opentelemetry__proto__common__v1__any_value__init(v);
	k->key = (char *)key;
	k->value = v;
	v->value_case =
		OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)val;
	return k;
}

/* ---- metrics and points ----------------------------------------------- */

enum kind { SUM, GAUGE };

static Metric *metric(struct builder *b, enum kind kind, const char *name,
		      const char *unit, const char *desc)
{
	Metric *m = alloc(b, sizeof(*m));

	if (!m)
		return NULL;
	opentelemetry__proto__metrics__v1__metric__init(m);
	m->name = (char *)name;
	m->unit = (char *)unit;
	m->description = (char *)desc;
	if (kind == SUM) {
		m->sum = alloc(b, sizeof(*m->sum));
		if (!m->sum)
			return NULL;
		opentelemetry__proto__metrics__v1__sum__init(m->sum);
		m->data_case =
			OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
		m->sum->aggregation_temporality =
			OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
		m->sum->is_monotonic = true;
	} else {
		m->gauge = alloc(b, sizeof(*m->gauge));
		if (!m->gauge)
			return NULL;
		opentelemetry__proto__metrics__v1__gauge__init(m->gauge);
		m->data_case =
			OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
	}
	if (b->nmetrics == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		Metric **v = realloc(b->metrics, cap * sizeof(*v));

		if (!v) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->metrics = v;
		b->cap = cap;
	}
	b->metrics[b->nmetrics++] = m;
	return m;
}

/* A point of m with up to two attributes (NULL keys: none). */
static NumberPoint *point(struct builder *b, Metric *m, const char *k1,
			  const char *v1, const char *k2, const char *v2)
{
	NumberPoint *p;
	bool ok;

	if (!m)
		return NULL;
	p = alloc(b, sizeof(*p));
	if (!p)
		return NULL;
	opentelemetry__proto__metrics__v1__number_data_point__init(p);
	p->time_unix_nano = b->now_ns;
	if (m->data_case ==
	    OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM) {
		p->start_time_unix_nano = b->start_ns;
		ok = push(b, (void ***)&m->sum->data_points,
			  &m->sum->n_data_points, p);
	} else {
		ok = push(b, (void ***)&m->gauge->data_points,
			  &m->gauge->n_data_points, p);
	}
	if (ok && k1)
		ok = push(b, (void ***)&p->attributes, &p->n_attributes,
			  kv(b, k1, v1));
	if (ok && k2)
		ok = push(b, (void ***)&p->attributes, &p->n_attributes,
			  kv(b, k2, v2));
	return ok && !b->err ? p : NULL;
}

static void set_int(NumberPoint *p, uint64_t v)
{
	if (!p)
		return;
	p->value_case =
		OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_INT;
	p->as_int = (int64_t)v;
}

static void set_double(NumberPoint *p, double v)
{
	if (!p)
		return;
	p->value_case =
		OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
	p->as_double = v;
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* A family of one point without attributes. */
static void single_int(struct builder *b, enum kind kind, const char *name,
		       const char *unit, const char *desc, uint64_t v)
{
	set_int(point(b, metric(b, kind, name, unit, desc), NULL, NULL, NULL,
		      NULL),
		v);
}

static void single_double(struct builder *b, enum kind kind, const char *name,
			  const char *unit, const char *desc, double v)
{
	set_double(point(b, metric(b, kind, name, unit, desc), NULL, NULL, NULL,
			 NULL),
		   v);
}

/* ---- the latency histograms ------------------------------------------ */

double otlp_hist_bound_s(unsigned int i)
{
	return (double)sc_hist_upper(i) / 1e9;
}

/*
 * scprof's buckets as they are: OTLP's explicit-bucket histogram, bucket
 * i (explicit_bounds[i-1], explicit_bounds[i]] being scprof's bucket i
 * (sc_hist_lower(i), sc_hist_upper(i)] in seconds, the last one open
 * above like scprof's. No exponential scale does this (docs/daemon.md,
 * "OTLP push"): scale 0 would merge each power of two's four buckets.
 * The bounds are the same in every point and every export.
 */
static HistPoint *hist_point(struct builder *b, const struct sc_stats *st,
			     double *bounds)
{
	HistPoint *p = alloc(b, sizeof(*p));
	uint64_t *counts = alloc(b, SC_HIST_BUCKETS * sizeof(uint64_t));
	uint64_t total = 0;

	if (!p || !counts)
		return NULL;
	opentelemetry__proto__metrics__v1__histogram_data_point__init(p);
	for (unsigned int k = 0; k < SC_HIST_BUCKETS; k++) {
		counts[k] = st->hist[k];
		total += st->hist[k];
	}
	p->start_time_unix_nano = b->start_ns;
	p->time_unix_nano = b->now_ns;
	p->count = total;
	p->sum = seconds(st->total_ns);
	p->n_bucket_counts = SC_HIST_BUCKETS;
	p->bucket_counts = counts;
	p->n_explicit_bounds = OTLP_HIST_BOUNDS;
	p->explicit_bounds = bounds;
	return p;
}

static void histogram(struct builder *b, const struct row_view *v, size_t n,
		      char **sys, char **abi)
{
	Metric *m = metric(b, SUM, "scprof.syscall.duration", "s",
			   "Wall time inside the system calls that were timed "
			   "(the daemon samples: see scprof.latency.sample); "
			   "the buckets are scprof's own, exact.");
	Opentelemetry__Proto__Metrics__V1__Histogram *h;
	double *bounds;

	if (!m)
		return;
	/* not a sum: the histogram in its place */
	h = alloc(b, sizeof(*h));
	bounds = alloc(b, OTLP_HIST_BOUNDS * sizeof(double));
	if (!h || !bounds)
		return;
	for (unsigned int k = 0; k < OTLP_HIST_BOUNDS; k++)
		bounds[k] = otlp_hist_bound_s(k);
	opentelemetry__proto__metrics__v1__histogram__init(h);
	h->aggregation_temporality =
		OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
	m->sum = NULL;
	m->data_case =
		OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM;
	m->histogram = h;
	for (size_t i = 0; i < n && !b->err; i++) {
		HistPoint *p = hist_point(b, &v[i].row->st, bounds);

		if (!p ||
		    !push(b, (void ***)&h->data_points, &h->n_data_points, p) ||
		    !push(b, (void ***)&p->attributes, &p->n_attributes,
			  kv(b, "syscall", sys[i])) ||
		    !push(b, (void ***)&p->attributes, &p->n_attributes,
			  kv(b, "abi", abi[i])))
			return;
	}
}

/* ---- the families, in report_prom.c's order ------------------------- */

static uint64_t on_cpu_ns(const struct sc_stats *st)
{
	uint64_t off = st->wait_ns + st->blocked_ns;

	return st->total_ns > off ? st->total_ns - off : 0;
}

static void syscalls(struct builder *b, const struct sc_model *m)
{
	static const struct {
		const char *name, *desc;
	} split[] = {
		{ "scprof.syscall.on_cpu",
		  "Of the wall time inside the system calls timed, the time "
		  "they ran on a CPU." },
		{ "scprof.syscall.cpu_wait",
		  "Of the wall time inside the system calls timed, the time "
		  "they waited for a CPU." },
		{ "scprof.syscall.blocked",
		  "Of the wall time inside the system calls timed, the time "
		  "they were blocked (asleep until woken)." },
		{ "scprof.syscall.io_wait",
		  "Of the time the system calls timed were blocked, the time "
		  "asleep in I/O wait." },
	};
	struct row_view *v = view_rows(m->total, m->ntotal, COL_NONE);
	char **sys = alloc(b, (m->ntotal + 1) * sizeof(char *));
	char **abi = alloc(b, (m->ntotal + 1) * sizeof(char *));
	Metric *calls, *errors, *bytes;

	if ((m->ntotal && !v) || !sys || !abi) {
		b->err = -ENOMEM;
		free(v);
		return;
	}
	for (size_t i = 0; i < m->ntotal; i++) {
		sys[i] = str(b, v[i].name, strlen(v[i].name));
		abi[i] = (char *)names_abi(v[i].row->abi);
	}
	calls = metric(b, SUM, "scprof.syscalls", "{call}",
		       "System calls made by the targets, counted when they "
		       "return (exit and exit_group when they are entered).");
	errors = metric(b, SUM, "scprof.syscall.errors", "{call}",
			"System calls that returned an error (-4095..-1).");
	bytes = metric(b, SUM, "scprof.syscall.bytes", "By",
		       "Bytes moved by read/write-family system calls.");
	for (size_t i = 0; i < m->ntotal && !b->err; i++) {
		const struct sc_stats *st = &v[i].row->st;

		set_int(point(b, calls, "syscall", sys[i], "abi", abi[i]),
			st->calls);
		set_int(point(b, errors, "syscall", sys[i], "abi", abi[i]),
			st->errors);
		if (v[i].has_bytes)
			set_int(point(b, bytes, "syscall", sys[i], "abi",
				      abi[i]),
				st->bytes);
	}
	histogram(b, v, m->ntotal, sys, abi);
	for (size_t k = 0; m->meta.split && k < 4 && !b->err; k++) {
		Metric *x = metric(b, SUM, split[k].name, "s", split[k].desc);

		for (size_t i = 0; i < m->ntotal; i++) {
			const struct sc_stats *st = &v[i].row->st;
			uint64_t ns = k == 0 ? on_cpu_ns(st) :
				      k == 1 ? st->wait_ns :
				      k == 2 ? st->blocked_ns :
					       st->iowait_ns;

			set_double(point(b, x, "syscall", sys[i], "abi",
					 abi[i]),
				   seconds(ns));
		}
	}
	free(v);
}

/* The attribute name of a --labels key (semantic conventions where they
 * have one).
 */
static const char *label_attr(enum group_key k)
{
	switch (k) {
	case GROUP_COMM:
		return "process.executable.name";
	case GROUP_CGROUP:
		return "process.linux.cgroup";
	case GROUP_UNIT:
		return "systemd.unit";
	case GROUP_CONTAINER:
		return "container.id";
	case GROUP_POD:
		return "k8s.pod.uid";
	case GROUP_QOS:
		return "scprof.k8s.pod.qos_class";
	default:
		return group_key_name(k);
	}
}

/* A series' attributes, as report_prom.c's series_labels makes its
 * labels: the values split at COMM_LABEL_SEP, other's "(other
 * processes)" for comm and "(other)" for the rest.
 */
static bool series_attrs(struct builder *b, NumberPoint *p,
			 const struct comm_series_row *r,
			 const struct group_by *by)
{
	static const struct group_by comm_only = { { GROUP_COMM }, 1 };
	const char *v = r->label;

	if (!p)
		return false;
	if (!by || !by->n)
		by = &comm_only;
	for (size_t i = 0; i < by->n; i++) {
		const char *end = strchr(v, COMM_LABEL_SEP);
		size_t n = end ? (size_t)(end - v) : strlen(v);
		const char *val = v;

		if (r->other) {
			val = by->keys[i] == GROUP_COMM ? "(other processes)" :
							  "(other)";
			n = strlen(val);
		}
		if (!push(b, (void ***)&p->attributes, &p->n_attributes,
			  kv(b, label_attr(by->keys[i]), str(b, val, n))))
			return false;
		v = r->other || !end ? "" : end + 1;
	}
	return !b->err;
}

static void comms(struct builder *b, const struct comm_series_row *rows,
		  size_t n, const struct group_by *labels, bool with_split)
{
	static const struct {
		const char *name, *unit, *desc;
		size_t off;
		bool ns, split;
	} fam[] = {
		{ "scprof.group.syscalls", "{call}",
		  "System calls by group of processes (--labels; the "
		  "busiest groups, the others in "
		  "\"(other processes)\").",
		  offsetof(struct comm_counts, calls), false, false },
		{ "scprof.group.syscall.errors", "{call}",
		  "Failed system calls by group of processes.",
		  offsetof(struct comm_counts, errors), false, false },
		{ "scprof.group.syscall", "s",
		  "Wall time inside system calls by group of processes (of the "
		  "calls timed).",
		  offsetof(struct comm_counts, total_ns), true, false },
		{ "scprof.group.syscall.bytes", "By",
		  "Bytes moved by read/write-family calls by group of processes.",
		  offsetof(struct comm_counts, bytes), false, false },
		{ "scprof.group.syscall.on_cpu", "s",
		  "Of that wall time by group of processes, the time on a CPU.",
		  offsetof(struct comm_counts, on_cpu_ns), true, true },
		{ "scprof.group.syscall.cpu_wait", "s",
		  "Of that wall time by group of processes, the time waiting for a "
		  "CPU.",
		  offsetof(struct comm_counts, wait_ns), true, true },
		{ "scprof.group.syscall.blocked", "s",
		  "Of that wall time by group of processes, the time blocked.",
		  offsetof(struct comm_counts, blocked_ns), true, true },
		{ "scprof.group.syscall.io_wait", "s",
		  "Of that blocked time by group of processes, the time in I/O "
		  "wait.",
		  offsetof(struct comm_counts, iowait_ns), true, true },
	};

	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]) && !b->err; k++) {
		Metric *m;

		if (fam[k].split && !with_split)
			continue;
		m = metric(b, SUM, fam[k].name, fam[k].unit, fam[k].desc);
		for (size_t i = 0; i < n && !b->err; i++) {
			NumberPoint *p = point(b, m, NULL, NULL, NULL, NULL);
			uint64_t v;

			if (!series_attrs(b, p, &rows[i], labels))
				return;
			/* a series made after the start counts from then */
			if (rows[i].born_ns > b->start_mono_ns)
				p->start_time_unix_nano =
					b->start_ns +
					(rows[i].born_ns - b->start_mono_ns);
			memcpy(&v, (const char *)&rows[i].c + fam[k].off,
			       sizeof(v));
			if (fam[k].ns)
				set_double(p, seconds(v));
			else
				set_int(p, v);
		}
	}
}

static void throttling(struct builder *b, const struct sc_throttle *t)
{
	char *cg;

	if (!t->known)
		return;
	cg = str(b, t->cgroup, strnlen(t->cgroup, sizeof(t->cgroup)));
	set_double(point(b,
			 metric(b, SUM, "scprof.cgroup.cpu.throttled", "s",
				"Time the tasks of the cgroup holding the CPU "
				"quota of the first target were throttled, "
				"since the daemon attached."),
			 "cgroup", cg, NULL, NULL),
		   seconds(t->throttled_ns));
	set_int(point(b,
		      metric(b, SUM, "scprof.cgroup.cpu.throttled_periods",
			     "{period}",
			     "Quota periods in which that cgroup was "
			     "throttled."),
		      "cgroup", cg, NULL, NULL),
		t->nr_throttled);
	set_int(point(b,
		      metric(b, SUM, "scprof.cgroup.cpu.periods", "{period}",
			     "Quota periods in which that cgroup had tasks to "
			     "run."),
		      "cgroup", cg, NULL, NULL),
		t->nr_periods);
}

static void latency(struct builder *b, const struct prom_self *s)
{
	Metric *m = metric(b, SUM, "scprof.bpf.run", "s",
			   "CPU time of scprof's syscall programs, and of the "
			   "split's scheduler programs, as they measure it "
			   "themselves.");

	set_double(point(b, m, "program", "sys_enter", NULL, NULL), s->enter_s);
	set_double(point(b, m, "program", "sys_exit", NULL, NULL), s->exit_s);
	if (s->split) {
		set_double(point(b, m, "program", "sched_switch", NULL, NULL),
			   s->switch_s);
		set_double(point(b, m, "program", "sched_waking", NULL, NULL),
			   s->waking_s);
	}
	m = metric(b, SUM, "scprof.bpf.cost", "s",
		   "The same CPU time by part: count and latency.");
	set_double(point(b, m, "part", "count", NULL, NULL), s->count_s);
	set_double(point(b, m, "part", "latency", NULL, NULL), s->latency_s);
	single_double(b, SUM, "scprof.latency.cost", "s",
		      "CPU time the latency windows cost (--max-overhead "
		      "holds this).",
		      s->latency_cost_s);
	if (s->dispatch_known)
		single_double(b, GAUGE, "scprof.latency.dispatch", "s",
			      "The tracepoint's dispatch, per call, as last "
			      "measured.",
			      s->dispatch_ns / 1e9);
	single_double(b, GAUGE, "scprof.latency.sample", "1",
		      "Share of time that calls were timed, over the last "
		      "period.",
		      s->sample_ratio);
	single_double(b, GAUGE, "scprof.latency.duty", "1",
		      "Share of the current period planned for timing calls.",
		      s->duty_ratio);
	if (s->budgeted)
		single_double(b, GAUGE, "scprof.latency.budget", "1",
			      "CPU the latency part may use, as a fraction of "
			      "one CPU (--max-overhead).",
			      s->budget);
	single_int(b, SUM, "scprof.latency.windows", "{window}",
		   "Latency windows opened.", s->windows);
	single_int(b, SUM, "scprof.latency.windows.closed_early", "{window}",
		   "Latency windows closed early because the period's budget "
		   "was spent.",
		   s->windows_closed_early);
	if (s->cost_windows)
		single_double(b, SUM, "scprof.bpf.cost_window", "s",
			      "Time in cost windows.", s->cost_window_s);
}

static void self_metrics(struct builder *b, const struct prom_self *s,
			 const struct sc_model *m, bool with_comms)
{
	Metric *x = metric(b, SUM, "scprof.dropped", "{event}",
			   "What the BPF side could not keep, by reason (see "
			   "scprof daemon's /metrics).");

	for (int r = 0; r < DROP_REASONS; r++)
		set_int(point(b, x, "reason", drop_key(r), NULL, NULL),
			drop_count(&m->meta, r));
	x = metric(b, SUM, "scprof.map.update_failures", "{failure}",
		   "Failed updates of scprof's BPF maps, by map and errno.");
	for (uint32_t i = 0; i < m->meta.nfails && !b->err; i++) {
		const struct sc_map_fail *f = &m->meta.fails[i];
		const char *name = names_errno((int)f->err);
		char *num;

		if (!name) {
			num = alloc(b, 16);
			if (!num)
				return;
			snprintf(num, 16, "%u", f->err);
			name = num;
		}
		set_int(point(b, x, "map", drop_map_name(f->map), "errno",
			      name),
			f->count);
	}
	single_int(b, GAUGE, "scprof.bpf.programs_attached", "{program}",
		   "BPF programs attached (links held).", s->progs_attached);
	x = metric(b, GAUGE, "scprof.bpf.map.entries", "{entry}",
		   "Entries in the BPF maps that hold live processes.");
	set_int(point(b, x, "map", "stats", NULL, NULL), s->stats_entries);
	set_int(point(b, x, "map", "procs", NULL, NULL), s->procs_entries);
	x = metric(b, GAUGE, "scprof.bpf.map.max_entries", "{entry}",
		   "Capacity of those BPF maps.");
	set_int(point(b, x, "map", "stats", NULL, NULL), s->stats_max);
	set_int(point(b, x, "map", "procs", NULL, NULL), s->procs_max);
	single_int(b, GAUGE, "scprof.bpf.map.memory", "By",
		   "Kernel memory of scprof's BPF maps.", s->map_bytes);
	single_int(b, SUM, "scprof.processes.folded", "{process}",
		   "Exited processes folded out of the BPF maps.",
		   s->procs_folded);
	if (with_comms) {
		single_int(b, SUM, "scprof.group.series.folded", "{series}",
			   "Names whose figures went to the other series for "
			   "want of a series.",
			   s->comm_folded);
		single_int(b, SUM, "scprof.group.series.evicted", "{series}",
			   "Series dropped after being idle.", s->comm_evicted);
	}
	if (s->sampled)
		latency(b, s);
	if (s->slow) {
		single_int(b, SUM, "scprof.slow.calls", "{call}",
			   "Calls that took --slow's threshold or longer.",
			   s->slow_calls);
		single_int(b, SUM, "scprof.slow.calls.lost", "{call}",
			   "Slow calls that could not be logged.",
			   s->slow_lost);
	}
	if (s->otlp) {
		single_int(b, SUM, "scprof.otlp.exports.sent", "{export}",
			   "OTLP exports the receiver accepted.", s->otlp_sent);
		single_int(b, SUM, "scprof.otlp.exports.failed", "{export}",
			   "OTLP exports given up: refused for good, or "
			   "still failing after every retry.",
			   s->otlp_failed);
		single_int(b, SUM, "scprof.otlp.exports.dropped", "{export}",
			   "OTLP exports dropped unsent: the queue was full.",
			   s->otlp_dropped);
		single_int(b, SUM, "scprof.otlp.retries", "{attempt}",
			   "OTLP export attempts repeated (429, 502, 503, "
			   "504, connection errors).",
			   s->otlp_retries);
		single_int(b, SUM, "scprof.otlp.points.rejected", "{point}",
			   "Data points the receiver rejected in exports it "
			   "accepted (partial success).",
			   s->otlp_rejected);
		single_int(b, GAUGE, "scprof.otlp.queued_exports", "{export}",
			   "OTLP exports waiting to be sent.", s->otlp_queued);
	}
	single_int(b, SUM, "scprof.scrapes", "{scrape}",
		   "Scrapes of /metrics served.", s->scrapes);
	single_double(b, GAUGE, "scprof.scrape.duration", "s",
		      "Time the last reading of the BPF maps took.",
		      seconds(s->scrape_ns));
	single_double(b, SUM, "scprof.cpu", "s",
		      "CPU time used by the scprof daemon itself (user + "
		      "system).",
		      seconds(s->cpu_ns));
	single_int(b, GAUGE, "scprof.resident_memory", "By",
		   "Resident memory of the scprof daemon.", s->rss_bytes);
	set_int(point(b,
		      metric(b, GAUGE, "scprof.build_info", "",
			     "scprof's version."),
		      "version", SCPROF_VERSION, NULL, NULL),
		1);
}

/* ---- the request ------------------------------------------------------ */

static int pack(struct builder *b, const struct otlp_resource *res,
		uint8_t **buf, size_t *len)
{
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest
		req;
	Opentelemetry__Proto__Metrics__V1__ResourceMetrics rm, *rmp = &rm;
	Opentelemetry__Proto__Metrics__V1__ScopeMetrics sm, *smp = &sm;
	Opentelemetry__Proto__Resource__V1__Resource r;
	Opentelemetry__Proto__Common__V1__InstrumentationScope scope;
	KeyValue *attrs[] = {
		kv(b, "service.name", "scprof"),
		kv(b, "service.version", SCPROF_VERSION),
		kv(b, "service.instance.id",
		   str(b, res->instance_id, strlen(res->instance_id))),
		kv(b, "host.name",
		   str(b, res->host_name, strlen(res->host_name))),
		kv(b, "host.arch", (char *)res->host_arch),
		kv(b, "os.type", "linux"),
	};

	if (b->err)
		return b->err;
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__init(
		&req);
	opentelemetry__proto__metrics__v1__resource_metrics__init(&rm);
	opentelemetry__proto__metrics__v1__scope_metrics__init(&sm);
	opentelemetry__proto__resource__v1__resource__init(&r);
	opentelemetry__proto__common__v1__instrumentation_scope__init(&scope);
	r.attributes = attrs;
	r.n_attributes = sizeof(attrs) / sizeof(attrs[0]);
	scope.name = "scprof";
	scope.version = SCPROF_VERSION;
	sm.scope = &scope;
	sm.metrics = b->metrics;
	sm.n_metrics = b->nmetrics;
	rm.resource = &r;
	rm.scope_metrics = &smp;
	rm.n_scope_metrics = 1;
	req.resource_metrics = &rmp;
	req.n_resource_metrics = 1;
	*len = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__get_packed_size(
		&req);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -ENOMEM;
	if (opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__pack(
		    &req, *buf) != *len) {
		free(*buf);
		*buf = NULL;
		return -EIO;
	}
	return 0;
}

int otlp_render(const struct otlp_input *in, uint8_t **buf, size_t *len)
{
	const struct prom_input *pi = in->prom;
	struct builder b = {
		.start_ns = in->start_unix_ns,
		.now_ns = in->now_unix_ns,
		.start_mono_ns = in->start_mono_ns,
	};
	int err;

	*buf = NULL;
	*len = 0;
	syscalls(&b, pi->model);
	if (!b.err && pi->comms)
		comms(&b, pi->comms, pi->ncomms, pi->labels,
		      pi->model->meta.split);
	if (!b.err)
		throttling(&b, &pi->model->meta.throttle);
	if (!b.err && pi->self)
		self_metrics(&b, pi->self, pi->model, pi->comms != NULL);
	err = b.err ?: pack(&b, in->res, buf, len);
	arena_free(&b);
	return err;
}

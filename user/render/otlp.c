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
 * The message is built with otlp_msg.h; scprof's own families are
 * otlp_self.c's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/hist.h"
#include "model/names.h"
#include "render/otlp.h"
#include "render/otlp_msg.h"
#include "render/otlp_self.h"
#include "render/view.h"

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
static HistPoint *hist_point(struct otlp_msg *b, const struct sc_stats *st,
			     double *bounds)
{
	HistPoint *p = otlp_alloc(b, sizeof(*p));
	uint64_t *counts = otlp_alloc(b, SC_HIST_BUCKETS * sizeof(uint64_t));
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
	p->sum = otlp_seconds(st->total_ns);
	p->n_bucket_counts = SC_HIST_BUCKETS;
	p->bucket_counts = counts;
	p->n_explicit_bounds = OTLP_HIST_BOUNDS;
	p->explicit_bounds = bounds;
	return p;
}

static void histogram(struct otlp_msg *b, const struct row_view *v, size_t n,
		      char **sys, char **abi)
{
	Metric *m =
		otlp_metric(b, OTLP_SUM, "scprof.syscall.duration", "s",
			    "Wall time inside the system calls that were timed "
			    "(the daemon samples: see scprof.latency.sample); "
			    "the buckets are scprof's own, exact.");
	Opentelemetry__Proto__Metrics__V1__Histogram *h;
	double *bounds;

	if (!m)
		return;
	/* not a sum: the histogram in its place */
	h = otlp_alloc(b, sizeof(*h));
	bounds = otlp_alloc(b, OTLP_HIST_BOUNDS * sizeof(double));
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
		    !otlp_push(b, (void ***)&h->data_points, &h->n_data_points,
			       p) ||
		    !otlp_push(b, (void ***)&p->attributes, &p->n_attributes,
			       otlp_kv(b, "syscall", sys[i])) ||
		    !otlp_push(b, (void ***)&p->attributes, &p->n_attributes,
			       otlp_kv(b, "abi", abi[i])))
			return;
	}
}

/* ---- the families, in report_prom.c's order ------------------------- */

static void syscalls(struct otlp_msg *b, const struct sc_model *m)
{
	static const struct {
		const char *name, *desc;
	} split[SC_PARTS] = {
		[SC_PART_ON_CPU] = { "scprof.syscall.on_cpu",
				     "Of the wall time inside the system calls timed, the time "
				     "they ran on a CPU." },
		[SC_PART_CPU_WAIT] = { "scprof.syscall.cpu_wait",
				       "Of the wall time inside the system calls timed, the time "
				       "they waited for a CPU." },
		[SC_PART_BLOCKED] = { "scprof.syscall.blocked",
				      "Of the wall time inside the system calls timed, the time "
				      "they were blocked (asleep until woken)." },
		[SC_PART_IO_WAIT] = { "scprof.syscall.io_wait",
				      "Of the time the system calls timed were blocked, the time "
				      "asleep in I/O wait." },
	};
	struct row_view *v = view_rows(m->total, m->ntotal, COL_NONE);
	char **sys = otlp_alloc(b, (m->ntotal + 1) * sizeof(char *));
	char **abi = otlp_alloc(b, (m->ntotal + 1) * sizeof(char *));
	Metric *calls, *errors, *bytes;

	if ((m->ntotal && !v) || !sys || !abi) {
		b->err = -ENOMEM;
		free(v);
		return;
	}
	for (size_t i = 0; i < m->ntotal; i++) {
		sys[i] = otlp_str(b, v[i].name, strlen(v[i].name));
		abi[i] = (char *)names_abi(v[i].row->abi);
	}
	calls = otlp_metric(
		b, OTLP_SUM, "scprof.syscalls", "{call}",
		"System calls made by the targets, counted when they "
		"return (exit and exit_group when they are entered).");
	errors =
		otlp_metric(b, OTLP_SUM, "scprof.syscall.errors", "{call}",
			    "System calls that returned an error (-4095..-1).");
	bytes = otlp_metric(b, OTLP_SUM, "scprof.syscall.bytes", "By",
			    "Bytes moved by read/write-family system calls.");
	for (size_t i = 0; i < m->ntotal && !b->err; i++) {
		const struct sc_stats *st = &v[i].row->st;

		otlp_set_int(otlp_point(b, calls, "syscall", sys[i], "abi",
					abi[i]),
			     st->calls);
		otlp_set_int(otlp_point(b, errors, "syscall", sys[i], "abi",
					abi[i]),
			     st->errors);
		if (v[i].has_bytes)
			otlp_set_int(otlp_point(b, bytes, "syscall", sys[i],
						"abi", abi[i]),
				     st->bytes);
	}
	histogram(b, v, m->ntotal, sys, abi);
	for (int k = 0; m->meta.split && k < SC_PARTS && !b->err; k++) {
		Metric *x = otlp_metric(b, OTLP_SUM, split[k].name, "s",
					split[k].desc);

		for (size_t i = 0; i < m->ntotal; i++) {
			uint64_t ns = stats_part_ns(&v[i].row->st, k);

			otlp_set_double(otlp_point(b, x, "syscall", sys[i],
						   "abi", abi[i]),
					otlp_seconds(ns));
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
static bool series_attrs(struct otlp_msg *b, NumberPoint *p,
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
		if (!otlp_push(b, (void ***)&p->attributes, &p->n_attributes,
			       otlp_kv(b, label_attr(by->keys[i]),
				       otlp_str(b, val, n))))
			return false;
		v = r->other || !end ? "" : end + 1;
	}
	return !b->err;
}

static void comms(struct otlp_msg *b, const struct comm_series_row *rows,
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
		m = otlp_metric(b, OTLP_SUM, fam[k].name, fam[k].unit,
				fam[k].desc);
		for (size_t i = 0; i < n && !b->err; i++) {
			NumberPoint *p =
				otlp_point(b, m, NULL, NULL, NULL, NULL);
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
				otlp_set_double(p, otlp_seconds(v));
			else
				otlp_set_int(p, v);
		}
	}
}

static void throttling(struct otlp_msg *b, const struct sc_throttle *t)
{
	char *cg;

	if (!t->known)
		return;
	cg = otlp_str(b, t->cgroup, strnlen(t->cgroup, sizeof(t->cgroup)));
	otlp_set_double(
		otlp_point(
			b,
			otlp_metric(
				b, OTLP_SUM, "scprof.cgroup.cpu.throttled", "s",
				"Time the tasks of the cgroup holding the CPU "
				"quota of the first target were throttled, "
				"since the daemon attached."),
			"cgroup", cg, NULL, NULL),
		otlp_seconds(t->throttled_ns));
	otlp_set_int(
		otlp_point(b,
			   otlp_metric(b, OTLP_SUM,
				       "scprof.cgroup.cpu.throttled_periods",
				       "{period}",
				       "Quota periods in which that cgroup was "
				       "throttled."),
			   "cgroup", cg, NULL, NULL),
		t->nr_throttled);
	otlp_set_int(
		otlp_point(
			b,
			otlp_metric(
				b, OTLP_SUM, "scprof.cgroup.cpu.periods",
				"{period}",
				"Quota periods in which that cgroup had tasks to "
				"run."),
			"cgroup", cg, NULL, NULL),
		t->nr_periods);
}

/* ---- the request ------------------------------------------------------ */

/* b's metrics under one resource (res) and scope ("scprof"), packed
 * into a malloc'ed *buf of *len bytes. 0 or -errno (b's first).
 */
static int pack(struct otlp_msg *b, const struct otlp_resource *res,
		uint8_t **buf, size_t *len)
{
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest
		req;
	Opentelemetry__Proto__Metrics__V1__ResourceMetrics rm, *rmp = &rm;
	Opentelemetry__Proto__Metrics__V1__ScopeMetrics sm, *smp = &sm;
	Opentelemetry__Proto__Resource__V1__Resource r;
	Opentelemetry__Proto__Common__V1__InstrumentationScope scope;
	KeyValue *attrs[] = {
		otlp_kv(b, "service.name", "scprof"),
		otlp_kv(b, "service.version", SCPROF_VERSION),
		otlp_kv(b, "service.instance.id",
			otlp_str(b, res->instance_id,
				 strlen(res->instance_id))),
		otlp_kv(b, "host.name",
			otlp_str(b, res->host_name, strlen(res->host_name))),
		otlp_kv(b, "host.arch", (char *)res->host_arch),
		otlp_kv(b, "os.type", "linux"),
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

/* ---- the payload ---------------------------------------------------------- */

int otlp_render(const struct otlp_input *in, uint8_t **buf, size_t *len)
{
	const struct prom_input *pi = in->prom;
	struct otlp_msg b = {
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
		otlp_self_metrics(&b, pi->self, pi->model, pi->comms != NULL);
	err = b.err ?: pack(&b, in->res, buf, len);
	otlp_msg_free(&b);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OTLP renderer: its histograms' explicit bounds are scprof's bucket
 * bounds and every bucket's count is carried as it is; sums are cumulative
 * and monotonic from the start given; the resource's attributes; a
 * hostile process name arrives as valid UTF-8. The payload is unpacked
 * with the same protobuf-c code.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "model/comm_series.h"
#include "render/otlp.h"

typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest
	Request;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;

#define START_NS 1000000000ULL
#define NOW_NS 2000000000ULL

static void hist_put(struct sc_stats *st, uint64_t ns, uint64_t n)
{
	st->hist[sc_hist_bucket(ns)] += n;
	st->calls += n;
	st->total_ns += ns * n;
}

static struct sc_model *model_fixture(void)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 100, 1, 0);
	struct sc_stats st = {};

	/* read: one call in each of four sub-buckets of one power of two,
	 * which scale 0 would have merged, and one beyond the last bound
	 */
	hist_put(&st, 1025, 1);
	hist_put(&st, 1300, 2);
	hist_put(&st, 1600, 3);
	hist_put(&st, 2000, 4);
	hist_put(&st, 1ULL << 41, 1);
	hist_put(&st, 0, 5);
	model_proc_add(p, 0, 0, &st);
	model_finalize(m);
	return m;
}

static Request *render(const struct prom_input *pi)
{
	const struct otlp_resource res = {
		.host_name = "h\xffost",
		.host_arch = "amd64",
		.instance_id = "00000000-0000-4000-8000-000000000000",
	};
	const struct otlp_input in = {
		.prom = pi,
		.res = &res,
		.start_unix_ns = START_NS,
		.now_unix_ns = NOW_NS,
	};
	uint8_t *buf;
	size_t len;
	Request *r;

	assert_int_equal(otlp_render(&in, &buf, &len), 0);
	r = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
		NULL, len, buf);
	free(buf);
	assert_non_null(r);
	assert_int_equal(r->n_resource_metrics, 1);
	assert_int_equal(r->resource_metrics[0]->n_scope_metrics, 1);
	return r;
}

static void unrender(Request *r)
{
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(
		r, NULL);
}

static const Metric *metric(const Request *r, const char *name)
{
	const Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm =
		r->resource_metrics[0]->scope_metrics[0];

	for (size_t i = 0; i < sm->n_metrics; i++)
		if (!strcmp(sm->metrics[i]->name, name))
			return sm->metrics[i];
	return NULL;
}

/* ---- tests ------------------------------------------------------------ */

static void test_bounds_are_scprof_buckets(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < OTLP_HIST_BOUNDS; i++) {
		double b = otlp_hist_bound_s(i);

		/* the nearest double to the bound's decimal seconds */
		assert_true(b == (double)sc_hist_upper(i) / 1e9);
		assert_int_equal((uint64_t)llround(b * 1e9), sc_hist_upper(i));
		if (i)
			assert_true(b > otlp_hist_bound_s(i - 1));
	}
	/* the last bucket, open above, is scprof's last */
	assert_int_equal(sc_hist_upper(OTLP_HIST_BOUNDS - 1),
			 sc_hist_lower(SC_HIST_BUCKETS - 1));
}

static void test_histogram_carries_every_bucket(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	Request *r = render(&in);
	const Metric *h = metric(r, "scprof.syscall.duration");
	const Opentelemetry__Proto__Metrics__V1__HistogramDataPoint *p;
	const struct sc_stats *st = &m->total[0].st;

	(void)state;
	assert_non_null(h);
	assert_string_equal(h->unit, "s");
	assert_int_equal(
		h->data_case,
		OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM);
	assert_int_equal(
		h->histogram->aggregation_temporality,
		OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
	assert_int_equal(h->histogram->n_data_points, 1);
	p = h->histogram->data_points[0];
	assert_int_equal(p->start_time_unix_nano, START_NS);
	assert_int_equal(p->time_unix_nano, NOW_NS);
	assert_int_equal(p->n_explicit_bounds, OTLP_HIST_BOUNDS);
	assert_int_equal(p->n_bucket_counts, SC_HIST_BUCKETS);
	for (unsigned int k = 0; k < SC_HIST_BUCKETS; k++)
		assert_int_equal(p->bucket_counts[k], st->hist[k]);
	/* the four sub-buckets of (1024, 2048] ns apart */
	for (unsigned int k = 0; k < 4; k++)
		assert_int_equal(p->bucket_counts[sc_hist_bucket(1025) + k],
				 k + 1);
	assert_int_equal(p->bucket_counts[SC_HIST_BUCKETS - 1], 1);
	assert_int_equal(p->bucket_counts[0], 5);
	assert_int_equal(p->count, 16);
	assert_true(p->sum == (double)st->total_ns / 1e9);
	unrender(r);
	model_free(m);
}

static void test_sums_are_cumulative_from_the_start(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_self self = { .scrapes = 3 };
	struct prom_input in = { .model = m, .self = &self };
	Request *r = render(&in);
	const Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm =
		r->resource_metrics[0]->scope_metrics[0];
	size_t sums = 0;

	(void)state;
	for (size_t i = 0; i < sm->n_metrics; i++) {
		const Metric *x = sm->metrics[i];

		if (x->data_case !=
		    OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM)
			continue;
		sums++;
		assert_true(x->sum->is_monotonic);
		assert_int_equal(
			x->sum->aggregation_temporality,
			OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
		for (size_t j = 0; j < x->sum->n_data_points; j++) {
			assert_int_equal(
				x->sum->data_points[j]->start_time_unix_nano,
				START_NS);
			assert_int_equal(x->sum->data_points[j]->time_unix_nano,
					 NOW_NS);
		}
	}
	assert_true(sums >= 5);
	assert_int_equal(
		metric(r, "scprof.syscalls")->sum->data_points[0]->as_int, 16);
	assert_int_equal(
		metric(r, "scprof.scrapes")->sum->data_points[0]->as_int, 3);
	unrender(r);
	model_free(m);
}

static void test_resource(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	Request *r = render(&in);
	const Opentelemetry__Proto__Resource__V1__Resource *res =
		r->resource_metrics[0]->resource;
	static const char *const want[][2] = {
		{ "service.name", "scprof" },
		{ "service.instance.id",
		  "00000000-0000-4000-8000-000000000000" },
		/* invalid UTF-8 replaced */
		{ "host.name", "h\xef\xbf\xbdost" },
		{ "host.arch", "amd64" },
		{ "os.type", "linux" },
	};

	(void)state;
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		bool found = false;

		for (size_t i = 0; i < res->n_attributes; i++)
			if (!strcmp(res->attributes[i]->key, want[w][0])) {
				assert_string_equal(
					res->attributes[i]->value->string_value,
					want[w][1]);
				found = true;
			}
		assert_true(found);
	}
	unrender(r);
	model_free(m);
}

static void test_series_made_later_start_later(void **state)
{
	struct sc_model *m = model_fixture();
	struct comm_series_row rows[2] = {};
	struct prom_input in = { .model = m, .comms = rows, .ncomms = 2 };
	const struct otlp_resource res = { "h", "amd64", "i" };
	const struct otlp_input oi = {
		.prom = &in,
		.res = &res,
		.start_unix_ns = START_NS,
		.start_mono_ns = 500,
		.now_unix_ns = NOW_NS,
	};
	const Metric *x;
	uint8_t *buf;
	size_t len;
	Request *r;

	(void)state;
	strcpy(rows[0].label, "late");
	rows[0].born_ns = 500 + 7000; /* 7 us after the start */
	rows[0].c.calls = 3;
	rows[1].other = true;
	assert_int_equal(otlp_render(&oi, &buf, &len), 0);
	r = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
		NULL, len, buf);
	free(buf);
	assert_non_null(r);
	x = metric(r, "scprof.group.syscalls");
	assert_non_null(x);
	assert_int_equal(x->sum->n_data_points, 2);
	assert_int_equal(x->sum->data_points[0]->start_time_unix_nano,
			 START_NS + 7000);
	assert_int_equal(x->sum->data_points[0]->as_int, 3);
	assert_int_equal(x->sum->data_points[1]->start_time_unix_nano,
			 START_NS);
	unrender(r);
	model_free(m);
}

static void test_host_arch(void **state)
{
	(void)state;
	assert_string_equal(otlp_host_arch("x86_64"), "amd64");
	assert_string_equal(otlp_host_arch("aarch64"), "arm64");
	assert_string_equal(otlp_host_arch("i686"), "x86");
	assert_string_equal(otlp_host_arch("ppc64le"), "ppc64");
	assert_string_equal(otlp_host_arch("armv7l"), "arm32");
	assert_string_equal(otlp_host_arch("riscv64"), "riscv64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_are_scprof_buckets),
		cmocka_unit_test(test_histogram_carries_every_bucket),
		cmocka_unit_test(test_sums_are_cumulative_from_the_start),
		cmocka_unit_test(test_resource),
		cmocka_unit_test(test_series_made_later_start_later),
		cmocka_unit_test(test_host_arch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

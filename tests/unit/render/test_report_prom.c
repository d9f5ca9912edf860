// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Prometheus renderer: exposition grammar, label escaping of hostile
 * process names, and the histogram properties promtool does not check
 * (cumulative, monotonic, +Inf == _count, exact bounds, _sum in seconds).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/comm_series.h"
#include "render/report_prom.h"

/* ---- a small parser of the text format ------------------------------- */

#define MAX_LABELS 4

struct sample {
	char name[96];
	int nlabels;
	char key[MAX_LABELS][32];
	char val[MAX_LABELS][128]; /* unescaped */
	char value[64];
};

/* Parse one sample line; false if it breaks the format. */
static bool parse_sample(const char *line, struct sample *s)
{
	const char *p = line;
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	      *p == '_' || *p == ':'))
		return false;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9') || *p == '_' || *p == ':') {
		if (n + 1 >= sizeof(s->name))
			return false;
		s->name[n++] = *p++;
	}
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t k = 0, v = 0;

			if (s->nlabels == MAX_LABELS)
				return false;
			while ((*p >= 'a' && *p <= 'z') || *p == '_') {
				if (k + 1 >= sizeof(s->key[0]))
					return false;
				s->key[s->nlabels][k++] = *p++;
			}
			if (!k || *p++ != '=' || *p++ != '"')
				return false;
			while (*p != '"') {
				char c = *p++;

				if (c == '\0' || c == '\n')
					return false;
				if (c == '\\') {
					c = *p++;
					if (c == 'n')
						c = '\n';
					else if (c != '\\' && c != '"')
						return false;
				}
				if (v + 1 >= sizeof(s->val[0]))
					return false;
				s->val[s->nlabels][v++] = c;
			}
			p++;
			s->nlabels++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return false;
		}
		p++;
	}
	if (*p++ != ' ')
		return false;
	n = strlen(p);
	if (!n || n >= sizeof(s->value) || strchr(p, ' '))
		return false;
	strcpy(s->value, p);
	return true;
}

static const char *label(const struct sample *s, const char *key)
{
	for (int i = 0; i < s->nlabels; i++) {
		if (!strcmp(s->key[i], key))
			return s->val[i];
	}
	return NULL;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = s[i] < 0x80	   ? 1 :
			     (s[i] & 0xe0) == 0xc0 ? 2 :
			     (s[i] & 0xf0) == 0xe0 ? 3 :
			     (s[i] & 0xf8) == 0xf0 ? 4 :
						     0;

		if (!len || i + len > n)
			return false;
		for (size_t j = 1; j < len; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
		}
		i += len;
	}
	return true;
}

/* Render, check the grammar line by line, return the samples. */
static struct sample *render(const struct prom_input *in, size_t *nsamples)
{
	struct sample *out = NULL;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, n = 0;
	char typed[64][96];
	size_t ntyped = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(report_prom(f, in), 0);
	fclose(f);
	assert_true(valid_utf8((unsigned char *)buf, len));
	assert_true(len > 0 && buf[len - 1] == '\n');
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct sample s;

		if (!strncmp(line, "# TYPE ", 7)) {
			char name[96], type[32];

			assert_int_equal(
				sscanf(line + 7, "%95s %31s", name, type), 2);
			assert_true(!strcmp(type, "counter") ||
				    !strcmp(type, "gauge") ||
				    !strcmp(type, "histogram"));
			assert_true(ntyped < 64);
			strcpy(typed[ntyped++], name);
			continue;
		}
		if (!strncmp(line, "# HELP ", 7))
			continue;
		if (!parse_sample(line, &s))
			fail_msg("bad exposition line: '%s'", line);
		/* Every sample belongs to the family typed last. */
		assert_true(ntyped > 0);
		assert_true(!strncmp(s.name, typed[ntyped - 1],
				     strlen(typed[ntyped - 1])));
		out = realloc(out, (n + 1) * sizeof(*out));
		assert_non_null(out);
		out[n++] = s;
	}
	free(buf);
	*nsamples = n;
	return out;
}

/* ---- fixtures ------------------------------------------------------- */

static void hist_put(struct sc_stats *st, uint64_t ns, uint64_t count)
{
	st->hist[sc_hist_bucket(ns)] += count;
	st->calls += count;
	st->total_ns += ns * count;
	if (!st->min_ns || ns < st->min_ns)
		st->min_ns = ns;
	if (ns > st->max_ns)
		st->max_ns = ns;
}

static struct sc_model *model_fixture(void)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 100, 1, 0);
	struct sc_stats st = {};

	/* read: known latencies around the bucket bounds */
	hist_put(&st, 100, 3);
	hist_put(&st, 255, 1); /* < 256 ns: in le=256ns */
	hist_put(&st, 256, 1); /* <= 256 ns: in le=256ns too */
	hist_put(&st, 5000, 2);
	hist_put(&st, 1ULL << 41, 1); /* beyond the last finite bound */
	st.errors = 2;
	st.bytes = 4096;
	model_proc_add(p, 0, 0, &st);
	/* exit_group: counted, never timed */
	memset(&st, 0, sizeof(st));
	st.calls = 1;
	model_proc_add(p, 0, 231, &st);
	m->meta.drops[SC_DROP_CALLS] = 7;
	model_finalize(m);
	return m;
}

static const struct sample *find(const struct sample *s, size_t n,
				 const char *name, const char *key,
				 const char *val)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(s[i].name, name))
			continue;
		if (!key ||
		    (label(&s[i], key) && !strcmp(label(&s[i], key), val)))
			return &s[i];
	}
	return NULL;
}

/* ---- tests ------------------------------------------------------------ */

static void test_le_bounds_are_bucket_bounds(void **state)
{
	(void)state;
	for (unsigned int k = 0; k < PROM_LE_COUNT; k++) {
		uint64_t b = prom_le_ns(k);
		uint32_t idx = sc_hist_bucket(b);

		/* b ends a BPF bucket, so "calls of at most b" is a sum of
		 * whole buckets: exact.
		 */
		assert_int_equal(sc_hist_upper(idx), b);
		assert_int_equal(sc_hist_bucket(b), idx);
		assert_int_equal(sc_hist_bucket(b + 1), idx + 1);
		if (k)
			assert_true(b > prom_le_ns(k - 1));
	}
	assert_true(prom_le_ns(PROM_LE_COUNT - 1) <
		    sc_hist_lower(SC_HIST_BUCKETS - 1));
}

static void test_syscall_counters(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	size_t n;
	struct sample *s = render(&in, &n);
	const struct sample *x;

	(void)state;
	x = find(s, n, "scprof_syscalls_total", "syscall", "read");
	assert_non_null(x);
	assert_string_equal(label(x, "abi"), "64");
	assert_string_equal(x->value, "8");
	x = find(s, n, "scprof_syscall_errors_total", "syscall", "read");
	assert_string_equal(x->value, "2");
	x = find(s, n, "scprof_syscall_bytes_total", "syscall", "read");
	assert_string_equal(x->value, "4096");
	/* exit_group moves no bytes: no bytes series for it */
	assert_null(find(s, n, "scprof_syscall_bytes_total", "syscall",
			 "exit_group"));
	x = find(s, n, "scprof_syscalls_total", "syscall", "exit_group");
	assert_string_equal(x->value, "1");
	/* no self metrics unless asked */
	assert_null(find(s, n, "scprof_dropped_total", NULL, NULL));
	free(s);
	model_free(m);
}

/* Histogram samples of one syscall, in output order. */
static void check_histogram(const struct sample *s, size_t n, const char *sc,
			    const uint64_t *expect, const char *expect_sum)
{
	uint64_t prev = 0, inf = UINT64_MAX, count = UINT64_MAX;
	double last_le = -1;
	unsigned int nb = 0;
	bool seen_sum = false;

	for (size_t i = 0; i < n; i++) {
		const char *v = label(&s[i], "syscall");
		char *end;

		if (!v || strcmp(v, sc) ||
		    strncmp(s[i].name, "scprof_syscall_duration_seconds", 31))
			continue;
		if (!strcmp(s[i].name,
			    "scprof_syscall_duration_seconds_bucket")) {
			const char *le = label(&s[i], "le");
			uint64_t c = strtoull(s[i].value, &end, 10);

			assert_non_null(le);
			assert_true(*end == '\0');
			assert_true(c >= prev); /* cumulative, monotonic */
			prev = c;
			if (!strcmp(le, "+Inf")) {
				assert_int_equal(nb, PROM_LE_COUNT);
				inf = c;
			} else {
				double b = strtod(le, &end);

				assert_true(*end == '\0');
				assert_true(b > last_le); /* ascending bounds */
				last_le = b;
				/* le is exactly 2^(8+2k) ns in seconds */
				assert_true(b * 1e9 > (double)prom_le_ns(nb) -
							      0.5 &&
					    b * 1e9 < (double)prom_le_ns(nb) +
							      0.5);
				if (expect)
					assert_int_equal(c, expect[nb]);
				nb++;
			}
		} else if (!strcmp(s[i].name,
				   "scprof_syscall_duration_seconds_count")) {
			count = strtoull(s[i].value, &end, 10);
		} else if (!strcmp(s[i].name,
				   "scprof_syscall_duration_seconds_sum")) {
			seen_sum = true;
			if (expect_sum)
				assert_string_equal(s[i].value, expect_sum);
		}
	}
	assert_int_equal(nb, PROM_LE_COUNT);
	assert_true(seen_sum);
	assert_true(inf != UINT64_MAX);
	assert_int_equal(inf, count); /* +Inf == _count */
}

/* A call of exactly a bound's length is counted in that bound's bucket
 * (Prometheus' le is <=), one a nanosecond longer only in the next.
 */
static void test_le_bound_is_inclusive(void **state)
{
	(void)state;
	for (unsigned int k = 0; k < PROM_LE_COUNT; k++) {
		struct sc_model *m = model_new();
		struct sc_proc *p = model_proc(m, 100, 1, 0);
		struct sc_stats st = {};
		struct prom_input in = { .model = m };
		uint64_t expect[PROM_LE_COUNT];
		struct sample *s;
		size_t n;

		hist_put(&st, prom_le_ns(k), 1);
		hist_put(&st, prom_le_ns(k) + 1, 1);
		model_proc_add(p, 0, 0, &st);
		model_finalize(m);
		for (unsigned int j = 0; j < PROM_LE_COUNT; j++)
			expect[j] = j < k ? 0 : j == k ? 1 : 2;
		s = render(&in, &n);
		check_histogram(s, n, "read", expect, NULL);
		free(s);
		model_free(m);
	}
}

static void test_histogram_properties(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	size_t n;
	struct sample *s = render(&in, &n);
	/* calls of at most 256 ns, 1 us, 4 us, 16 us, ... */
	uint64_t expect[PROM_LE_COUNT] = { 5, 5, 5, 7, 7, 7, 7, 7,
					   7, 7, 7, 7, 7, 7, 7 };
	char sum[64];
	uint64_t total = 100 * 3 + 255 + 256 + 5000 * 2 + (1ULL << 41);

	(void)state;
	snprintf(sum, sizeof(sum), "%llu.%09llu",
		 (unsigned long long)(total / 1000000000ULL),
		 (unsigned long long)(total % 1000000000ULL));
	while (sum[strlen(sum) - 1] == '0')
		sum[strlen(sum) - 1] = '\0';
	check_histogram(s, n, "read", expect, sum);
	/* +Inf holds the call beyond the last bound: 8 */
	assert_string_equal(find(s, n, "scprof_syscall_duration_seconds_count",
				 "syscall", "read")
				    ->value,
			    "8");
	/* an untimed syscall still has a complete, empty histogram */
	check_histogram(s, n, "exit_group", NULL, "0");
	free(s);
	model_free(m);
}

static void test_hostile_comm_labels(void **state)
{
	/* Raw comm bytes as a process may set them. */
	static const struct {
		const char *comm;
		const char *want; /* the label value once unescaped */
	} cases[] = {
		{ "quo\"te", "quo\"te" },
		{ "back\\slash", "back\\slash" },
		{ "new\nline", "new\nline" },
		{ "bad\xff\xfe", "bad\xef\xbf\xbd\xef\xbf\xbd" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "\"}\n# TYPE x", "\"}\n# TYPE x" },
		{ "ctl\x01\x1b[31m", "ctl\x01\x1b[31m" },
		{ "trunc\xe2\x82", "trunc\xef\xbf\xbd\xef\xbf\xbd" },
	};
	const size_t nc = sizeof(cases) / sizeof(cases[0]);
	struct comm_series_opts so = { .max_series = 20 };
	struct comm_series *cs;
	struct sc_model *snap = model_new(), *m = model_fixture();
	struct prom_input in = { .model = m };
	struct prom_self self = { .progs_attached = 4 };
	size_t n, nrows;
	struct sample *s;

	(void)state;
	for (size_t i = 0; i < nc; i++) {
		struct sc_proc *p = model_proc(snap, 1000 + (uint32_t)i, 5, 0);
		struct sc_stats st = { .calls = 10 + i };

		strncpy(p->comm, cases[i].comm, SC_COMM_LEN - 1);
		model_proc_add(p, 0, 39, &st);
	}
	model_finalize(snap);
	assert_int_equal(comm_series__new(&cs, &so), 0);
	assert_int_equal(comm_series__update(cs, snap, 1), 0);
	in.comms = comm_series__rows(cs, &nrows);
	in.ncomms = nrows;
	in.self = &self;
	s = render(&in, &n);
	for (size_t i = 0; i < nc; i++) {
		const struct sample *x = find(s, n,
					      "scprof_comm_syscalls_total",
					      "comm", cases[i].want);
		char want[16];

		if (!x)
			fail_msg("no series for comm case %zu", i);
		snprintf(want, sizeof(want), "%zu", 10 + i);
		assert_string_equal(x->value, want);
	}
	/* the other bucket is there, and no comm can be named like it */
	assert_non_null(find(s, n, "scprof_comm_syscalls_total", "comm",
			     "(other processes)"));
	assert_true(strlen("(other processes)") >= SC_COMM_LEN);
	assert_non_null(find(s, n, "scprof_dropped_total", "reason", "calls"));
	assert_string_equal(
		find(s, n, "scprof_dropped_total", "reason", "calls")->value,
		"7");
	assert_string_equal(
		find(s, n, "scprof_bpf_programs_attached", NULL, NULL)->value,
		"4");
	free(s);
	comm_series__free(cs);
	model_free(snap);
	model_free(m);
}

/* Each per-name family carries its own counter, seconds as decimals. */
static void test_comm_families_values(void **state)
{
	struct comm_series_opts so = { .max_series = 2 };
	struct comm_series *cs;
	struct sc_model *snap = model_new(), *m = model_fixture();
	struct prom_input in = { .model = m };
	struct sc_proc *p = model_proc(snap, 7, 1, 0);
	struct sc_stats st = {
		.calls = 10, .errors = 2, .total_ns = 1500000001, .bytes = 4096
	};
	static const struct {
		const char *name, *value;
	} want[] = {
		{ "scprof_comm_syscalls_total", "10" },
		{ "scprof_comm_syscall_errors_total", "2" },
		{ "scprof_comm_syscall_seconds_total", "1.500000001" },
		{ "scprof_comm_syscall_bytes_total", "4096" },
	};
	size_t n, nrows;
	struct sample *s;

	(void)state;
	strcpy(p->comm, "worker");
	model_proc_add(p, 0, 0, &st);
	assert_int_equal(comm_series__new(&cs, &so), 0);
	assert_int_equal(comm_series__update(cs, snap, 1), 0);
	in.comms = comm_series__rows(cs, &nrows);
	in.ncomms = nrows;
	s = render(&in, &n);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sample *x =
			find(s, n, want[i].name, "comm", "worker");

		if (!x)
			fail_msg("no %s for worker", want[i].name);
		assert_string_equal(x->value, want[i].value);
		x = find(s, n, want[i].name, "comm", "(other processes)");
		assert_non_null(x);
		assert_string_equal(x->value, "0");
	}
	free(s);
	comm_series__free(cs);
	model_free(snap);
	model_free(m);
}

/* A model of one read row whose time is split (and one without). */
static struct sc_model *split_fixture(bool split)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 100, 1, 0);
	struct sc_stats st = {};

	hist_put(&st, 2000000000, 1); /* 2 s */
	hist_put(&st, 500, 2);
	st.wait_ns = 250000000;	    /* 0.25 s */
	st.blocked_ns = 1500000001; /* 1.500000001 s */
	st.iowait_ns = 1000000000;
	model_proc_add(p, 0, 0, &st);
	m->meta.split = split;
	model_finalize(m);
	return m;
}

/* The split's families per syscall: the parts of the timed time, on a
 * CPU the rest (total 2.000001 s less 1.750000001 s of parts), seconds
 * as exact decimals; none when the time is not split.
 */
static void test_split_families(void **state)
{
	static const struct {
		const char *name, *value;
	} want[] = {
		{ "scprof_syscall_on_cpu_seconds_total", "0.250000999" },
		{ "scprof_syscall_cpu_wait_seconds_total", "0.25" },
		{ "scprof_syscall_blocked_seconds_total", "1.500000001" },
		{ "scprof_syscall_io_wait_seconds_total", "1" },
	};
	struct sc_model *m = split_fixture(true);
	struct prom_input in = { .model = m };
	size_t n;
	struct sample *s = render(&in, &n);

	(void)state;
	assert_string_equal(find(s, n, "scprof_syscall_duration_seconds_sum",
				 "syscall", "read")
				    ->value,
			    "2.000001");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sample *x =
			find(s, n, want[i].name, "syscall", "read");

		if (!x)
			fail_msg("no %s for read", want[i].name);
		assert_string_equal(label(x, "abi"), "64");
		assert_string_equal(x->value, want[i].value);
	}
	free(s);
	model_free(m);
	m = split_fixture(false);
	in.model = m;
	s = render(&in, &n);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_null(find(s, n, want[i].name, NULL, NULL));
	free(s);
	model_free(m);
}

/* The per-name series carry the split too, with the time split. */
static void test_comm_split_families(void **state)
{
	static const struct {
		const char *name, *value;
	} want[] = {
		{ "scprof_comm_syscall_on_cpu_seconds_total", "0.250000999" },
		{ "scprof_comm_syscall_cpu_wait_seconds_total", "0.25" },
		{ "scprof_comm_syscall_blocked_seconds_total", "1.500000001" },
		{ "scprof_comm_syscall_io_wait_seconds_total", "1" },
	};
	struct comm_series_opts so = { .max_series = 2 };
	struct comm_series *cs;
	size_t n, nrows;
	struct sample *s;

	(void)state;
	for (int split = 1; split >= 0; split--) {
		struct sc_model *m = split_fixture(split);
		struct prom_input in = { .model = m };

		strcpy(m->procs[0].comm, "worker");
		assert_int_equal(comm_series__new(&cs, &so), 0);
		assert_int_equal(comm_series__update(cs, m, 1), 0);
		in.comms = comm_series__rows(cs, &nrows);
		in.ncomms = nrows;
		s = render(&in, &n);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const struct sample *x =
				find(s, n, want[i].name, "comm", "worker");

			if (!split) {
				assert_null(x);
				continue;
			}
			if (!x)
				fail_msg("no %s for worker", want[i].name);
			assert_string_equal(x->value, want[i].value);
		}
		free(s);
		comm_series__free(cs);
		model_free(m);
	}
}

/* The target cgroup's CPU quota throttling, when known, labelled with
 * its directory (escaped: a path is anyone's bytes).
 */
static void test_throttling(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	struct sc_throttle *t = &m->meta.throttle;
	const char *want = "/sys/fs/cgroup/a\"b\\c\nd";
	size_t n;
	struct sample *s = render(&in, &n);
	const struct sample *x;

	(void)state;
	/* not known: none */
	assert_null(find(s, n, "scprof_cgroup_cpu_throttled_seconds_total",
			 NULL, NULL));
	free(s);
	t->known = true;
	strcpy(t->cgroup, "/sys/fs/cgroup/a\"b\\c\nd");
	t->quota_us = 10000;
	t->period_us = 100000;
	t->throttled_ns = 1234567891;
	t->nr_throttled = 12;
	t->nr_periods = 20;
	s = render(&in, &n);
	x = find(s, n, "scprof_cgroup_cpu_throttled_seconds_total", "cgroup",
		 want);
	assert_non_null(x);
	assert_string_equal(x->value, "1.234567891");
	x = find(s, n, "scprof_cgroup_cpu_throttled_periods_total", "cgroup",
		 want);
	assert_non_null(x);
	assert_string_equal(x->value, "12");
	x = find(s, n, "scprof_cgroup_cpu_periods_total", "cgroup", want);
	assert_non_null(x);
	assert_string_equal(x->value, "20");
	free(s);
	model_free(m);
}

/* Label sets must be unique or a scrape is rejected. */
static void test_no_duplicate_series(void **state)
{
	struct comm_series_opts so = { .max_series = 20 };
	struct comm_series *cs;
	struct sc_model *snap = model_new(), *m = model_fixture();
	struct prom_input in = { .model = m };
	/* differ only in invalid bytes: same label after U+FFFD */
	const char *names[] = { "a\xff", "a\xfe", "a\x80" };
	size_t n, nrows;
	struct sample *s;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct sc_proc *p = model_proc(snap, 10 + (uint32_t)i, 1, 0);
		struct sc_stats st = { .calls = 5 };

		strcpy(p->comm, names[i]);
		model_proc_add(p, 0, 39, &st);
	}
	assert_int_equal(comm_series__new(&cs, &so), 0);
	assert_int_equal(comm_series__update(cs, snap, 1), 0);
	in.comms = comm_series__rows(cs, &nrows);
	in.ncomms = nrows;
	s = render(&in, &n);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			bool same = !strcmp(s[i].name, s[j].name) &&
				    s[i].nlabels == s[j].nlabels;

			for (int k = 0; same && k < s[i].nlabels; k++)
				same = !strcmp(s[i].key[k], s[j].key[k]) &&
				       !strcmp(s[i].val[k], s[j].val[k]);
			if (same)
				fail_msg("duplicate series %s", s[i].name);
		}
	}
	assert_string_equal(find(s, n, "scprof_comm_syscalls_total", "comm",
				 "a\xef\xbf\xbd")
				    ->value,
			    "15");
	free(s);
	comm_series__free(cs);
	model_free(snap);
	model_free(m);
}

static void test_write_error(void **state)
{
	struct sc_model *m = model_fixture();
	struct prom_input in = { .model = m };
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(report_prom(f, &in), -EIO);
	fclose(f);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_le_bounds_are_bucket_bounds),
		cmocka_unit_test(test_le_bound_is_inclusive),
		cmocka_unit_test(test_syscall_counters),
		cmocka_unit_test(test_histogram_properties),
		cmocka_unit_test(test_hostile_comm_labels),
		cmocka_unit_test(test_comm_families_values),
		cmocka_unit_test(test_split_families),
		cmocka_unit_test(test_comm_split_families),
		cmocka_unit_test(test_throttling),
		cmocka_unit_test(test_no_duplicate_series),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

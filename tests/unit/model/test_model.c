// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/model/model.c: the record model every renderer reads. The process index
 * across growth, row merging, min/max semantics, deep copies and totals.
 */
#include <errno.h>

#include "model/hist.h"
#include "model/model.h"
#include "unit.h"

static struct sc_stats *stats(uint64_t calls, uint64_t errors,
			      uint64_t total_ns, uint64_t min_ns,
			      uint64_t max_ns)
{
	static struct sc_stats st;

	memset(&st, 0, sizeof(st));
	st.calls = calls;
	st.errors = errors;
	st.total_ns = total_ns;
	st.min_ns = min_ns;
	st.max_ns = max_ns;
	if (calls && max_ns)
		st.hist[sc_hist_bucket(max_ns)] = calls;
	return &st;
}

static const struct sc_row *find_row(const struct sc_row *rows, size_t n,
				     uint32_t abi, uint32_t nr)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].abi == abi && rows[i].nr == nr)
			return &rows[i];
	}
	return NULL;
}

static void test_proc_find_or_create(void **state)
{
	struct sc_model *m = model_new();
	struct sc_proc *a, *b;

	(void)state;
	assert_non_null(m);
	CHECK(model_find_proc(m, 1, 1, 0) == NULL, "empty model finds nothing");
	a = model_proc(m, 100, 5000, 0);
	CHECK(a && a->pid == 100 && a->start_ns == 5000, "created");
	CHECK(a->nrows == 0 && !a->exited && a->comm[0] == '\0',
	      "a new process is blank");
	b = model_proc(m, 100, 5000, 0);
	CHECK(a == b && m->nprocs == 1,
	      "same (pid, start) is the same process");
	CHECK(model_find_proc(m, 100, 5000, 0) == a, "found");
	CHECK(model_find_proc(m, 100, 5001, 0) == NULL, "other start time");
	CHECK(model_find_proc(m, 101, 5000, 0) == NULL, "other pid");
	model_free(m);
	model_free(NULL);
}

/* A recycled pid with a new start time is another process. */
static void test_proc_recycled_pid(void **state)
{
	struct sc_model *m = model_new();

	(void)state;
	assert_non_null(m);
	for (uint64_t start = 1; start <= 50; start++)
		CHECK(model_proc(m, 4242, start * 1000, 0) != NULL, "created");
	CHECK(m->nprocs == 50, "50 lives of pid 4242, got %zu", m->nprocs);
	for (uint64_t start = 1; start <= 50; start++) {
		struct sc_proc *p = model_find_proc(m, 4242, start * 1000, 0);

		CHECK(p && p->start_ns == start * 1000,
		      "life %" PRIu64 " of pid 4242 found", start);
	}
	model_free(m);
}

/* Thousands of processes: the index and the array grow; all are found. */
static void test_proc_index_growth(void **state)
{
	struct sc_model *m = model_new();
	const uint32_t n = 20000;

	(void)state;
	assert_non_null(m);
	for (uint32_t i = 0; i < n; i++) {
		/* pid recycled every 1000 processes, as under pid_max churn */
		struct sc_proc *p =
			model_proc(m, 300 + i % 1000, 1000000ULL * i + 7, 0);

		CHECK(p != NULL, "process %u created", i);
		p->ppid = i; /* a marker to find it by */
		CHECK(m->nprocs == i + 1, "nprocs %zu after %u", m->nprocs,
		      i + 1);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct sc_proc *p = model_find_proc(m, 300 + i % 1000,
						    1000000ULL * i + 7, 0);

		CHECK(p && p->ppid == i, "process %u found after growth", i);
		CHECK(model_proc(m, 300 + i % 1000, 1000000ULL * i + 7, 0) == p,
		      "model_proc returns the existing process %u", i);
	}
	CHECK(m->nprocs == n, "no duplicates: %zu", m->nprocs);
	CHECK(model_find_proc(m, 300, 8, 0) == NULL, "absent after growth");
	CHECK(m->index_cap >= 2 * m->nprocs, "index kept at most half full");
	model_free(m);
}

static void test_stats_add_min_max(void **state)
{
	struct sc_stats *a = calloc(1, sizeof(*a)), b;

	(void)state;
	assert_non_null(a);
	/* Adding untimed calls (min 0 = unset) leaves min unset. */
	stats_add(a, stats(2, 0, 0, 0, 0));
	CHECK(a->calls == 2 && a->min_ns == 0 && a->max_ns == 0,
	      "untimed calls: min %" PRIu64 " max %" PRIu64, a->min_ns,
	      a->max_ns);
	/* First timed cell sets both. */
	b = *stats(3, 1, 900, 100, 500);
	stats_add(a, &b);
	CHECK(a->min_ns == 100 && a->max_ns == 500,
	      "min %" PRIu64 " max %" PRIu64, a->min_ns, a->max_ns);
	/* An unset min does not lower the min to 0. */
	stats_add(a, stats(1, 0, 0, 0, 0));
	CHECK(a->min_ns == 100, "min stays 100, got %" PRIu64, a->min_ns);
	/* A smaller min and a larger max win; the other way round does not. */
	stats_add(a, stats(1, 0, 50, 50, 50));
	CHECK(a->min_ns == 50 && a->max_ns == 500, "min 50 max 500");
	stats_add(a, stats(1, 1, 9000, 9000, 9000));
	CHECK(a->min_ns == 50 && a->max_ns == 9000, "min 50 max 9000");
	CHECK(a->calls == 8 && a->errors == 2 && a->total_ns == 9950,
	      "sums: calls %" PRIu64 " errors %" PRIu64 " total %" PRIu64,
	      a->calls, a->errors, a->total_ns);
	CHECK(hist_count(a->hist) == 5, "histograms add up");
	free(a);
}

static void test_proc_add_and_merge(void **state)
{
	struct sc_model *m = model_new();
	struct sc_proc *p, *q;
	struct sc_stats st;

	(void)state;
	assert_non_null(m);
	p = model_proc(m, 10, 1, 0);
	assert_non_null(p);
	st = *stats(5, 1, 5000, 200, 2000);
	st.bytes = 100;
	st.interrupted = 1;
	assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, 0, &st), 0);
	assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, 0, &st), 0);
	assert_int_equal(model_proc_add(p, SC_ABI_COMPAT, 0, &st), 0);
	CHECK(p->nrows == 2, "(abi, nr) keys a row: %zu rows", p->nrows);
	{
		const struct sc_row *r = find_row(p->rows, p->nrows, 0, 0);

		CHECK(r && r->st.calls == 10 && r->st.errors == 2 &&
			      r->st.bytes == 200 && r->st.interrupted == 2 &&
			      r->st.total_ns == 10000,
		      "native read summed twice");
	}
	/* Many rows: the row array grows. */
	for (uint32_t nr = 1; nr < 400; nr++)
		assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, nr,
						stats(nr, 0, nr, 1, 1)),
				 0);
	CHECK(p->nrows == 401, "%zu rows", p->nrows);

	/* Merge p into q: q gets p's rows, summed with its own. */
	q = model_proc(m, 11, 1, 0);
	p = model_find_proc(m, 10, 1, 0); /* q's creation may move p */
	assert_non_null(q);
	assert_int_equal(
		model_proc_add(q, SC_ABI_NATIVE, 7, stats(1, 1, 3, 3, 3)), 0);
	assert_int_equal(model_proc_merge(q, p), 0);
	CHECK(q->nrows == p->nrows, "merged rows %zu vs %zu", q->nrows,
	      p->nrows);
	{
		const struct sc_row *r = find_row(q->rows, q->nrows, 0, 7);

		CHECK(r && r->st.calls == 8 && r->st.errors == 1 &&
			      r->st.min_ns == 1 && r->st.max_ns == 3,
		      "row 7 summed with q's own");
	}
	model_free(m);
}

static struct sc_model *sample_model(void)
{
	struct sc_model *m = model_new();

	assert_non_null(m);
	for (uint32_t pid = 1; pid <= 40; pid++) {
		struct sc_proc *p = model_proc(m, pid, pid * 10ULL, 0);

		assert_non_null(p);
		snprintf(p->comm, sizeof(p->comm), "proc%u", pid);
		p->ppid = pid - 1;
		p->exited = pid % 2;
		p->exit_code = (int)pid << 8;
		for (uint32_t nr = 0; nr < pid % 7 + 1; nr++) {
			struct sc_stats st = *stats(pid + nr, nr, 1000 * pid,
						    10 + pid, 1000 + nr);

			st.bytes = nr == 0 ? pid : 0;
			assert_int_equal(model_proc_add(p,
							pid % 3 == 0 ?
								SC_ABI_COMPAT :
								SC_ABI_NATIVE,
							nr, &st),
					 0);
		}
		/* A number past the fast-path table. */
		if (pid % 5 == 0)
			assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, 5000,
							stats(1, 1, 7, 7, 7)),
					 0);
	}
	assert_int_equal(model_errno_add(m, 0, 2, ENOENT, 3), 0);
	assert_int_equal(model_errno_add(m, 0, 2, ENOENT, 4), 0);
	assert_int_equal(model_errno_add(m, 0, 2, EACCES, 1), 0);
	assert_int_equal(model_errno_add(m, 1, 2, ENOENT, 1), 0);
	m->meta.drops[SC_DROP_CALLS] = 5;
	m->meta.drops[SC_DROP_ERRNO_DETAIL] = 2;
	m->meta.duration_ns = 123456789;
	return m;
}

static void test_errno_add(void **state)
{
	struct sc_model *m = sample_model();

	(void)state;
	CHECK(m->nerrnos == 3, "(abi, nr, errno) keys a row: %zu", m->nerrnos);
	CHECK(m->errnos[0].count == 7, "ENOENT counts summed: %" PRIu64,
	      m->errnos[0].count);
	for (uint32_t e = 1; e < 100; e++)
		assert_int_equal(model_errno_add(m, 0, 3, e, e), 0);
	CHECK(m->nerrnos == 102, "errno rows grow: %zu", m->nerrnos);
	model_free(m);
}

/* model_finalize: each total row is the sum over processes. */
static void test_finalize_totals(void **state)
{
	struct sc_model *m = sample_model();
	uint64_t calls = 0, total_calls = 0, errors = 0, total_errors = 0;

	(void)state;
	assert_int_equal(model_finalize(m), 0);
	for (size_t i = 0; i < m->nprocs; i++) {
		for (size_t j = 0; j < m->procs[i].nrows; j++) {
			calls += m->procs[i].rows[j].st.calls;
			errors += m->procs[i].rows[j].st.errors;
		}
	}
	for (size_t i = 0; i < m->ntotal; i++) {
		const struct sc_row *t = &m->total[i];
		struct sc_stats *want = calloc(1, sizeof(*want));

		assert_non_null(want);
		for (size_t p = 0; p < m->nprocs; p++) {
			const struct sc_row *r = find_row(m->procs[p].rows,
							  m->procs[p].nrows,
							  t->abi, t->nr);

			if (r)
				stats_add(want, &r->st);
		}
		CHECK(!memcmp(want, &t->st, sizeof(*want)),
		      "total of ABI %u nr %u is not the sum over processes",
		      t->abi, t->nr);
		CHECK(find_row(m->total, i, t->abi, t->nr) == NULL,
		      "ABI %u nr %u has two total rows", t->abi, t->nr);
		total_calls += t->st.calls;
		total_errors += t->st.errors;
		free(want);
	}
	CHECK(total_calls == calls && total_errors == errors,
	      "totals %" PRIu64 "/%" PRIu64 " calls, %" PRIu64 "/%" PRIu64
	      " errors",
	      total_calls, calls, total_errors, errors);
	/* 7 numbers x 2 ABIs, plus 5000 native. */
	CHECK(m->ntotal == 15, "%zu total rows", m->ntotal);
	CHECK(find_row(m->total, m->ntotal, SC_ABI_NATIVE, 5000) != NULL,
	      "number past SC_NR_MAX totalled");
	CHECK(model_abi_calls(m->total, m->ntotal, SC_ABI_COMPAT) +
			      model_abi_calls(m->total, m->ntotal,
					      SC_ABI_NATIVE) ==
		      calls,
	      "model_abi_calls splits the calls by ABI");
	CHECK(model_abi_calls(m->total, m->ntotal, SC_ABI_X32) == 0, "no x32");

	/* Finalizing twice gives the same totals, not doubled ones. */
	assert_int_equal(model_finalize(m), 0);
	CHECK(model_abi_calls(m->total, m->ntotal, SC_ABI_COMPAT) +
			      model_abi_calls(m->total, m->ntotal,
					      SC_ABI_NATIVE) ==
		      calls,
	      "second model_finalize does not double the totals");
	model_free(m);
}

static void test_finalize_empty(void **state)
{
	struct sc_model *m = model_new();

	(void)state;
	assert_non_null(m);
	assert_int_equal(model_finalize(m), 0);
	CHECK(m->ntotal == 0, "no rows");
	model_free(m);
}

/* model_clone is a deep copy: changing either side leaves the other. */
static void test_clone_deep_copy(void **state)
{
	struct sc_model *m = sample_model(), *c;

	(void)state;
	assert_int_equal(model_finalize(m), 0);
	c = model_clone(m);
	assert_non_null(c);
	CHECK(c->nprocs == m->nprocs && c->nerrnos == m->nerrnos, "same sizes");
	CHECK(!memcmp(c->meta.drops, m->meta.drops, sizeof(m->meta.drops)) &&
		      c->meta.duration_ns == m->meta.duration_ns,
	      "same drops and duration");
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *a = &m->procs[i];
		const struct sc_proc *b =
			model_find_proc(c, a->pid, a->start_ns, 0);

		CHECK(b != NULL && b != a, "process %u copied", a->pid);
		CHECK(b->ppid == a->ppid && b->exited == a->exited &&
			      b->exit_code == a->exit_code &&
			      !memcmp(b->comm, a->comm, sizeof(a->comm)),
		      "process %u fields copied", a->pid);
		CHECK(b->nrows == a->nrows && b->rows != a->rows,
		      "process %u rows copied, not shared", a->pid);
		for (size_t j = 0; j < a->nrows; j++) {
			const struct sc_row *r = find_row(b->rows, b->nrows,
							  a->rows[j].abi,
							  a->rows[j].nr);

			CHECK(r && !memcmp(&r->st, &a->rows[j].st,
					   sizeof(r->st)),
			      "process %u row %zu equal", a->pid, j);
		}
	}
	for (size_t i = 0; i < m->nerrnos; i++)
		CHECK(c->errnos[i].abi == m->errnos[i].abi &&
			      c->errnos[i].nr == m->errnos[i].nr &&
			      c->errnos[i].err == m->errnos[i].err &&
			      c->errnos[i].count == m->errnos[i].count,
		      "errno row %zu copied", i);
	CHECK(c->errnos != m->errnos, "errno rows not shared");

	/* Mutate the original; the clone must not see it. */
	m->procs[0].rows[0].st.calls += 1000;
	m->procs[0].comm[0] = 'X';
	m->errnos[0].count += 1000;
	assert_int_equal(
		model_proc_add(&m->procs[1], 0, 999, stats(1, 0, 1, 1, 1)), 0);
	{
		const struct sc_proc *b = model_find_proc(
			c, m->procs[0].pid, m->procs[0].start_ns, 0);
		const struct sc_proc *b1 = model_find_proc(
			c, m->procs[1].pid, m->procs[1].start_ns, 0);

		CHECK(b->rows[0].st.calls + 1000 ==
			      m->procs[0].rows[0].st.calls,
		      "clone rows are independent");
		CHECK(b->comm[0] == 'p', "clone comm is independent");
		CHECK(b1->nrows + 1 == m->procs[1].nrows,
		      "clone row arrays are independent");
		CHECK(c->errnos[0].count + 1000 == m->errnos[0].count,
		      "clone errno rows are independent");
	}
	/* The clone works on its own: it grows and finalizes. */
	CHECK(model_proc(c, 999999, 1, 0) != NULL,
	      "clone accepts new processes");
	assert_int_equal(model_finalize(c), 0);
	model_free(m);
	model_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_find_or_create),
		cmocka_unit_test(test_proc_recycled_pid),
		cmocka_unit_test(test_proc_index_growth),
		cmocka_unit_test(test_stats_add_min_max),
		cmocka_unit_test(test_proc_add_and_merge),
		cmocka_unit_test(test_errno_add),
		cmocka_unit_test(test_finalize_totals),
		cmocka_unit_test(test_finalize_empty),
		cmocka_unit_test(test_clone_deep_copy),
	};

	unit_init();
	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}

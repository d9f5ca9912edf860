// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF settings decided from the plan's options, the kernel and the
 * machine (collect/settings.c: settings_fill): the fast paths where the
 * kernel has them, the verdict cache's slots by CPUs, the cgroup tags'
 * table by pid_max, --stacks' weighting, --slow in the modes that time
 * calls, -e's set, and what a test hook or the environment turn off.
 */
#include "collect/settings.h"
#include "scprof.skel.h"
#include "sc_split.h"
#include "unit.h"

/* A kernel with every facility; a machine of 2 CPUs and Linux's default
 * pid_max on 64-bit; no test hook.
 */
static const struct kernel_facilities all_kern = {
	.task_btf = true,
	.task_storage = true,
	.task_regs = true,
	.cmpxchg = true,
	.tail_calls = true,
	.run_delay = true,
};

static const struct settings_env machine = {
	.self_tgid = 4321,
	.ncpus = 2,
	.pid_max = 4194304,
	.fast_paths = true,
	.inject_map = SC_MAP_COUNT,
};

/* scprof's default: a command, full mode, its cells in the arrays. */
static struct collector_opts command(void)
{
	struct collector_opts o = {
		.mode = SC_FILTER_TGID,
		.progs = SC_PROGS_FULL,
		.cells = SC_CELLS_ONE_TARGET,
		.split = true,
		.split_samples = true,
		.in_flight = true,
	};

	return o;
}

static struct sc_settings fill(const struct collector_opts *o,
			       const struct kernel_facilities *k,
			       const struct settings_env *e)
{
	struct sc_settings s;

	memset(&s, 0xa5, sizeof(s)); /* every field written, none left */
	settings_fill(&s, o, k, e);
	return s;
}

static void test_command(void **state)
{
	struct collector_opts o = command();
	struct sc_settings s = fill(&o, &all_kern, &machine);

	(void)state;
	CHECK(s.kern_task_btf && s.kern_task_storage && s.kern_task_regs,
	      "the kernel's facilities");
	CHECK(s.filter_mode == SC_FILTER_TGID, "the pid filter: %u",
	      s.filter_mode);
	CHECK(s.self_tgid == 4321, "scprof's pid: %u", s.self_tgid);
	CHECK(!s.follow_forks && !s.only_tid && !s.target_cgid,
	      "no -f, no thread, no cgroup");
	CHECK(s.progs == SC_PROGS_FULL && s.cells == SC_CELLS_ONE_TARGET,
	      "the mode: %u %u", s.progs, s.cells);
	CHECK(s.want_cache_on && s.flight_on, "the fast paths");
	CHECK(s.want_slots == 2, "a slot per CPU: %u", s.want_slots);
	CHECK(s.split_on && s.split_sample_ns == SC_SPLIT_SAMPLE_NS,
	      "the split, sampled");
	CHECK(!s.split_runq_timed, "the kernel's run-queue delay");
	CHECK(!s.sleep_on, "no longest sleeps without --slow or blocked");
	CHECK(!s.trace_on && !s.trace_beyond &&
		      s.status_filter == SC_STATUS_ALL,
	      "every call");
	CHECK(s.key_kind == SC_KEY_PROCESS && !s.read_cgid, "by process");
	CHECK(s.cgtag_slots == 1 && !s.cgtag_exact, "no cgroup tags");
	CHECK(!s.stack_period && !s.stack_by_time && !s.stack_by_blocked &&
		      !s.stack_budget_ns,
	      "no stacks");
	CHECK(!s.slow_ns && !s.fd_types && !s.thread_totals, "nothing else");
	CHECK(s.inject_map == SC_MAP_COUNT && !s.inject_errno, "no hook");
	for (size_t i = 0; i < sizeof(s.pad); i++)
		CHECK(!s.pad[i], "padding zeroed: byte %zu", i);
}

/* The verdict cache and the calls-in-flight table need bpf_task_pt_regs
 * and compare-and-swap; the cache serves the filters whose verdict holds
 * while a task lives; SCPROF_FAST_PATHS=0 turns both off.
 */
static void test_fast_paths(void **state)
{
	struct collector_opts o = command();
	struct kernel_facilities k = all_kern;
	struct settings_env e = machine;
	struct sc_settings s;

	(void)state;
	k.task_regs = false;
	s = fill(&o, &k, &e);
	CHECK(!s.want_cache_on && !s.flight_on, "without bpf_task_pt_regs");
	CHECK(!s.kern_task_regs && s.kern_task_btf, "the legacy build asks");
	k = all_kern;
	k.cmpxchg = false;
	s = fill(&o, &k, &e);
	CHECK(!s.want_cache_on && !s.flight_on, "without compare-and-swap");
	e.fast_paths = false;
	s = fill(&o, &all_kern, &e);
	CHECK(!s.want_cache_on && !s.flight_on, "SCPROF_FAST_PATHS=0");
	o.mode = SC_FILTER_ALL;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.want_cache_on && s.flight_on, "-a: both");
	o.mode = SC_FILTER_CGROUP;
	e = machine;
	e.cgroup_id = 77;
	s = fill(&o, &all_kern, &e);
	CHECK(!s.want_cache_on && s.flight_on, "--cgroup: no verdict cache");
	CHECK(s.target_cgid == 77, "the cgroup's id: %llu",
	      (unsigned long long)s.target_cgid);
	o = command();
	o.progs = SC_PROGS_COUNT_ONLY;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.want_cache_on && !s.flight_on, "--count-only: no stamps");
	o = command();
	k = all_kern;
	k.run_delay = false;
	s = fill(&o, &k, &machine);
	CHECK(s.split_runq_timed, "no run-queue delay: waits timed");
}

static void test_want_slots(void **state)
{
	const uint32_t cpus[] = {
		0,   1, 7, SC_WANT_SLOTS - 1, SC_WANT_SLOTS, SC_WANT_SLOTS + 1,
		4096
	};
	const uint32_t want[] = { SC_WANT_SLOTS,
				  1,
				  7,
				  SC_WANT_SLOTS - 1,
				  SC_WANT_SLOTS,
				  SC_WANT_SLOTS,
				  SC_WANT_SLOTS };
	struct collector_opts o = command();
	struct settings_env e = machine;

	(void)state;
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		e.ncpus = cpus[i];
		CHECK(fill(&o, &all_kern, &e).want_slots == want[i],
		      "%u CPUs: %u slots", cpus[i], want[i]);
	}
}

/* A slot per thread id up to pid_max, a power of two, within
 * SC_CGTAG_SLOTS; exact when every id has its own.
 */
static void test_cgtag_slots(void **state)
{
	const struct {
		uint64_t pid_max;
		uint32_t slots;
		bool exact;
	} cases[] = {
		{ 32768, 32768, true },
		{ 40000, 65536, true },
		{ SC_CGTAG_SLOTS, SC_CGTAG_SLOTS, true },
		{ SC_CGTAG_SLOTS + 1, SC_CGTAG_SLOTS, false },
		{ 4194304, SC_CGTAG_SLOTS, false },
	};
	struct collector_opts o = command();
	struct settings_env e = machine;
	struct sc_settings s;

	(void)state;
	o.read_cgid = true;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e.pid_max = cases[i].pid_max;
		s = fill(&o, &all_kern, &e);
		CHECK(s.read_cgid, "cgroup tags on");
		CHECK(s.cgtag_slots == cases[i].slots &&
			      s.cgtag_exact == cases[i].exact,
		      "pid_max %llu: %u slots (want %u), exact %u",
		      (unsigned long long)cases[i].pid_max, s.cgtag_slots,
		      cases[i].slots, s.cgtag_exact);
	}
}

static void test_stacks(void **state)
{
	struct collector_opts o = command();
	struct sc_settings s;

	(void)state;
	o.stack_period = 1000;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.stack_period == 1000 && !s.stack_by_time &&
		      !s.stack_by_blocked && !s.stack_budget_ns,
	      "by count");
	o.stack_by = SC_STACKS_BY_TIME;
	o.stack_period = 500;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.stack_by_time && !s.stack_by_blocked &&
		      s.stack_budget_ns == 500000,
	      "by time: a sample per 500 µs: %llu ns",
	      (unsigned long long)s.stack_budget_ns);
	CHECK(!s.sleep_on, "by time keeps no sleeps");
	o.stack_by = SC_STACKS_BY_BLOCKED;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.stack_by_time && s.stack_by_blocked && s.sleep_on,
	      "by blocked: timed, each call's longest sleep kept");
	o.stack_period = 0;
	s = fill(&o, &all_kern, &machine);
	CHECK(!s.stack_by_time && !s.stack_by_blocked && !s.stack_budget_ns,
	      "no period: no stacks, whatever the weighting");
}

/* --slow: calls are timed in full and sampled modes, not count-only. */
static void test_slow(void **state)
{
	struct collector_opts o = command();
	struct sc_settings s;

	(void)state;
	o.slow_ns = 5000000;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.slow_ns == 5000000 && s.sleep_on, "full: its longest sleep");
	o.split = false;
	s = fill(&o, &all_kern, &machine);
	CHECK(s.slow_ns == 5000000 && !s.sleep_on, "no split, no sleeps");
	o.progs = SC_PROGS_SAMPLED;
	CHECK(fill(&o, &all_kern, &machine).slow_ns == 5000000, "sampled");
	o.progs = SC_PROGS_COUNT_ONLY;
	CHECK(!fill(&o, &all_kern, &machine).slow_ns, "count-only: none");
	o = command();
	o.split_samples = false;
	CHECK(!fill(&o, &all_kern, &machine).split_sample_ns,
	      "the split without samples");
}

static void test_filters(void **state)
{
	struct collector_opts o = command();
	struct trace_set t = { .on = true, .beyond = true };
	struct settings_env e = machine;
	struct sc_settings s;

	(void)state;
	o.trace = &t;
	o.status = SC_STATUS_FAILED;
	o.only_tid = 99;
	o.follow = true;
	o.key_kind = SC_KEY_THREAD;
	o.fd_types = true;
	o.thread_totals = true;
	e.inject_map = SC_MAP_PROCS;
	e.inject_errno = 16;
	s = fill(&o, &all_kern, &e);
	CHECK(s.trace_on && s.trace_beyond, "-e trace=SET");
	CHECK(s.status_filter == SC_STATUS_FAILED, "-Z");
	CHECK(s.only_tid == 99 && s.follow_forks, "-p TID, -f");
	CHECK(s.key_kind == SC_KEY_THREAD, "--by tid");
	CHECK(s.fd_types && s.thread_totals, "--fd-types, thread totals");
	CHECK(s.inject_map == SC_MAP_PROCS && s.inject_errno == 16,
	      "SCPROF_TEST_MAP_FAIL=procs:EBUSY");
	t.on = false;
	s = fill(&o, &all_kern, &machine);
	CHECK(!s.trace_on && !s.trace_beyond, "a set that is all: off");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_fast_paths),
		cmocka_unit_test(test_want_slots),
		cmocka_unit_test(test_cgtag_slots),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_slow),
		cmocka_unit_test(test_filters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

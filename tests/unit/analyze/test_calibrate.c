// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the calibration's pure parts: statistics, scaling, the
 * loop table, comparisons, JSON round trip and the saved calibration.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "analyze/calibrate.h"
#include "render/calib_cache.h"
#include "render/calib_report.h"
#include "util/procfs.h"

static void test_stats(void **state)
{
	double odd[] = { 5, 1, 3, 9, 7 }, even[] = { 4, 1, 3, 2 },
	       one[] = { 8 };
	struct cal_stats st;

	(void)state;
	cal_stats_compute(odd, 5, &st);
	assert_true(st.min == 1 && st.median == 5 && st.max == 9);
	cal_stats_compute(even, 4, &st);
	assert_true(st.min == 1 && st.median == 2.5 && st.max == 4);
	cal_stats_compute(one, 1, &st);
	assert_true(st.min == 8 && st.median == 8 && st.max == 8);
}

static void test_scale(void **state)
{
	(void)state;
	/* 1000 iterations took 1 ms: 100 ms wants 100000 */
	assert_int_equal(cal_scale_iters(1000, 1000000, 100000000), 100000);
	/* no measurable time: grow a thousandfold and measure again */
	assert_int_equal(cal_scale_iters(16, 0, 100000000), 16000);
	/* growth is capped at a thousandfold */
	assert_int_equal(cal_scale_iters(16, 1, 100000000), 16000);
	/* too long already: shrink, but never below one */
	assert_int_equal(cal_scale_iters(1000, 400000000, 100000000), 250);
	assert_int_equal(cal_scale_iters(1, 1000000000, 1000), 1);
	assert_int_equal(cal_scale_iters(0, 0, 1000), 1000);
}

static void test_per_call(void **state)
{
	(void)state;
	assert_true(fabs(cal_per_call(1000000, 1000, 0.5) - 999.5) < 1e-9);
	/* the empty loop's cost is taken off, but never below zero */
	assert_true(cal_per_call(100, 1000, 0.5) == 0);
	assert_true(cal_per_call(100, 0, 0) == 100);
}

/* The loop names are part of the interface (JSON and table). */
static void test_loop_names(void **state)
{
	static const char *const names[] = {
		"syscall-getppid",
		"libc-getpid",
		"vdso-clock_gettime",
		"read-1B",
		"read-64KiB",
		"write-1B-devnull",
		"read-copy-4KiB",
		"mmap-copy-4KiB",
		"read-copy-8KiB",
		"mmap-copy-8KiB",
		"read-copy-16KiB",
		"mmap-copy-16KiB",
		"getrandom-16B",
		"getrandom-16B-buffered",
		"fopen-fread-fclose-16B",
		NULL,
	};

	(void)state;
	for (int i = 0; names[i]; i++) {
		int idx = cal_find_loop(names[i]);

		assert_true(idx >= 0);
		assert_string_equal(cal_loop((size_t)idx)->name, names[i]);
		assert_non_null(cal_loop((size_t)idx)->desc);
	}
	assert_int_equal(CAL_NLOOPS, 15);
	assert_int_equal(cal_find_loop("read-2B"), -1);
	assert_int_equal(cal_find_loop(""), -1);
	assert_null(cal_loop(CAL_NLOOPS));
	/* every partner loop exists */
	for (size_t i = 0; i < CAL_NLOOPS; i++) {
		const char *v = cal_loop(i)->versus;

		assert_true(!v || cal_find_loop(v) >= 0);
	}
}

static void set_loop(struct calibration *c, const char *name, double ns)
{
	struct cal_loop_result *r = &c->loops[c->nloops++];
	int idx = cal_find_loop(name);

	assert_true(idx >= 0);
	memset(r, 0, sizeof(*r));
	r->name = cal_loop((size_t)idx)->name;
	r->ns_per_call = ns;
	r->min_ns = ns * 0.9;
	r->max_ns = ns * 1.2;
	r->calls = 7000;
	r->runs = 7;
	if (!strcmp(name, "read-1B"))
		r->bytes_per_call = 1;
	else if (!strcmp(name, "read-64KiB"))
		r->bytes_per_call = 65536;
	else if (strstr(name, "16B"))
		r->bytes_per_call = 16;
}

static struct calibration *sample_cal(void)
{
	struct calibration *c = calibration__new();

	assert_non_null(c);
	c->loops = calloc(16, sizeof(*c->loops));
	assert_non_null(c->loops);
	c->quick = true;
	c->created = 1700000000;
	c->pinned_cpu = 1;
	c->loop_overhead_ns = 0.25;
	set_loop(c, "syscall-getppid", 120);
	set_loop(c, "vdso-clock_gettime", 20);
	set_loop(c, "read-1B", 240);
	set_loop(c, "read-64KiB", 6553.6);
	set_loop(c, "getrandom-16B", 300);
	set_loop(c, "getrandom-16B-buffered", 30);
	c->probe.measured = true;
	c->probe.bare_ns = 121;
	c->probe.probed_ns = 221;
	c->probe.overhead_ns = 100;
	c->probe.reported_ns = 80;
	c->probe.pairs = 7;
	c->machine.cpu_model = strdup("Test CPU");
	c->machine.kernel = strdup("6.1.0");
	c->machine.arch = strdup("x86_64");
	c->machine.cpus = 2;
	c->machine.syscall_tracers = 0;
	assert_int_equal(machine_add_mitigation(&c->machine, "spectre_v2",
						"Mitigation: Retpolines"),
			 0);
	assert_int_equal(machine_add_mitigation(&c->machine, "meltdown",
						"Not affected"),
			 0);
	return c;
}

static void test_compare(void **state)
{
	struct calibration *c = sample_cal();
	struct cal_compare k;

	(void)state;
	calib_compare(c, calibration__loop(c, "syscall-getppid"), &k);
	assert_true(k.is_floor);
	calib_compare(c, calibration__loop(c, "vdso-clock_gettime"), &k);
	assert_string_equal(k.versus, "syscall-getppid");
	assert_true(fabs(k.ratio - 20.0 / 120) < 1e-9);
	/* read-64KiB against read-1B: per byte, 0.1 ns against 240 ns */
	calib_compare(c, calibration__loop(c, "read-64KiB"), &k);
	assert_string_equal(k.versus, "read-1B");
	assert_true(k.per_byte);
	assert_true(fabs(k.ratio - 0.1 / 240) < 1e-9);
	calib_compare(c, calibration__loop(c, "getrandom-16B-buffered"), &k);
	assert_string_equal(k.versus, "getrandom-16B");
	assert_false(k.per_byte);
	assert_true(fabs(k.ratio - 0.1) < 1e-9);
	calibration__free(c);
}

static void test_mitigations_sorted(void **state)
{
	struct calibration *c = sample_cal();

	(void)state;
	assert_int_equal(
		machine_add_mitigation(&c->machine, "l1tf", "Not affected"), 0);
	assert_int_equal(c->machine.nmitigations, 3);
	assert_string_equal(c->machine.mitigations[0].name, "l1tf");
	assert_string_equal(c->machine.mitigations[1].name, "meltdown");
	assert_string_equal(c->machine.mitigations[2].name, "spectre_v2");
	calibration__free(c);
}

static void test_json_round_trip(void **state)
{
	struct calibration *c = sample_cal(), *back = NULL;
	struct json_object *root = calib_to_json(c), *loops;
	const struct cal_loop_result *r;

	(void)state;
	assert_non_null(root);
	/* the field names */
	assert_true(json_object_object_get_ex(root, "probe_overhead_ns", NULL));
	assert_true(json_object_object_get_ex(root, "mitigations", NULL));
	assert_true(json_object_object_get_ex(root, "loops", &loops));
	for (size_t i = 0; i < json_object_array_length(loops); i++) {
		struct json_object *l = json_object_array_get_idx(loops, i);
		static const char *const keys[] = { "name",   "ns_per_call",
						    "min_ns", "median_ns",
						    "max_ns", "calls",
						    NULL };

		for (int k = 0; keys[k]; k++)
			assert_true(
				json_object_object_get_ex(l, keys[k], NULL));
	}
	/* derived on output: the median, and the probe's share in latencies */
	{
		struct json_object *probe, *v,
			*l0 = json_object_array_get_idx(loops, 0);

		assert_true(json_object_object_get_ex(l0, "median_ns", &v));
		assert_true(fabs(json_object_get_double(v) - 120) < 0.01);
		assert_true(json_object_object_get_ex(root, "probe", &probe));
		assert_true(
			json_object_object_get_ex(probe, "in_latency_ns", &v));
		assert_true(fabs(json_object_get_double(v) - 80) < 0.01);
	}
	assert_int_equal(calib_from_json(root, &back), 0);
	assert_int_equal(back->nloops, c->nloops);
	r = calibration__loop(back, "read-64KiB");
	assert_non_null(r);
	assert_int_equal(r->bytes_per_call, 65536);
	assert_true(fabs(r->ns_per_call - 6553.6) < 0.01);
	assert_true(back->probe.measured);
	assert_true(fabs(back->probe.overhead_ns - 100) < 0.01);
	assert_true(fabs(back->probe.reported_ns - 80) < 0.01);
	assert_int_equal(back->machine.nmitigations, 2);
	assert_string_equal(back->machine.cpu_model, "Test CPU");
	assert_true(back->quick);
	assert_int_equal(back->created, 1700000000);
	json_object_put(root);
	calibration__free(back);
	calibration__free(c);
}

static void test_json_bad(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{}",
		/* no machine */
		"{\"quick\": true, \"loop_overhead_ns\": 0.2, \"loops\": []}",
		/* a negative time */
		"{\"quick\": true, \"loop_overhead_ns\": 0.2, \"machine\": {},"
		" \"loops\": [{\"name\": \"read-1B\", \"ns_per_call\": -1,"
		" \"min_ns\": 1, \"median_ns\": 1, \"max_ns\": 1, \"calls\": 1,"
		" \"runs\": 1}]}",
		/* a string where a number goes */
		"{\"quick\": true, \"loop_overhead_ns\": \"x\", \"machine\": {},"
		" \"loops\": []}",
		/* a probe object without its figures */
		"{\"quick\": true, \"loop_overhead_ns\": 0.2, \"machine\": {},"
		" \"probe\": {}, \"loops\": []}",
		NULL,
	};
	/* unknown loop names are skipped, not errors */
	static const char *const ok =
		"{\"quick\": false, \"loop_overhead_ns\": 0.2, \"machine\": {},"
		" \"loops\": [{\"name\": \"read-3B\", \"ns_per_call\": 1,"
		" \"min_ns\": 1, \"median_ns\": 1, \"max_ns\": 1, \"calls\": 1,"
		" \"runs\": 1}]}";
	struct calibration *c = NULL;

	(void)state;
	for (int i = 0; bad[i]; i++) {
		struct json_object *root = json_tokener_parse(bad[i]);

		assert_non_null(root);
		assert_int_equal(calib_from_json(root, &c), -EINVAL);
		assert_null(c);
		json_object_put(root);
	}
	{
		struct json_object *root = json_tokener_parse(ok);

		assert_int_equal(calib_from_json(root, &c), 0);
		assert_int_equal(c->nloops, 0);
		assert_false(c->probe.measured);
		assert_false(calib_usable(c));
		calibration__free(c);
		json_object_put(root);
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_cache(void **state)
{
	char dir[] = "/tmp/scprof-test-cache.XXXXXX", path[256];
	struct calibration *c = sample_cal(), *back = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cal.json", dir);
	assert_int_equal(calib_cache_load(path, &back), -ENOENT);

	/* another boot's calibration is stale */
	strcpy(c->machine.boot_id, "00000000-0000-0000-0000-000000000000");
	assert_true(calib_usable(c));
	assert_int_equal(calib_cache_save(path, c), 0);
	assert_int_equal(calib_cache_load(path, &back), -ESTALE);

	/* this boot's is used */
	assert_int_equal(procfs_boot_id(c->machine.boot_id,
					sizeof(c->machine.boot_id)),
			 0);
	assert_int_equal(calib_cache_save(path, c), 0);
	assert_int_equal(calib_cache_load(path, &back), 0);
	assert_non_null(calibration__loop(back, "syscall-getppid"));
	calibration__free(back);
	back = NULL;

	/* without the probe effect it is not enough for verdict */
	c->probe.measured = false;
	assert_false(calib_usable(c));
	assert_int_equal(calib_cache_save(path, c), 0);
	assert_int_equal(calib_cache_load(path, &back), -ESTALE);

	/* garbage is not a calibration */
	write_file(path, "{ not json");
	assert_int_equal(calib_cache_load(path, &back), -EINVAL);
	write_file(path, "[1, 2]");
	assert_int_equal(calib_cache_load(path, &back), -EINVAL);
	assert_int_equal(calib_cache_load(dir, &back), -EINVAL);
	assert_null(back);

	unlink(path);
	rmdir(dir);
	calibration__free(c);
}

static void test_table(void **state)
{
	static const char head[] =
		"Machine: Test CPU\\x1b, 2 CPUs, Linux 6.1.0\n"
		"Measured: quick run, 7 runs per loop, pinned to CPU 1; an "
		"empty loop's 0.25 ns per iteration taken off\n"
		"Mitigations:\n"
		"  spectre_v2: Mitigation: Retpolines\n"
		"  1 more: not affected\n\n"
		"loop ";
	struct calibration *c = sample_cal();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	free(c->machine.cpu_model);
	c->machine.cpu_model = strdup("Test CPU\x1b");
	assert_non_null(f);
	assert_int_equal(calib_write_table(f, c), 0);
	fclose(f);
	/* the machine, with what was read from it escaped */
	assert_true(!strncmp(buf, head, strlen(head)));
	assert_non_null(strstr(buf, "syscall-getppid"));
	assert_non_null(strstr(buf, "the floor: one kernel crossing"));
	/* 240 ns per byte against 0.1 */
	assert_non_null(strstr(buf, "2400x cheaper per byte than read-1B"));
	assert_non_null(strstr(buf, "10x cheaper than getrandom-16B"));
	assert_non_null(strstr(buf, "spectre_v2: Mitigation: Retpolines"));
	assert_non_null(strstr(buf, "1 more: not affected"));
	assert_non_null(strstr(buf, "scprof adds 100 ns"));
	free(buf);
	calibration__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_per_call),
		cmocka_unit_test(test_loop_names),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_mitigations_sorted),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_bad),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

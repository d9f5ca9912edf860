// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The call sites renderers: labels, table section, folded, JSON, SVG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "model/model.h"
#include "model/stacks.h"
#include "render/callsites.h"
#include "render/flamegraph.h"
#include "frames.h"
#include "unit.h"

#define WRITE 1
#define READ 0

/* hostile names: ; newline < & " */
static const struct sc_frame evil[] = {
	{ .func = "a;b\nc<&>\"'",
	  .module = "m;o\nd",
	  .offset = 1,
	  .file = "f;i\nle<",
	  .line = 2 },
};

static struct sc_model *model_with_stacks(void)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats st = { .calls = 100, .total_ns = 1000 };
	struct sc_stats rd = { .calls = 10, .total_ns = 10 };

	assert_non_null(p);
	assert_int_equal(model_proc_add(p, 0, WRITE, &st), 0);
	assert_int_equal(model_proc_add(p, 0, READ, &rd), 0);
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(50);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", logger, 6, 74),
			 0);
	/* the same site through another return address: merged by label */
	struct sc_frame other[6];
	memcpy(other, logger, sizeof(other));
	other[4].offset = 0x31;
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", other, 6, 1),
			 0);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", rawf, 3, 25),
			 0);
	assert_int_equal(stacks_add(m->stacks, READ, 0, "ev;il\n", evil, 1, 3),
			 0);
	m->stacks->lost_total = 4;
	m->stacks->lost[WRITE] = 4;
	stacks_sort(m->stacks);
	return m;
}

static void test_label(void **state)
{
	struct sc_stacks *s = stacks_new(1);
	char *l;

	(void)state;
	assert_int_equal(stacks_add(s, WRITE, 0, "app", logger, 6, 1), 0);
	assert_int_equal(stacks_add(s, WRITE, 0, "app", rawf, 3, 1), 0);
	l = callsites_label(&s->v[0]);
	/* from the first frame in the program, up to main, its file:line */
	CHECK_STR(l, "log_line <- run_logger <- main (app.c:41)", "label");
	free(l);
	l = callsites_label(&s->v[1]);
	CHECK_STR(l, "app+0x1353 <- 0x7fff1234", "label of unnamed frames");
	free(l);
	stacks_free(s);
}

/* The runtimes a label skips, innermost first, each once; none when the
 * program made the call itself or every frame is a runtime's.
 */
static void test_via(void **state)
{
	static const struct sc_frame js[] = {
		{ .func = "write",
		  .module = "libc.so.6",
		  .runtime = SC_RT_LIBC },
		{ .func = "uv__fs_write",
		  .module = "libuv.so.1",
		  .runtime = SC_RT_LIBUV },
		{ .func = "__write",
		  .module = "libc.so.6",
		  .runtime = SC_RT_LIBC },
		{ .func = "Builtins_CallApiCallback",
		  .module = "libnode.so",
		  .runtime = SC_RT_NODE },
		{ .func = "JS:*hotWriterJs", .module = "perf-1.map" },
	};
	static const struct sc_frame own[] = {
		{ .func = "raw_write", .module = "app" },
		{ .func = "main", .module = "app" },
	};
	static const struct sc_frame rt_only[] = {
		{ .func = "runtime.futex",
		  .module = "app",
		  .runtime = SC_RT_GO },
		{ .func = "runtime.mstart",
		  .module = "app",
		  .runtime = SC_RT_GO },
	};
	struct sc_stacks *s = stacks_new(1);
	char via[64], *l;
	double share;

	(void)state;
	assert_int_equal(stacks_add(s, WRITE, 0, "node", js, 5, 3), 0);
	assert_int_equal(stacks_add(s, WRITE, 0, "app", own, 2, 1), 0);
	assert_int_equal(stacks_add(s, READ, 0, "app", rt_only, 2, 1), 0);
	CHECK_STR(stack_via(&s->v[0], via, sizeof(via)), "libc, libuv, node",
		  "via");
	l = callsites_label(&s->v[0]);
	CHECK_STR(l, "JS:*hotWriterJs", "label from the JIT frame");
	free(l);
	CHECK_STR(stack_via(&s->v[1], via, sizeof(via)), "", "own call");
	{
		/* a 0 return address (a lost unwind) is not in the label */
		static const struct sc_frame lost[] = {
			{ .func = "handler", .module = "app" },
			{ .offset = 0 },
		};

		assert_int_equal(stacks_add(s, READ, 0, "app", lost, 2, 1), 0);
		l = callsites_label(&s->v[3]);
		CHECK_STR(l, "handler", "label without the 0 frame");
		free(l);
	}
	CHECK_STR(stack_via(&s->v[2], via, sizeof(via)), "", "runtime only");
	l = callsites_label(&s->v[2]);
	CHECK_STR(l, "runtime.futex <- runtime.mstart", "runtime's own call");
	free(l);
	l = stacks_top_site(s, 0, WRITE, &share);
	CHECK_STR(l, "JS:*hotWriterJs (via libc, libuv, node)", "top site");
	assert_true(share > 0.74 && share < 0.76);
	free(l);
	stacks_free(s);
}

static void test_table_section(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct memout mo;
	char *out;

	(void)state;
	assert_int_equal(callsites_table(memout_open(&mo), m), 0);
	out = memout_close(&mo);
	CHECK_STR(out,
		  "\ncall sites (the user stack of 1 call in 50: 103 samples, "
		  "4 more lost: the ring buffer was full):\n"
		  "  write (via libc)  75%  log_line <- run_logger <- main "
		  "(app.c:41)\n"
		  "                    25%  app+0x1353 <- 0x7fff1234\n"
		  "  read             100%  a;b\\x0ac<&>\"' (f;i\\x0ale<:2)\n",
		  "section");
	free(out);
	model_free(m);
}

/* A lowered rate is said in the header; over 5% lost, the shares are
 * flagged (and in JSON).
 */
static void test_adapted_and_untrusted(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct memout mo;
	char *out;

	(void)state;
	m->stacks->max_weight = 8;
	m->stacks->lost_total = 6; /* 6 * 20 > 103 + 6 */
	assert_int_equal(callsites_table(memout_open(&mo), m), 0);
	out = memout_close(&mo);
	assert_non_null(strstr(out, "; 1 in up to 400 while the ring buffer "
				    "filled"));
	assert_non_null(strstr(out, "\n  (more than 5% of the samples were "
				    "lost: the shares below may be off)\n"));
	free(out);
	m->stacks->lost_total = 5; /* 100 < 108 */
	assert_int_equal(callsites_table(memout_open(&mo), m), 0);
	out = memout_close(&mo);
	assert_null(strstr(out, "more than 5%"));
	free(out);
	model_free(m);
}

static void test_folded(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct memout mo;
	char *out;

	(void)state;
	assert_int_equal(callsites_folded(memout_open(&mo), m->stacks), 0);
	out = memout_close(&mo);
	/* root first; the two log_line stacks folded into one line; every
	 * ';' and newline in a name escaped
	 */
	CHECK_STR(out,
		  "app;0x7fff1234;app+0x1353;__write;write 25\n"
		  "app;__libc_start_call_main;main;run_logger;log_line;"
		  "_IO_fflush;__write;write 75\n"
		  "ev\\x3bil\\x0a;a\\x3bb\\x0ac<&>\"';read 3\n",
		  "folded");
	free(out);
	model_free(m);
}

static void test_json(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct json_object *root = json_object_new_object(), *st, *s0, *fr;

	(void)state;
	assert_int_equal(callsites_json_add(root, m->stacks), 0);
	assert_true(json_object_object_get_ex(root, "stacks", &st));
	assert_int_equal(json_object_array_length(st), 4);
	assert_true(json_object_object_get_ex(root, "stack_sampling", &s0));
	assert_int_equal(json_object_get_int(json_object_object_get(
				 json_object_object_get(s0, "lost_by_syscall"),
				 "write")),
			 4);
	s0 = json_object_array_get_idx(st, 0);
	CHECK_STR(json_object_get_string(json_object_object_get(s0, "syscall")),
		  "write", "syscall");
	assert_int_equal(
		json_object_get_int(json_object_object_get(s0, "count")), 74);
	fr = json_object_array_get_idx(json_object_object_get(s0, "frames"), 2);
	CHECK_STR(json_object_get_string(json_object_object_get(fr, "file")),
		  "/src/app.c", "file");
	assert_int_equal(
		json_object_get_int(json_object_object_get(fr, "line")), 41);
	json_object_put(root);
	model_free(m);
}

static void test_svg_escaped(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct memout mo;
	char *out;

	(void)state;
	assert_int_equal(flamegraph_svg(memout_open(&mo), m->stacks,
					"<title & \"x\">"),
			 0);
	out = memout_close(&mo);
	assert_non_null(strstr(out, "&lt;title &amp; &quot;x&quot;&gt;"));
	assert_non_null(
		strstr(out, "data-n=\"a;b\\x0ac&lt;&amp;&gt;&quot;&#39;\""));
	assert_null(strstr(out, "<&>"));
	assert_non_null(
		strstr(out, "<title>all (103 samples, 100.00%)</title>"));
	assert_non_null(
		strstr(out, "<title>app (100 samples, 97.09%)</title>"));
	free(out);
	model_free(m);
}

/* --stacks-by blocked: a read that slept in the pipe's read function,
 * twice as long from the logger as from raw_write; the kernel frames
 * innermost first (a hostile-looking one too: names come from kallsyms).
 */
static const struct sc_frame kpipe[] = {
	{ .func = "anon_pipe_read", .module = STACK_KERNEL_MODULE },
	{ .func = "vfs_read", .module = STACK_KERNEL_MODULE },
	{ .func = "entry_SYSCALL_64", .module = STACK_KERNEL_MODULE },
};
static const struct sc_frame kodd[] = {
	{ .func = "x;y", .module = STACK_KERNEL_MODULE },
};

static struct sc_model *model_blocked(void)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats rd = { .calls = 10,
			       .total_ns = 1000,
			       .blocked_ns = 900 };
	struct sc_stats wr = { .calls = 100, .total_ns = 5000 };

	assert_non_null(p);
	assert_int_equal(model_proc_add(p, 0, READ, &rd), 0);
	assert_int_equal(model_proc_add(p, 0, WRITE, &wr), 0);
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(500);
	m->stacks->by = SC_STACKS_BY_BLOCKED;
	assert_int_equal(stacks_add_kernel(m->stacks, READ, 0, "app", logger, 6,
					   kpipe, 3, 20),
			 0);
	assert_int_equal(stacks_add_kernel(m->stacks, READ, 0, "app", rawf, 3,
					   kpipe, 3, 10),
			 0);
	/* the same user stack, asleep elsewhere: another stack */
	assert_int_equal(stacks_add_kernel(m->stacks, READ, 0, "app", rawf, 3,
					   kodd, 1, 1),
			 0);
	stacks_sort(m->stacks);
	return m;
}

static void test_blocked(void **state)
{
	struct sc_model *m = model_blocked();
	struct json_object *root = json_object_new_object(), *st, *s0, *k;
	struct memout mo;
	char *out;

	(void)state;
	assert_int_equal(m->stacks->n, 3);
	/* folded: µs, said first; kernel frames outermost first, marked */
	assert_int_equal(callsites_folded(memout_open(&mo), m->stacks), 0);
	out = memout_close(&mo);
	CHECK_STR(out,
		  "# scprof --stacks-by blocked: counts are microseconds "
		  "blocked in calls; kernel frames end in _[k]\n"
		  "app;0x7fff1234;app+0x1353;__write;read;"
		  "entry_SYSCALL_64_[k];vfs_read_[k];anon_pipe_read_[k] 5000\n"
		  "app;0x7fff1234;app+0x1353;__write;read;x\\x3by_[k] 500\n"
		  "app;__libc_start_call_main;main;run_logger;log_line;"
		  "_IO_fflush;__write;read;entry_SYSCALL_64_[k];vfs_read_[k];"
		  "anon_pipe_read_[k] 10000\n",
		  "blocked folded");
	free(out);
	/* the table says the weighting; syscalls by their blocked time */
	assert_int_equal(callsites_table(memout_open(&mo), m), 0);
	out = memout_close(&mo);
	CHECK_STR(out,
		  "\ncall sites by blocked time in calls (the user stack and "
		  "where it slept, at one call per 500 µs blocked: 31 "
		  "samples):\n"
		  "  read (via libc)   65%  log_line <- run_logger <- main "
		  "(app.c:41)\n"
		  "                    35%  app+0x1353 <- 0x7fff1234\n",
		  "blocked section");
	free(out);
	/* JSON: the weighting, and each stack's kernel frames */
	assert_int_equal(callsites_json_add(root, m->stacks), 0);
	assert_true(json_object_object_get_ex(root, "stack_sampling", &s0));
	CHECK_STR(
		json_object_get_string(json_object_object_get(s0, "weighting")),
		"blocked", "weighting");
	assert_true(json_object_object_get_ex(root, "stacks", &st));
	s0 = json_object_array_get_idx(st, 0);
	assert_true(json_object_object_get_ex(s0, "kernel_frames", &k));
	assert_int_equal(json_object_array_length(k), 3);
	CHECK_STR(json_object_get_string(json_object_object_get(
			  json_object_array_get_idx(k, 0), "function")),
		  "anon_pipe_read", "innermost kernel frame");
	json_object_put(root);
	/* the flame graph: kernel frames on top of the syscall, orange */
	assert_int_equal(flamegraph_svg(memout_open(&mo), m->stacks, "t"), 0);
	out = memout_close(&mo);
	{
		/* above each read, under each site: orange (no blue) */
		const char *a =
			strstr(out, "<title>anon_pipe_read (20 samples");
		const char *b =
			strstr(out, "<title>anon_pipe_read (10 samples");

		assert_non_null(a);
		assert_non_null(b);
		a = strstr(a, "fill=\"rgb(");
		assert_non_null(a);
		assert_non_null(strstr(a, ",0)\""));
		assert_true(strstr(a, ",0)\"") - a < 24);
	}
	free(out);
	model_free(m);
}

/* By count or time, JSON has no kernel_frames. */
static void test_no_kernel_frames_by_count(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct json_object *root = json_object_new_object(), *st;

	(void)state;
	assert_int_equal(callsites_json_add(root, m->stacks), 0);
	assert_true(json_object_object_get_ex(root, "stacks", &st));
	assert_false(json_object_object_get_ex(json_object_array_get_idx(st, 0),
					       "kernel_frames", NULL));
	json_object_put(root);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_via),
		cmocka_unit_test(test_adapted_and_untrusted),
		cmocka_unit_test(test_table_section),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_svg_escaped),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_no_kernel_frames_by_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampled call sites: distinct stacks, their counts, sort, clone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/stacks.h"

static const struct sc_frame a[] = {
	{ .func = "write",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x10 },
	{
		.func = "log_line",
		.module = "app",
		.offset = 0x20,
		.file = "app.c",
		.line = 41,
	},
	{ .func = "main", .module = "app", .offset = 0x30 },
};
/* the same functions, another return address in main */
static const struct sc_frame b[] = {
	{ .func = "write",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x10 },
	{ .func = "log_line", .module = "app", .offset = 0x20 },
	{ .func = "main", .module = "app", .offset = 0x38 },
};
/* no names: only places */
static const struct sc_frame c[] = {
	{ .module = "app", .offset = 0x1353 },
	{ .offset = 0x7fff0000 },
};

static void test_distinct_stacks_counted(void **state)
{
	struct sc_stacks *s = stacks_new(100), *d;

	(void)state;
	assert_non_null(s);
	for (int i = 0; i < 5; i++)
		assert_int_equal(stacks_add(s, 1, 0, "app", a, 3, 1), 0);
	assert_int_equal(stacks_add(s, 1, 0, "app", b, 3, 2), 0);
	assert_int_equal(stacks_add(s, 1, 0, "other", a, 3, 1), 0);
	assert_int_equal(stacks_add(s, 0, 0, "app", a, 3, 1), 0);
	assert_int_equal(stacks_add(s, 1, 0, "app", c, 2, 7), 0);
	assert_int_equal(stacks_add(s, 1, 0, "app", a, 2, 1), 0); /* shorter */
	/* a, b, a by other, a on read, c, a[0..1] */
	assert_int_equal(s->n, 6);
	assert_int_equal(s->samples, 5 + 2 + 1 + 1 + 7 + 1);
	assert_int_equal(stacks_syscall_samples(s, 0, 1), 5 + 2 + 1 + 7 + 1);
	assert_int_equal(stacks_syscall_samples(s, 0, 0), 1);
	stacks_sort(s);
	assert_int_equal(s->v[0].count, 7);
	assert_int_equal(s->v[1].count, 5);
	assert_true(stack_has_func(&s->v[1], "main"));
	assert_false(stack_has_func(&s->v[0], "main"));
	/* the index still finds them after the sort */
	assert_int_equal(stacks_add(s, 1, 0, "app", a, 3, 1), 0);
	assert_int_equal(s->n, 6);
	assert_int_equal(s->v[1].count, 6);
	/* many distinct stacks: the index grows */
	for (uint64_t i = 0; i < 1000; i++) {
		struct sc_frame f = { .module = "x", .offset = i };

		assert_int_equal(stacks_add(s, 2, 0, "app", &f, 1, 1), 0);
	}
	assert_int_equal(s->n, 1006);
	s->lost[1] = 3;
	s->lost_total = 3;
	d = stacks_clone(s);
	assert_non_null(d);
	assert_int_equal(d->n, s->n);
	assert_int_equal(d->samples, s->samples);
	assert_int_equal(d->lost_total, 3);
	assert_int_equal(d->lost[1], 3);
	assert_int_equal(d->period, 100);
	for (size_t i = 0; i < s->n; i++) {
		assert_int_equal(d->v[i].count, s->v[i].count);
		assert_int_equal(d->v[i].nframes, s->v[i].nframes);
	}
	assert_string_equal(d->v[1].frames[1].file, "app.c");
	assert_int_equal(d->v[1].frames[0].runtime, SC_RT_LIBC);
	stacks_free(s);
	stacks_free(d);
}

/* --stacks-by blocked: where a call slept is part of its stack. */
static void test_kernel_frames(void **state)
{
	static const struct sc_frame k1[] = {
		{ .func = "anon_pipe_read", .module = STACK_KERNEL_MODULE },
		{ .func = "vfs_read", .module = STACK_KERNEL_MODULE },
	};
	static const struct sc_frame k2[] = {
		{ .func = "futex_do_wait", .module = STACK_KERNEL_MODULE },
	};
	struct sc_stacks *s = stacks_new(1000), *d;

	(void)state;
	assert_non_null(s);
	s->by = SC_STACKS_BY_BLOCKED;
	assert_int_equal(stacks_add_kernel(s, 0, 0, "app", a, 3, k1, 2, 4), 0);
	assert_int_equal(stacks_add_kernel(s, 0, 0, "app", a, 3, k1, 2, 1), 0);
	assert_int_equal(stacks_add_kernel(s, 0, 0, "app", a, 3, k2, 1, 2), 0);
	assert_int_equal(stacks_add_kernel(s, 0, 0, "app", a, 3, k1, 1, 3), 0);
	assert_int_equal(stacks_add(s, 0, 0, "app", a, 3, 7), 0);
	/* k1, k2, k1's first frame alone, none */
	assert_int_equal(s->n, 4);
	assert_int_equal(s->samples, 4 + 1 + 2 + 3 + 7);
	stacks_sort(s);
	assert_int_equal(s->v[0].count, 7);
	assert_int_equal(s->v[0].nkframes, 0);
	assert_int_equal(s->v[1].count, 5);
	assert_int_equal(s->v[1].nkframes, 2);
	assert_string_equal(s->v[1].kframes[0].func, "anon_pipe_read");
	assert_string_equal(s->v[1].kframes[1].module, "[kernel]");
	/* a clone keeps them, and the weighting */
	d = stacks_clone(s);
	assert_non_null(d);
	assert_int_equal(d->by, SC_STACKS_BY_BLOCKED);
	assert_true(stacks_timed(d));
	assert_int_equal(d->n, 4);
	assert_int_equal(stacks_add_kernel(d, 0, 0, "app", a, 3, k2, 1, 1), 0);
	assert_int_equal(d->n, 4);
	stacks_free(d);
	stacks_free(s);
	assert_string_equal(stacks_weighting_name(SC_STACKS_BY_COUNT), "count");
	assert_string_equal(stacks_weighting_name(SC_STACKS_BY_TIME), "time");
	assert_string_equal(stacks_weighting_name(SC_STACKS_BY_BLOCKED),
			    "blocked");
}

/* A stack kept by cgroup (the daemon's --labels): the same stack in two
 * cgroups, or in a known one and none, is two records; a clone keeps them.
 */
static void test_cgroups_apart(void **state)
{
	struct sc_stacks *s = stacks_new(100), *d;

	(void)state;
	assert_non_null(s);
	assert_int_equal(stacks_add_in_cgroup(s, 1, 0, "app", "/a.service", a,
					      3, NULL, 0, 1),
			 0);
	assert_int_equal(stacks_add_in_cgroup(s, 1, 0, "app", "/b.scope", a, 3,
					      NULL, 0, 2),
			 0);
	assert_int_equal(stacks_add_in_cgroup(s, 1, 0, "app", "/a.service", a,
					      3, NULL, 0, 4),
			 0);
	assert_int_equal(stacks_add(s, 1, 0, "app", a, 3, 8), 0);
	assert_int_equal(s->n, 3);
	stacks_sort(s);
	assert_null(s->v[0].cgroup);
	assert_int_equal(s->v[0].count, 8);
	assert_string_equal(s->v[1].cgroup, "/a.service");
	assert_int_equal(s->v[1].count, 5);
	assert_string_equal(s->v[2].cgroup, "/b.scope");
	d = stacks_clone(s);
	assert_non_null(d);
	assert_int_equal(stacks_add_in_cgroup(d, 1, 0, "app", "/b.scope", a, 3,
					      NULL, 0, 1),
			 0);
	assert_int_equal(d->n, 3);
	assert_int_equal(d->samples, 16);
	stacks_free(d);
	stacks_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distinct_stacks_counted),
		cmocka_unit_test(test_kernel_frames),
		cmocka_unit_test(test_cgroups_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

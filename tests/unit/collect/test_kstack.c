// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel stacks named (collect/kstack.c), against a kallsyms file of
 * made-up addresses: where a sleeper slept (the first function past the
 * scheduler's and the generic waits), who woke it (a task, an interrupt,
 * a timer), and the frames drawn on top of a stack by blocked time.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <linux/types.h>

#include "collect/kstack.h"
#include "sc_split.h"
#include "unit.h"
#include "util/ksyms.h"

#define SCHEDULE 0xffffffff81000000ULL
#define WAIT_WOKEN 0xffffffff81000100ULL
#define PIPE_READ 0xffffffff81000200ULL
#define VFS_READ 0xffffffff81000300ULL
#define ENTRY 0xffffffff81000400ULL
#define TRY_WAKE 0xffffffff81000500ULL
#define HRTIMER_WAKEUP 0xffffffff81000600ULL
#define SYSVEC 0xffffffff81000700ULL
#define PIPE_WRITE 0xffffffff81000800ULL
#define MUTEX_LOCK 0xffffffff81000a00ULL
#define FUTEX_WAIT 0xffffffff81000b00ULL

static const char kallsyms[] =
	"ffffffff81000000 T __schedule\n"
	"ffffffff81000100 T wait_woken\n"
	"ffffffff81000200 t anon_pipe_read\n"
	"ffffffff81000300 T vfs_read\n"
	"ffffffff81000400 T entry_SYSCALL_64_after_hwframe\n"
	"ffffffff81000500 T try_to_wake_up\n"
	"ffffffff81000600 t hrtimer_wakeup\n"
	"ffffffff81000700 T sysvec_apic_timer_interrupt\n"
	"ffffffff81000800 t anon_pipe_write\n"
	"ffffffff81000900 D some_data\n"
	"ffffffff81000a00 t __mutex_lock.constprop.0\n"
	"ffffffff81000b00 T futex_do_wait\n";

/* A ksyms of text (its file gone once read). */
static struct ksyms *load_text(const char *text)
{
	char path[] = "/tmp/scprof-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	struct ksyms *k;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	k = ksyms_load(path);
	unlink(path);
	return k;
}

static struct ksyms *load(void)
{
	struct ksyms *k = load_text(kallsyms);

	assert_non_null(k);
	return k;
}

static void test_slept_in(void **state)
{
	const __u64 sleeper[] = { SCHEDULE + 8, WAIT_WOKEN + 0x20,
				  PIPE_READ + 0x44, VFS_READ + 1, ENTRY + 2 };
	const __u64 generic[] = { SCHEDULE + 8, WAIT_WOKEN + 0x20 };
	struct ksyms *k = load();

	(void)state;
	const __u64 on_mutex[] = { SCHEDULE + 8, MUTEX_LOCK + 0x10,
				   PIPE_WRITE + 0x30, ENTRY + 2 };
	const __u64 on_futex[] = { SCHEDULE + 8, FUTEX_WAIT + 0x10, ENTRY + 2 };
	bool lock = true;

	CHECK_STR(kstack_slept_in(k, sleeper, 5, &lock), "anon_pipe_read",
		  "past the scheduler and the generic wait");
	CHECK(!lock, "a pipe's wait is no lock");
	/* a kernel mutex passed over as generic: a lock, where it was taken */
	CHECK_STR(kstack_slept_in(k, on_mutex, 4, &lock), "anon_pipe_write",
		  "the mutex's taker");
	CHECK(lock, "pipe->mutex is a lock");
	CHECK_STR(kstack_slept_in(k, on_futex, 3, &lock), "futex_do_wait",
		  "a futex");
	CHECK(lock, "a futex is a lock");
	/* only generic ones: the first named */
	CHECK_STR(kstack_slept_in(k, generic, 2, NULL), "__schedule",
		  "generic");
	/* at most SC_SPLIT_FRAMES, none named without symbols */
	CHECK(!kstack_slept_in(NULL, sleeper, 5, NULL), "no ksyms: unnamed");
	CHECK(!kstack_slept_in(k, sleeper, 0, NULL), "no frames");
	ksyms_free(k);
}

static void test_waker(void **state)
{
	const __u64 task[] = { TRY_WAKE + 1, PIPE_WRITE + 3, ENTRY };
	const __u64 timer[] = { TRY_WAKE + 1, HRTIMER_WAKEUP + 9, SYSVEC };
	const __u64 irq[] = { TRY_WAKE + 1, SYSVEC + 4 };
	struct ksyms *k = load();

	(void)state;
	assert_int_equal(kstack_waker(k, "writer", task, 3), SC_WAKER_TASK);
	assert_int_equal(kstack_waker(k, "anything", timer, 3), SC_WAKER_TIMER);
	assert_int_equal(kstack_waker(k, "busy", irq, 2), SC_WAKER_INTERRUPT);
	/* ksoftirqd's own wake-ups are an interrupt's, whatever its stack */
	assert_int_equal(kstack_waker(k, "ksoftirqd/1", task, 3),
			 SC_WAKER_INTERRUPT);
	ksyms_free(k);
}

static void test_frames(void **state)
{
	const __u64 sleeper[] = { PIPE_READ + 0x44, 0, VFS_READ + 1,
				  0xffffffff80000000ULL, ENTRY + 2 };
	struct sc_frame f[SC_SPLIT_FRAMES];
	struct ksyms *k = load();
	size_t n;

	(void)state;
	n = kstack_frames(k, sleeper, 5, f, SC_SPLIT_FRAMES);
	/* the empty slot left out; a frame before every symbol by address */
	assert_int_equal(n, 4);
	CHECK_STR(f[0].func, "anon_pipe_read", "innermost");
	CHECK_STR(f[0].module, STACK_KERNEL_MODULE, "module");
	CHECK(f[0].offset == 0, "named: by function");
	CHECK_STR(f[1].func, "vfs_read", "then");
	CHECK(!f[2].func && f[2].offset == 0xffffffff80000000ULL,
	      "unnamed: by address");
	CHECK_STR(f[3].func, "entry_SYSCALL_64_after_hwframe", "outermost");
	assert_int_equal(kstack_frames(k, sleeper, 5, f, 2), 2);
	ksyms_free(k);
}

static void test_lines(void **state)
{
	struct ksyms *k = load_text("ffffffff81000000 T _stext\n"
				    "not a line\n"
				    "ffffffff81000100 D data_only\n"
				    "ffffffff81000200 t\n"
				    "ffffffffc0000000 t mod_fn\t[some_mod]\n"
				    "ffffffffc0000100 W weak_fn\n");

	(void)state;
	assert_non_null(k);
	/* the first function is named too (ksyms_load read it to see
	 * addresses) */
	CHECK_STR(ksyms_name(k, 0xffffffff81000010ULL), "_stext", "first");
	/* data is not a function: the text before it spans its address */
	CHECK_STR(ksyms_name(k, 0xffffffff81000110ULL), "_stext", "data");
	CHECK_STR(ksyms_name(k, 0xffffffffc0000004ULL), "mod_fn", "module");
	CHECK_STR(ksyms_name(k, 0xffffffffc0000104ULL), "weak_fn", "weak");
	CHECK(!ksyms_name(k, 0xffffffff80000000ULL), "below every symbol");
	ksyms_free(k);
	assert_null(ksyms_name(NULL, SCHEDULE));
}

static void test_hidden_addresses(void **state)
{
	struct ksyms *k;

	(void)state;
	errno = 0;
	assert_null(load_text("0000000000000000 T _stext\n"
			      "0000000000000000 T __schedule\n"));
	assert_int_equal(errno, EPERM);
	assert_null(load_text(""));
	/* x86's per-CPU symbols at 0 before the functions: addresses shown */
	k = load_text("0000000000000000 A fixed_percpu_data\n"
		      "0000000000000000 A __per_cpu_start\n"
		      "ffffffff81000000 T _stext\n");
	assert_non_null(k);
	CHECK_STR(ksyms_name(k, 0xffffffff81000004ULL), "_stext", "text");
	ksyms_free(k);
	assert_null(load_text("0000000000000000 A fixed_percpu_data\n"
			      "0000000000000000 T _stext\n"));
	assert_int_equal(errno, EPERM);
	assert_null(ksyms_load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

struct asker {
	struct ksyms *k;
	const char *name;
};

static void *ask(void *arg)
{
	struct asker *a = arg;

	a->name = ksyms_name(a->k, PIPE_READ + 4);
	return NULL;
}

static void test_threads_ask_at_once(void **state)
{
	struct ksyms *k = load();
	struct asker a[4];
	pthread_t t[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		a[i] = (struct asker){ .k = k };
		assert_int_equal(pthread_create(&t[i], NULL, ask, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		CHECK_STR(a[i].name, "anon_pipe_read", "each thread");
	}
	ksyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slept_in),
		cmocka_unit_test(test_waker),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_hidden_addresses),
		cmocka_unit_test(test_threads_ask_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

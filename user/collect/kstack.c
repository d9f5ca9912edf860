// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel stacks named (kstack.h). */
#include <stdbool.h>
#include <string.h>

#include "collect/kstack.h"
#include "sc_split.h"
#include "util/ksyms.h"

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool any_prefix(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (has_prefix(s, list[i]))
			return true;
	return false;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The scheduler, the generic ways to wait, the syscall entry, BPF's
 * own: never where a call was said to sleep.
 */
static const char *const generic_wait[] = {
	"__traceiter_",
	"__bpf_trace",
	"bpf_",
	"__schedule",
	"schedule",
	"preempt_schedule",
	"io_schedule",
	"__wait_",
	"wait_woken",
	"wait_for_completion",
	"__wait_for_common",
	"do_wait_for_common",
	"wait_for_common",
	"__wait_on_bit",
	"out_of_line_wait_on_bit",
	"bit_wait",
	"prepare_to_wait",
	"finish_wait",
	"__mutex_lock",
	"mutex_lock",
	"__rt_mutex",
	"rt_mutex",
	"rwsem_down",
	"down_",
	"__down",
	"percpu_rwsem_wait",
	"__percpu_down",
	"do_syscall_",
	"entry_SYSCALL",
	"x64_sys_call",
	"__x64_sys_",
	"__ia32_sys_",
	"__do_sys_",
	"__se_sys_",
	"__arm64_sys_",
	"invoke_syscall",
	"el0_svc",
	"el0t_",
	"do_el0_svc",
	"futex_wait_queue",
	"__futex_wait",
	"wait_event",
	"__wait_event",
	"sk_wait_event",
	"pipe_wait",
	"___wait_",
	"rcu_",
	"__cond_resched",
	"_cond_resched",
};

/* An interrupt's entry, or a softirq run on one's way out. */
static const char *const irq_entry[] = {
	"asm_sysvec_",	  "asm_common_interrupt", "sysvec_",
	"__sysvec_",	  "common_interrupt",	  "irq_exit",
	"__irq_exit_rcu", "el1_interrupt",	  "el0_interrupt",
	"gic_handle_irq", "handle_domain_irq",	  "call_on_irq_stack",
	"el1h_64_irq",	  "el0t_64_irq",	  "asm_exc_nmi",
};

/* A timer's callback. */
static const char *const timer_fn[] = {
	"hrtimer_wakeup",  "__hrtimer_run_queues", "hrtimer_interrupt",
	"process_timeout", "call_timer_fn",	   "run_timer_softirq",
	"__run_timers",	   "tick_sched_timer",
};

/* Waiting for a lock: a futex, a kernel mutex, rwsem or semaphore. */
static const char *const lock_wait[] = {
	"__mutex_lock",	 "mutex_lock", "__rt_mutex", "rt_mutex",
	"rwsem_down",	 "down_",      "__down",     "percpu_rwsem_wait",
	"__percpu_down", "futex_",     "__futex_",
};

const char *kstack_slept_in(const struct ksyms *k, const __u64 *ips, __u32 n,
			    bool *lock)
{
	const char *first = NULL;
	bool locked = false;

	for (__u32 i = 0; i < n && i < SC_SPLIT_FRAMES; i++) {
		const char *f = ksyms_name(k, ips[i]);

		if (!f)
			continue;
		if (!first)
			first = f;
		locked |= any_prefix(f, lock_wait, N(lock_wait));
		if (!any_prefix(f, generic_wait, N(generic_wait))) {
			first = f;
			break;
		}
	}
	if (lock)
		*lock = locked;
	return first;
}

enum sc_waker kstack_waker(const struct ksyms *k, const char *comm,
			   const __u64 *ips, __u32 n)
{
	bool irq = !strncmp(comm, "ksoftirqd/", strlen("ksoftirqd/"));

	for (__u32 i = 0; i < n && i < SC_SPLIT_FRAMES; i++) {
		const char *f = ksyms_name(k, ips[i]);

		if (!f)
			continue;
		if (any_prefix(f, timer_fn, N(timer_fn)))
			return SC_WAKER_TIMER;
		irq |= any_prefix(f, irq_entry, N(irq_entry));
	}
	return irq ? SC_WAKER_INTERRUPT : SC_WAKER_TASK;
}

size_t kstack_frames(const struct ksyms *k, const __u64 *ips, __u32 n,
		     struct sc_frame *out, size_t max)
{
	size_t m = 0;

	for (__u32 i = 0; i < n && m < max; i++) {
		const char *f = ksyms_name(k, ips[i]);

		if (!ips[i])
			continue;
		/* named by function: one place per function (the offset in
		 * it would split a flame graph's frames for nothing); an
		 * unnamed one by its address
		 */
		out[m] = (struct sc_frame){ .func = (char *)f,
					    .module = STACK_KERNEL_MODULE,
					    .offset = f ? 0 : ips[i] };
		m++;
	}
	return m;
}

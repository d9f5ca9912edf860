/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel stacks, as the split and the slow calls carry them (a sleeper's
 * stack, a waking context's: include/sc_split.h), named by
 * /proc/kallsyms (util/ksyms.h), the one naming of both:
 *
 *  - where a task slept: the first function of the sleeper's stack that
 *    is not the scheduler's or a generic wait ("anon_pipe_read",
 *    "futex_do_wait", "folio_wait_bit_common", "do_epoll_wait");
 *  - who woke it: a timer when the waking context ran a timer's
 *    callback, an interrupt when it is an interrupt's (an interrupt entry
 *    on its stack, or ksoftirqd), else the task that ran the wakeup (a
 *    softirq it ran itself, as a loopback send does, is its own).
 */
#ifndef SCPROF_KSTACK_H
#define SCPROF_KSTACK_H

#include <stddef.h>
#include <linux/types.h>

#include <stdbool.h>

#include "model/stacks.h"
#include "model/why.h"

struct ksyms;

/* Where the sleeper of ips (n frames, innermost first) slept: the first
 * telling function, else the first named; NULL: none named (no ksyms).
 * *lock (unless NULL): whether the frames up to it wait for a lock (a
 * futex, a kernel mutex, rwsem or semaphore: a sleep on pipe->mutex is
 * named pipe_write, and a lock).
 */
const char *kstack_slept_in(const struct ksyms *k, const __u64 *ips, __u32 n,
			    bool *lock);
/* Who woke it: the waking context's stack ips (n frames) and the comm of
 * the task it ran on.
 */
enum sc_waker kstack_waker(const struct ksyms *k, const char *comm,
			   const __u64 *ips, __u32 n);
/* The frames of ips as stack frames, innermost first, at most max, into
 * out: func the function (NULL: unnamed; owned by k), module
 * STACK_KERNEL_MODULE (static), offset 0. How many.
 */
size_t kstack_frames(const struct ksyms *k, const __u64 *ips, __u32 n,
		     struct sc_frame *out, size_t max);

#endif

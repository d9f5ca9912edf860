// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * For each thread of one process: its RCU Tasks Trace reader state, which
 * the kernel's syscall tracepoints (6.13 on) pass through on every call a
 * probe sees. A grace period leaves each thread that was running then with
 * need_qs set for good, and such a thread takes the slow unlock (a full
 * barrier) on every later tracepoint call (see rcumark.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile int tgid = 0;

SEC("iter/task")
int rcumark(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	int need_qs = -1;

	if (!t || t->tgid != tgid)
		return 0;
	if (bpf_core_field_exists(t->trc_reader_special))
		need_qs = BPF_CORE_READ(t, trc_reader_special.b.need_qs);
	BPF_SEQ_PRINTF(ctx->meta->seq, "%d %d\n", t->pid, need_qs);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verdict: from one process's syscall rows, its CPU and thread times
 * and this machine's calibration, decide whether syscalls dominate its
 * time and which of the known patterns it shows. Pure logic: no BPF, no
 * /proc, no output (verdict_report.c renders a verdict).
 *
 * Figures and rules (docs/verdict.md):
 *  - a call's round trip (user to kernel to user, probe effect removed) is
 *    floor + (its latency as scprof reports it - the floor call's latency
 *    as scprof reported it under the probe), and at least the floor;
 *  - syscall_s is the sum of round trips; syscall_share = syscall_s /
 *    thread_s, where thread_s is the threads' wall time (threads counted
 *    over the run) less the probe's cost (calls x probe_overhead_ns);
 *  - CPU time is utime + stime less the probe's cost; the part spent in
 *    syscalls is min(syscall_s, system time less the probe's cost);
 *  - what is left of thread_s after CPU time and run-queue waits is
 *    spent asleep, which happens inside syscalls: blocked_s =
 *    min(syscall_s, that); with the split (split), what the calls
 *    measured asleep instead, plus the calls still in flight;
 *  - with the split, a call's round trip on a CPU is its round trip less
 *    its share of the row's waiting and blocked time (at least the
 *    floor): what the call costs, which the advice on cost prices, and
 *    the CPU time inside syscalls is at most the rows' time on a CPU;
 *  - syscall_bound: the process keeps at least a tenth of a CPU busy
 *    (cpu_s >= 0.1 x wall) and at least half of its CPU time is spent
 *    inside syscalls. Waiting, for an event or for a CPU, is not syscall
 *    overhead and does not count.
 */
#ifndef SCPROF_VERDICT_H
#define SCPROF_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/verdict_input.h"
#include "model/verdict.h"

/* 0 or -ENOMEM / -EINVAL (floor_ns <= 0, times not finite). */
int verdict_judge(const struct verdict_input *in, struct verdict **out);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark's floor: programs that do nothing, on the same tracepoints
 * as scprof. Whatever a probe adds above these is its own work; these
 * themselves are the price of being on raw_syscalls at all (the syscall
 * slow path, the tracepoint and one BPF program run per call and program).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where the CPUs are, sampled (bench/dsample.c): a program on a cpu-clock
 * event of each CPU counts the samples whose kernel address falls in each
 * of a few functions' ranges, and all of them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define DSAMPLE_RANGES 16

/* [lo, hi) of each function watched, set before the program is attached;
 * unused ones are empty
 */
__u64 lo[DSAMPLE_RANGES], hi[DSAMPLE_RANGES];

/* [i]: samples in range i, [DSAMPLE_RANGES]: all samples */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DSAMPLE_RANGES + 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &k);

	if (v)
		(*v)++;
}

SEC("perf_event")
int dsample(struct bpf_perf_event_data *ctx)
{
	__u64 ip = PT_REGS_IP(&ctx->regs);

	hit(DSAMPLE_RANGES);
	for (int i = 0; i < DSAMPLE_RANGES; i++) {
		if (ip >= lo[i] && ip < hi[i]) {
			hit(i);
			break;
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Latency histogram layout, shared by the BPF side (which fills it) and
 * userspace (which turns it into percentiles and bar charts).
 *
 * Log-linear buckets: every power of two (2^k, 2^(k+1)] is split into
 * SC_HIST_SUB equal sub-buckets, so a bucket is at most 25% wide relative
 * to its lower bound and an interpolated percentile is within about 12%.
 * A bucket holds the values above its lower bound up to and including its
 * upper bound, like Prometheus' `le`: a call of exactly 2^k ns is counted
 * below the bound 2^k, not above it. Values 0..4 ns get one bucket each
 * (0 and 1 share the first); values above 2^40 ns (~18 min) land in the
 * last bucket.
 */
#ifndef SCPROF_HIST_H
#define SCPROF_HIST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifdef __bpf__
#define SC_INLINE static inline __attribute__((always_inline))
#else
#define SC_INLINE static inline
#endif

#define SC_HIST_SUB_BITS 2
#define SC_HIST_SUB (1U << SC_HIST_SUB_BITS)
#define SC_HIST_MAX_LOG2 39 /* highest power of two with its own buckets */
#define SC_HIST_BUCKETS (SC_HIST_SUB * SC_HIST_MAX_LOG2)

/*
 * floor(log2(v)) for v > 0, by halving the search range: no count-leading-
 * zeros builtin, which clang for target bpf has been seen to blow up on.
 */
SC_INLINE __u32 sc_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (__u32)(v >> 1);
	return r;
}

/* Bucket index of a latency in ns: the bucket b with
 * sc_hist_lower(b) < ns <= sc_hist_upper(b) (bucket 0 also holds 0).
 */
SC_INLINE __u32 sc_hist_bucket(__u64 ns)
{
	__u32 lg, sub;

	if (ns)
		ns--; /* (lo, hi] is [lo, hi) shifted by one ns */
	if (ns < SC_HIST_SUB)
		return (__u32)ns;
	lg = sc_log2(ns);
	if (lg > SC_HIST_MAX_LOG2)
		return SC_HIST_BUCKETS - 1;
	sub = (__u32)(ns >> (lg - SC_HIST_SUB_BITS)) & (SC_HIST_SUB - 1);
	return (lg - SC_HIST_SUB_BITS + 1) * SC_HIST_SUB + sub;
}

/* The bound below bucket idx: the bucket holds the values above it, up to
 * sc_hist_upper(idx) = sc_hist_lower(idx + 1).
 */
SC_INLINE __u64 sc_hist_lower(__u32 idx)
{
	__u32 lg, sub;

	if (idx < SC_HIST_SUB)
		return idx;
	lg = idx / SC_HIST_SUB + SC_HIST_SUB_BITS - 1;
	sub = idx % SC_HIST_SUB;
	return (__u64)(SC_HIST_SUB + sub) << (lg - SC_HIST_SUB_BITS);
}

/* Largest value in bucket idx (the last bucket also holds all above). */
SC_INLINE __u64 sc_hist_upper(__u32 idx)
{
	return sc_hist_lower(idx + 1);
}

#endif /* SCPROF_HIST_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The calling thread's capabilities: reading the effective set, and
 * giving capabilities up for good once the BPF programs are attached.
 */
#ifndef SCPROF_CAPS_H
#define SCPROF_CAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/capability.h>

/* Older headers lack the capabilities split out of CAP_SYS_ADMIN (5.8). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The effective set, bit N for capability N. 0 or -errno. */
int caps_effective(uint64_t *mask);
/* Empty the effective, permitted and inheritable sets. 0 or -errno. */
int caps_clear(void);
/*
 * Keep CAP_BPF and CAP_PERFMON (keep_bpf) or nothing: drop the rest from
 * the bounding set too (with CAP_SETPCAP), clear the ambient set and set
 * no_new_privs, so nothing exec'd later could get more back. 0 or -errno.
 */
int caps_drop(bool keep_bpf);
/* The same with the capabilities of mask keep (bit N: capability N). The
 * sets are the calling thread's: each thread drops its own.
 */
int caps_drop_to(uint64_t keep);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * BPF-only map helpers, and the counts of what the maps had no room for:
 * failed updates by map and errno, what could not be recorded by
 * consequence (count_drop()), calls kept out of their process's row.
 *
 * Uses the settings inject_map, inject_errno (settings.bpf.h).
 */
#ifndef SCPROF_MAPS_BPF_H
#define SCPROF_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "scprof.h"
#include "settings.bpf.h"

/* What could not be recorded, by enum sc_drop. */
__u64 drops[SC_DROP_COUNT] = {};
/* Failed map updates, by map (enum sc_map) and errno. */
__u64 map_fails[SC_MAP_COUNT][SC_ERRNO_SLOTS] = {};
/* Calls counted, but not in their process's row: no room for its cell in
 * stats (they went to their merged cell, record.bpf.h), or for its
 * process's entry in procs, with the totals of threads without a slot
 * (tslots.bpf.h).
 */
__u64 unattributed = 0;

static __always_inline void count_drop(enum sc_drop why)
{
	__sync_fetch_and_add(&drops[why], 1);
}

/*
 * bpf_map_update_elem's result as the kernel meant it. Before Linux 6.4 a
 * hash map's update, which the verifier turns into a direct call, handed
 * its int back unextended: -EEXIST read as 4294967279 in 64 bits. The low
 * 32 bits are right on every kernel.
 */
static __always_inline int map_update(__u32 which, void *map, const void *key,
				      const void *val, __u64 flags)
{
	/* a test's failure of map which (SCPROF_TEST_MAP_FAIL) */
	if (settings.inject_errno && which == settings.inject_map)
		return -settings.inject_errno;
	return (int)bpf_map_update_elem(map, key, val, flags);
}

/* A failed update of map which (enum sc_map), by errno. Out of line: the
 * error paths stay out of the hot path's registers.
 */
static __noinline void map_failed(__u32 which, int err)
{
	__u32 slot = err < 0 && err > -SC_ERRNO_SLOTS ? (__u32)-err : 0;

	if (which >= SC_MAP_COUNT)
		return;
	barrier_var(slot);
	__sync_fetch_and_add(&map_fails[which][slot & (SC_ERRNO_SLOTS - 1)], 1);
}

/*
 * Look key up in map, inserting init first if it is missing. Returns NULL
 * when the entry cannot be made (the failure counted for which); the
 * caller counts what it lost.
 */
static __always_inline void *lookup_or_init(void *map, const void *key,
					    const void *init, __u32 which)
{
	void *val;
	int err;

	val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	err = map_update(which, map, key, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU won the race */) {
		map_failed(which, err);
		return NULL;
	}
	return bpf_map_lookup_elem(map, key);
}

#endif /* SCPROF_MAPS_BPF_H */

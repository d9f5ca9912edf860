/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BPF-only map helpers. */
#ifndef SCPROF_MAPS_BPF_H
#define SCPROF_MAPS_BPF_H

#include <bpf/bpf_helpers.h>

/*
 * Look key up in map, inserting init first if it is missing. Returns NULL
 * when the map is full (or out of memory); the caller counts the drop.
 */
static __always_inline void *lookup_or_init(void *map, const void *key,
					    const void *init)
{
	void *val;
	long err;

	val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU won the race */)
		return NULL;
	return bpf_map_lookup_elem(map, key);
}

#endif /* SCPROF_MAPS_BPF_H */

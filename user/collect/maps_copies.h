/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: copies of processes' /proc/PID/maps, taken as the kernel side
 * notices new mappings (struct sc_maps_event: a process's first sample,
 * code mapped, an exec), for the unwinder to read once the process has
 * gone (unwinder_set_maps_source). At most 512 are kept, the
 * oldest going first. Safe to use from several threads.
 */
#ifndef SCPROF_MAPS_COPIES_H
#define SCPROF_MAPS_COPIES_H

#include <stdint.h>

struct maps_copies;

struct maps_copies *maps_copies_new(void);
void maps_copies_free(struct maps_copies *m);
/* Copy the mappings of process pid (started at start_ns), of its program
 * image exec_id, now: they replace an older copy of the same image. A
 * process gone already is counted (maps_copies_unread).
 */
void maps_copies_note(struct maps_copies *m, uint32_t pid, uint64_t start_ns,
		      uint32_t exec_id);
/* An unwinder_maps_fn (ctx: the copies): a copy of the process's copy,
 * NULL none. The copy stays: a process let go while its samples wait
 * (idle, exited) reads it again.
 */
char *maps_copies_take(void *ctx, uint32_t pid, uint64_t start_ns,
		       uint32_t exec_id);
/* Processes gone before their copy was taken. */
uint64_t maps_copies_unread(struct maps_copies *m);

#endif

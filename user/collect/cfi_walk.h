/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: walking a sampled user stack from its registers and its copied
 * top (struct sc_stack_event), frame by frame, with each frame's CFI row
 * (the rules of .eh_frame or .debug_frame, evaluated here), else its
 * frame pointer (JIT code, code without CFI). Memory is read only from
 * the copy; the walk stops where the copy, the CFI or the frame chain
 * ends.
 */
#ifndef SCPROF_CFI_WALK_H
#define SCPROF_CFI_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "collect/objfile.h"
#include "sc_stack.h"

/* Where the code at pc is: its file, and the file's address of pc. NULL:
 * in no file (JIT code, or the mapping is unknown).
 */
typedef struct objfile *(*cfi_locate_fn)(void *ctx, uint64_t pc,
					 uint64_t *vaddr);

/*
 * The frames of e's stack, innermost first, into pcs (at most max): the
 * pc of the call, then each caller's return address less one (the call
 * instruction's, as names and lines want it), exact after a signal
 * frame. At least the first. Returns how many.
 */
size_t cfi_walk(const struct sc_stack_event *e, cfi_locate_fn locate, void *ctx,
		uint64_t *pcs, size_t max);

#endif

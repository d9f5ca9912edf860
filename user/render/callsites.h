/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the sampled call sites (model/stacks.h) as the table's "call
 * sites" section, JSON's "stacks" list and flamegraph.pl's folded format.
 * The flame graph is in flamegraph.h.
 */
#ifndef SCPROF_CALLSITES_H
#define SCPROF_CALLSITES_H

#include <stdio.h>
#include <json-c/json.h>

#include "model/model.h"
#include "model/stacks.h"

/* Syscalls in the call sites section (the top ones by time), and stacks
 * shown for each.
 */
#define CALLSITES_SYSCALLS 5
#define CALLSITES_PER_SYSCALL 3
/* A frame's name, raw: stack_frame_name(). */
const char *callsites_frame_name(const struct sc_frame *f, char *buf,
				 size_t len);
/* A call site's label, raw: stack_label(). */
char *callsites_label(const struct sc_stack *st);
/* The section after the table; nothing without m->stacks. 0 or -errno. */
int callsites_table(FILE *f, const struct sc_model *m);
/* JSON: "stack_sampling" {weighting, period, samples, lost...} and the
 * "stacks" list, each {syscall, comm, count, frames:[{function, module,
 * offset, file, line}]} innermost frame first (by blocked time, also
 * kernel_frames:[{function}], where it slept, innermost first), into root.
 * 0 or -ENOMEM.
 */
int callsites_json_add(struct json_object *root, const struct sc_stacks *s);
/* A kernel frame's mark in folded stacks, as perf's stackcollapse
 * (--kernel) writes it and flamegraph.pl --colors=java (or js, perl)
 * colours it.
 */
#define CALLSITES_KERNEL_MARK "_[k]"
/* One line per distinct stack, root first: COMM;FRAME;...;SYSCALL COUNT,
 * by blocked time COMM;FRAME;...;SYSCALL;KFRAME_[k];... COUNT (the kernel
 * frames of where it slept, outermost first). 0 or -errno.
 */
int callsites_folded(FILE *f, const struct sc_stacks *s);
/* One folded line's frame, escaped: esc_text, then ';' as \x3b. New
 * string or NULL.
 */
char *callsites_esc_folded(const char *s);

#endif

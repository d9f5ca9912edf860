/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: unwinding a sampled user stack (struct sc_stack_event) with the
 * binaries' CFI (.eh_frame, .debug_frame; cfi_walk.h), as perf
 * --call-graph dwarf does, and naming its frames: symbol (symtab, else
 * dynsym), file:line from debug info (also /usr/lib/debug/.build-id),
 * perf map files and jitdumps for JIT code (jitmap.h), else
 * module+0xoffset; C++ and Rust names demangled.
 *
 * A process's mappings are read when its first sample comes in and kept,
 * so that processes that exit before the report are still named; a copy
 * taken as the notice of them came (unwinder_set_maps_source) stands in
 * for them when the process has gone before its samples are unwound. The
 * files they map are opened once and shared by every process
 * (objfile.h): a new process costs a parse of its mappings.
 */
#ifndef SCPROF_UNWIND_H
#define SCPROF_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "model/stacks.h"
#include "sc_stack.h"

/* At most this many frames per stack (the innermost ones). */
#define UNWIND_MAX_FRAMES 64

struct ksyms;
struct unwinder;

struct unwinder_stats {
	uint64_t samples;	 /* events unwound */
	uint64_t no_maps;	 /* the process had gone, with no copy of its
			       * mappings: only its pc is known
			       */
	uint64_t frames;	 /* frames over all samples */
	uint64_t procs;		 /* processes kept now */
	uint64_t procs_exited;	 /* let go once they had exited */
	uint64_t procs_evicted;	 /* let go to make room (read again if
				  * sampled again)
				  */
	uint64_t files;		 /* files open now */
	uint64_t files_over_cap; /* not opened: all open files in use */
	uint64_t files_unopened; /* could not be opened */
	uint64_t names_cut;	 /* names dropped at a file's cap */
};

/* demangle: C++ and Rust symbols as people read them (util/demangle.h). */
struct unwinder *unwinder_new(bool demangle);
void unwinder_free(struct unwinder *u);
/*
 * Where the mappings of processes that may have gone come from: fn
 * returns (a new string: the unwinder frees it) the latest copy of
 * /proc/PID/maps of that process's program image (exec_id), taken as the
 * notice of them came (struct sc_maps_event), NULL none. Asked each time
 * a process's mappings are read, before /proc.
 */
typedef char *(*unwinder_maps_fn)(void *ctx, uint32_t pid, uint64_t start_ns,
				  uint32_t exec_id);
void unwinder_set_maps_source(struct unwinder *u, unwinder_maps_fn fn,
			      void *ctx);
/* The kernel's names (kept, not owned), for the kernel frames of where a
 * sampled call slept (SC_STACK_F_SLEEP, --stacks-by blocked): drawn on
 * top of its user stack (sc_stack.kframes). NULL: unnamed.
 */
void unwinder_set_ksyms(struct unwinder *u, const struct ksyms *k);
/* Read each process's cgroup (/proc/PID/cgroup) with its mappings when
 * its first sample comes, and keep its stacks apart by it (sc_stack.cgroup,
 * NULL for a process gone by then): the daemon's --labels. Off: NULL.
 */
void unwinder_set_cgroups(struct unwinder *u, bool on);
/* e's process has new mappings (its first sample, code mapped, an exec):
 * read them now.
 */
void unwinder_note_maps(struct unwinder *u, const struct sc_stack_event *e);
/* Unwind and name one sampled stack (with the kernel frames of where it
 * slept, if it carries them), and count it in out. 0 or -errno.
 */
int unwinder_add(struct unwinder *u, const struct sc_stack_event *e,
		 struct sc_stacks *out);
/* Unwind and name one stack (a slow call's) into out: its frames are new
 * copies (free them with stack_frames_free), innermost first, out->count
 * 0. JIT frames are named as far as the perf map and jitdump say now.
 * 0 or -ENOMEM.
 */
int unwinder_stack(struct unwinder *u, const struct sc_stack_event *e,
		   struct sc_stack *out);
/*
 * Samples with a frame in JIT code that the process's perf map did not
 * name when they were unwound (a JIT writes its map buffered, or at
 * exit) are kept and named now, from the map as it is, into out. 0 or
 * -ENOMEM.
 */
int unwinder_flush(struct unwinder *u, struct sc_stacks *out);
void unwinder_stats(const struct unwinder *u, struct unwinder_stats *out);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the sampled call sites, one record per distinct (process name,
 * cgroup when kept, syscall, unwound user stack) with how many samples
 * had it. Built by the
 * collector (collect/unwind.c), read by the renderers (call sites section,
 * JSON stacks, folded stacks, flame graph).
 */
#ifndef SCPROF_MODEL_STACKS_H
#define SCPROF_MODEL_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scprof.h"

/* The C library or language runtime a frame is in. Call site labels fold
 * a stack's innermost runtime frames (the syscall wrappers, stdio, the Go
 * standard library, V8's builtins, libuv) into "via libc" and start at the
 * program's own code; folded, SVG and JSON keep every frame.
 */
enum sc_runtime {
	SC_RT_NONE,  /* the program's own (JIT code included) */
	SC_RT_LIBC,  /* the C library, the dynamic loader, the vDSO */
	SC_RT_GO,    /* Go's runtime and standard library */
	SC_RT_NODE,  /* node and V8 (builtins, the interpreter) */
	SC_RT_LIBUV, /* libuv */
	SC_RT_COUNT
};

/* "libc", "Go", "node", "libuv"; NULL for SC_RT_NONE. */
const char *stack_runtime_name(unsigned int rt);

/* One frame; strings are raw bytes from binaries and /proc: escape them. */
struct sc_frame {
	char *func;	 /* symbol name; NULL: none known */
	char *module;	 /* file name of the ELF object or perf map; NULL:
			  * the address is in no known mapping
			  */
	uint64_t offset; /* address - module load address, or the address */
	char *file;	 /* source file (debug info); NULL: unknown */
	uint32_t line;
	uint8_t runtime; /* enum sc_runtime (not part of the stack's
			  * identity)
			  */
};

/* The module of kernel frames (pprof's mapping). */
#define STACK_KERNEL_MODULE "[kernel]"

struct sc_stack {
	uint32_t nr;
	uint32_t abi;
	char comm[SC_COMM_LEN]; /* raw bytes: escape to print */
	/* The process's cgroup v2 path ("/system.slice/x.service", "" the
	 * root), raw, as read when its first sample was unwound: kept only
	 * when asked (the daemon's --labels, collect/unwind.h); NULL: not
	 * kept, or the process had gone. Part of the stack's identity.
	 */
	char *cgroup;
	/* Innermost first: frames[0] made the syscall. */
	struct sc_frame *frames;
	size_t nframes;
	/* --stacks-by blocked: the kernel frames of where the call slept
	 * (its longest sleep), innermost first (the scheduler's), the
	 * syscall's entry last; module STACK_KERNEL_MODULE. None otherwise.
	 */
	struct sc_frame *kframes;
	size_t nkframes;
	uint64_t count;
};

/* What a sample's count stands for (--stacks-by). */
enum sc_stack_weighting {
	SC_STACKS_BY_COUNT,   /* one call in period, at entry */
	SC_STACKS_BY_TIME,    /* period µs of time in calls, at exit */
	SC_STACKS_BY_BLOCKED, /* period µs of blocked time in calls, at exit,
			       * with the kernel frames of where it slept
			       */
};

/* "count", "time", "blocked". */
const char *stacks_weighting_name(enum sc_stack_weighting by);

struct sc_stacks {
	struct sc_stack *v;
	size_t n, cap;
	size_t *index; /* open addressing over v; index_cap slots */
	size_t index_cap;
	/* One call in period was sampled (on average); by time (or blocked
	 * time): one sample per period µs of it, each count a period's worth
	 */
	uint32_t period;
	enum sc_stack_weighting by;
	/* Samples unwound (the sum of the counts), each counted by its weight:
	 * while the ring buffer was filling, one sample stood for up to
	 * max_weight periods' worth of calls.
	 */
	uint64_t samples;
	uint32_t max_weight;
	/* Samples lost, ring buffer full, by native syscall number. */
	uint64_t lost[SC_NR_MAX];
	uint64_t lost_total;
	/* What the unwinder's caps left out (collect/unwind.h): samples of
	 * processes gone with no copy of their mappings (their frames by
	 * address), processes let go to make room (read again if sampled
	 * again), files not opened (all open ones in use, or unreadable),
	 * symbol names dropped at a file's cap.
	 */
	struct sc_stack_gaps {
		uint64_t unmapped, procs_evicted, files_over_cap,
			files_unopened, names_cut;
	} gaps;
};

struct sc_stacks *stacks_new(uint32_t period);
void stacks_free(struct sc_stacks *s);
/* Deep copy; NULL on allocation failure. */
struct sc_stacks *stacks_clone(const struct sc_stacks *s);
/* Add count samples of a stack (frames innermost first, copied). 0 or
 * -ENOMEM.
 */
int stacks_add(struct sc_stacks *s, uint32_t nr, uint32_t abi, const char *comm,
	       const struct sc_frame *frames, size_t nframes, uint64_t count);
/* The same with the kernel frames of where it slept (sc_stack.kframes),
 * part of the stack's identity.
 */
int stacks_add_kernel(struct sc_stacks *s, uint32_t nr, uint32_t abi,
		      const char *comm, const struct sc_frame *frames,
		      size_t nframes, const struct sc_frame *kframes,
		      size_t nkframes, uint64_t count);
/* The same in a process's cgroup (sc_stack.cgroup; NULL: none known). */
int stacks_add_in_cgroup(struct sc_stacks *s, uint32_t nr, uint32_t abi,
			 const char *comm, const char *cgroup,
			 const struct sc_frame *frames, size_t nframes,
			 const struct sc_frame *kframes, size_t nkframes,
			 uint64_t count);
/* Counts are µs (of time in calls, or blocked in them), not calls. */
bool stacks_timed(const struct sc_stacks *s);
/* Sort by count, largest first (ties: syscall, then name). The index is
 * rebuilt.
 */
void stacks_sort(struct sc_stacks *s);
/* More than 5% of the samples were lost: their shares may be off by more
 * than the sampling error (the losses need not be spread evenly).
 */
bool stacks_untrusted(const struct sc_stacks *s);
/* Samples of one syscall (all its stacks). */
uint64_t stacks_syscall_samples(const struct sc_stacks *s, uint32_t abi,
				uint32_t nr);
/* Does a stack reach a frame whose function is name (e.g. "main")? */
bool stack_has_func(const struct sc_stack *st, const char *name);

/* Frames named in a call site label. */
#define STACK_LABEL_FRAMES 4

/* A frame's name, raw (escape it for the output): "func", else
 * "module+0xOFF", else "0xADDR" (into buf).
 */
const char *stack_frame_name(const struct sc_frame *f, char *buf, size_t len);
/* The frames a call site label names, into out (at most max), innermost
 * first; *more (when not NULL): the stack goes on beyond them (not at
 * main). Returns how many.
 */
size_t stack_label_frames(const struct sc_stack *st,
			  const struct sc_frame **out, size_t max, bool *more);
/* The label's first frame, whose file:line it gives; NULL: no frames. */
const struct sc_frame *stack_lead(const struct sc_stack *st);
/* n frames, deep copies; NULL when out of memory. */
struct sc_frame *stack_frames_dup(const struct sc_frame *f, size_t n);
void stack_frames_free(struct sc_frame *f, size_t n);
/* "log_line <- run_logger <- main (app.c:41)", raw: the innermost frames
 * from the first one outside the C library (else from the innermost), up
 * to main, and that first frame's file:line. A new string, NULL when out
 * of memory.
 */
char *stack_label(const struct sc_stack *st);
/* The runtimes of the innermost frames a label skips, innermost first:
 * "libc", "libc, libuv, node"; "" when none (into buf).
 */
const char *stack_via(const struct sc_stack *st, char *buf, size_t len);
/* The call site of a syscall with the most samples, "LABEL (via VIA)" (or
 * LABEL where nothing is skipped), and its share
 * of the syscall's samples. A new string; NULL when the syscall has no
 * samples (share 0) or out of memory.
 */
char *stacks_top_site(const struct sc_stacks *s, uint32_t abi, uint32_t nr,
		      double *share);

#endif

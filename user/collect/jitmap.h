/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the names of one process's JIT code, from the files JITs write
 * for perf: /tmp/perf-PID.map ("START SIZE NAME" lines: node
 * --perf-basic-prof, the JVM's Compiler.perfmap and -XX:+DumpPerfMapAtExit)
 * and jit-PID.dump (node --perf-prof; found in the process's mappings, or
 * its working folder). A JIT appends as it compiles, or writes its map as
 * it exits: a pc they do not name has them read again when they grew, at
 * most every JITMAP_LOOK_NS, and they are still read after the process
 * has gone. A file last written before the process started is an
 * earlier process's with the same pid.
 */
#ifndef SCPROF_JITMAP_H
#define SCPROF_JITMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JITMAP_LOOK_NS 50000000ULL

struct jit_sym {
	uint64_t start, end;
	char *name;
	bool jitdump; /* from jit-PID.dump, else the perf map */
};

struct jitmap {
	uint32_t pid;
	uint64_t start_ns;
	struct jit_sym *v; /* sorted by start */
	size_t n;
	bool read;
	off_t size;    /* the files' sizes when read: they grow */
	char *dump;    /* jit-PID.dump, from the mappings; NULL: none */
	char *guess;   /* else where it would be: the working folder */
	uint64_t look; /* when a miss last had the files looked at */
	char perf_name[32], dump_name[32]; /* "perf-PID.map", "jit-PID.dump" */
};

void jitmap_init(struct jitmap *j, uint32_t pid, uint64_t start_ns);
void jitmap_clear(struct jitmap *j);
/* The process's jit-PID.dump is mapped at path (from its mappings). */
void jitmap_set_dump(struct jitmap *j, const char *path);
/* Is path the process's jit-PID.dump? */
bool jitmap_is_dump(const struct jitmap *j, const char *path);
/* The JIT symbol at pc, or NULL; now: look at the files again at once
 * (report time), else at most every JITMAP_LOOK_NS.
 */
const struct jit_sym *jitmap_find(struct jitmap *j, uint64_t pc, bool now);
/* The process wrote a perf map or jitdump (it names JIT code). */
bool jitmap_present(struct jitmap *j);

#endif

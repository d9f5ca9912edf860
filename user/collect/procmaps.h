/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's mappings, as the unwinder keeps them: its executable
 * mappings, each pointing at a shared file (objfile.h) or anonymous, and
 * whether it has anonymous executable memory (a JIT's code: jitmap.h),
 * from the text of its /proc/PID/maps.
 */
#ifndef SCPROF_COLLECT_PROCMAPS_H
#define SCPROF_COLLECT_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jitmap;
struct objcache;
struct objfile;

/* An executable mapping. */
struct procmap {
	uint64_t start, end, pgoff;
	struct objfile *file; /* NULL: anonymous, or not opened */
	char *module;	      /* its file's name; NULL: anonymous */
};

struct procmaps {
	struct procmap *v; /* sorted by start */
	size_t n;
	bool read;     /* read (else only pcs are known) */
	bool jit_code; /* anonymous executable memory (when read) */
};

/* The mappings of pid from the text of its /proc/PID/maps (consumed),
 * their files from files; a JIT dump file it maps goes to jit. 0 or
 * -ENOMEM (then pm holds what was read).
 */
int procmaps_parse(struct procmaps *pm, struct objcache *files, uint32_t pid,
		   struct jitmap *jit, char *text);
void procmaps_free(struct procmaps *pm, struct objcache *files);
/* The mapping pc is in; NULL: none. */
const struct procmap *procmaps_find(const struct procmaps *pm, uint64_t pc);
/* A copy of /proc/PID/maps (to free); NULL: the process has gone. */
char *procmaps_read(uint32_t pid);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: the ELF files that processes map, each opened once and shared
 * by every process that maps it (a file is its device and inode, checked
 * for changes by size and mtime). A file holds what naming and unwinding
 * need, all read lazily and kept: its loadable segments, its CFI
 * (.eh_frame, else .debug_frame), its symbols and lines (also from
 * /usr/lib/debug), and the names of the addresses asked so far.
 *
 * Bounded: at most OBJ_MAX_FILES files are open; one no process holds is
 * closed, the least recently used first, to make room. When every file is
 * held, a new one is not opened and is counted (its frames are named by
 * module and offset). A file keeps at most OBJ_MAX_NAMES named addresses;
 * past that they are dropped and asked again.
 */
#ifndef SCPROF_OBJFILE_H
#define SCPROF_OBJFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>

#include "model/stacks.h"

#define OBJ_MAX_FILES 512
#define OBJ_MAX_NAMES 16384

struct objfile;
struct objcache;

struct objcache_stats {
	uint64_t opened;    /* files opened (again, after a change) */
	uint64_t closed;    /* closed to make room, or changed */
	uint64_t unopened;  /* files that could not be opened */
	uint64_t over_cap;  /* not opened: every open file was held */
	uint64_t names_cut; /* named addresses dropped at OBJ_MAX_NAMES */
	uint64_t open_now;  /* files open now */
};

struct objcache *objcache_new(bool demangle);
void objcache_free(struct objcache *c);
/*
 * A new stack is being named: names handed out for earlier stacks may be
 * freed now (they stay valid until the next call).
 */
void objcache_next_stack(struct objcache *c);
void objcache_stats(const struct objcache *c, struct objcache_stats *out);

/*
 * The file a mapping of process pid shows as dev (the kernel's
 * major/minor encoding, as /proc/PID/maps has it), ino and path, with a
 * reference for the caller; path is opened in the process's root while
 * it runs, else in ours. NULL: it cannot be opened, or no room (counted).
 * path "[vdso]": the kernel's vDSO (ours: it is the same image).
 */
struct objfile *objcache_get(struct objcache *c, uint64_t dev, uint64_t ino,
			     const char *path, uint32_t pid);
void objfile_put(struct objcache *c, struct objfile *f);

/* The file's address (as its program headers, addr2line and its CFI
 * number them) of a byte at file offset off; false when in no segment.
 */
bool objfile_vaddr(const struct objfile *f, uint64_t off, uint64_t *vaddr);
/*
 * What is known of the frame at file address vaddr: its CFI row (free()
 * it), from .eh_frame, else .debug_frame. -1: none.
 */
int objfile_cfi_frame(struct objfile *f, uint64_t vaddr, Dwarf_Frame **frame);
/*
 * Name file address vaddr: func, file, line (offset = vaddr; module and
 * runtime are not set). The strings belong to the cache, valid until the
 * next stack's objcache_next_stack(). 0 or -ENOMEM.
 */
int objfile_name(struct objcache *c, struct objfile *f, uint64_t vaddr,
		 struct sc_frame *out);
/* A Go program (.gopclntab or .go.buildinfo)? */
bool objfile_is_go(struct objfile *f);

#endif

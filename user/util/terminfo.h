/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Built-in terminfo entries for a host with no terminfo database. */
#ifndef SCPROF_TERMINFO_H
#define SCPROF_TERMINFO_H

#include <stdbool.h>
#include <stddef.h>

struct terminfo_builtin {
	const char *name;
	const unsigned char *data; /* the compiled entry */
	size_t len;
};

/* Generated from the build host's entries; ends with a NULL name. */
extern const struct terminfo_builtin terminfo_builtins[];

struct terminfo_fallback {
	char dir[64];	  /* the private TERMINFO directory */
	char path[96];	  /* the entry written in it */
	const char *name; /* the built-in entry used */
	char *old;	  /* TERMINFO before, restored by _cleanup */
	bool had_old;
};

/*
 * TERM has no terminfo entry: when it is a built-in one, or when there is
 * no terminfo database at all (TERM unknown: xterm for xterm-*, else
 * vt100), write that entry into a new private directory (in $TMPDIR,
 * /tmp, /dev/shm or /) and point TERMINFO at it. 0 with f filled in, or
 * -ENOENT (not a case for a built-in entry) or another -errno with *why
 * saying what failed.
 */
int terminfo_fallback(const char *term, struct terminfo_fallback *f,
		      const char **why);
/* Once curses has read the entry: remove it, restore TERMINFO. */
void terminfo_fallback_cleanup(struct terminfo_fallback *f);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Comma-separated lists ("a,b,c") of the command line, walked in place. */
#ifndef SCPROF_STRLIST_H
#define SCPROF_STRLIST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The next item of a list: start with *pos at the list; each call points
 * *item at an item and sets *len to its length (0 for the empty items of
 * "", "a,," or ",a") and returns true, then false after the last one.
 */
bool strlist_next(const char **pos, const char **item, size_t *len);
/* The length of the item that starts at item (up to a comma or the end). */
size_t strlist_len(const char *item);
/* The item as a string in buf: 0, or -ERANGE when it does not fit. */
int strlist_copy(const char *item, size_t len, char *buf, size_t size);

#endif

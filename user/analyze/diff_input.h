/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * scprof diff's input files: read whole, told apart (a JSON report of
 * scprof, or folded stacks) and their errors reported in one line naming
 * the file, for the two readers (diff_load.h: reports; diff_stacks.h:
 * folded stacks).
 */
#ifndef SCPROF_DIFF_INPUT_H
#define SCPROF_DIFF_INPUT_H

#include <stdbool.h>
#include <stddef.h>

/* A file's contents, NUL-terminated (len without the NUL). 0 or -errno,
 * reported.
 */
int diff_read_file(const char *path, char **text, size_t *len);

/* What a file holds, from its first line. */
enum diff_input {
	DIFF_INPUT_JSON,   /* its first non-blank byte is { or [ */
	DIFF_INPUT_FOLDED, /* its first line ends in a blank and a count */
	DIFF_INPUT_OTHER,  /* neither (or empty) */
};

enum diff_input diff_sniff(const char *text, size_t len);

/* "FILE: [line N: ]message" (line 0: none) in one line, the file name
 * escaped (pr_err). Returns err.
 */
int __attribute__((format(printf, 4, 5)))
diff_input_error(int err, const char *name, size_t line, const char *fmt, ...);

/* The position of the first byte at or after pos that is not a blank
 * (space, tab, newline, carriage return), or len.
 */
size_t diff_skip_blank(const char *text, size_t len, size_t pos);
/* "# ...": a comment line of a folded file (scprof --stacks-by time and
 * blocked write one first).
 */
bool diff_folded_comment(const char *s, size_t n);

#endif

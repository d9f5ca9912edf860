/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Escaping of attacker-controlled text (process names, paths) for every
 * output format. Process names are up to 15 arbitrary bytes that any
 * process can set, so each renderer passes them through one of these.
 *
 * Each function takes len bytes (NUL bytes included) and returns a new
 * NUL-terminated string the caller frees, or NULL when out of memory.
 */
#ifndef SCPROF_ESCAPE_H
#define SCPROF_ESCAPE_H

#include <stddef.h>

/*
 * For terminals and plain text: printable ASCII and valid UTF-8 pass;
 * control bytes, C1 controls, bidi overrides, invalid UTF-8 and DEL
 * become \xNN per byte, and a backslash becomes \\.
 */
char *esc_text(const char *in, size_t len);
/*
 * The inverse of esc_text, for text read back (a folded stack file):
 * \\ becomes \ and \xNN the byte NN; \x00 and any other backslash stay
 * as they are. The result may hold any byte but NUL: escape it again to
 * print it.
 */
char *esc_text_decode(const char *in, size_t len);
/*
 * Valid UTF-8: each byte of an invalid sequence, and each NUL byte (which
 * the returned string could not hold), becomes U+FFFD.
 */
char *esc_utf8(const char *in, size_t len);
/*
 * esc_utf8 into buf (size >= 1) without allocating: as much as fits,
 * cut between two characters, NUL-terminated. Returns the length.
 */
size_t esc_utf8_buf(const char *in, size_t len, char *buf, size_t size);
/*
 * One CSV field (RFC 4180): text as for esc_text (so one line, no control
 * bytes), quoted with doubled quotes when it has a comma, quote or space.
 */
char *esc_csv(const char *in, size_t len);
/* A Prometheus label value: esc_utf8, then \\, \" and \n escaped. */
char *esc_prom_label(const char *in, size_t len);

/* Length of a string up to its first NUL, at most max bytes. */
size_t esc_strnlen(const char *s, size_t max);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the cmocka unit tests: checks with messages, and
 * capturing what a function writes to a FILE or to stdout/stderr.
 */
#ifndef SCPROF_TEST_UNIT_H
#define SCPROF_TEST_UNIT_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* Fail the test with a message when cond does not hold. */
#define CHECK(cond, fmt, ...)                                     \
	do {                                                      \
		if (!(cond))                                      \
			fail_msg("check failed: %s: " fmt, #cond, \
				 ##__VA_ARGS__);                  \
	} while (0)

/* A check inside a helper, reporting the line the helper was called from. */
#define CHECK_AT(line, cond, fmt, ...) \
	CHECK(cond, "(from line %d) " fmt, line, ##__VA_ARGS__)

/* Compare two strings, printing both (made visible) when they differ. */
#define CHECK_STR(got, want, what)                          \
	do {                                                \
		const char *got_ = (got), *want_ = (want);  \
		if (!got_ || strcmp(got_, want_)) {         \
			print_error("%s: got:\n", (what));  \
			unit_dump(got_);                    \
			print_error("%s: want:\n", (what)); \
			unit_dump(want_);                   \
			fail_msg("%s differs", (what));     \
		}                                           \
	} while (0)

/* Print n bytes with control and non-ASCII bytes as \xNN, lines kept. */
static inline void unit_dump_n(const char *s, size_t n)
{
	if (!s) {
		print_error("  (null)\n");
		return;
	}
	print_error("  |");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			print_error("$\n  |");
		else if (c < 0x20 || c >= 0x7f)
			print_error("\\x%02x", c);
		else
			print_error("%c", c);
	}
	print_error("(end)\n");
}

static inline void unit_dump(const char *s)
{
	unit_dump_n(s, s ? strlen(s) : 0);
}

/* A FILE writing into memory (open_memstream). */
struct memout {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *memout_open(struct memout *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return m->f;
}

/* Close the stream; returns the text, which the caller frees. */
static inline char *memout_close(struct memout *m)
{
	assert_int_equal(fclose(m->f), 0);
	m->f = NULL;
	return m->buf;
}

/* Redirect a file descriptor (1 or 2) into a temporary file. */
struct fdcap {
	int fd;
	int saved;
	FILE *tmp;
};

static inline void fdcap_begin(struct fdcap *c, int fd)
{
	fflush(stdout);
	fflush(stderr);
	c->fd = fd;
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved = dup(fd);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->tmp), fd) >= 0);
}

/* Restore the descriptor; returns what was written (caller frees). */
static inline char *fdcap_end(struct fdcap *c)
{
	char *text;
	long n;

	fflush(stdout);
	fflush(stderr);
	assert_true(dup2(c->saved, c->fd) >= 0);
	close(c->saved);
	n = ftell(c->tmp);
	assert_true(n >= 0);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	rewind(c->tmp);
	if (n)
		assert_int_equal(fread(text, 1, (size_t)n, c->tmp), (size_t)n);
	fclose(c->tmp);
	return text;
}

/* Call first in main(): a test that hangs fails instead of blocking make. */
static inline void unit_init(void)
{
	alarm(60);
}

/* Number of '\n' in s. */
static inline size_t unit_count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t unit_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/*
 * Reference UTF-8 check, written from the table of well-formed byte
 * sequences of the Unicode standard (3.9, table 3-7), independently of
 * the decoder in escape.c. Length of the sequence at s, 0 if ill-formed.
 */
static inline size_t unit_utf8_seq(const unsigned char *s, size_t n)
{
	static const struct {
		unsigned char lo, hi; /* lead byte range */
		unsigned char len;
		unsigned char b1lo, b1hi; /* second byte range */
	} forms[] = {
		{ 0x00, 0x7f, 1, 0, 0 },       { 0xc2, 0xdf, 2, 0x80, 0xbf },
		{ 0xe0, 0xe0, 3, 0xa0, 0xbf }, { 0xe1, 0xec, 3, 0x80, 0xbf },
		{ 0xed, 0xed, 3, 0x80, 0x9f }, { 0xee, 0xef, 3, 0x80, 0xbf },
		{ 0xf0, 0xf0, 4, 0x90, 0xbf }, { 0xf1, 0xf3, 4, 0x80, 0xbf },
		{ 0xf4, 0xf4, 4, 0x80, 0x8f },
	};

	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		if (s[0] < forms[f].lo || s[0] > forms[f].hi)
			continue;
		if (forms[f].len > n)
			return 0;
		if (forms[f].len == 1)
			return 1;
		if (s[1] < forms[f].b1lo || s[1] > forms[f].b1hi)
			return 0;
		for (size_t i = 2; i < forms[f].len; i++) {
			if (s[i] < 0x80 || s[i] > 0xbf)
				return 0;
		}
		return forms[f].len;
	}
	return 0;
}

static inline bool unit_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n;) {
		size_t k = unit_utf8_seq(s + i, n - i);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

size_t esc_strnlen(const char *s, size_t max)
{
	const char *nul = memchr(s, '\0', max);

	return nul ? (size_t)(nul - s) : max;
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), storing the
 * code point, or 0 if the sequence is invalid: overlong forms, surrogates
 * and values above U+10FFFF are invalid.
 */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Code points that reorder or hide text on a terminal. */
static bool cp_unsafe(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) ||
	       c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *tmp = realloc(b->p, cap);

		if (!tmp) {
			b->oom = true;
			return;
		}
		b->p = tmp;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static char *buf_done(struct buf *b)
{
	if (!b->oom && !b->p)
		buf_put(b, "", 0);
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	return b->p;
}

static void put_hex(struct buf *b, const unsigned char *s, size_t n)
{
	char tmp[5];

	for (size_t i = 0; i < n; i++) {
		snprintf(tmp, sizeof(tmp), "\\x%02x", s[i]);
		buf_put(b, tmp, 4);
	}
}

static void text_into(struct buf *b, const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = utf8_seq(s + i, len - i, &cp);

		if (!n) {
			put_hex(b, s + i, 1);
			i++;
		} else if (cp_unsafe(cp)) {
			put_hex(b, s + i, n);
			i += n;
		} else if (cp == '\\') {
			buf_put(b, "\\\\", 2);
			i++;
		} else {
			buf_put(b, (const char *)s + i, n);
			i += n;
		}
	}
}

char *esc_text(const char *in, size_t len)
{
	struct buf b = {};

	text_into(&b, in, len);
	return buf_done(&b);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *esc_text_decode(const char *in, size_t len)
{
	struct buf b = {};
	size_t i = 0;

	while (i < len) {
		int hi = i + 3 < len ? hex_digit(in[i + 2]) : -1,
		    lo = i + 3 < len ? hex_digit(in[i + 3]) : -1;
		char c;

		if (in[i] == '\\' && i + 1 < len && in[i + 1] == '\\') {
			buf_put(&b, "\\", 1);
			i += 2;
		} else if (hi >= 0 && lo >= 0 && (hi || lo) && in[i] == '\\' &&
			   in[i + 1] == 'x') {
			c = (char)(hi << 4 | lo);
			buf_put(&b, &c, 1);
			i += 4;
		} else if (in[i]) {
			buf_put(&b, in + i, 1);
			i++;
		} else {
			i++; /* a NUL byte cannot be in the string */
		}
	}
	return buf_done(&b);
}

/* The next character of esc_utf8's output from s[*i]: its bytes in *out,
 * their count returned, *i moved past the input it stands for.
 */
static size_t utf8_next(const unsigned char *s, size_t len, size_t *i,
			const char **out)
{
	uint32_t cp;
	size_t n = utf8_seq(s + *i, len - *i, &cp);

	/* A NUL would end the returned string early: replace it. */
	if (!n || !cp) {
		*out = "\xef\xbf\xbd";
		(*i)++;
		return 3;
	}
	*out = (const char *)s + *i;
	*i += n;
	return n;
}

char *esc_utf8(const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	struct buf b = {};
	const char *c;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_next(s, len, &i, &c);

		buf_put(&b, c, n);
	}
	return buf_done(&b);
}

size_t esc_utf8_buf(const char *in, size_t len, char *buf, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t w = 0;
	const char *c;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_next(s, len, &i, &c);

		if (w + n >= size)
			break;
		memcpy(buf + w, c, n);
		w += n;
	}
	buf[w] = '\0';
	return w;
}

char *esc_csv(const char *in, size_t len)
{
	struct buf b = {};
	char *text = esc_text(in, len);

	if (!text)
		return NULL;
	if (!strpbrk(text, ",\" "))
		return text;
	buf_put(&b, "\"", 1);
	for (const char *p = text; *p; p++) {
		if (*p == '"')
			buf_put(&b, "\"\"", 2);
		else
			buf_put(&b, p, 1);
	}
	buf_put(&b, "\"", 1);
	free(text);
	return buf_done(&b);
}

char *esc_prom_label(const char *in, size_t len)
{
	struct buf b = {};
	char *u = esc_utf8(in, len);

	if (!u)
		return NULL;
	for (const char *p = u; *p; p++) {
		if (*p == '\\')
			buf_put(&b, "\\\\", 2);
		else if (*p == '"')
			buf_put(&b, "\\\"", 2);
		else if (*p == '\n')
			buf_put(&b, "\\n", 2);
		else
			buf_put(&b, p, 1);
	}
	free(u);
	return buf_done(&b);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for user/util/escape.c: whatever bytes a process puts in its
 * name, each escaper's output must keep its format's promise.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Independent strict UTF-8 check (no overlongs, surrogates, > U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, cp = c & 0x07;
		else
			return false;
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static void check_text(const char *in, size_t len)
{
	char *out = esc_text(in, len);

	if (!out)
		return;
	for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			abort(); /* a control byte reached the terminal */
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			abort(); /* a C1 control */
		if (*p == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae)
			abort(); /* a bidi override */
	}
	if (!valid_utf8((const unsigned char *)out, strlen(out)))
		abort();
	free(out);
}

static void check_utf8(const char *in, size_t len)
{
	char *out = esc_utf8(in, len);

	if (!out)
		return;
	if (!valid_utf8((const unsigned char *)out, strlen(out)))
		abort();
	/* valid input without NUL passes unchanged */
	if (!memchr(in, 0, len) && valid_utf8((const unsigned char *)in, len) &&
	    (strlen(out) != len || memcmp(out, in, len)))
		abort();
	/* into a fixed buffer: a prefix of it, cut between characters */
	{
		char buf[48];
		size_t n = esc_utf8_buf(in, len, buf, sizeof(buf));

		if (n >= sizeof(buf) || buf[n] || memcmp(buf, out, n) ||
		    !valid_utf8((const unsigned char *)buf, n) ||
		    (strlen(out) < sizeof(buf) && n != strlen(out)))
			abort();
	}
	free(out);
}

static void check_csv(const char *in, size_t len)
{
	char *out = esc_csv(in, len);
	size_t n;

	if (!out)
		return;
	n = strlen(out);
	if (strchr(out, '\n') || strchr(out, '\r'))
		abort(); /* a field must stay on its line */
	if (strpbrk(out, ",") && out[0] != '"')
		abort(); /* a comma outside quotes splits the field */
	if (out[0] == '"') {
		if (n < 2 || out[n - 1] != '"')
			abort();
		for (size_t i = 1; i + 1 < n; i++) {
			if (out[i] != '"')
				continue;
			if (out[i + 1] != '"' || i + 2 >= n)
				abort(); /* quotes inside are doubled */
			i++;
		}
	} else if (strchr(out, '"')) {
		abort();
	}
	free(out);
}

static void check_prom(const char *in, size_t len)
{
	char *out = esc_prom_label(in, len);

	if (!out)
		return;
	if (!valid_utf8((const unsigned char *)out, strlen(out)))
		abort();
	if (strchr(out, '\n'))
		abort();
	for (size_t i = 0; out[i]; i++) {
		size_t bs = 0;

		if (out[i] != '"')
			continue;
		while (bs < i && out[i - 1 - bs] == '\\')
			bs++;
		if (bs % 2 == 0)
			abort(); /* an unescaped quote ends the label early */
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;

	check_text(in, size);
	check_utf8(in, size);
	check_csv(in, size);
	check_prom(in, size);
	return 0;
}

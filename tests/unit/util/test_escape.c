// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/util/escape.c: every output of an attacker-chosen name goes through one
 * of these functions. Exact outputs for known hostile inputs, then
 * properties checked over every 1- and 2-byte input and many random ones.
 */
#include <stdbool.h>

#include "unit.h"
#include "util/escape.h"

typedef char *(*esc_fn)(const char *in, size_t len);

/* Escape len bytes of in with fn; false (after saying why) unless want. */
static bool esc_ok(esc_fn fn, const char *fname, const char *in, size_t len,
		   const char *want)
{
	char *got = fn(in, len);
	bool ok = got && !strcmp(got, want);

	if (!ok) {
		print_error("%s of %zu bytes:\n  input:\n", fname, len);
		unit_dump_n(in, len);
		print_error("  got:\n");
		unit_dump(got);
		print_error("  want:\n");
		unit_dump(want);
	}
	free(got);
	return ok;
}

/* Each check fails at its own line. */
#define ESC_CHECK(fn, in, len, want)                 \
	do {                                         \
		if (!esc_ok(fn, #fn, in, len, want)) \
			fail();                      \
	} while (0)
#define TEXT(in, want) ESC_CHECK(esc_text, in, sizeof(in) - 1, want)
#define UTF8(in, want) ESC_CHECK(esc_utf8, in, sizeof(in) - 1, want)
#define CSV(in, want) ESC_CHECK(esc_csv, in, sizeof(in) - 1, want)
#define PROM(in, want) ESC_CHECK(esc_prom_label, in, sizeof(in) - 1, want)

/* U+FFFD REPLACEMENT CHARACTER */
#define RC "\xef\xbf\xbd"

static uint32_t utf8_cp(const unsigned char *s, size_t k)
{
	static const unsigned char mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & mask[k];

	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Code points a terminal acts on or that reorder text. */
static bool cp_dangerous(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* ---- esc_text: exact outputs --------------------------------------------- */

static void test_text_plain_and_multibyte(void **state)
{
	(void)state;
	TEXT("bash", "bash");
	TEXT("kworker/0:1-ev", "kworker/0:1-ev");
	TEXT("a b,c;d'e", "a b,c;d'e");
	/* Valid multibyte text passes unchanged: 2, 3 and 4-byte forms. */
	TEXT("caf\xc3\xa9", "caf\xc3\xa9");
	TEXT("\xe2\x82\xac 5", "\xe2\x82\xac 5");
	TEXT("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac");
	TEXT("\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!");
	/* Highest code point U+10FFFF, and U+00A0 just past the C1 block. */
	TEXT("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
	TEXT("\xc2\xa0", "\xc2\xa0");
}

static void test_text_quotes_backslash(void **state)
{
	(void)state;
	TEXT("say \"hi\"", "say \"hi\"");
	TEXT("a\\b", "a\\\\b");
	TEXT("\\x41", "\\\\x41"); /* cannot be mistaken for an escape */
	TEXT("\\", "\\\\");
}

static void test_text_control_bytes(void **state)
{
	(void)state;
	TEXT("a\nb", "a\\x0ab");
	TEXT("a\rb", "a\\x0db");
	TEXT("a\tb", "a\\x09b");
	TEXT("\x1b", "\\x1b");
	TEXT("\x01\x1f", "\\x01\\x1f");
	TEXT("\x7f", "\\x7f");
	TEXT("x\x7fy", "x\\x7fy");
}

static void test_text_terminal_sequences(void **state)
{
	(void)state;
	/* CSI: colour red, then reset. */
	TEXT("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	/* OSC: set the window title, BEL-terminated and ST-terminated. */
	TEXT("\x1b]0;title\x07", "\\x1b]0;title\\x07");
	TEXT("\x1b]0;t\x1b\\", "\\x1b]0;t\\x1b\\\\");
	/* Cursor up and erase line: would overwrite earlier rows. */
	TEXT("\x1b[1A\x1b[2K", "\\x1b[1A\\x1b[2K");
}

static void test_text_c1_and_bidi(void **state)
{
	(void)state;
	/* C1 controls encoded in UTF-8: NEL and CSI. */
	TEXT("\xc2\x85", "\\xc2\\x85");
	TEXT("\xc2\x9b"
	     "31m",
	     "\\xc2\\x9b"
	     "31m");
	TEXT("\xc2\x80\xc2\x9f", "\\xc2\\x80\\xc2\\x9f");
	/* Bidi overrides, embeddings, isolates and marks. */
	TEXT("a\xe2\x80\xae"
	     "cba",
	     "a\\xe2\\x80\\xae"
	     "cba");
	TEXT("\xe2\x80\xaa", "\\xe2\\x80\\xaa");
	TEXT("\xe2\x81\xa6\xe2\x81\xa9", "\\xe2\\x81\\xa6\\xe2\\x81\\xa9");
	TEXT("\xe2\x80\x8e\xe2\x80\x8f", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f");
	/* Neighbours of those ranges are ordinary text. */
	TEXT("\xe2\x80\xaf", "\xe2\x80\xaf");
	TEXT("\xe2\x80\x8d", "\xe2\x80\x8d");
}

static void test_text_invalid_utf8(void **state)
{
	(void)state;
	/* Lone continuation byte. */
	TEXT("a\x80"
	     "b",
	     "a\\x80b");
	/* Overlong "/", overlong NUL. */
	TEXT("\xc0\xaf", "\\xc0\\xaf");
	TEXT("\xc0\x80", "\\xc0\\x80");
	TEXT("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	/* UTF-16 surrogate U+D800. */
	TEXT("\xed\xa0\x80", "\\xed\\xa0\\x80");
	/* Above U+10FFFF. */
	TEXT("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	/* Truncated sequences at the end of the input. */
	TEXT("ab\xe2\x82", "ab\\xe2\\x82");
	TEXT("ab\xf0\x9f\x98", "ab\\xf0\\x9f\\x98");
	TEXT("\xc3", "\\xc3");
	/* A lead byte followed by ASCII: only the lead byte is escaped. */
	TEXT("\xe2"
	     "AB",
	     "\\xe2"
	     "AB");
	/* Bytes that never occur in UTF-8. */
	TEXT("\xf5\xf8\xfb\xfe\xff", "\\xf5\\xf8\\xfb\\xfe\\xff");
}

static void test_text_embedded_nul_and_empty(void **state)
{
	(void)state;
	TEXT("a\0b", "a\\x00b");
	TEXT("\0", "\\x00");
	TEXT("", "");
	/* len counts, not the terminating NUL: a prefix is escaped. */
	ESC_CHECK(esc_text, "abcdef", 3, "abc");
	ESC_CHECK(esc_text, "\xe2\x82\xac", 2, "\\xe2\\x82");
}

static void test_strnlen(void **state)
{
	(void)state;
	CHECK(esc_strnlen("abc", 16) == 3, "stops at the NUL");
	CHECK(esc_strnlen("abcdef", 4) == 4, "stops at max");
	CHECK(esc_strnlen("", 16) == 0, "empty");
	CHECK(esc_strnlen("a\0b", 3) == 1, "first NUL");
}

/* ---- esc_utf8 ------------------------------------------------------------ */

static void test_utf8_exact(void **state)
{
	(void)state;
	UTF8("bash", "bash");
	UTF8("caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80");
	/* Quotes, backslashes and controls are the JSON encoder's business. */
	UTF8("a\"b\\c\nd\x1b[0m", "a\"b\\c\nd\x1b[0m");
	/* Each byte of an invalid sequence becomes one U+FFFD. */
	UTF8("a\x80"
	     "b",
	     "a" RC "b");
	UTF8("\xc0\xaf", RC RC);
	UTF8("\xed\xa0\x80", RC RC RC);
	UTF8("ab\xe2\x82", "ab" RC RC);
	UTF8("\xf5\xff", RC RC);
	UTF8("\xe2"
	     "A",
	     RC "A");
	UTF8("", "");
}

/*
 * A NUL byte within len cannot be carried by the NUL-terminated result:
 * it must not silently cut off the rest of the text.
 */
static void test_utf8_embedded_nul(void **state)
{
	(void)state;
	UTF8("a\0b", "a" RC "b");
	UTF8("\0\0x", RC RC "x");
}

/* Into a fixed buffer: what fits, never half a character. */
static void test_utf8_buf_cuts_between_characters(void **state)
{
	char buf[6];

	(void)state;
	assert_int_equal(esc_utf8_buf("abcd", 4, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "abcd");
	assert_int_equal(esc_utf8_buf("abcdefgh", 8, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "abcde");
	/* U+FFFD for \xff takes 3 bytes: "ab" + RC fits, a second RC not */
	assert_int_equal(esc_utf8_buf("ab\xff\xff", 4, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "ab" RC);
	assert_int_equal(esc_utf8_buf("abc\xc3\xa9", 5, buf, 5), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(esc_utf8_buf("abc", 3, buf, 1), 0);
	assert_string_equal(buf, "");
}

/* ---- esc_csv ------------------------------------------------------------- */

static void test_csv_exact(void **state)
{
	(void)state;
	CSV("bash", "bash");
	CSV("", "");
	CSV("a,b", "\"a,b\"");
	CSV("say \"hi\"", "\"say \"\"hi\"\"\"");
	CSV("\"", "\"\"\"\"");
	CSV("two words", "\"two words\"");
	/* Line breaks never reach the file: escaped, so no quoting needed. */
	CSV("a\nb", "a\\x0ab");
	CSV("a\r\nb", "a\\x0d\\x0ab");
	CSV("\x1b[31m", "\\x1b[31m");
	CSV("\xff\xfe", "\\xff\\xfe");
	CSV("a\0b", "a\\x00b");
	CSV("x,\"y\n\x1b]0;t\x07\xc3", "\"x,\"\"y\\x0a\\x1b]0;t\\x07\\xc3\"");
	CSV("caf\xc3\xa9", "caf\xc3\xa9");
}

/* ---- esc_prom_label ------------------------------------------------------ */

static void test_prom_exact(void **state)
{
	(void)state;
	PROM("bash", "bash");
	PROM("", "");
	PROM("a\"b", "a\\\"b");
	PROM("a\\b", "a\\\\b");
	PROM("a\nb", "a\\nb");
	PROM("\\n", "\\\\n");
	PROM("a\x80"
	     "b",
	     "a" RC "b");
	PROM("\xed\xa0\x80", RC RC RC);
	PROM("caf\xc3\xa9", "caf\xc3\xa9");
	PROM("a\0b", "a" RC "b");
}

/* ---- properties over many inputs ----------------------------------------- */

/* Undo esc_text: \\ and \xNN back to bytes; -1 on a malformed escape. */
static long text_unescape(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	while (*s) {
		unsigned int byte;

		if (n >= cap)
			return -1;
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		if (s[1] == '\\') {
			out[n++] = '\\';
			s += 2;
			continue;
		}
		if (s[1] != 'x' || !s[2] || !s[3] ||
		    sscanf(s + 2, "%2x", &byte) != 1)
			return -1;
		out[n++] = (char)byte;
		s += 4;
	}
	return (long)n;
}

/* Undo esc_csv: the field without its quotes; NULL when malformed. */
static char *csv_unquote(const char *f)
{
	size_t n = strlen(f);
	char *out = malloc(n + 1), *o = out;

	assert_non_null(out);
	if (f[0] != '"') {
		if (strpbrk(f, ",\"\r\n ")) {
			free(out);
			return NULL;
		}
		memcpy(out, f, n + 1);
		return out;
	}
	if (n < 2 || f[n - 1] != '"') {
		free(out);
		return NULL;
	}
	for (size_t i = 1; i < n - 1; i++) {
		if (f[i] == '"') {
			if (f[i + 1] != '"' || i + 1 >= n - 1) {
				free(out);
				return NULL;
			}
			i++;
		}
		*o++ = f[i];
	}
	*o = '\0';
	return out;
}

/* Undo esc_prom_label; NULL when an escape is malformed or raw \n or ". */
static char *prom_unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	for (; *s; s++) {
		if (*s == '\n' || *s == '"') {
			free(out);
			return NULL;
		}
		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		s++;
		if (*s == '\\' || *s == '"')
			*o++ = *s;
		else if (*s == 'n')
			*o++ = '\n';
		else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}

static void check_properties(const char *in, size_t len)
{
	char *text = esc_text(in, len), *utf8 = esc_utf8(in, len);
	char *csv = esc_csv(in, len), *prom = esc_prom_label(in, len);
	char back[64];
	long n;

	assert_true(len <= sizeof(back));
	CHECK(text && utf8 && csv && prom, "an escaper returned NULL");

	/* esc_text: no control byte, valid UTF-8, no dangerous code point,
	 * and it can be decoded back into the input (nothing lost).
	 */
	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		size_t k = unit_utf8_seq(p, strlen((const char *)p));

		CHECK(k, "esc_text output is not valid UTF-8 at byte 0x%02x",
		      *p);
		CHECK(!cp_dangerous(utf8_cp(p, k)),
		      "esc_text let code point U+%04X through", utf8_cp(p, k));
		p += k;
	}
	n = text_unescape(text, back, sizeof(back));
	CHECK(n == (long)len && !memcmp(back, in, len),
	      "esc_text output does not decode back to its %zu-byte input",
	      len);

	/* esc_utf8: valid UTF-8 always; the input unchanged when it was. */
	CHECK(unit_utf8_valid(utf8, strlen(utf8)),
	      "esc_utf8 output is invalid UTF-8");
	CHECK(strlen(utf8) >= len, "esc_utf8 dropped part of its input");
	if (unit_utf8_valid(in, len) && !memchr(in, '\0', len))
		CHECK(strlen(utf8) == len && !memcmp(utf8, in, len),
		      "esc_utf8 changed valid UTF-8 input");
	{
		char fixed[4 * sizeof(back)];

		CHECK(esc_utf8_buf(in, len, fixed, sizeof(fixed)) ==
				      strlen(utf8) &&
			      !strcmp(fixed, utf8),
		      "esc_utf8_buf differs from esc_utf8");
	}

	/* esc_csv: one well-formed field holding exactly esc_text's text. */
	{
		char *field = csv_unquote(csv);

		CHECK(field != NULL, "esc_csv produced a malformed field");
		CHECK(!strpbrk(csv, "\r\n"), "esc_csv produced a line break");
		CHECK(!strcmp(field, text),
		      "esc_csv field is not esc_text's text");
		free(field);
	}

	/* esc_prom_label: well-formed escapes around esc_utf8's text. */
	{
		char *label = prom_unescape(prom);

		CHECK(label != NULL, "esc_prom_label produced a bad escape");
		CHECK(!strcmp(label, utf8), "esc_prom_label lost text");
		free(label);
	}
	free(text);
	free(utf8);
	free(csv);
	free(prom);
}

static void test_properties_all_short_inputs(void **state)
{
	char in[2];

	(void)state;
	check_properties("", 0);
	for (unsigned int a = 0; a < 256; a++) {
		in[0] = (char)a;
		check_properties(in, 1);
		for (unsigned int b = 0; b < 256; b++) {
			in[1] = (char)b;
			check_properties(in, 2);
		}
	}
}

static void test_properties_random_inputs(void **state)
{
	/* Bytes that matter: controls, ASCII specials, UTF-8 leads/tails. */
	static const unsigned char pick[] = {
		0x00, 0x07, 0x09, 0x0a, 0x0d, 0x1b, 0x20, '"',	',',  '\\',
		'[',  ']',  'a',  'x',	0x7f, 0x80, 0x85, 0x8f, 0x90, 0x9b,
		0x9f, 0xa0, 0xaa, 0xae, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
		0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x81, 0xa6, 0xa9,
	};
	uint64_t seed = 0x5c9f0f11e5ULL;
	char in[16];

	(void)state;
	for (int iter = 0; iter < 100000; iter++) {
		size_t len = 1 + unit_rand(&seed) % sizeof(in);

		for (size_t i = 0; i < len; i++) {
			uint64_t r = unit_rand(&seed);

			in[i] = (char)(r & 1 ? pick[(r >> 1) % sizeof(pick)] :
					       (r >> 8) & 0xff);
		}
		check_properties(in, len);
	}
}

/* esc_text_decode reads back what esc_text wrote (folded stack files). */
static void test_text_decode(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\\\\b", "a\\b" },
		{ "a\\x3bb", "a;b" },
		{ "\\x1b[31m", "\x1b[31m" },
		{ "\\xC3\\xa9", "\xc3\xa9" },
		/* not an escape: kept as it is */
		{ "\\x", "\\x" },
		{ "\\x4", "\\x4" },
		{ "\\xzz", "\\xzz" },
		{ "\\n", "\\n" },
		{ "end\\", "end\\" },
		/* a NUL cannot be in the string */
		{ "a\\x00b", "a\\x00b" },
	};
	/* an escape's pieces (or, below, any byte but NUL) */
	static const char bits[] = "\\x3b;a\x1b\xc3\xa9";
	uint64_t seed = 0xdec0de5ULL;
	char in[12];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = esc_text_decode(cases[i].in, strlen(cases[i].in));

		CHECK_STR(got, cases[i].want, cases[i].in);
		free(got);
	}
	/* decode(esc_text(x)) == x for any x without a NUL byte */
	for (int iter = 0; iter < 100000; iter++) {
		size_t len = 1 + unit_rand(&seed) % sizeof(in);
		char *e, *d;

		for (size_t i = 0; i < len; i++) {
			uint64_t r = unit_rand(&seed);

			in[i] = r & 1 ? bits[(r >> 1) % (sizeof(bits) - 1)] :
					(char)(1 + (r >> 8) % 255);
		}
		e = esc_text(in, len);
		d = esc_text_decode(e, strlen(e));
		if (!d || strlen(d) != len || memcmp(d, in, len)) {
			unit_dump_n(in, len);
			unit_dump(e);
			unit_dump(d);
			fail_msg("round trip of %zu bytes", len);
		}
		free(e);
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_plain_and_multibyte),
		cmocka_unit_test(test_text_quotes_backslash),
		cmocka_unit_test(test_text_control_bytes),
		cmocka_unit_test(test_text_terminal_sequences),
		cmocka_unit_test(test_text_c1_and_bidi),
		cmocka_unit_test(test_text_invalid_utf8),
		cmocka_unit_test(test_text_embedded_nul_and_empty),
		cmocka_unit_test(test_strnlen),
		cmocka_unit_test(test_utf8_exact),
		cmocka_unit_test(test_utf8_embedded_nul),
		cmocka_unit_test(test_utf8_buf_cuts_between_characters),
		cmocka_unit_test(test_csv_exact),
		cmocka_unit_test(test_prom_exact),
		cmocka_unit_test(test_properties_all_short_inputs),
		cmocka_unit_test(test_properties_random_inputs),
		cmocka_unit_test(test_text_decode),
	};

	unit_init();
	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}

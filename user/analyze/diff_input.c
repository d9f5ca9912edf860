// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff's input files (diff_input.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff_input.h"
#include "util/escape.h"
#include "util/log.h"

/* Files larger than this are not read (a report of 1 GiB is not one). */
#define DIFF_MAX_FILE (1ULL << 30)

int diff_input_error(int err, const char *name, size_t line, const char *fmt,
		     ...)
{
	char *e = esc_text(name, strlen(name)), msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		pr_err("%s: line %zu: %s", e ? e : "?", line, msg);
	else
		pr_err("%s: %s", e ? e : "?", msg);
	free(e);
	return err;
}

int diff_read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int err = 0;

	*text = NULL;
	*len = 0;
	if (!f)
		return diff_input_error(-errno, path, 0, "%s", strerror(errno));
	for (;;) {
		size_t got;

		if (cap - n < 65536) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *tmp;

			if (ncap > DIFF_MAX_FILE + 1) {
				err = diff_input_error(
					-EFBIG, path, 0,
					"larger than 1 GiB: not a "
					"report of scprof");
				break;
			}
			tmp = realloc(buf, ncap + 1);
			if (!tmp) {
				err = diff_input_error(-ENOMEM, path, 0,
						       "out of memory");
				break;
			}
			buf = tmp;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got)
			continue;
		if (ferror(f))
			err = diff_input_error(-EIO, path, 0, "cannot read it");
		break;
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return diff_input_error(-ENOMEM, path, 0,
						"out of memory");
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

size_t diff_skip_blank(const char *text, size_t len, size_t pos)
{
	while (pos < len && (text[pos] == ' ' || text[pos] == '\t' ||
			     text[pos] == '\n' || text[pos] == '\r'))
		pos++;
	return pos;
}

/* Where the count of a folded line (n bytes, blanks trimmed) starts,
 * after at least one blank; 0 when it has none.
 */
static size_t count_start(const char *s, size_t n)
{
	size_t sp = n;

	while (sp && s[sp - 1] >= '0' && s[sp - 1] <= '9')
		sp--;
	if (sp == n || sp < 2 || n - sp > 19 ||
	    (s[sp - 1] != ' ' && s[sp - 1] != '\t'))
		return 0;
	return sp;
}

/* The length of a line without its trailing blanks (and \r). */
static size_t trim_end(const char *s, size_t n)
{
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

bool diff_folded_comment(const char *s, size_t n)
{
	return n >= 2 && s[0] == '#' && s[1] == ' ';
}

enum diff_input diff_sniff(const char *text, size_t len)
{
	size_t pos = diff_skip_blank(text, len, 0), n;
	const char *nl;

	while (pos < len && diff_folded_comment(text + pos, len - pos)) {
		nl = memchr(text + pos, '\n', len - pos);
		pos = nl ? diff_skip_blank(text, len, (size_t)(nl - text) + 1) :
			   len;
	}
	if (pos >= len)
		return DIFF_INPUT_OTHER;
	if (text[pos] == '{' || text[pos] == '[')
		return DIFF_INPUT_JSON;
	nl = memchr(text + pos, '\n', len - pos);
	n = trim_end(text + pos, nl ? (size_t)(nl - text) - pos : len - pos);
	return count_start(text + pos, n) && !memchr(text + pos, '\0', n) ?
		       DIFF_INPUT_FOLDED :
		       DIFF_INPUT_OTHER;
}

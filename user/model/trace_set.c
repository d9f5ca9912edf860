// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* strace's -e trace=SET (see trace_set.h); strace's filter_qualify.c and
 * basic_filters.c are the reference for what each form means.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/names.h"
#include "model/trace_set.h"

static const struct {
	const char *name;
	unsigned int bits; /* 0: all */
} classes[] = {
	{ "%desc", TRACE_CL_DESC },
	{ "%file", TRACE_CL_FILE },
	{ "%memory", TRACE_CL_MEMORY },
	{ "%process", TRACE_CL_PROCESS },
	{ "%creds", TRACE_CL_CREDS },
	{ "%signal", TRACE_CL_SIGNAL },
	{ "%ipc", TRACE_CL_IPC },
	{ "%net", TRACE_CL_NETWORK },
	{ "%network", TRACE_CL_NETWORK },
	{ "%stat", TRACE_CL_STAT },
	{ "%lstat", TRACE_CL_LSTAT },
	{ "%fstat", TRACE_CL_FSTAT },
	{ "%%stat", TRACE_CL_STAT_LIKE },
	{ "%statfs", TRACE_CL_STATFS },
	{ "%fstatfs", TRACE_CL_FSTATFS },
	{ "%%statfs", TRACE_CL_STATFS_LIKE },
	{ "%pure", TRACE_CL_PURE },
	{ "%clock", TRACE_CL_CLOCK },
	/* strace's legacy names */
	{ "all", 0 },
	{ "desc", TRACE_CL_DESC },
	{ "file", TRACE_CL_FILE },
	{ "memory", TRACE_CL_MEMORY },
	{ "process", TRACE_CL_PROCESS },
	{ "signal", TRACE_CL_SIGNAL },
	{ "ipc", TRACE_CL_IPC },
	{ "network", TRACE_CL_NETWORK },
};

static const char *const abi_names[SC_ABI_COUNT] = { "64", "32", "x32" };

static const struct trace_class_row *row_of(unsigned int abi, unsigned int nr)
{
	for (unsigned int i = 0; i < trace_class_rows_len; i++)
		if (trace_class_rows[i].abi == abi &&
		    trace_class_rows[i].nr == nr)
			return &trace_class_rows[i];
	return NULL;
}

const char *trace_set_name(unsigned int abi, unsigned int nr)
{
	const struct trace_class_row *r = row_of(abi, nr);

	return r ? r->name : names_syscall(abi, nr);
}

static void set_bit(struct trace_set *s, unsigned int abi, unsigned int nr)
{
	if (abi < SC_ABI_COUNT && nr < SC_NR_MAX)
		s->bits[abi][nr / 32] |= 1U << (nr % 32);
}

bool trace_set_has(const struct trace_set *s, unsigned int abi, unsigned int nr)
{
	if (!s->on)
		return true;
	if (abi >= SC_ABI_COUNT)
		return false;
	if (nr >= SC_NR_MAX)
		return s->beyond;
	return s->bits[abi][nr / 32] & (1U << (nr % 32));
}

static int fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* One token in one ABI: true when it matched something. */
static bool by_class(struct trace_set *s, const char *tok, unsigned int abi)
{
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		unsigned int want = classes[c].bits;

		if (strcasecmp(tok, classes[c].name))
			continue;
		for (unsigned int i = 0; i < trace_class_rows_len; i++) {
			const struct trace_class_row *r = &trace_class_rows[i];

			if (r->abi == abi && (r->classes & want) == want)
				set_bit(s, abi, r->nr);
		}
		return true;
	}
	return false;
}

static bool by_name(struct trace_set *s, const char *tok, unsigned int abi)
{
	bool found = false;

	for (unsigned int nr = 0; nr < SC_NR_MAX; nr++) {
		const char *n = trace_set_name(abi, nr);

		if (n && !strcmp(n, tok)) {
			set_bit(s, abi, nr);
			found = true;
		}
	}
	return found;
}

static bool by_regex(struct trace_set *s, const regex_t *re, unsigned int abi)
{
	bool found = false;

	for (unsigned int nr = 0; nr < SC_NR_MAX; nr++) {
		const char *n = trace_set_name(abi, nr);

		if (n && regexec(re, n, 0, NULL, 0) == 0) {
			set_bit(s, abi, nr);
			found = true;
		}
	}
	return found;
}

static bool by_number(struct trace_set *s, const char *tok, unsigned int abi)
{
	char *end;
	unsigned long nr;

	errno = 0;
	nr = strtoul(tok, &end, 10);
	if (errno || *end || nr >= SC_NR_MAX || !trace_set_name(abi, nr))
		return false;
	set_bit(s, abi, (unsigned int)nr);
	return true;
}

/* A token: [?...]BODY[@ABI]. */
static int token(struct trace_set *s, const char *tok, char *err, size_t len)
{
	const char *body = tok, *at;
	unsigned int first = 0, last = SC_ABI_COUNT - 1;
	bool optional = false, found = false;
	char buf[256];
	regex_t re;
	int rc;

	while (*body == '?') {
		body++;
		optional = true;
	}
	at = strrchr(body, '@');
	if (at) {
		unsigned int a;

		for (a = 0; a < SC_ABI_COUNT; a++)
			if (!strcmp(at + 1, abi_names[a]))
				break;
		if (a == SC_ABI_COUNT)
			return fail(err, len,
				    "incorrect personality designator '%s' in "
				    "'%s': expected 64, 32 or x32",
				    at + 1, tok);
		first = last = a;
	}
	if ((size_t)(at ? at - body : (long)strlen(body)) >= sizeof(buf))
		return fail(err, len, "syscall specification too long");
	snprintf(buf, sizeof(buf), "%.*s",
		 (int)(at ? at - body : (long)strlen(body)), body);
	if (!buf[0])
		return fail(err, len, "empty syscall in the set");
	if (buf[0] == '/') {
		rc = regcomp(&re, buf + 1, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];

			regerror(rc, &re, msg, sizeof(msg));
			return fail(err, len, "invalid regex '%s': %s", buf + 1,
				    msg);
		}
	}
	for (unsigned int abi = first; abi <= last; abi++) {
		if (buf[0] == '/')
			found |= by_regex(s, &re, abi);
		else if (buf[0] >= '0' && buf[0] <= '9')
			found |= by_number(s, buf, abi);
		else
			found |= by_class(s, buf, abi) || by_name(s, buf, abi);
	}
	if (buf[0] == '/')
		regfree(&re);
	if (!found && !optional)
		return fail(err, len, "invalid system call '%s'", tok);
	return 0;
}

static void invert(struct trace_set *s)
{
	for (unsigned int a = 0; a < SC_ABI_COUNT; a++)
		for (unsigned int w = 0; w < SC_TRACE_WORDS; w++)
			s->bits[a][w] = ~s->bits[a][w];
	s->beyond = !s->beyond;
}

int trace_set_parse(struct trace_set *s, const char *set, char *err,
		    size_t errlen)
{
	const char *p = set;
	bool negate = false;
	char *copy, *tok, *save = NULL;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	while (*p == '!') {
		negate = !negate;
		p++;
	}
	if (!*p)
		return fail(err, errlen, "empty syscall set '%s'", set);
	if (!strcmp(p, "all")) {
		invert(s);
	} else if (strcmp(p, "none")) {
		if (p[strlen(p) - 1] == ',' || *p == ',' || strstr(p, ",,"))
			return fail(err, errlen, "empty syscall in '%s'", set);
		copy = strdup(p);
		if (!copy)
			return fail(err, errlen, "out of memory");
		for (tok = strtok_r(copy, ",", &save); tok && !rc;
		     tok = strtok_r(NULL, ",", &save))
			rc = token(s, tok, err, errlen);
		free(copy);
		if (rc)
			return rc;
	}
	if (negate)
		invert(s);
	/* "all" needs no filter: the BPF side then tests nothing */
	s->on = !s->beyond;
	for (unsigned int a = 0; a < SC_ABI_COUNT && !s->on; a++)
		for (unsigned int w = 0; w < SC_TRACE_WORDS; w++)
			if (s->bits[a][w] != UINT32_MAX)
				s->on = true;
	return 0;
}

void trace_set_exit_bits(const struct trace_set *s,
			 uint32_t out[SC_ABI_COUNT][SC_TRACE_WORDS])
{
	bool exec = false;

	memcpy(out, s->bits, sizeof(s->bits));
	for (unsigned int a = 0; a < SC_ABI_COUNT; a++)
		for (unsigned int nr = 0; nr < SC_NR_MAX; nr++)
			if (names_is_exec(names_syscall(a, nr)) &&
			    trace_set_has(s, a, nr))
				exec = true;
	if (!exec)
		return;
	for (unsigned int a = 0; a < SC_ABI_COUNT; a++)
		for (unsigned int nr = 0; nr < SC_NR_MAX; nr++)
			if (names_is_exec(names_syscall(a, nr)))
				out[a][nr / 32] |= 1U << (nr % 32);
}

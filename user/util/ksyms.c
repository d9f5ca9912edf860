// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's function names (ksyms.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ksyms.h"

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset in names */
};

struct ksyms {
	struct ksym *v;
	size_t n;
	char *names;
	size_t names_len;
	FILE *f;	 /* while ksyms_load reads it */
	char first[512]; /* the first function's line */
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add(struct ksyms *k, size_t *cap, size_t *ncap, uint64_t addr,
	       const char *name)
{
	size_t len = strlen(name) + 1;

	if (k->n == *cap) {
		size_t c = *cap ? *cap * 2 : 65536;
		struct ksym *v = realloc(k->v, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		*cap = c;
	}
	if (k->names_len + len > *ncap) {
		size_t c = *ncap ? *ncap * 2 : 1 << 20;
		char *s;

		while (c < k->names_len + len)
			c *= 2;
		s = realloc(k->names, c);
		if (!s)
			return -ENOMEM;
		k->names = s;
		*ncap = c;
	}
	memcpy(k->names + k->names_len, name, len);
	k->v[k->n].addr = addr;
	k->v[k->n++].name = (uint32_t)k->names_len;
	k->names_len += len;
	return 0;
}

/*
 * "ADDR TYPE NAME[ \t[MODULE]]": its address, type and name (NUL-ended in
 * line). -EINVAL: not such a line.
 */
static int parse(char *line, uint64_t *addr, char *type, char **name)
{
	char *p = line, *end;

	*addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || !end[1] || end[2] != ' ')
		return -EINVAL;
	*type = end[1];
	p = end + 3;
	end = p + strcspn(p, " \t\n");
	if (end == p || end - p > 255)
		return -EINVAL;
	*end = '\0';
	*name = p;
	return 0;
}

/* Functions: text, weak, and those of modules. */
static bool is_function(char type)
{
	return type == 't' || type == 'T' || type == 'W' || type == 'w';
}

/* One line: a function is kept. */
static int take(struct ksyms *k, size_t *cap, size_t *ncap, char *line)
{
	uint64_t addr;
	char type, *name;

	if (parse(line, &addr, &type, &name) || !is_function(type))
		return 0;
	return add(k, cap, ncap, addr, name);
}

/* The rest of the file, from k->first, the first function. */
static int read_all(struct ksyms *k)
{
	size_t cap = 0, ncap = 0;
	char line[512];
	int err;

	err = take(k, &cap, &ncap, k->first);
	while (!err && fgets(line, sizeof(line), k->f))
		err = take(k, &cap, &ncap, line);
	if (!err && ferror(k->f))
		err = -EIO;
	fclose(k->f);
	k->f = NULL;
	if (err) {
		free(k->v);
		free(k->names);
		k->v = NULL;
		k->names = NULL;
		k->n = 0;
		return err;
	}
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	return 0;
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	uint64_t addr = 0;
	char type, *name, copy[sizeof(k->first)];
	int err = 0;

	if (!k)
		return NULL;
	k->f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!k->f) {
		err = errno;
		free(k);
		errno = err;
		return NULL;
	}
	/* (a bigger buffer: procfs' own is a kilobyte, a read() each) */
	setvbuf(k->f, NULL, _IOFBF, 1 << 16);
	/* Hidden addresses (kptr_restrict) are all 0: the first function
	 * says (x86's per-CPU symbols, at 0, come first on some kernels:
	 * Debian's 5.10, 6.1 and 6.12).
	 */
	err = ENOENT;
	while (fgets(k->first, sizeof(k->first), k->f)) {
		memcpy(copy, k->first, sizeof(copy));
		if (parse(copy, &addr, &type, &name) || !is_function(type))
			continue;
		err = addr ? 0 : EPERM;
		break;
	}
	if (err) {
		fclose(k->f);
		free(k);
		errno = err;
		return NULL;
	}
	err = read_all(k);
	if (err) {
		free(k);
		errno = -err;
		return NULL;
	}
	return k;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->names);
	free(k);
}

const char *ksyms_name(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k ? k->n : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->names + k->v[lo - 1].name : NULL;
}

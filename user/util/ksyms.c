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

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, ncap = 0;
	char line[512];
	bool any = false;
	FILE *f;

	if (!k)
		return NULL;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		free(k);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) !=
		    3)
			continue;
		any |= addr != 0;
		/* functions: text, weak, and those of modules */
		if (type != 't' && type != 'T' && type != 'W' && type != 'w')
			continue;
		if (add(k, &cap, &ncap, addr, name)) {
			fclose(f);
			ksyms_free(k);
			errno = ENOMEM;
			return NULL;
		}
	}
	fclose(f);
	if (!any || !k->n) {
		ksyms_free(k);
		errno = EPERM;
		return NULL;
	}
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process's mappings, from /proc/PID/maps (procmaps.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/jitmap.h"
#include "collect/objfile.h"
#include "collect/procmaps.h"

void procmaps_free(struct procmaps *pm, struct objcache *files)
{
	for (size_t i = 0; i < pm->n; i++) {
		objfile_put(files, pm->v[i].file);
		free(pm->v[i].module);
	}
	free(pm->v);
	pm->v = NULL;
	pm->n = 0;
	pm->read = false;
	pm->jit_code = false;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Anonymous memory, where a JIT writes code: no file, or a name of the
 * kernel's that is no file ("[anon:...]"), but not the heap nor a stack.
 */
static bool is_anon(const char *path)
{
	static const char *const not_jit[] = { "[vdso]", "[heap]", "[stack]",
					       "[vvar", "[vsyscall]" };

	if (!*path)
		return true;
	if (*path != '[')
		return false;
	for (size_t i = 0; i < sizeof(not_jit) / sizeof(not_jit[0]); i++)
		if (!strncmp(path, not_jit[i], strlen(not_jit[i])))
			return false;
	return true;
}

/*
 * One line of /proc/PID/maps into m, if kept: code in a file, and
 * anonymous memory of any protection (a JIT's code space is reserved
 * before it is made executable, which sends no notice of new mappings).
 */
static bool parse_line(struct procmaps *pm, struct objcache *files,
		       uint32_t pid, struct jitmap *jit, char *line,
		       struct procmap *m)
{
	unsigned int maj, mnr;
	char perms[8];
	uint64_t ino;
	char *path;
	int off = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line,
		   "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64
		   " %n",
		   &m->start, &m->end, perms, &m->pgoff, &maj, &mnr, &ino,
		   &off) < 7 ||
	    !off || strlen(perms) < 3)
		return false;
	path = line + off;
	m->file = NULL;
	m->module = NULL;
	if (is_anon(path)) {
		if (perms[2] == 'x')
			pm->jit_code = true;
		return true;
	}
	if (jitmap_is_dump(jit, path)) {
		jitmap_set_dump(jit, path); /* mapped for perf to see */
		return false;
	}
	if (perms[2] != 'x')
		return false;
	m->module = strdup(*path == '/' ? base_name(path) : path);
	if (!strcmp(path, "[vdso]"))
		m->file = objcache_get(files, UINT64_MAX, UINT64_MAX, path, 0);
	else if (ino)
		m->file = objcache_get(files, (uint64_t)maj << 32 | mnr, ino,
				       path, pid);
	return true;
}

static int map_cmp(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps_parse(struct procmaps *pm, struct objcache *files, uint32_t pid,
		   struct jitmap *jit, char *text)
{
	size_t cap = 0;
	char *line, *save = NULL;

	procmaps_free(pm, files);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct procmap m;

		if (pm->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct procmap *v = realloc(pm->v, ncap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			pm->v = v;
			cap = ncap;
		}
		if (parse_line(pm, files, pid, jit, line, &m))
			pm->v[pm->n++] = m;
	}
	qsort(pm->v, pm->n, sizeof(*pm->v), map_cmp);
	pm->read = true;
	return 0;
}

char *procmaps_read(uint32_t pid)
{
	char path[32];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;
	char chunk[8192];
	size_t n;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		char *b = realloc(buf, len + n + 1);

		if (!b) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = b;
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

const struct procmap *procmaps_find(const struct procmaps *pm, uint64_t pc)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pm->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < pm->v[lo - 1].end)
		return &pm->v[lo - 1];
	return NULL;
}

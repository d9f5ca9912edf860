// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT code's names for one process (jitmap.h): the perf map and the
 * jitdump, parsed into one sorted table.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "collect/jitmap.h"
#include "util/clock.h"

void jitmap_init(struct jitmap *j, uint32_t pid, uint64_t start_ns)
{
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->start_ns = start_ns;
	snprintf(j->perf_name, sizeof(j->perf_name), "perf-%u.map", pid);
	snprintf(j->dump_name, sizeof(j->dump_name), "jit-%u.dump", pid);
}

static void syms_free(struct jitmap *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->v[i].name);
	free(j->v);
	j->v = NULL;
	j->n = 0;
}

void jitmap_clear(struct jitmap *j)
{
	syms_free(j);
	free(j->dump);
	free(j->guess);
	j->dump = j->guess = NULL;
	j->read = false;
	j->size = 0;
}

bool jitmap_is_dump(const struct jitmap *j, const char *path)
{
	size_t n = strlen(path), k = strlen(j->dump_name);

	return n > k && path[n - k - 1] == '/' &&
	       !strcmp(path + n - k, j->dump_name);
}

void jitmap_set_dump(struct jitmap *j, const char *path)
{
	char *p;

	if (j->dump && !strcmp(j->dump, path))
		return;
	p = strdup(path);
	if (!p)
		return;
	free(j->dump);
	j->dump = p;
	j->read = false;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A map file last written before the process started is another's, an
 * earlier process with the same pid.
 */
static bool stale(FILE *f, uint64_t start_boot_ns)
{
	struct timespec boot, real;
	struct stat st;
	double start_real;

	if (fstat(fileno(f), &st) || clock_gettime(CLOCK_BOOTTIME, &boot) ||
	    clock_gettime(CLOCK_REALTIME, &real))
		return false;
	start_real = (double)real.tv_sec + (double)real.tv_nsec / 1e9 -
		     ((double)boot.tv_sec + (double)boot.tv_nsec / 1e9 -
		      (double)start_boot_ns / 1e9);
	return (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9 <
	       start_real - 1.0;
}

static int sym_add(struct jitmap *j, uint64_t start, uint64_t len,
		   const char *name, size_t name_len, bool jitdump)
{
	struct jit_sym *v;

	if (!(j->n & (j->n + 1))) { /* n + 1 a power of two: grow */
		v = realloc(j->v, (j->n + 1) * 2 * sizeof(*v));
		if (!v)
			return -ENOMEM;
		j->v = v;
	}
	j->v[j->n].name = strndup(name, name_len);
	if (!j->v[j->n].name)
		return -ENOMEM;
	j->v[j->n].start = start;
	j->v[j->n].jitdump = jitdump;
	j->v[j->n++].end = start + len;
	return 0;
}

/* The perf map: "START SIZE NAME" lines, hex. */
static void perf_map_parse(struct jitmap *j, FILE *f)
{
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		uint64_t start, len;
		int off = 0;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &len,
			   &off) != 2 ||
		    !off)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (sym_add(j, start, len, line + off, strlen(line + off),
			    false))
			return;
	}
}

/* jitdump's records (as perf's jitdump.h lays them out, native endian). */
#define JITDUMP_MAGIC 0x4A695444U
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1

struct jitdump_header {
	uint32_t magic, version, size, elf_mach, pad, pid;
	uint64_t timestamp, flags;
};

struct jitdump_record {
	uint32_t id, size;
	uint64_t timestamp;
};

/* JIT_CODE_LOAD after its record header; the name, then the code, follow.
 * JIT_CODE_MOVE has new_code_addr where code_size is, then the size.
 */
struct jitdump_load {
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

/* Code moved (a JIT that compacts): its symbol follows. */
static void jitdump_move(struct jitmap *j, const struct jitdump_load *m)
{
	uint64_t old = m->code_addr, to = m->code_size;

	for (size_t i = 0; i < j->n; i++) {
		if (j->v[i].start != old)
			continue;
		j->v[i].end = to + (j->v[i].end - old);
		j->v[i].start = to;
		return;
	}
}

/*
 * A header, then records; a code load names code_size bytes at
 * code_addr. A record cut short (the JIT is still writing it) ends the
 * read.
 */
static void jitdump_parse(struct jitmap *j, FILE *f)
{
	struct jitdump_header h;
	struct jitdump_record r;
	char name[4096];

	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != JITDUMP_MAGIC ||
	    h.pid != j->pid || h.size < sizeof(h) ||
	    fseeko(f, h.size, SEEK_SET))
		return;
	while (fread(&r, sizeof(r), 1, f) == 1 && r.size >= sizeof(r)) {
		off_t next = ftello(f) + (off_t)(r.size - sizeof(r));
		struct jitdump_load l;
		uint64_t nlen;

		if ((r.id == JIT_CODE_LOAD || r.id == JIT_CODE_MOVE) &&
		    fread(&l, sizeof(l), 1, f) != 1)
			return;
		if (r.id == JIT_CODE_MOVE)
			jitdump_move(j, &l);
		nlen = r.size - sizeof(r) - sizeof(l);
		if (r.id == JIT_CODE_LOAD && r.size >= sizeof(r) + sizeof(l) &&
		    nlen >= l.code_size) {
			nlen -= l.code_size;
			if (nlen > sizeof(name))
				nlen = sizeof(name);
			if (fread(name, 1, nlen, f) != nlen)
				return;
			if (sym_add(j, l.code_addr, l.code_size, name,
				    strnlen(name, nlen), true))
				return;
		}
		if (fseeko(f, next, SEEK_SET))
			return;
	}
}

static off_t file_size(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) ? st.st_size : 0;
}

/* Where node --perf-prof writes its dump when the mappings did not show
 * it (yet): the working folder, while the process runs.
 */
static void guess_dump(struct jitmap *j)
{
	char path[64], cwd[PATH_MAX];
	ssize_t n;

	if (j->dump || j->guess)
		return;
	snprintf(path, sizeof(path), "/proc/%u/cwd", j->pid);
	n = readlink(path, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return;
	cwd[n] = '\0';
	if (asprintf(&j->guess, "%s/%s", cwd, j->dump_name) < 0)
		j->guess = NULL;
}

/* Read the files (again, when they grew). */
static void jitmap_read(struct jitmap *j)
{
	char path[64];
	const char *jd;
	off_t size;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/%s", j->perf_name);
	guess_dump(j);
	jd = j->dump ? j->dump : j->guess;
	size = file_size(path) + file_size(jd);
	if (j->read && size == j->size)
		return; /* as it was */
	j->read = true;
	j->size = size;
	syms_free(j);
	if (!size)
		return;
	f = fopen(path, "re");
	if (f && !stale(f, j->start_ns))
		perf_map_parse(j, f);
	if (f)
		fclose(f);
	f = jd ? fopen(jd, "re") : NULL;
	if (f && !stale(f, j->start_ns)) /* the header has the pid */
		jitdump_parse(j, f);
	if (f)
		fclose(f);
	if (j->n)
		qsort(j->v, j->n, sizeof(*j->v), sym_cmp);
}

static const struct jit_sym *lookup(const struct jitmap *j, uint64_t pc)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (j->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < j->v[lo - 1].end)
		return &j->v[lo - 1];
	return NULL;
}

const struct jit_sym *jitmap_find(struct jitmap *j, uint64_t pc, bool now)
{
	const struct jit_sym *s;
	uint64_t t;

	if (!j->read)
		jitmap_read(j);
	s = lookup(j, pc);
	if (s)
		return s;
	t = clock_mono_ns();
	if (now || t - j->look >= JITMAP_LOOK_NS) { /* written since? */
		j->look = t;
		jitmap_read(j);
		s = lookup(j, pc);
	}
	return s;
}

bool jitmap_present(struct jitmap *j)
{
	if (!j->read)
		jitmap_read(j);
	return j->size > 0;
}

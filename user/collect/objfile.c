// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ELF files processes map, opened once each and shared (objfile.h).
 * Each file is a libdwfl session of its own holding that one file at its
 * link-time addresses, so that its symbols, lines and CFI are read once
 * however many processes map it, at whatever addresses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "collect/objfile.h"
#include "util/clock.h"
#include "util/demangle.h"
#include "util/log.h"

/* A file is looked at again (stat) for changes at most this often. */
#define OBJ_CHECK_NS 1000000000ULL
/* A file that could not be opened is tried again after this long. */
#define OBJ_RETRY_NS 1000000000ULL
#define OBJ_BUCKETS 1024
#define OVERLAYFS_MAGIC 0x794c7630

struct obj_name {
	uint64_t vaddr;
	char *func, *file;
	uint32_t line;
	bool used;
};

struct objfile {
	struct objfile *next; /* in its bucket; dead files are in none */
	uint64_t dev, ino;
	off_t size; /* as opened: a change makes it another file */
	struct timespec mtime;
	unsigned int refs;
	uint64_t last_use;
	uint64_t checked_ns; /* last stat, or the failed open */
	bool dead;	     /* changed since: out of the table */
	Dwfl *dwfl;	     /* NULL: could not be opened */
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* module address - file address */
	GElf_Phdr *load; /* PT_LOAD headers */
	size_t nload;
	Dwarf_CFI *eh_cfi, *dbg_cfi;
	Dwarf_Addr eh_bias, dbg_bias; /* module address - CFI address */
	bool cfi_read, dbg_read;
	int go; /* -1 unknown, 0, 1 */
	struct obj_name *names;
	size_t nnames, names_cap;
};

struct objcache {
	struct objfile *bucket[OBJ_BUCKETS];
	size_t nfiles, max_files;
	uint64_t tick;
	bool demangle;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	/* names let go while a stack may still point at them */
	char **retired;
	size_t nretired, retired_cap;
	struct objcache_stats st;
};

static size_t bucket_of(uint64_t dev, uint64_t ino)
{
	return (size_t)(((dev * 0x9E3779B97F4A7C15ULL) ^ ino) *
				0xC2B2AE3D27D4EB4FULL >>
			54) %
	       OBJ_BUCKETS;
}

static int retire(struct objcache *c, char *s)
{
	if (!s)
		return 0;
	if (c->nretired == c->retired_cap) {
		size_t cap = c->retired_cap ? c->retired_cap * 2 : 256;
		char **r = realloc(c->retired, cap * sizeof(*r));

		if (!r) {
			/* cannot keep it: leak one string rather than free a
			 * name a frame may point at
			 */
			return -ENOMEM;
		}
		c->retired = r;
		c->retired_cap = cap;
	}
	c->retired[c->nretired++] = s;
	return 0;
}

/* Drop a file's named addresses (their strings wait for the next stack). */
static void names_clear(struct objcache *c, struct objfile *f)
{
	for (size_t i = 0; i < f->names_cap; i++) {
		struct obj_name *n = &f->names[i];

		if (!n->used)
			continue;
		retire(c, n->func);
		retire(c, n->file);
		memset(n, 0, sizeof(*n));
	}
	f->nnames = 0;
}

static void file_free(struct objcache *c, struct objfile *f)
{
	names_clear(c, f);
	free(f->names);
	/* both CFIs belong to the module: dwfl_end releases them */
	if (f->dwfl) {
		dwfl_end(f->dwfl);
		c->st.open_now--;
	}
	free(f->load);
	free(f);
}

static void unlink_file(struct objcache *c, struct objfile *f)
{
	struct objfile **pp = &c->bucket[bucket_of(f->dev, f->ino)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			c->nfiles--;
			f->next = NULL;
			f->dead = true;
			return;
		}
	}
}

/* Close the least recently used file no process holds. */
static bool evict_one(struct objcache *c)
{
	struct objfile *lru = NULL;

	for (size_t b = 0; b < OBJ_BUCKETS; b++)
		for (struct objfile *f = c->bucket[b]; f; f = f->next)
			if (!f->refs && (!lru || f->last_use < lru->last_use))
				lru = f;
	if (!lru)
		return false;
	unlink_file(c, lru);
	if (lru->dwfl)
		c->st.closed++;
	file_free(c, lru);
	return true;
}

/* The kernel's vDSO image, ours, as a file of its own (a memfd). */
static int vdso_fd(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[256];
	size_t size = 0;
	FILE *m;
	int fd;

	if (!base)
		return -1;
	m = fopen("/proc/self/maps", "re");
	while (m && fgets(line, sizeof(line), m)) {
		unsigned long s, e;

		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &s, &e) == 2 && s == base)
			size = e - s;
	}
	if (m)
		fclose(m);
	if (!size)
		return -1;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, (void *)base, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool is_overlay(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && (unsigned long)sf.f_type == OVERLAYFS_MAGIC;
}

/* path (as process pid shows it) opened, if it is file ino. -1: not. */
static int open_mapped(const char *path, uint64_t ino, uint32_t pid,
		       struct stat *st)
{
	char buf[4096 + 32], clean[4096];
	size_t n = strlen(path);
	const char *del = " (deleted)";
	int fd;

	if (n >= sizeof(clean))
		return -1;
	memcpy(clean, path, n + 1);
	if (n > strlen(del) && !strcmp(clean + n - strlen(del), del))
		clean[n - strlen(del)] = '\0';
	if (pid) { /* in its root: a container's, a chroot's */
		snprintf(buf, sizeof(buf), "/proc/%u/root%s", pid, clean);
		fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, st) &&
		    ((uint64_t)st->st_ino == ino || is_overlay(fd)))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	fd = open(clean, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, st) && (uint64_t)st->st_ino == ino)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static int file_open(struct objcache *c, struct objfile *f, const char *path,
		     uint32_t pid)
{
	bool vdso = !strcmp(path, "[vdso]");
	const char *base = strrchr(path, '/');
	struct stat st = {};
	GElf_Ehdr eh;
	Elf *elf;
	size_t nph;
	int fd;

	fd = vdso ? vdso_fd() : open_mapped(path, f->ino, pid, &st);
	if (fd < 0)
		return -ENOENT;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->dwfl = dwfl_begin(&c->cb);
	if (!f->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	c->st.open_now++;
	/* at its link-time addresses: the module's are the file's */
	f->mod = dwfl_report_elf(f->dwfl, base ? base + 1 : path, path, fd, 0,
				 false);
	if (!f->mod) {
		close(fd);
		return -EINVAL;
	}
	dwfl_report_end(f->dwfl, NULL, NULL);
	elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph))
		return -EINVAL;
	f->load = calloc(nph ? nph : 1, sizeof(*f->load));
	if (!f->load)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->load[f->nload++] = ph;
	}
	f->go = -1;
	c->st.opened++;
	return 0;
}

/* Has the file changed since it was opened (stat again, now and then)? */
static bool file_changed(struct objfile *f, const char *path, uint32_t pid)
{
	char buf[4096 + 32];
	uint64_t now = clock_mono_ns();
	struct stat st;

	if (!f->dwfl || now - f->checked_ns < OBJ_CHECK_NS ||
	    !strcmp(path, "[vdso]") || strstr(path, " (deleted)"))
		return false;
	f->checked_ns = now;
	snprintf(buf, sizeof(buf), "/proc/%u/root%s", pid, path);
	if (stat(pid ? buf : path, &st) || (uint64_t)st.st_ino != f->ino)
		return false; /* cannot tell: keep it */
	return st.st_size != f->size || st.st_mtim.tv_sec != f->mtime.tv_sec ||
	       st.st_mtim.tv_nsec != f->mtime.tv_nsec;
}

struct objfile *objcache_get(struct objcache *c, uint64_t dev, uint64_t ino,
			     const char *path, uint32_t pid)
{
	size_t b = bucket_of(dev, ino);
	struct objfile *f;
	int err;

	for (f = c->bucket[b]; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			break;
	if (f && !f->dwfl && clock_mono_ns() - f->checked_ns >= OBJ_RETRY_NS &&
	    !f->refs) {
		unlink_file(c, f); /* try again */
		file_free(c, f);
		f = NULL;
	} else if (f && file_changed(f, path, pid)) {
		unlink_file(c, f);
		c->st.closed++;
		if (!f->refs)
			file_free(c, f);
		f = NULL;
	}
	if (!f) {
		if (c->nfiles >= c->max_files && !evict_one(c)) {
			c->st.over_cap++;
			return NULL;
		}
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->dev = dev;
		f->ino = ino;
		f->checked_ns = clock_mono_ns();
		err = file_open(c, f, path, pid);
		if (err) {
			c->st.unopened++;
			pr_debug("stacks: cannot open %s (pid %u)", path, pid);
			if (f->dwfl) {
				dwfl_end(f->dwfl);
				c->st.open_now--;
			}
			free(f->load);
			memset(f, 0, sizeof(*f));
			f->dev = dev;
			f->ino = ino;
			f->checked_ns = clock_mono_ns();
		}
		f->next = c->bucket[b];
		c->bucket[b] = f;
		c->nfiles++;
	}
	f->last_use = ++c->tick;
	if (!f->dwfl)
		return NULL;
	f->refs++;
	return f;
}

void objfile_put(struct objcache *c, struct objfile *f)
{
	if (!f || !f->refs)
		return;
	if (!--f->refs && f->dead)
		file_free(c, f);
}

bool objfile_vaddr(const struct objfile *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nload; i++) {
		const GElf_Phdr *ph = &f->load[i];

		if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

static void cfi_read(struct objfile *f)
{
	if (f->cfi_read)
		return;
	f->cfi_read = true;
	f->eh_cfi = dwfl_module_eh_cfi(f->mod, &f->eh_bias);
}

int objfile_cfi_frame(struct objfile *f, uint64_t vaddr, Dwarf_Frame **frame)
{
	Dwarf_Addr a = vaddr + f->bias;

	cfi_read(f);
	if (f->eh_cfi && !dwarf_cfi_addrframe(f->eh_cfi, a - f->eh_bias, frame))
		return 0;
	/* .debug_frame (Go's only CFI; or from the debug file): read when
	 * .eh_frame has no row for a pc, which loads the debug info
	 */
	if (!f->dbg_read) {
		f->dbg_read = true;
		f->dbg_cfi = dwfl_module_dwarf_cfi(f->mod, &f->dbg_bias);
	}
	if (f->dbg_cfi &&
	    !dwarf_cfi_addrframe(f->dbg_cfi, a - f->dbg_bias, frame))
		return 0;
	return -1;
}

static struct obj_name *name_slot(struct objfile *f, uint64_t vaddr)
{
	size_t mask = f->names_cap - 1;
	size_t j = (size_t)((vaddr * 0x9E3779B97F4A7C15ULL) >> 40) & mask;

	while (f->names[j].used && f->names[j].vaddr != vaddr)
		j = (j + 1) & mask;
	return &f->names[j];
}

/* Room for one more name: grow, or (at OBJ_MAX_NAMES) start again. */
static int names_room(struct objcache *c, struct objfile *f)
{
	struct obj_name *old = f->names;
	size_t ocap = f->names_cap;

	if (f->names && (f->nnames + 1) * 2 <= f->names_cap)
		return 0;
	if (f->nnames >= OBJ_MAX_NAMES) {
		c->st.names_cut += f->nnames;
		names_clear(c, f);
		return 0;
	}
	f->names_cap = ocap ? ocap * 2 : 256;
	f->names = calloc(f->names_cap, sizeof(*f->names));
	if (!f->names) {
		f->names = old;
		f->names_cap = ocap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			*name_slot(f, old[i].vaddr) = old[i];
	free(old);
	return 0;
}

static int dup_or_null(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? -ENOMEM : 0;
}

int objfile_name(struct objcache *c, struct objfile *f, uint64_t vaddr,
		 struct sc_frame *out)
{
	Dwarf_Addr a = vaddr + f->bias;
	const char *func, *file = NULL;
	struct obj_name *n, nn = { .vaddr = vaddr, .used = true };
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;
	int lineno = 0;

	if (names_room(c, f))
		return -ENOMEM;
	n = name_slot(f, vaddr);
	if (!n->used) {
		func = dwfl_module_addrinfo(f->mod, a, &off, &sym, NULL, NULL,
					    NULL);
		line = dwfl_module_getsrc(f->mod, a);
		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL,
					     NULL);
		nn.line = file && lineno > 0 ? (uint32_t)lineno : 0;
		/* "write@@GLIBC_2.2.5": the name, without its version */
		if (func)
			nn.func = strndup(func, strcspn(func, "@"));
		if (func && !nn.func)
			return -ENOMEM;
		if (nn.func && c->demangle) {
			char *d = demangle(nn.func);

			if (d) {
				free(nn.func);
				nn.func = d;
			}
		}
		if (dup_or_null(&nn.file, nn.line ? file : NULL)) {
			free(nn.func);
			return -ENOMEM;
		}
		*n = nn;
		f->nnames++;
	}
	memset(out, 0, sizeof(*out));
	out->func = n->func;
	out->file = n->file;
	out->line = n->line;
	out->offset = vaddr;
	return 0;
}

bool objfile_is_go(struct objfile *f)
{
	Dwarf_Addr bias;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (f->go >= 0)
		return f->go;
	f->go = 0;
	elf = dwfl_module_getelf(f->mod, &bias);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while (!f->go && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		f->go = name && (!strcmp(name, ".gopclntab") ||
				 !strcmp(name, ".go.buildinfo"));
	}
	return f->go;
}

void objcache_next_stack(struct objcache *c)
{
	for (size_t i = 0; i < c->nretired; i++)
		free(c->retired[i]);
	c->nretired = 0;
}

/* Files kept open at most: OBJ_MAX_FILES, fewer when the descriptor
 * limit is low (a file holds one or two: itself, its debug file). The
 * soft limit is raised towards the hard one first.
 */
static size_t max_files(void)
{
	struct rlimit rl;
	rlim_t want = 4 * OBJ_MAX_FILES;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 32;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY &&
					      rl.rlim_max < want ?
				      rl.rlim_max :
				      want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return OBJ_MAX_FILES;
	return rl.rlim_cur < 128 ? 32 : (size_t)(rl.rlim_cur - 64) / 2;
}

struct objcache *objcache_new(bool demangle)
{
	struct objcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->demangle = demangle;
	c->max_files = max_files();
	c->cb.find_elf = dwfl_build_id_find_elf;
	c->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	c->cb.section_address = dwfl_offline_section_address;
	c->cb.debuginfo_path = &c->debuginfo_path; /* NULL: the default */
	elf_version(EV_CURRENT);
	return c;
}

void objcache_free(struct objcache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < OBJ_BUCKETS; b++) {
		struct objfile *f = c->bucket[b], *next;

		for (; f; f = next) {
			next = f->next;
			file_free(c, f);
		}
	}
	objcache_next_stack(c);
	free(c->retired);
	free(c);
}

void objcache_stats(const struct objcache *c, struct objcache_stats *out)
{
	*out = c->st;
}

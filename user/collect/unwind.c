// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwinding sampled user stacks with libdw, in the way of perf's
 * unwind-libdw.c: a Dwfl per process with its mappings (from /proc), and
 * thread callbacks that hand libdw the sampled registers and read memory
 * from the sampled copy of the stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "collect/unwind.h"
#include "util/clock.h"
#include "util/demangle.h"
#include "util/log.h"

/* Processes whose mappings are kept; the least recently sampled one goes
 * when more come (with -a), and its later samples read /proc again.
 */
#define UW_MAX_PROCS 256
/* A process whose pc is in no mapping (dlopen, exec) reads its mappings
 * again, at most this many times.
 */
#define UW_MAX_REBUILDS 8
/* Named pcs remembered per process, in an open-addressed table: a pc is
 * in one of UW_CACHE_PROBE slots from its hash's, else (all taken) it
 * replaces the first.
 */
#define UW_CACHE_SLOTS 4096
#define UW_CACHE_PROBE 8
/* A cached unnamed pc has the JIT maps' sizes looked at again at most
 * this often (ns): a stat each, and a service's stacks have many such
 * frames (a stripped binary's static functions).
 */
#define UW_PERF_LOOK_NS 50000000ULL

struct perf_sym {
	uint64_t start, end;
	char *name;
	bool jitdump; /* from jit-PID.dump, else the perf map */
};

struct uw_cached {
	uint64_t pc; /* 0: empty */
	struct sc_frame f;
	bool jit_miss; /* f is unnamed; the JIT maps were perf_size long */
	off_t perf_size;
};

struct uw_proc {
	uint32_t pid;
	uint64_t start_ns;
	uint64_t last_use;
	Dwfl *dwfl; /* NULL: the mappings could not be read */
	unsigned int rebuilds;
	bool stale;	  /* the process mapped code since: read them again */
	uint32_t exec_id; /* the program image dwfl has (exec count) */
	char *exe;	  /* file name of the main program, NULL unknown */
	struct perf_sym *perf;
	size_t nperf;
	bool perf_read;
	off_t perf_size;   /* the perf map's and jitdump's sizes when read: they
			  * grow
			  */
	char *jitdump;	   /* its jit-PID.dump, from its mappings; NULL none */
	char *jit_guess;   /* else where a JIT writes it, its working folder */
	uint64_t jit_look; /* when the mappings were last searched for it */
	uint64_t perf_look; /* when a cached unnamed pc last had the JIT maps
			     * looked at (UW_PERF_LOOK_NS)
			     */
	bool demangle;	    /* the unwinder's setting */
	/* A copy of its mappings, taken as the notice of new ones came
	 * (stack_drain.c): what they are once the process has gone. NULL:
	 * none; maps_exec_id is the image they belong to.
	 */
	char *maps;
	uint32_t maps_exec_id;
	struct uw_cached *cache; /* UW_CACHE_SLOTS */
	/* Names a cache slot let go of while a stack is being named: its
	 * earlier frames may still point at them (two pcs in one slot, or a
	 * JIT frame named again in a recursion). Freed once the stack is
	 * added.
	 */
	char **retired;
	size_t nretired, retired_cap;
	const struct sc_stack_event *ev; /* the sample being unwound */
};

/* A sample with a frame in JIT code its perf map did not name yet. */
struct uw_deferred {
	uint32_t pid;
	uint64_t start_ns;
	uint32_t nr, abi;
	uint32_t weight;
	char comm[SC_COMM_LEN];
	size_t n;
	uint64_t pcs[UNWIND_MAX_FRAMES];
};

/* Samples kept for naming at report time, at most (about 5 MiB). */
#define UW_MAX_DEFERRED 8192

struct unwinder {
	struct uw_proc *procs[UW_MAX_PROCS];
	size_t nprocs;
	uint64_t tick;
	struct unwinder_stats st;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	/* scprof's own ELF: the architecture, when a process's files cannot
	 * be opened (another mount namespace)
	 */
	int self_fd;
	Elf *self_elf;
	bool demangle;
	struct uw_deferred *deferred; /* UW_MAX_DEFERRED */
	size_t ndeferred;
	unwinder_maps_fn maps_fn; /* copies of mappings; NULL none */
	void *maps_ctx;
};

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* ---- libdw thread callbacks: one thread, the sampled one ---- */

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw_proc *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return (pid_t)p->ev->tid;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Words of the sampled stack; anything else is unknown. */
static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			   void *arg)
{
	const struct sc_stack_event *e = ((struct uw_proc *)arg)->ev;
	uint64_t base = e->regs[SC_STACK_REG_SP] &
			~(uint64_t)(SC_STACK_PAGE - 1);

	(void)dwfl;
	if (addr < base || addr - base + sizeof(*result) > e->len)
		return false;
	memcpy(result, e->data + (addr - base), sizeof(*result));
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct sc_stack_event *e = ((struct uw_proc *)thread_arg)->ev;
	Dwarf_Word regs[SC_STACK_NREGS];

	for (int i = 0; i < SC_STACK_NREGS; i++)
		regs[i] = e->regs[i];
#if defined(__aarch64__)
	/* x0..x30 and sp are DWARF registers 0 to 31; the pc is none (libdw
	 * would take x30, the return address column, for it)
	 */
	if (!dwfl_thread_state_registers(thread, 0, SC_STACK_REG_IP, regs))
		return false;
	dwfl_thread_state_register_pc(thread, e->regs[SC_STACK_REG_IP]);
	return true;
#else
	return dwfl_thread_state_registers(thread, 0, SC_STACK_NREGS, regs);
#endif
}

static const Dwfl_Thread_Callbacks uw_thread_cb = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

/* ---- processes ---- */

static void cache_clear(struct uw_proc *p)
{
	for (size_t i = 0; p->cache && i < UW_CACHE_SLOTS; i++) {
		struct uw_cached *c = &p->cache[i];

		if (!c->pc)
			continue;
		free(c->f.func);
		free(c->f.module);
		free(c->f.file);
		memset(c, 0, sizeof(*c));
	}
}

static void perf_map_free(struct uw_proc *p)
{
	for (size_t i = 0; i < p->nperf; i++)
		free(p->perf[i].name);
	free(p->perf);
	p->perf = NULL;
	p->nperf = 0;
}

/* Keep a slot's names until the stack being named is added. */
static int retire(struct uw_proc *p, struct sc_frame *f)
{
	if (p->nretired + 3 > p->retired_cap) {
		size_t cap = p->retired_cap ? p->retired_cap * 2 : 32;
		char **r = realloc(p->retired, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		p->retired = r;
		p->retired_cap = cap;
	}
	p->retired[p->nretired++] = f->func;
	p->retired[p->nretired++] = f->module;
	p->retired[p->nretired++] = f->file;
	return 0;
}

/* The stack that used them is added: free the retired names. */
static void retired_free(struct uw_proc *p)
{
	for (size_t i = 0; p && i < p->nretired; i++)
		free(p->retired[i]);
	if (p)
		p->nretired = 0;
}

static void proc_free(struct uw_proc *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	perf_map_free(p);
	free(p->jitdump);
	free(p->jit_guess);
	free(p->maps);
	cache_clear(p);
	retired_free(p);
	free(p->retired);
	free(p->cache);
	free(p);
}

static const struct perf_sym *perf_find(struct uw_proc *p, uint64_t pc);

/* Is the sample's pc in these mappings (or JIT code)? When not, they are
 * another program image's, one the process has exec'd since.
 */
static bool pc_mapped(Dwfl *d, struct uw_proc *p, uint64_t pc)
{
	Dwfl_Module *m = dwfl_addrmodule(d, pc);
	Dwarf_Addr start = 0, end = 0;

	if (m)
		dwfl_module_info(m, NULL, &start, &end, NULL, NULL, NULL, NULL);
	return (m && pc >= start && pc < end) || perf_find(p, pc);
}

static void jitdump_find(struct uw_proc *p);

/* The mappings as a new Dwfl: the process's own (/proc/PID/maps) when
 * maps is NULL, else that copy of them (without the vDSO: its image is
 * read from the live process). NULL: unreadable, or not the sample's
 * program image.
 */
static Dwfl *dwfl_from(struct unwinder *u, struct uw_proc *p, const char *maps)
{
	Dwfl *d = dwfl_begin(&u->cb);
	FILE *f = NULL;
	int err;

	if (!d)
		return NULL;
	if (maps) {
		f = *maps ? fmemopen((void *)maps, strlen(maps), "r") : NULL;
		err = !f || dwfl_linux_proc_maps_report(d, f);
		if (f)
			fclose(f);
	} else {
		err = dwfl_linux_proc_report(d, (pid_t)p->pid);
	}
	if (err || dwfl_report_end(d, NULL, NULL) ||
	    !dwfl_attach_state(d, u->self_elf, (pid_t)p->pid, &uw_thread_cb,
			       p)) {
		pr_debug("stacks: cannot read the mappings of pid %u%s: %s",
			 p->pid, maps ? " (copy)" : "", dwfl_errmsg(-1));
		dwfl_end(d);
		return NULL;
	}
	if (!pc_mapped(d, p, p->ev->regs[SC_STACK_REG_IP])) {
		/* it has run another program since this sample: these are
		 * that program's mappings, not the sample's
		 */
		dwfl_end(d);
		return NULL;
	}
	return d;
}

/* The process's mappings as a new Dwfl: as they are now, else (it has
 * gone, or exec'd) the latest copy of those of the sample's program
 * image.
 */
static Dwfl *proc_dwfl(struct unwinder *u, struct uw_proc *p)
{
	char *copy = u->maps_fn ? u->maps_fn(u->maps_ctx, p->pid, p->start_ns,
					     p->ev->exec_id) :
				  NULL;
	Dwfl *d;

	if (copy) { /* newer than the one kept */
		free(p->maps);
		p->maps = copy;
		p->maps_exec_id = p->ev->exec_id;
	}
	d = dwfl_from(u, p, NULL);

	if (!d && p->maps && p->maps_exec_id == p->ev->exec_id)
		d = dwfl_from(u, p, p->maps);
	if (!d)
		return NULL;
	/* its jitdump too, while it runs (libdwfl leaves out what is not
	 * ELF)
	 */
	p->jit_look = 0;
	jitdump_find(p);
	return d;
}

static int perf_cmp(const void *a, const void *b)
{
	const struct perf_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A map file last written before the process started is another's, an
 * earlier process with the same pid.
 */
static bool perf_map_stale(FILE *f, uint64_t start_boot_ns)
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

static int perf_add(struct uw_proc *p, uint64_t start, uint64_t len,
		    const char *name, size_t name_len, bool jitdump)
{
	struct perf_sym *v;

	if (!(p->nperf & (p->nperf + 1))) { /* n + 1 a power of two: grow */
		v = realloc(p->perf, (p->nperf + 1) * 2 * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->perf = v;
	}
	p->perf[p->nperf].name = strndup(name, name_len);
	if (!p->perf[p->nperf].name)
		return -ENOMEM;
	p->perf[p->nperf].start = start;
	p->perf[p->nperf].jitdump = jitdump;
	p->perf[p->nperf++].end = start + len;
	return 0;
}

/* The perf map: "START SIZE NAME" lines, hex. */
static void perf_map_parse(struct uw_proc *p, FILE *f)
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
		if (perf_add(p, start, len, line + off, strlen(line + off),
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
static void jitdump_move(struct uw_proc *p, const struct jitdump_load *m)
{
	uint64_t old = m->code_addr, to = m->code_size;

	for (size_t i = 0; i < p->nperf; i++) {
		if (p->perf[i].start != old)
			continue;
		p->perf[i].end = to + (p->perf[i].end - old);
		p->perf[i].start = to;
		return;
	}
}

/*
 * jit-PID.dump (node --perf-prof, and the other JITs perf reads): a
 * header, then records; a code load names code_size bytes at code_addr.
 * A record cut short (the JIT is still writing it) ends the read.
 */
static void jitdump_parse(struct uw_proc *p, FILE *f)
{
	struct jitdump_header h;
	struct jitdump_record r;
	char name[4096];

	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != JITDUMP_MAGIC ||
	    h.pid != p->pid || h.size < sizeof(h) ||
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
			jitdump_move(p, &l);
		nlen = r.size - sizeof(r) - sizeof(l);
		if (r.id == JIT_CODE_LOAD && r.size >= sizeof(r) + sizeof(l) &&
		    nlen >= l.code_size) {
			nlen -= l.code_size;
			if (nlen > sizeof(name))
				nlen = sizeof(name);
			if (fread(name, 1, nlen, f) != nlen)
				return;
			if (perf_add(p, l.code_addr, l.code_size, name,
				     strnlen(name, nlen), true))
				return;
		}
		if (fseeko(f, next, SEEK_SET))
			return;
	}
}

/* A JIT maps its dump file (for perf to find): look for it while the
 * process runs, at most every 100 ms until found.
 */
static void jitdump_find(struct uw_proc *p)
{
	char path[64], line[4096], want[32];
	uint64_t now = clock_mono_ns();
	FILE *f;

	if (p->jitdump || now - p->jit_look < 100000000ULL)
		return;
	p->jit_look = now;
	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	snprintf(want, sizeof(want), "/jit-%u.dump", p->pid);
	f = fopen(path, "re");
	if (!f && p->maps && *p->maps) /* gone: the copy */
		f = fmemopen(p->maps, strlen(p->maps), "r");
	while (f && !p->jitdump && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		size_t n;

		line[strcspn(line, "\n")] = '\0';
		n = file ? strlen(file) : 0;
		if (n > strlen(want) && !strcmp(file + n - strlen(want), want))
			p->jitdump = strdup(file);
	}
	if (f)
		fclose(f);
	/* Not mapped yet, or the process exited before its mappings were
	 * read again: where node --perf-prof writes it, if it does.
	 */
	snprintf(path, sizeof(path), "/proc/%u/cwd", p->pid);
	if (!p->jitdump && !p->jit_guess) {
		char cwd[PATH_MAX];
		ssize_t n = readlink(path, cwd, sizeof(cwd) - 1);

		if (n > 0) {
			cwd[n] = '\0';
			if (asprintf(&p->jit_guess, "%s%s", cwd, want) < 0)
				p->jit_guess = NULL;
		}
	}
}

static off_t file_size(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) ? st.st_size : 0;
}

/*
 * JIT code's names: /tmp/perf-PID.map ("START SIZE NAME" lines) and the
 * process's jit-PID.dump. A JIT appends as it compiles (node
 * --perf-basic-prof: every optimisation tier), so a pc they do not name
 * has them read again if they grew; after the process exited, they are
 * still read at report time.
 */
static void perf_map_read(struct uw_proc *p)
{
	char path[64];
	const char *jd;
	off_t size;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	jitdump_find(p);
	jd = p->jitdump ? p->jitdump : p->jit_guess;
	size = file_size(path) + file_size(jd);
	if (p->perf_read && size == p->perf_size)
		return; /* as it was */
	p->perf_read = true;
	p->perf_size = size;
	perf_map_free(p);
	f = fopen(path, "re");
	if (f && !perf_map_stale(f, p->start_ns))
		perf_map_parse(p, f);
	if (f)
		fclose(f);
	f = jd ? fopen(jd, "re") : NULL;
	if (f && !perf_map_stale(f, p->start_ns)) /* the header has the pid */
		jitdump_parse(p, f);
	if (f)
		fclose(f);
	if (p->nperf)
		qsort(p->perf, p->nperf, sizeof(*p->perf), perf_cmp);
}

static const struct perf_sym *perf_lookup(const struct uw_proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nperf;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->perf[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < p->perf[lo - 1].end)
		return &p->perf[lo - 1];
	return NULL;
}

static const struct perf_sym *perf_find(struct uw_proc *p, uint64_t pc)
{
	const struct perf_sym *s;

	if (!p->perf_read)
		perf_map_read(p);
	s = perf_lookup(p, pc);
	if (!s) { /* written since? */
		perf_map_read(p);
		s = perf_lookup(p, pc);
	}
	return s;
}

/* A process the unwinder holds, or NULL. */
static struct uw_proc *proc_find(const struct unwinder *u, uint32_t pid,
				 uint64_t start_ns)
{
	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i]->pid == pid &&
		    u->procs[i]->start_ns == start_ns)
			return u->procs[i];
	return NULL;
}

static struct uw_proc *proc_get(struct unwinder *u,
				const struct sc_stack_event *e, bool *created)
{
	struct uw_proc *p;
	size_t i, oldest = 0;

	for (i = 0; i < u->nprocs; i++) {
		p = u->procs[i];
		if (p->pid == e->pid && p->start_ns == e->start_ns) {
			p->last_use = ++u->tick;
			*created = false;
			return p;
		}
		if (p->last_use < u->procs[oldest]->last_use)
			oldest = i;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cache = calloc(UW_CACHE_SLOTS, sizeof(*p->cache));
	if (!p->cache) {
		free(p);
		return NULL;
	}
	*created = true;
	p->pid = e->pid;
	p->demangle = u->demangle;
	p->start_ns = e->start_ns;
	p->last_use = ++u->tick;
	p->ev = e;
	p->exec_id = e->exec_id;
	p->dwfl = proc_dwfl(u, p);
	p->rebuilds = 1;
	if (u->nprocs < UW_MAX_PROCS) {
		u->procs[u->nprocs++] = p;
	} else {
		proc_free(u->procs[oldest]);
		u->procs[oldest] = p;
	}
	return p;
}

/*
 * Does p->dwfl describe the program image of the sample p->ev? Its
 * mappings are read again when it runs a newer image (exec), mapped code
 * since (stale), or its pc is in no known mapping (at most
 * UW_MAX_REBUILDS times). A sample of an older image than the one read
 * has no mappings any more.
 */
static bool proc_refresh(struct unwinder *u, struct uw_proc *p, uint64_t pc)
{
	uint32_t want = p->ev->exec_id;
	Dwfl *d;

	if (want < p->exec_id)
		return false;
	if (want == p->exec_id && !p->stale &&
	    (p->rebuilds >= UW_MAX_REBUILDS ||
	     (p->dwfl && dwfl_addrmodule(p->dwfl, pc)) || perf_find(p, pc)))
		return p->dwfl != NULL;
	p->stale = false;
	p->rebuilds++;
	if (want != p->exec_id) { /* another program: its own jitdump */
		free(p->jitdump);
		free(p->jit_guess);
		p->jitdump = p->jit_guess = NULL;
	}
	d = proc_dwfl(u, p);
	if (!d && want == p->exec_id)
		return p->dwfl != NULL; /* keep what we had */
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = d; /* NULL: this image's mappings are gone */
	p->exec_id = want;
	cache_clear(p);
	/* and the perf map again, JIT code may be new */
	perf_map_free(p);
	p->perf_read = false;
	return p->dwfl != NULL;
}

/* ---- naming a pc ---- */

static int dup_or_null(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? -ENOMEM : 0;
}

/* The C library and the dynamic loader, whose innermost frames (the
 * syscall wrappers, stdio) call site labels skip.
 */
static bool is_libc(const char *module)
{
	static const char *const names[] = { "libc.so",	   "libc-",
					     "ld-linux",   "ld-musl",
					     "libpthread", "[vdso]" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(module, names[i], strlen(names[i])))
			return true;
	return false;
}

/* Go's linker writes .gopclntab into every Go program (strip keeps it).
 * Asked once per module: the answer is kept in its userdata slot.
 */
static bool module_is_go(Dwfl_Module *mod)
{
	enum { UNKNOWN, NOT_GO, GO };
	void **ud = NULL;
	Dwarf_Addr bias;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;
	bool go = false;

	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud && *ud)
		return (uintptr_t)*ud == GO;
	elf = dwfl_module_getelf(mod, &bias);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while (!go && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			go = name && (!strcmp(name, ".gopclntab") ||
				      !strcmp(name, ".go.buildinfo"));
		}
	}
	if (ud)
		*ud = (void *)(uintptr_t)(go ? GO : NOT_GO);
	return go;
}

/* A Go function of the standard library (the runtime, syscall, os, ...):
 * its package path's first element has no dot ("internal/poll.(*FD).Write"
 * but not "github.com/x/y.F"), and it is not the program's main.
 */
static bool go_std_func(const char *func)
{
	const char *slash = strrchr(func, '/');
	const char *pkg_end = strchr(slash ? slash : func, '.');
	size_t first = strcspn(func, "/");

	if (!pkg_end)
		return false;
	if (first > (size_t)(pkg_end - func))
		first = (size_t)(pkg_end - func);
	if (!slash && first == 4 && !strncmp(func, "main", 4))
		return false;
	return !memchr(func, '.', first);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* The runtime a named frame is in (model/stacks.h). */
static unsigned int frame_runtime(Dwfl_Module *mod, const struct sc_frame *f)
{
	if (!f->module)
		return SC_RT_NONE;
	if (is_libc(f->module))
		return SC_RT_LIBC;
	if (has_prefix(f->module, "libuv") || has_prefix(f->func, "uv_") ||
	    has_prefix(f->func, "uv__"))
		return SC_RT_LIBUV;
	/* node and V8: the node binary and libnode (the builtins, the
	 * interpreter, code V8 generated outside its perf map), node's own
	 * JavaScript ("JS:^writeSync node:fs:898:19" in the perf map)
	 */
	if (!strcmp(f->module, "node") || has_prefix(f->module, "libnode") ||
	    (f->func && strstr(f->func, " node:")) ||
	    has_prefix(f->func, "Builtins_") || has_prefix(f->func, "v8::") ||
	    has_prefix(f->func, "node::") || has_prefix(f->func, "Builtin:") ||
	    has_prefix(f->func, "BytecodeHandler:") ||
	    has_prefix(f->func, "Stub:"))
		return SC_RT_NODE;
	if (f->func && mod && go_std_func(f->func) && module_is_go(mod))
		return SC_RT_GO;
	return SC_RT_NONE;
}

/* *name demangled in place, when it is a mangled C++ or Rust name. */
static void demangled(char **name)
{
	char *d = demangle(*name);

	if (d) {
		free(*name);
		*name = d;
	}
}

/* pc's cache slot: its own, else the empty one it goes in, else (the
 * probed slots all hold other pcs) the one it replaces.
 */
static struct uw_cached *cache_slot(struct uw_proc *p, uint64_t pc)
{
	size_t j = (size_t)((pc * 0x9E3779B97F4A7C15ULL) >> 52);

	for (size_t k = 0; k < UW_CACHE_PROBE; k++) {
		struct uw_cached *c = &p->cache[(j + k) & (UW_CACHE_SLOTS - 1)];

		if (c->pc == pc || !c->pc)
			return c;
	}
	return &p->cache[j & (UW_CACHE_SLOTS - 1)];
}

/* Name pc (a return address less one, except the innermost) into f,
 * with strings owned by the process's cache.
 */
static int name_pc(struct uw_proc *p, uint64_t pc, struct sc_frame *out)
{
	struct uw_cached *c = cache_slot(p, pc);
	struct sc_frame f = { .offset = pc };
	const struct perf_sym *ps;
	Dwfl_Module *mod;

	if (c->pc == pc && c->jit_miss) {
		uint64_t now = clock_mono_ns();

		if (now - p->perf_look >= UW_PERF_LOOK_NS) {
			p->perf_look = now;
			perf_map_read(p); /* again if the JIT wrote more */
		}
	}
	if (c->pc == pc && (!c->jit_miss || c->perf_size == p->perf_size)) {
		*out = c->f;
		return 0;
	}
	mod = p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;
	if (mod) {
		const char *mname, *func, *file = NULL;
		Dwarf_Addr start = 0;
		GElf_Off off;
		GElf_Sym sym;
		Dwfl_Line *line;
		int lineno = 0;

		mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL,
					 NULL, NULL);
		func = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL,
					    NULL);
		line = dwfl_module_getsrc(mod, pc);
		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL,
					     NULL);
		/* as addr2line takes it: relative to the object's load
		 * address (shared objects, PIE), absolute otherwise
		 */
		f.offset = pc;
		if (dwfl_module_relocate_address(mod, &f.offset) < 0)
			f.offset = pc - start;
		f.line = file && lineno > 0 ? (uint32_t)lineno : 0;
		/* "write@@GLIBC_2.2.5": the name, without its version */
		if (func && strchr(func, '@'))
			f.func = strndup(func, strcspn(func, "@"));
		else if (func)
			f.func = strdup(func);
		if (func && !f.func)
			goto nomem;
		if (f.func && p->demangle)
			demangled(&f.func);
		if (dup_or_null(&f.module, base_name(mname)) ||
		    dup_or_null(&f.file, f.line ? file : NULL))
			goto nomem;
	}
	/* JIT code: in no mapped file, or in memory a module's range spans
	 * without a symbol (node's code space)
	 */
	if (!f.func && (ps = perf_find(p, pc))) {
		char m[64];

		snprintf(m, sizeof(m),
			 ps->jitdump ? "jit-%u.dump" : "perf-%u.map", p->pid);
		f.offset = pc - ps->start;
		f.line = 0;
		free(f.module);
		free(f.file);
		f.module = f.file = NULL;
		if (dup_or_null(&f.module, m) || dup_or_null(&f.func, ps->name))
			goto nomem;
	}
	f.runtime = (uint8_t)frame_runtime(mod, &f);
	if (c->pc && retire(p, &c->f))
		goto nomem;
	c->pc = pc;
	c->f = f;
	/* unnamed: asked again once a perf map or jitdump appears or grows */
	c->jit_miss = !f.func;
	c->perf_size = p->perf_size;
	*out = f;
	return 0;
nomem:
	free(f.func);
	free(f.module);
	free(f.file);
	return -ENOMEM;
}

/* ---- unwinding ---- */

struct uw_walk {
	uint64_t pcs[UNWIND_MAX_FRAMES];
	size_t n;
};

static int uw_frame(Dwfl_Frame *frame, void *arg)
{
	struct uw_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* A return address is after its call: name the call. */
	w->pcs[w->n++] = activation ? pc : pc - 1;
	return w->n < UNWIND_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

void unwinder_set_maps_source(struct unwinder *u, unwinder_maps_fn fn,
			      void *ctx)
{
	u->maps_fn = fn;
	u->maps_ctx = ctx;
}

void unwinder_note_maps(struct unwinder *u, const struct sc_stack_event *e)
{
	bool created = false;
	struct uw_proc *p = proc_get(u, e, &created);

	if (!p || created) /* created: just read */
		return;
	p->ev = e;
	p->stale = true; /* it mapped code since they were read */
	proc_refresh(u, p, e->regs[SC_STACK_REG_IP]);
}

/* Keep a sample to name at report time; false when there is no room. */
static bool defer(struct unwinder *u, const struct sc_stack_event *e,
		  const char *comm, const struct uw_walk *w)
{
	struct uw_deferred *d;

	if (!u->deferred)
		u->deferred = calloc(UW_MAX_DEFERRED, sizeof(*u->deferred));
	if (!u->deferred || u->ndeferred == UW_MAX_DEFERRED)
		return false;
	d = &u->deferred[u->ndeferred++];
	d->pid = e->pid;
	d->start_ns = e->start_ns;
	d->nr = e->nr;
	d->abi = e->abi;
	d->weight = e->weight ? e->weight : 1;
	memcpy(d->comm, comm, sizeof(d->comm));
	d->n = w->n;
	memcpy(d->pcs, w->pcs, w->n * sizeof(w->pcs[0]));
	return true;
}

/* Unwind e and name its frames into frames[*n]; those with no name yet
 * in JIT code (perf map, jitdump) make *jit_miss true. The names belong
 * to the process's cache: used before retired_free(*pp). 0 or -ENOMEM.
 */
static int unwind_named(struct unwinder *u, const struct sc_stack_event *e,
			struct uw_proc **pp, struct uw_walk *w,
			struct sc_frame *frames, bool *jit_miss)
{
	bool created = false, usable;
	struct uw_proc *p = proc_get(u, e, &created);

	*pp = p;
	*jit_miss = false;
	if (!p)
		return -ENOMEM;
	p->ev = e;
	usable = proc_refresh(u, p, e->regs[SC_STACK_REG_IP]);
	if (usable) {
		/* Ends with an error where the CFI or the copy runs out:
		 * the frames so far are what there is.
		 */
		dwfl_getthread_frames(p->dwfl, (pid_t)e->tid, uw_frame, w);
	} else {
		u->st.no_maps++;
	}
	if (!w->n)
		w->pcs[w->n++] = e->regs[SC_STACK_REG_IP];
	u->st.samples++;
	u->st.frames += w->n;
	for (size_t i = 0; i < w->n; i++) {
		if (!usable) /* only the address is known */
			frames[i] = (struct sc_frame){ .offset = w->pcs[i] };
		else if (name_pc(p, w->pcs[i], &frames[i]))
			return -ENOMEM;
		if (usable && !frames[i].func && p->perf_size)
			*jit_miss = true;
	}
	return 0;
}

int unwinder_add(struct unwinder *u, const struct sc_stack_event *e,
		 struct sc_stacks *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES];
	struct uw_walk w = { .n = 0 };
	char comm[SC_COMM_LEN];
	struct uw_proc *p;
	bool jit_miss;
	int err;

	err = unwind_named(u, e, &p, &w, frames, &jit_miss);
	memcpy(comm, e->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	if (!err && jit_miss && defer(u, e, comm, &w)) {
		retired_free(p);
		return 0;
	}
	/* a sample stands for weight shares of calls (the rate adapts) */
	if (!err)
		err = stacks_add(out, e->nr, e->abi, comm, frames, w.n,
				 e->weight ? e->weight : 1);
	if (!err && e->weight > out->max_weight)
		out->max_weight = e->weight;
	retired_free(p);
	return err;
}

int unwinder_stack(struct unwinder *u, const struct sc_stack_event *e,
		   struct sc_stack *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES];
	struct uw_walk w = { .n = 0 };
	struct uw_proc *p;
	bool jit_miss;
	int err;

	memset(out, 0, sizeof(*out));
	out->nr = e->nr;
	out->abi = e->abi;
	memcpy(out->comm, e->comm, sizeof(out->comm));
	out->comm[SC_COMM_LEN - 1] = '\0';
	err = unwind_named(u, e, &p, &w, frames, &jit_miss);
	if (!err) {
		out->frames = stack_frames_dup(frames, w.n);
		out->nframes = out->frames ? w.n : 0;
		err = out->frames ? 0 : -ENOMEM;
	}
	retired_free(p);
	return err;
}

int unwinder_flush(struct unwinder *u, struct sc_stacks *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES];
	int err = 0;

	for (size_t i = 0; i < u->ndeferred && !err; i++) {
		const struct uw_deferred *d = &u->deferred[i];
		struct uw_proc *p = proc_find(u, d->pid, d->start_ns);

		if (p) /* the JIT maps as they are now */
			p->perf_look = 0;
		for (size_t j = 0; j < d->n && !err; j++) {
			if (!p) /* gone from the unwinder: addresses only */
				frames[j] =
					(struct sc_frame){ .offset =
								   d->pcs[j] };
			else
				err = name_pc(p, d->pcs[j], &frames[j]);
		}
		err = err   ?:
			      stacks_add(out, d->nr, d->abi, d->comm, frames,
					 d->n, d->weight);
		retired_free(p);
	}
	u->ndeferred = 0;
	return err;
}

struct unwinder *unwinder_new(bool demangle)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->demangle = demangle;
	u->cb.find_elf = dwfl_linux_proc_find_elf;
	u->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	u->cb.debuginfo_path = &u->debuginfo_path; /* NULL: the default */
	elf_version(EV_CURRENT);
	u->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (u->self_fd >= 0)
		u->self_elf = elf_begin(u->self_fd, ELF_C_READ_MMAP, NULL);
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++)
		proc_free(u->procs[i]);
	if (u->self_elf)
		elf_end(u->self_elf);
	if (u->self_fd >= 0)
		close(u->self_fd);
	free(u->deferred);
	free(u);
}

void unwinder_stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->st;
}

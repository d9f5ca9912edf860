// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwinding and naming sampled user stacks (unwind.h). A process is its
 * executable mappings, each pointing at a shared file (objfile.h) or
 * anonymous (JIT code, named by jitmap.h); the walk is cfi_walk.h's.
 * Reading a new process's mappings costs a parse of /proc/PID/maps,
 * nothing per file it shares with the processes seen before.
 *
 * Bounded: at most UW_MAX_PROCS processes are kept, the least recently
 * sampled one going first; one that has exited goes once idle for
 * UW_REAP_IDLE_NS. A process whose samples wait for its JIT map to name
 * them (at most UW_MAX_DEFERRED samples) stays until they are named.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cfi_walk.h"
#include "collect/jitmap.h"
#include "collect/kstack.h"
#include "collect/objfile.h"
#include "collect/procmaps.h"
#include "collect/unwind.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/procfs.h"

#define UW_MAX_PROCS 1024
#define UW_BUCKETS 1024
/* A process whose pc is in none of its mappings (dlopen, exec) reads
 * them again, at most this many times.
 */
#define UW_MAX_REBUILDS 8
/* Processes idle this long are looked at, at most every UW_REAP_EVERY_NS:
 * those that have exited go.
 */
#define UW_REAP_IDLE_NS 2000000000ULL
#define UW_REAP_EVERY_NS 1000000000ULL
/* Samples kept for naming at report time, at most (about 5 MiB). */
#define UW_MAX_DEFERRED 8192

struct uw_proc {
	uint32_t pid;
	uint64_t start_ns;
	uint32_t exec_id;      /* the program image its mappings are of */
	uint64_t used_ns;      /* its last sample */
	struct uw_proc *hnext; /* in its bucket */
	struct uw_proc *newer, *older; /* by use */
	struct procmaps maps;
	bool stale; /* it mapped code since they were read */
	unsigned int rebuilds;
	unsigned int deferred; /* its samples waiting in u->deferred */
	struct jitmap jit;
	/* its cgroup v2 path, read with its mappings (unwinder_set_cgroups);
	 * NULL: not asked, or it had gone
	 */
	char *cgroup;
};

/* A sample with a frame in JIT code its maps did not name yet. */
struct uw_deferred {
	struct uw_proc *p;
	uint32_t nr, abi;
	uint32_t weight;
	char comm[SC_COMM_LEN];
	size_t n;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	__u32 nk; /* the kernel frames of where it slept */
	__u64 kpcs[SC_SPLIT_FRAMES];
};

struct unwinder {
	struct uw_proc *bucket[UW_BUCKETS];
	struct uw_proc *newest, *oldest;
	size_t nprocs;
	uint64_t reaped_ns;
	struct objcache *files;
	struct unwinder_stats st;
	struct uw_deferred *deferred; /* UW_MAX_DEFERRED */
	size_t ndeferred;
	unwinder_maps_fn maps_fn; /* copies of mappings; NULL none */
	void *maps_ctx;
	const struct ksyms *ksyms; /* kernel frames' names; NULL none */
	bool cgroups;		   /* read each process's cgroup */
};

/* ---- a process's mappings ---- */

/* Is the process alive (and the same one)? */
static bool proc_alive(const struct uw_proc *p)
{
	struct proc_stat ps;
	long hz = procfs_ticks_per_s();
	double start_ticks;

	if (kill((pid_t)p->pid, 0) && errno == ESRCH)
		return false;
	if (procfs_read_stat((pid_t)p->pid, &ps) || hz <= 0)
		return false;
	start_ticks = (double)p->start_ns / 1e9 * (double)hz;
	return (double)ps.starttime_ticks > start_ticks - 2.0 &&
	       (double)ps.starttime_ticks < start_ticks + 2.0;
}

/*
 * The process's cgroup v2 path (the "0::" line of /proc/PID/cgroup; ""
 * for the root, as the collector names it), read while it is alive and
 * still the same process; NULL when it has gone (or out of memory).
 */
static char *proc_cgroup(const struct uw_proc *p)
{
	char path[64], line[4096], *cg = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", p->pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (!cg && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0::", 3))
			cg = strdup(strcmp(line + 3, "/") ? line + 3 : "");
	}
	fclose(f);
	/* (after: a pid reused meanwhile is another process's cgroup) */
	if (cg && !proc_alive(p)) {
		free(cg);
		cg = NULL;
	}
	return cg;
}

/*
 * Read the mappings of the sample's program image: the copy taken as the
 * notice of them came, else (none) /proc's while it runs. Whether the
 * sample's pc is in them.
 */
static bool proc_load(struct unwinder *u, struct uw_proc *p,
		      const struct sc_stack_event *e)
{
	uint64_t pc = e->regs[SC_STACK_REG_IP];
	char *text = u->maps_fn ? u->maps_fn(u->maps_ctx, p->pid, p->start_ns,
					     e->exec_id) :
				  NULL;
	bool copy = text != NULL;

	if (!text && proc_alive(p))
		text = procmaps_read(p->pid);
	p->exec_id = e->exec_id;
	p->stale = false;
	p->rebuilds++;
	if (!text) {
		procmaps_free(&p->maps, u->files);
		return false;
	}
	procmaps_parse(&p->maps, u->files, p->pid, &p->jit, text);
	free(text);
	if (procmaps_find(&p->maps, pc) || !copy || !proc_alive(p))
		return p->maps.read;
	/* mapped since the copy: as they are now */
	text = procmaps_read(p->pid);
	if (text) {
		procmaps_parse(&p->maps, u->files, p->pid, &p->jit, text);
		free(text);
	}
	return p->maps.read;
}

/* ---- processes ---- */

static size_t proc_bucket(uint32_t pid, uint64_t start_ns)
{
	return (size_t)((((uint64_t)pid << 32) ^ start_ns) *
				0x9E3779B97F4A7C15ULL >>
			54) %
	       UW_BUCKETS;
}

static void lru_unlink(struct unwinder *u, struct uw_proc *p)
{
	if (p->newer)
		p->newer->older = p->older;
	else
		u->newest = p->older;
	if (p->older)
		p->older->newer = p->newer;
	else
		u->oldest = p->newer;
	p->newer = p->older = NULL;
}

static void lru_front(struct unwinder *u, struct uw_proc *p)
{
	p->older = u->newest;
	p->newer = NULL;
	if (u->newest)
		u->newest->newer = p;
	u->newest = p;
	if (!u->oldest)
		u->oldest = p;
}

static void proc_free(struct unwinder *u, struct uw_proc *p)
{
	struct uw_proc **pp = &u->bucket[proc_bucket(p->pid, p->start_ns)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	}
	lru_unlink(u, p);
	u->nprocs--;
	procmaps_free(&p->maps, u->files);
	jitmap_clear(&p->jit);
	free(p->cgroup);
	free(p);
}

static struct uw_proc *proc_find(const struct unwinder *u, uint32_t pid,
				 uint64_t start_ns)
{
	struct uw_proc *p = u->bucket[proc_bucket(pid, start_ns)];

	for (; p; p = p->hnext)
		if (p->pid == pid && p->start_ns == start_ns)
			return p;
	return NULL;
}

/* Processes that have exited and been idle a while go (and make room). */
static void reap(struct unwinder *u, uint64_t now)
{
	struct uw_proc *p, *newer;

	if (now - u->reaped_ns < UW_REAP_EVERY_NS)
		return;
	u->reaped_ns = now;
	for (p = u->oldest; p && now - p->used_ns >= UW_REAP_IDLE_NS;
	     p = newer) {
		newer = p->newer;
		if (!p->deferred && !proc_alive(p)) {
			proc_free(u, p);
			u->st.procs_exited++;
		}
	}
}

/* Room for one more: the least recently sampled process goes. */
static void make_room(struct unwinder *u)
{
	struct uw_proc *p = u->oldest;

	while (p && p->deferred)
		p = p->newer;
	if (p) {
		proc_free(u, p);
		u->st.procs_evicted++;
	}
}

static struct uw_proc *proc_get(struct unwinder *u,
				const struct sc_stack_event *e, bool *created)
{
	struct uw_proc *p = proc_find(u, e->pid, e->start_ns);
	uint64_t now = clock_mono_ns();
	size_t b;

	*created = false;
	if (p) {
		lru_unlink(u, p);
		lru_front(u, p);
		p->used_ns = now;
	}
	/* (after: p, just used, is not idle, and stays, exited or not) */
	reap(u, now);
	if (p)
		return p;
	if (u->nprocs >= UW_MAX_PROCS)
		make_room(u);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	*created = true;
	p->pid = e->pid;
	p->start_ns = e->start_ns;
	p->used_ns = now;
	jitmap_init(&p->jit, p->pid, p->start_ns);
	b = proc_bucket(p->pid, p->start_ns);
	p->hnext = u->bucket[b];
	u->bucket[b] = p;
	lru_front(u, p);
	u->nprocs++;
	proc_load(u, p, e);
	if (u->cgroups)
		p->cgroup = proc_cgroup(p);
	return p;
}

/*
 * Are p's mappings those of the sample e's program image? They are read
 * again when it runs a newer image (exec), mapped code since (stale), or
 * its pc is in none of them nor in JIT code (at most UW_MAX_REBUILDS
 * times). A sample of an older image than the one read has no mappings
 * any more.
 */
static bool proc_refresh(struct unwinder *u, struct uw_proc *p,
			 const struct sc_stack_event *e)
{
	uint64_t pc = e->regs[SC_STACK_REG_IP];

	if (e->exec_id < p->exec_id)
		return false;
	if (e->exec_id != p->exec_id) {
		jitmap_clear(&p->jit); /* another program */
		p->rebuilds = 0;
		return proc_load(u, p, e);
	}
	if (p->stale ||
	    (p->rebuilds < UW_MAX_REBUILDS && !procmaps_find(&p->maps, pc) &&
	     !jitmap_find(&p->jit, pc, false)))
		return proc_load(u, p, e);
	return p->maps.read;
}

/* ---- naming a pc ---- */

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
static unsigned int frame_runtime(struct objfile *file,
				  const struct sc_frame *f)
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
	if (f->func && file && go_std_func(f->func) && objfile_is_go(file))
		return SC_RT_GO;
	return SC_RT_NONE;
}

/*
 * Name pc into out, with strings that stay valid until the next stack.
 * *jit_miss: pc is in JIT code (or in no mapping of a process that has
 * some) that has no name yet. now: read JIT maps again at once.
 */
static int name_pc(struct unwinder *u, struct uw_proc *p, uint64_t pc,
		   struct sc_frame *out, bool *jit_miss, bool now)
{
	const struct procmap *m =
		p && p->maps.read ? procmaps_find(&p->maps, pc) : NULL;
	struct sc_frame f = { .offset = pc };
	const struct jit_sym *js;
	uint64_t vaddr;
	int err;

	if (m && m->file &&
	    objfile_vaddr(m->file, pc - m->start + m->pgoff, &vaddr)) {
		err = objfile_name(u->files, m->file, vaddr, &f);
		if (err)
			return err;
		f.module = m->module;
	} else if (m && m->module) { /* its file could not be read */
		f.module = m->module;
		f.offset = pc - m->start + m->pgoff;
	}
	/* JIT code: in no mapped file, or in memory a module's range spans
	 * without a symbol (node's code space)
	 */
	if (!f.func && p && (!m || !m->module || p->maps.jit_code) &&
	    (js = jitmap_find(&p->jit, pc, now))) {
		f.offset = pc - js->start;
		f.line = 0;
		f.file = NULL;
		f.func = js->name;
		f.module = js->jitdump ? p->jit.dump_name : p->jit.perf_name;
	}
	/* unnamed in anonymous memory: JIT code whose map comes later (a
	 * JVM with -XX:+DumpPerfMapAtExit writes it as it exits)
	 */
	if (!f.func && m && !m->module)
		*jit_miss = true;
	f.runtime = (uint8_t)frame_runtime(
		m && f.module == m->module ? m->file : NULL, &f);
	*out = f;
	return 0;
}

/* ---- unwinding ---- */

struct locate_ctx {
	const struct uw_proc *p;
};

static struct objfile *locate(void *arg, uint64_t pc, uint64_t *vaddr)
{
	const struct locate_ctx *lc = arg;
	const struct procmap *m = procmaps_find(&lc->p->maps, pc);

	if (!m || !m->file ||
	    !objfile_vaddr(m->file, pc - m->start + m->pgoff, vaddr))
		return NULL;
	return m->file;
}

void unwinder_set_maps_source(struct unwinder *u, unwinder_maps_fn fn,
			      void *ctx)
{
	u->maps_fn = fn;
	u->maps_ctx = ctx;
}

void unwinder_set_ksyms(struct unwinder *u, const struct ksyms *k)
{
	u->ksyms = k;
}

void unwinder_note_maps(struct unwinder *u, const struct sc_stack_event *e)
{
	bool created = false;
	struct uw_proc *p;

	objcache_next_stack(u->files);
	p = proc_get(u, e, &created);
	if (!p || created) /* created: just read */
		return;
	if (e->exec_id < p->exec_id)
		return;
	if (e->exec_id != p->exec_id) {
		jitmap_clear(&p->jit);
		p->rebuilds = 0;
	}
	proc_load(u, p, e); /* it mapped code, or exec'd, since */
}

/* Keep a sample to name at report time; false when there is no room. */
static bool defer(struct unwinder *u, const struct sc_stack_event *e,
		  struct uw_proc *p, const char *comm, const uint64_t *pcs,
		  size_t n)
{
	struct uw_deferred *d;

	if (!u->deferred)
		u->deferred = calloc(UW_MAX_DEFERRED, sizeof(*u->deferred));
	if (!u->deferred || u->ndeferred == UW_MAX_DEFERRED)
		return false;
	d = &u->deferred[u->ndeferred++];
	d->p = p;
	p->deferred++;
	d->nr = e->nr;
	d->abi = e->abi;
	d->weight = e->weight ? e->weight : 1;
	memcpy(d->comm, comm, sizeof(d->comm));
	d->n = n;
	memcpy(d->pcs, pcs, n * sizeof(pcs[0]));
	d->nk = 0;
	if (e->flags & SC_STACK_F_SLEEP) {
		d->nk = e->sleep.nsleeper < SC_SPLIT_FRAMES ?
				e->sleep.nsleeper :
				SC_SPLIT_FRAMES;
		memcpy(d->kpcs, e->sleep.sleeper, sizeof(d->kpcs));
	}
	return true;
}

/* Unwind e and name its frames into frames[*n]; those in JIT code with no
 * name yet make *jit_miss true. Names valid until the next stack. 0 or
 * -ENOMEM.
 */
static int unwind_named(struct unwinder *u, const struct sc_stack_event *e,
			struct uw_proc **pp, uint64_t *pcs, size_t *n,
			struct sc_frame *frames, bool *jit_miss)
{
	bool created = false, usable = false;
	struct uw_proc *p;

	objcache_next_stack(u->files);
	p = proc_get(u, e, &created);
	*pp = p;
	*jit_miss = false;
	*n = 0;
	if (!p)
		return -ENOMEM;
	usable = proc_refresh(u, p, e);
	if (usable) {
		struct locate_ctx lc = { .p = p };

		*n = cfi_walk(e, locate, &lc, pcs, UNWIND_MAX_FRAMES);
	} else {
		u->st.no_maps++;
		pcs[(*n)++] = e->regs[SC_STACK_REG_IP];
	}
	u->st.samples++;
	u->st.frames += *n;
	for (size_t i = 0; i < *n; i++) {
		int err;

		if (!usable) { /* only the address is known */
			frames[i] = (struct sc_frame){ .offset = pcs[i] };
			continue;
		}
		err = name_pc(u, p, pcs[i], &frames[i], jit_miss, false);
		if (err)
			return err;
	}
	return 0;
}

int unwinder_add(struct unwinder *u, const struct sc_stack_event *e,
		 struct sc_stacks *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES], kframes[SC_SPLIT_FRAMES];
	uint64_t pcs[UNWIND_MAX_FRAMES];
	char comm[SC_COMM_LEN];
	struct uw_proc *p;
	bool jit_miss;
	size_t n, nk = 0;
	int err;

	err = unwind_named(u, e, &p, pcs, &n, frames, &jit_miss);
	memcpy(comm, e->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	if (!err && jit_miss && defer(u, e, p, comm, pcs, n))
		return 0;
	/* (blocked: where it slept, on top) */
	if (e->flags & SC_STACK_F_SLEEP)
		nk = kstack_frames(u->ksyms, e->sleep.sleeper,
				   e->sleep.nsleeper, kframes, SC_SPLIT_FRAMES);
	/* a sample stands for weight shares of calls (the rate adapts) */
	if (!err)
		err = stacks_add_in_cgroup(out, e->nr, e->abi, comm,
					   p ? p->cgroup : NULL, frames, n,
					   kframes, nk,
					   e->weight ? e->weight : 1);
	if (!err && e->weight > out->max_weight)
		out->max_weight = e->weight;
	return err;
}

int unwinder_stack(struct unwinder *u, const struct sc_stack_event *e,
		   struct sc_stack *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES];
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct uw_proc *p;
	bool jit_miss;
	size_t n;
	int err;

	memset(out, 0, sizeof(*out));
	out->nr = e->nr;
	out->abi = e->abi;
	memcpy(out->comm, e->comm, sizeof(out->comm));
	out->comm[SC_COMM_LEN - 1] = '\0';
	err = unwind_named(u, e, &p, pcs, &n, frames, &jit_miss);
	if (!err) {
		out->frames = stack_frames_dup(frames, n);
		out->nframes = out->frames ? n : 0;
		err = out->frames ? 0 : -ENOMEM;
	}
	return err;
}

int unwinder_flush(struct unwinder *u, struct sc_stacks *out)
{
	struct sc_frame frames[UNWIND_MAX_FRAMES], kframes[SC_SPLIT_FRAMES];
	int err = 0;

	for (size_t i = 0; i < u->ndeferred; i++) {
		struct uw_deferred *d = &u->deferred[i];
		bool miss = false;
		size_t nk;

		objcache_next_stack(u->files);
		for (size_t j = 0; j < d->n && !err; j++)
			err = name_pc(u, d->p, d->pcs[j], &frames[j], &miss,
				      true);
		nk = kstack_frames(u->ksyms, d->kpcs, d->nk, kframes,
				   SC_SPLIT_FRAMES);
		if (!err)
			err = stacks_add_in_cgroup(out, d->nr, d->abi, d->comm,
						   d->p->cgroup, frames, d->n,
						   kframes, nk, d->weight);
		d->p->deferred--;
	}
	u->ndeferred = 0;
	return err;
}

struct unwinder *unwinder_new(bool demangle)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->files = objcache_new(demangle);
	if (!u->files) {
		free(u);
		return NULL;
	}
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	while (u->oldest)
		proc_free(u, u->oldest);
	objcache_free(u->files);
	free(u->deferred);
	free(u);
}

void unwinder_set_cgroups(struct unwinder *u, bool on)
{
	u->cgroups = on;
}

void unwinder_stats(const struct unwinder *u, struct unwinder_stats *out)
{
	struct objcache_stats fs;

	objcache_stats(u->files, &fs);
	*out = u->st;
	out->procs = u->nprocs;
	out->files = fs.open_now;
	out->files_over_cap = fs.over_cap;
	out->files_unopened = fs.unopened;
	out->names_cut = fs.names_cut;
}

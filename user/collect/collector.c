// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "model/names.h"
#include "scprof.skel.h"
#include "util/log.h"

#define DEFAULT_MAX_STATS 16384
#define DEFAULT_MAX_PROCS 8192
#define DEFAULT_MAX_EXITED 4096

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct collector {
	struct scprof_bpf *skel;
	struct collector_opts opts;
	struct sc_model *folded; /* processes that exited, out of the maps */
	int cgroup_fd;
	size_t ntargets; /* distinct tgids added before attach */
	pid_t first_target;
	/* The single target process, when there is one and forks are not
	 * followed: its cells are in the solo arrays, not in stats.
	 */
	pid_t solo;
	bool solo_folded; /* it exited: its cells moved to folded */
	bool solo_decided;
	bool attached;
	struct sc_stats *solo_stats; /* full mode: solo_stats, mmapped */
	size_t solo_stats_len;
	uint64_t procs_folded;
};

/* Can this run have a solo target? Decided before load, to size maps. */
static bool solo_capable(const struct collector_opts *o)
{
	return o->mode == SC_FILTER_TGID && !o->follow;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

/* The reasons BPF tracing cannot work here, each said in one line. */
static int preflight(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	char buf[128] = "";
	FILE *f;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF type information "
		       "(/sys/kernel/btf/vmlinux is missing): scprof needs a "
		       "kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	f = fopen("/sys/kernel/security/lockdown", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		if (strstr(buf, "[confidentiality]")) {
			pr_err("kernel lockdown is in confidentiality mode, "
			       "which forbids BPF tracing: scprof cannot run");
			return -EPERM;
		}
	}
	if (syscall(SYS_capget, &hdr, data)) {
		pr_err("cannot read capabilities: %s", strerror(errno));
		return -errno;
	}
	if (!has_cap(data, CAP_SYS_ADMIN) &&
	    !(has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))) {
		pr_err("permission denied: scprof needs root, or the "
		       "CAP_BPF and CAP_PERFMON capabilities, to load its BPF "
		       "programs (try sudo)");
		return -EPERM;
	}
	return 0;
}

static void set_nr_flags(struct scprof_bpf *skel)
{
	for (unsigned int abi = 0; abi < SC_ABI_COUNT; abi++) {
		for (unsigned int nr = 0; nr < SC_NR_MAX; nr++) {
			const char *name = names_syscall(abi, nr);
			__u8 fl = 0;

			if (names_is_io(name))
				fl |= SC_NR_IO;
			if (names_is_noreturn(name))
				fl |= SC_NR_NORETURN;
			if (names_is_fork(name))
				fl |= SC_NR_FORK;
			skel->rodata->nr_flags[abi][nr] = fl;
		}
	}
}

static int open_cgroup(const char *path)
{
	struct statfs sfs;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = -errno;

		pr_err("cannot open cgroup '%s': %s", path, strerror(errno));
		return err;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		pr_err("'%s' is not a cgroup v2 directory", path);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * SCPROF_FAST_PATHS=0 turns off the non-target cache and the calls-in-
 * flight table: the BPF side then runs as on kernels without
 * bpf_task_pt_regs (before 5.15), on task storage alone. For ruling them
 * out when something looks wrong, and for testing that path (make check).
 */
static bool fast_paths_off(void)
{
	const char *v = getenv("SCPROF_FAST_PATHS");

	return v && !strcmp(v, "0");
}

int collector__open(struct collector **out, const struct collector_opts *opts)
{
	struct collector *c;
	bool has_pt_regs, fast;
	__u32 zero = 0;
	int err, ncpus;

	*out = NULL;
	err = preflight();
	if (err)
		return err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->opts = *opts;
	c->cgroup_fd = -1;
	c->folded = model_new();
	if (!c->folded) {
		err = -ENOMEM;
		goto err;
	}
	if (opts->mode == SC_FILTER_CGROUP) {
		c->cgroup_fd = open_cgroup(opts->cgroup_path);
		if (c->cgroup_fd < 0) {
			err = c->cgroup_fd;
			goto err;
		}
	}

	c->skel = scprof_bpf__open();
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(errno));
		goto err;
	}
	c->skel->rodata->filter_mode = opts->mode;
	c->skel->rodata->self_tgid = (__u32)getpid();
	c->skel->rodata->follow_forks = opts->follow;
	set_nr_flags(c->skel);
	bpf_map__set_max_entries(c->skel->maps.stats,
				 opts->max_stats ? opts->max_stats :
						   DEFAULT_MAX_STATS);
	bpf_map__set_max_entries(c->skel->maps.procs,
				 opts->max_procs ? opts->max_procs :
						   DEFAULT_MAX_PROCS);
	if (!opts->follow)
		bpf_program__set_autoload(c->skel->progs.sc_fork, false);
	/* The non-target cache needs bpf_task_pt_regs (5.15) to forget
	 * exited tasks; count-only needs it to count exit/exit_group.
	 */
	has_pt_regs = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
					      BPF_FUNC_task_pt_regs, NULL) == 1;
	fast = has_pt_regs && !fast_paths_off();
	if (opts->count_only && !has_pt_regs) {
		err = -ENOTSUP;
		pr_err("--count-only needs a kernel with bpf_task_pt_regs "
		       "(Linux 5.15 or later)");
		goto err;
	}
	ncpus = libbpf_num_possible_cpus();
	c->skel->rodata->nt_cache_on = opts->mode == SC_FILTER_TGID && fast;
	c->skel->rodata->flight_on = !opts->count_only && fast;
	c->skel->rodata->nt_slots =
		ncpus > 0 && ncpus < SC_NT_SLOTS ? (__u32)ncpus : SC_NT_SLOTS;
	/* Full mode: enter and exit; count-only: one program on exit. */
	c->skel->rodata->count_only = opts->count_only;
	bpf_program__set_autoload(c->skel->progs.sc_sys_enter,
				  !opts->count_only);
	bpf_program__set_autoload(c->skel->progs.sc_sys_exit,
				  !opts->count_only);
	bpf_program__set_autoload(c->skel->progs.sc_count_exit,
				  opts->count_only);
	if (!solo_capable(opts) || opts->count_only)
		bpf_map__set_max_entries(c->skel->maps.solo_stats, 1);
	if (!solo_capable(opts))
		bpf_map__set_max_entries(c->skel->maps.solo_counts, 1);

	err = scprof_bpf__load(c->skel);
	if (err) {
		if (err == -EPERM)
			pr_err("permission denied loading the BPF programs: "
			       "scprof needs root, or CAP_BPF and CAP_PERFMON");
		else
			pr_err("cannot load the BPF programs: %s (run with -v "
			       "for the verifier's log)",
			       strerror(-err));
		goto err;
	}
	if (solo_capable(opts) && !opts->count_only) {
		const struct bpf_map *m = c->skel->maps.solo_stats;
		void *p;

		c->solo_stats_len = (size_t)bpf_map__max_entries(m) *
				    bpf_map__value_size(m);
		p = mmap(NULL, c->solo_stats_len, PROT_READ, MAP_SHARED,
			 bpf_map__fd(m), 0);
		if (p == MAP_FAILED) {
			err = -errno;
			pr_err("cannot map the solo stats array: %s",
			       strerror(errno));
			goto err;
		}
		c->solo_stats = p;
	}
	if (c->cgroup_fd >= 0 &&
	    bpf_map_update_elem(bpf_map__fd(c->skel->maps.cgroup_map), &zero,
				&c->cgroup_fd, BPF_ANY)) {
		err = -errno;
		pr_err("cannot select cgroup '%s': %s", opts->cgroup_path,
		       strerror(errno));
		goto err;
	}
	*out = c;
	return 0;
err:
	collector__destroy(c);
	return err;
}

int collector__add_target(struct collector *c, pid_t tgid)
{
	__u32 t = (__u32)tgid;
	__u32 *w;

	if (tgid <= 0 || t >= SC_PID_LIMIT)
		return -EINVAL;
	w = &c->skel->bss->target_bits[t / 32];
	if (!(*w & (1U << (t % 32)))) {
		*w |= 1U << (t % 32);
		c->skel->bss->live_targets++;
		if (!c->ntargets++)
			c->first_target = tgid;
		/* Targets belong before attach; after it, at least forget
		 * tasks already found not to be targets.
		 */
		if (c->attached)
			memset(c->skel->bss->nt_cache, 0,
			       sizeof(c->skel->bss->nt_cache));
	}
	return 0;
}

/*
 * Attach the process-lifetime programs before the syscall ones: from the
 * first syscall recorded on, every task exit must forget what the syscall
 * programs remembered about the task (its stack address goes to the next
 * task). The links go where the skeleton's destroy detaches them.
 */
static bool is_syscall_prog(const struct bpf_program *prog)
{
	return !strncmp(bpf_program__section_name(prog), "tp_btf/sys_", 11);
}

static int attach_ordered(struct scprof_bpf *skel)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->prog_cnt; i++) {
			struct bpf_program *prog = *s->progs[i].prog;
			struct bpf_link *l;

			if (!bpf_program__autoload(prog) ||
			    is_syscall_prog(prog) != (pass == 1))
				continue;
			l = bpf_program__attach(prog);
			if (!l)
				return -errno;
			*s->progs[i].link = l;
		}
	}
	return 0;
}

int collector__attach(struct collector *c)
{
	int err;

	/* Decided once: after a detach the solo target may be gone. */
	if (!c->solo_decided && solo_capable(&c->opts) && c->ntargets == 1) {
		c->solo = c->first_target;
		c->skel->bss->solo_tgid = (__u32)c->solo;
	}
	c->solo_decided = true;
	/* What the programs remember about tasks by their stack address
	 * is stale after a detach: tasks exited unseen, stacks were reused.
	 */
	memset(c->skel->bss->nt_cache, 0, sizeof(c->skel->bss->nt_cache));
	memset(c->skel->bss->flights, 0, sizeof(c->skel->bss->flights));
	err = attach_ordered(c->skel);
	c->attached = !err;

	if (err)
		pr_err("cannot attach to the raw_syscalls tracepoints: %s",
		       strerror(-err));
	return err;
}

void collector__detach(struct collector *c)
{
	scprof_bpf__detach(c->skel);
	c->attached = false;
}

int collector__maps_need_no_caps(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.stats), status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct
			none[_LINUX_CAPABILITY_U32S_3] = {};
		struct sc_stats_key key;

		if (syscall(SYS_capset, &hdr, none))
			_exit(2);
		/* an empty map answers ENOENT, a refusal EPERM */
		if (bpf_map_get_next_key(fd, NULL, &key) && errno != ENOENT)
			_exit(1);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

long collector__live_targets(const struct collector *c)
{
	return (long)__atomic_load_n(&c->skel->bss->live_targets,
				     __ATOMIC_RELAXED);
}

/* Call fn for every entry of a hash map; fn returns 0 to go on. */
static int map_walk(int fd, size_t ksz, size_t vsz,
		    int (*fn)(void *ctx, const void *key, const void *val),
		    void *ctx)
{
	void *key = malloc(ksz), *next = malloc(ksz), *val = malloc(vsz);
	bool first = true;
	int err = 0;

	if (!key || !next || !val) {
		err = -ENOMEM;
		goto out;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ksz);
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		err = fn(ctx, key, val);
		if (err)
			break;
	}
out:
	free(key);
	free(next);
	free(val);
	return err;
}

static void proc_set_info(struct sc_proc *p, const struct sc_proc_info *info)
{
	memcpy(p->comm, info->comm, sizeof(p->comm));
	p->ppid = info->ppid;
	p->exited = info->exited;
	p->exit_code = info->exit_code;
}

/* Sum the per-CPU solo counters: sums[ABI * SC_NR_MAX + nr]. */
static int solo_sum_counts(struct collector *c, struct sc_counts *sums)
{
	int fd = bpf_map__fd(c->skel->maps.solo_counts);
	__u32 n = bpf_map__max_entries(c->skel->maps.solo_counts), count = n;
	int ncpus = libbpf_num_possible_cpus();
	struct sc_counts *vals = NULL;
	__u32 *keys = NULL, out_batch;
	int err;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	keys = calloc(n, sizeof(*keys));
	vals = calloc((size_t)n * (size_t)ncpus, sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &count,
				   NULL);
	if (err == -ENOENT) /* the whole array in one go */
		err = 0;
	if (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP) {
		/* No batch operations: one lookup per key. */
		for (count = 0; count < n; count++) {
			keys[count] = count;
			err = bpf_map_lookup_elem(fd, &count,
						  &vals[(size_t)count * ncpus]);
			if (err)
				goto out;
		}
	}
	if (err)
		goto out;
	for (__u32 i = 0; i < count; i++) {
		struct sc_counts *s;

		if (keys[i] >= SC_ABI_COUNT * SC_NR_MAX)
			continue;
		s = &sums[keys[i]];
		for (int cpu = 0; cpu < ncpus; cpu++) {
			const struct sc_counts *v =
				&vals[(size_t)i * ncpus + cpu];

			s->calls += v->calls;
			s->errors += v->errors;
			s->interrupted += v->interrupted;
			s->bytes += v->bytes;
			s->total_ns += v->total_ns;
		}
	}
out:
	free(keys);
	free(vals);
	return err;
}

/* Add the solo target's cells to p (its process in some model): the
 * summed counters and, in full mode, the shared latency cells.
 */
static int solo_add(struct collector *c, struct sc_proc *p)
{
	struct sc_counts *sums =
		calloc(SC_ABI_COUNT * SC_NR_MAX, sizeof(*sums));
	int err;

	if (!sums)
		return -ENOMEM;
	err = solo_sum_counts(c, sums);
	for (__u32 i = 0; !err && i < SC_ABI_COUNT * SC_NR_MAX; i++) {
		__u32 abi = i / SC_NR_MAX, nr = i % SC_NR_MAX;
		struct sc_stats st = {};

		if (!sums[i].calls)
			continue;
		/* Racing with the programs is fine: every field is a
		 * naturally aligned counter.
		 */
		if (!c->opts.count_only && c->solo_stats &&
		    abi == SC_ABI_NATIVE)
			memcpy(&st, &c->solo_stats[nr], sizeof(st));
		st.calls = sums[i].calls;
		st.errors = sums[i].errors;
		st.interrupted = sums[i].interrupted;
		st.bytes = sums[i].bytes;
		st.total_ns = sums[i].total_ns;
		if (model_proc_add(p, abi, nr, &st))
			err = -ENOMEM;
	}
	free(sums);
	return err;
}

/* The solo target's process key, once the programs have seen it. */
static bool solo_key(const struct collector *c, struct sc_proc_key *k)
{
	if (!c->solo || c->solo_folded ||
	    !__atomic_load_n(&c->skel->bss->solo_ready, __ATOMIC_ACQUIRE))
		return false;
	k->tgid = (__u32)c->solo;
	k->pad = 0;
	k->start_ns = c->skel->bss->solo_start_ns;
	return true;
}

struct harvest_ctx {
	struct collector *c;
	struct sc_model *exited;   /* exited processes, as a lookup set */
	struct sc_model *out;	   /* the caller's copy, or NULL */
	struct sc_stats_key *dead; /* stats keys to delete */
	size_t ndead, cap;
};

static int collect_exited(void *ctx, const void *key, const void *val)
{
	struct harvest_ctx *h = ctx;
	const struct sc_proc_key *k = key;
	const struct sc_proc_info *info = val;
	struct sc_proc *p;

	if (!info->exited)
		return 0;
	p = model_proc(h->exited, k->tgid, k->start_ns);
	if (!p)
		return -ENOMEM;
	proc_set_info(p, info);
	if (h->out) {
		p = model_proc(h->out, k->tgid, k->start_ns);
		if (!p)
			return -ENOMEM;
		proc_set_info(p, info);
	}
	return 0;
}

/* Where the cells of an exited process go: its own entry, or the one
 * aggregate (pid 0) of COLLECTOR_FOLD_TOTAL and of the processes beyond
 * max_exited.
 */
static struct sc_proc *fold_target(struct collector *c,
				   const struct sc_proc *src)
{
	struct sc_proc *dst;

	if (c->opts.fold == COLLECTOR_FOLD_TOTAL || src->merged) {
		dst = model_proc(c->folded, 0, 0);
		if (dst)
			dst->exited = true;
		return dst;
	}
	dst = model_proc(c->folded, src->pid, src->start_ns);
	if (!dst)
		return NULL;
	memcpy(dst->comm, src->comm, sizeof(dst->comm));
	dst->ppid = src->ppid;
	dst->exited = true;
	dst->exit_code = src->exit_code;
	return dst;
}

/* Decide, for each process that exited since the last harvest, whether it
 * is kept on its own or merged into the aggregate: with FOLD_PROCS, the
 * first max_exited are kept, so memory stays bounded on long runs.
 */
static int plan_merges(struct collector *c, struct sc_model *exited)
{
	uint32_t max = c->opts.max_exited ? c->opts.max_exited :
					    DEFAULT_MAX_EXITED;
	struct sc_proc *agg = model_find_proc(c->folded, 0, 0);
	size_t kept = c->folded->nprocs - (agg ? 1 : 0);
	uint32_t merged = 0;

	for (size_t i = 0; i < exited->nprocs; i++) {
		struct sc_proc *p = &exited->procs[i];

		if (c->opts.fold == COLLECTOR_FOLD_TOTAL || kept >= max) {
			p->merged = 1;
			merged++;
		} else {
			kept++;
		}
	}
	if (!merged)
		return 0;
	agg = model_proc(c->folded, 0, 0);
	if (!agg)
		return -ENOMEM;
	agg->exited = true;
	agg->merged += merged;
	return 0;
}

static int fold_stats(void *ctx, const void *key, const void *val)
{
	struct harvest_ctx *h = ctx;
	const struct sc_stats_key *k = key;
	struct sc_proc *src, *dst;

	src = model_find_proc(h->exited, k->proc.tgid, k->proc.start_ns);
	if (!src)
		return 0;
	dst = fold_target(h->c, src);
	if (!dst || model_proc_add(dst, k->abi, k->nr, val))
		return -ENOMEM;
	if (h->out) {
		dst = model_find_proc(h->out, k->proc.tgid, k->proc.start_ns);
		if (!dst || model_proc_add(dst, k->abi, k->nr, val))
			return -ENOMEM;
	}
	if (h->ndead == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct sc_stats_key *tmp = realloc(h->dead, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		h->dead = tmp;
		h->cap = cap;
	}
	h->dead[h->ndead++] = *k;
	return 0;
}

int collector__harvest(struct collector *c)
{
	return collector__harvest_exited(c, NULL);
}

int collector__harvest_exited(struct collector *c, struct sc_model *exited)
{
	struct harvest_ctx h = { .c = c, .out = exited };
	int procs_fd = bpf_map__fd(c->skel->maps.procs);
	int stats_fd = bpf_map__fd(c->skel->maps.stats);
	int err;

	h.exited = model_new();
	if (!h.exited)
		return -ENOMEM;
	err = map_walk(procs_fd, sizeof(struct sc_proc_key),
		       sizeof(struct sc_proc_info), collect_exited, &h);
	if (!err)
		err = plan_merges(c, h.exited);
	if (!err && h.exited->nprocs) {
		struct sc_proc_key k;
		struct sc_proc *src, *dst;

		/* The solo target ended: its cells are final, keep them. */
		src = solo_key(c, &k) ?
			      model_find_proc(h.exited, k.tgid, k.start_ns) :
			      NULL;
		if (src) {
			dst = fold_target(c, src);
			err = dst ? solo_add(c, dst) : -ENOMEM;
			if (!err && h.out) {
				dst = model_find_proc(h.out, k.tgid,
						      k.start_ns);
				err = dst ? solo_add(c, dst) : -ENOMEM;
			}
			if (!err)
				c->solo_folded = true;
		}
	}
	if (!err && h.exited->nprocs)
		err = map_walk(stats_fd, sizeof(struct sc_stats_key),
			       sizeof(struct sc_stats), fold_stats, &h);
	if (!err) {
		/* Exited processes make no more calls: their cells are final
		 * and now held in c->folded.
		 */
		for (size_t i = 0; i < h.ndead; i++)
			bpf_map_delete_elem(stats_fd, &h.dead[i]);
		for (size_t i = 0; i < h.exited->nprocs; i++) {
			struct sc_proc_key k = {
				.tgid = h.exited->procs[i].pid,
				.start_ns = h.exited->procs[i].start_ns,
			};

			bpf_map_delete_elem(procs_fd, &k);
		}
		c->procs_folded += h.exited->nprocs;
	}
	free(h.dead);
	model_free(h.exited);
	return err;
}

static int add_live_stats(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_stats_key *k = key;
	struct sc_proc *p = model_proc(m, k->proc.tgid, k->proc.start_ns);

	if (!p || model_proc_add(p, k->abi, k->nr, val))
		return -ENOMEM;
	return 0;
}

static int add_proc_info(void *ctx, const void *key, const void *val)
{
	struct sc_model *m = ctx;
	const struct sc_proc_key *k = key;
	struct sc_proc *p = model_find_proc(m, k->tgid, k->start_ns);

	if (p)
		proc_set_info(p, val);
	return 0;
}

static int add_errno(void *ctx, const void *key, const void *val)
{
	const struct sc_errno_key *k = key;

	return model_errno_add(ctx, k->abi, k->nr, k->err, *(const __u64 *)val);
}

int collector__snapshot(struct collector *c, struct sc_model **out)
{
	struct sc_model *m = model_clone(c->folded);
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->count_only = c->opts.count_only;
	err = map_walk(bpf_map__fd(c->skel->maps.stats),
		       sizeof(struct sc_stats_key), sizeof(struct sc_stats),
		       add_live_stats, m);
	if (!err) {
		struct sc_proc_key k;
		struct sc_proc *p;

		if (solo_key(c, &k)) {
			p = model_proc(m, k.tgid, k.start_ns);
			err = p ? solo_add(c, p) : -ENOMEM;
		}
	}
	if (!err)
		err = map_walk(bpf_map__fd(c->skel->maps.procs),
			       sizeof(struct sc_proc_key),
			       sizeof(struct sc_proc_info), add_proc_info, m);
	if (!err)
		err = map_walk(bpf_map__fd(c->skel->maps.errnos),
			       sizeof(struct sc_errno_key), sizeof(__u64),
			       add_errno, m);
	for (int i = 0; i < SC_DROP_COUNT; i++)
		m->drops[i] = __atomic_load_n(&c->skel->bss->drops[i],
					      __ATOMIC_RELAXED);
	if (!err)
		err = model_finalize(m);
	if (err) {
		model_free(m);
		return err;
	}
	*out = m;
	return 0;
}

static uint32_t map_count(int fd, size_t ksz)
{
	void *key = malloc(ksz), *next = malloc(ksz);
	uint32_t n = 0;

	if (!key || !next)
		goto out;
	while (!bpf_map_get_next_key(fd, n ? key : NULL, next)) {
		memcpy(key, next, ksz);
		n++;
	}
out:
	free(key);
	free(next);
	return n;
}

/* Kernel memory charged to a map, from its fdinfo; 0 if unknown. */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	}
	fclose(f);
	return v;
}

int collector__info(struct collector *c, struct collector_info *out)
{
	const struct bpf_object_skeleton *s = c->skel->skeleton;
	struct bpf_map *map;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < s->prog_cnt; i++) {
		if (*s->progs[i].link)
			out->progs_attached++;
	}
	out->stats_max = bpf_map__max_entries(c->skel->maps.stats);
	out->procs_max = bpf_map__max_entries(c->skel->maps.procs);
	out->stats_entries = map_count(bpf_map__fd(c->skel->maps.stats),
				       sizeof(struct sc_stats_key));
	out->procs_entries = map_count(bpf_map__fd(c->skel->maps.procs),
				       sizeof(struct sc_proc_key));
	bpf_object__for_each_map(map, c->skel->obj)
		out->map_bytes += map_memlock(bpf_map__fd(map));
	out->procs_folded = c->procs_folded;
	return 0;
}

void collector__destroy(struct collector *c)
{
	if (!c)
		return;
	if (c->solo_stats)
		munmap(c->solo_stats, c->solo_stats_len);
	scprof_bpf__destroy(c->skel);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	model_free(c->folded);
	free(c);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "log.h"
#include "names.h"
#include "scprof.skel.h"

#define DEFAULT_MAX_STATS 16384
#define DEFAULT_MAX_PROCS 8192

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
	uint64_t procs_folded;
};

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

int collector__open(struct collector **out, const struct collector_opts *opts)
{
	struct collector *c;
	__u32 zero = 0;
	int err;

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
	}
	return 0;
}

int collector__attach(struct collector *c)
{
	int err = scprof_bpf__attach(c->skel);

	if (err)
		pr_err("cannot attach to the raw_syscalls tracepoints: %s",
		       strerror(-err));
	return err;
}

void collector__detach(struct collector *c)
{
	scprof_bpf__detach(c->skel);
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

struct harvest_ctx {
	struct collector *c;
	struct sc_model *exited; /* exited processes, as a lookup set */
	struct sc_model *out;    /* the caller's copy, or NULL */
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
 * aggregate of COLLECTOR_FOLD_TOTAL.
 */
static struct sc_proc *fold_target(struct collector *c,
				   const struct sc_proc *src)
{
	struct sc_proc *dst;

	if (c->opts.fold == COLLECTOR_FOLD_TOTAL) {
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

	return model_errno_add(ctx, k->abi, k->nr, k->err,
			       *(const __u64 *)val);
}

int collector__snapshot(struct collector *c, struct sc_model **out)
{
	struct sc_model *m = model_clone(c->folded);
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	err = map_walk(bpf_map__fd(c->skel->maps.stats),
		       sizeof(struct sc_stats_key), sizeof(struct sc_stats),
		       add_live_stats, m);
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
	scprof_bpf__destroy(c->skel);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	model_free(c->folded);
	free(c);
}

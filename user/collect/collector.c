// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The collector's lifecycle, as libbpf-bootstrap has it: open -> set
 * rodata and map sizes -> load -> attach -> destroy. Reading the maps is
 * drain.c's and fold.c's; choosing programs, features.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "collect/collector_priv.h"
#include "model/names.h"
#include "util/log.h"

#define DEFAULT_MAX_STATS 16384
#define DEFAULT_MAX_PROCS 8192

static void set_nr_flags(struct scprof_bpf *skel, bool fd_types)
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
			if (fd_types && names_is_fd_call(name))
				fl |= SC_NR_FD;
			if (names_is_exec(name))
				fl |= SC_NR_EXEC;
			skel->rodata->nr_flags[abi][nr] = fl;
		}
		skel->rodata->sigreturn_nr[abi] = SC_NR_MAX;
		for (unsigned int nr = 0; nr < SC_NR_MAX; nr++) {
			const char *name = names_syscall(abi, nr);

			if (name && !strcmp(name, "rt_sigreturn"))
				skel->rodata->sigreturn_nr[abi] = nr;
		}
	}
}

/* -e trace=SET and -z/-Z: the BPF side's bitmaps and status test. */
static void set_trace_filter(struct scprof_bpf *skel,
			     const struct collector_opts *opts)
{
	const struct trace_set *t = opts->trace;

	skel->rodata->status_filter = opts->status;
	skel->rodata->key_kind = opts->key_kind;
	skel->rodata->read_cgid = opts->read_cgid;
	skel->rodata->only_tid = (__u32)opts->only_tid;
	if (!t || !t->on)
		return;
	skel->rodata->trace_on = true;
	skel->rodata->trace_beyond = t->beyond;
	memcpy((void *)skel->rodata->trace_bits, t->bits, sizeof(t->bits));
	trace_set_exit_bits(
		t, (uint32_t(*)[SC_TRACE_WORDS])skel->rodata->trace_exit_bits);
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

/* The collector's userspace half: its state, folded model and cgroup. */
static int collector_new(struct collector **out,
			 const struct collector_opts *opts)
{
	struct collector *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->opts = *opts;
	c->cgroup_fd = -1;
	c->folded = model_new();
	c->tdone = model_new();
	if (!c->folded || !c->tdone)
		return -ENOMEM;
	if (opts->mode == SC_FILTER_CGROUP) {
		c->cgroup_fd = open_cgroup(opts->cgroup_path);
		if (c->cgroup_fd < 0)
			return c->cgroup_fd;
	}
	return 0;
}

/* Before load: the settings (rodata), the programs and the map sizes. */
static int configure(struct collector *c)
{
	const struct collector_opts *opts = &c->opts;
	struct scprof_bpf *skel = c->skel;

	skel->rodata->filter_mode = opts->mode;
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->follow_forks = opts->follow;
	skel->rodata->fd_types = opts->fd_types && !opts->count_only &&
				 !opts->latency_sampled;
	skel->rodata->agg_all = opts->aggregate;
	skel->rodata->thread_totals = opts->thread_totals;
	if (c->cgroup_fd >= 0) {
		struct stat st;

		/* a cgroup's id is its directory's inode number (kernfs) */
		if (!fstat(c->cgroup_fd, &st))
			skel->rodata->target_cgid = (__u64)st.st_ino;
	}
	set_nr_flags(skel, skel->rodata->fd_types);
	set_trace_filter(skel, opts);
	collector_stacks_configure(c);
	bpf_map__set_max_entries(skel->maps.stats, opts->max_stats ?
							   opts->max_stats :
							   DEFAULT_MAX_STATS);
	bpf_map__set_max_entries(skel->maps.procs, opts->max_procs ?
							   opts->max_procs :
							   DEFAULT_MAX_PROCS);
	if (!collector_uses_arrays(opts) || opts->count_only)
		bpf_map__set_max_entries(skel->maps.solo_stats, 1);
	if (!collector_uses_arrays(opts))
		bpf_map__set_max_entries(skel->maps.solo_counts, 1);
	if (!opts->thread_totals)
		bpf_map__set_max_entries(skel->maps.ptotals, 1);
	else
		bpf_map__set_max_entries(skel->maps.ptotals,
					 opts->max_procs ? opts->max_procs :
							   DEFAULT_MAX_PROCS);
	return collector_choose_progs(skel, opts);
}

static int load(struct collector *c)
{
	int err = scprof_bpf__load(c->skel);

	if (err == -EPERM)
		pr_err("permission denied loading the BPF programs: "
		       "scprof needs root, or CAP_BPF and CAP_PERFMON");
	else if (err)
		pr_err("cannot load the BPF programs: %s (run with -v "
		       "for the verifier's log)",
		       strerror(-err));
	return err;
}

/* After load: map the solo stats array (full mode, solo-capable or
 * aggregate runs) and give the programs the cgroup to filter on.
 */
static int setup_maps(struct collector *c)
{
	const struct collector_opts *opts = &c->opts;
	__u32 zero = 0;
	int err;

	if (collector_uses_arrays(opts) && !opts->count_only) {
		const struct bpf_map *m = c->skel->maps.solo_stats;
		void *p;

		c->solo_stats_len = (size_t)bpf_map__max_entries(m) *
				    bpf_map__value_size(m);
		p = mmap(NULL, c->solo_stats_len, PROT_READ, MAP_SHARED,
			 bpf_map__fd(m), 0);
		if (p == MAP_FAILED) {
			err = -errno;
			pr_err("cannot map the solo stats array: %s",
			       strerror(-err));
			return err;
		}
		c->solo_stats = p;
	}
	if (c->cgroup_fd >= 0 &&
	    bpf_map_update_elem(bpf_map__fd(c->skel->maps.cgroup_map), &zero,
				&c->cgroup_fd, BPF_ANY)) {
		err = -errno;
		pr_err("cannot select cgroup '%s': %s", opts->cgroup_path,
		       strerror(-err));
		return err;
	}
	return 0;
}

int collector__open(struct collector **out, const struct collector_opts *opts)
{
	struct collector *c = NULL;
	int err;

	*out = NULL;
	err = collector_preflight();
	if (err)
		return err;
	err = collector_new(&c, opts);
	if (err)
		goto err;
	c->skel = scprof_bpf__open();
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(errno));
		goto err;
	}
	err = configure(c);
	err = err ?: load(c);
	err = err ?: setup_maps(c);
	err = err ?: collector_stacks_setup(c);
	if (err)
		goto err;
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

/* The iterator is attached on its own, and never to a tracepoint. */
static bool is_iter_prog(const struct bpf_program *prog)
{
	return !strncmp(bpf_program__section_name(prog), "iter/", 5);
}

/* Sampled mode: the enter program is attached by the latency windows. */
static bool is_windowed(struct scprof_bpf *skel, const struct bpf_program *prog)
{
	return skel->rodata->sampled && prog == skel->progs.sc_sys_enter;
}

static int attach_ordered(struct scprof_bpf *skel)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->prog_cnt; i++) {
			struct bpf_program *prog = *s->progs[i].prog;
			struct bpf_link *l;

			if (!bpf_program__autoload(prog) ||
			    is_iter_prog(prog) || is_windowed(skel, prog) ||
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
	if (!c->solo_decided && collector_solo_capable(&c->opts) &&
	    c->ntargets == 1) {
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
	if (!err) {
		err = collector_inflight_attach(c);
		if (err)
			return err;
	}

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

int collector__latency_window(struct collector *c, bool open)
{
	struct scprof_bpf *skel = c->skel;
	struct bpf_link **link = &skel->links.sc_sys_enter;
	__u32 *gen = &skel->bss->window_gen;

	if (!skel->rodata->sampled || open == (*link != NULL))
		return 0;
	if (!open) {
		bpf_link__destroy(*link);
		*link = NULL;
		/* even: no window; stamps taken until now are stale */
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST); /* odd: a window */
	*link = bpf_program__attach(skel->progs.sc_sys_enter);
	if (!*link) {
		int err = -errno;

		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
		pr_err("cannot attach the latency program: %s", strerror(-err));
		return err;
	}
	return 0;
}

int collector__cost(struct collector *c, struct collector_cost *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct sc_selfcost *v;
	__u32 zero = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!c->skel->rodata->sampled)
		return 0;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.selfcost), &zero,
				v)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < ncpus; i++) {
		for (int k = 0; k < SC_COST_COUNT; k++) {
			out->runs[k] += v[i].runs[k];
			out->timed_runs[k] += v[i].timed_runs[k];
			out->timed_ns[k] += v[i].timed_ns[k];
		}
	}
out:
	free(v);
	return err;
}

long collector__live_targets(const struct collector *c)
{
	return (long)__atomic_load_n(&c->skel->bss->live_targets,
				     __ATOMIC_RELAXED);
}

void collector__destroy(struct collector *c)
{
	if (!c)
		return;
	if (c->solo_stats)
		munmap(c->solo_stats, c->solo_stats_len);
	bpf_link__destroy(c->inflight_link);
	free(c->pre);
	model_free(c->pre_gone);
	collector_stacks_free(c);
	scprof_bpf__destroy(c->skel);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	model_free(c->folded);
	model_free(c->tdone);
	free(c);
}

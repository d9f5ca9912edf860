// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The collector's lifecycle, as libbpf-bootstrap has it: open -> set
 * rodata and map sizes -> load -> attach -> destroy. The settings are
 * settings.c's; reading the maps, drain.c's and fold.c's; choosing
 * programs, features.c's; sampled mode's windows, windows.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "collect/collector_priv.h"
#include "collect/proc_counts.h"
#include "collect/split_drain.h"
#include "scprof_legacy.skel.h"
#include "util/caps.h"
#include "util/ksyms.h"
#include "util/log.h"

#define DEFAULT_MAX_STATS 16384
#define DEFAULT_MAX_PROCS 8192

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
	c->tdone = proc_counts__new();
	if (!c->folded || !c->tdone)
		return -ENOMEM;
	if (opts->mode == SC_FILTER_CGROUP) {
		c->cgroup_fd = open_cgroup(opts->cgroup_path);
		if (c->cgroup_fd < 0)
			return c->cgroup_fd;
	}
	return 0;
}

/*
 * Cgroup tags (read_cgid, bpf/cgtag.bpf.h): the table by thread id has the
 * settings' slots, and procs' tagged keys room for a key of each process.
 * Otherwise one entry each.
 */
static void size_cgtags(struct scprof_bpf *skel, const struct sc_settings *s,
			uint32_t max_procs)
{
	if (!s->read_cgid) {
		bpf_map__set_max_entries(skel->maps.cgtag_tids, 1);
		bpf_map__set_max_entries(skel->maps.moved_procs, 1);
		return;
	}
	bpf_map__set_max_entries(skel->maps.cgtags, s->cgtag_slots);
	bpf_map__set_max_entries(skel->maps.moved_procs, max_procs);
}

/* Before load: the settings (rodata), the programs and the map sizes. */
static int configure(struct collector *c)
{
	const struct collector_opts *opts = &c->opts;
	struct scprof_bpf *skel = c->skel;
	struct settings_env env;

	settings_env_read(&env, c->cgroup_fd);
	settings_fill(&c->settings, opts, &c->kern, &env);
	settings_write(skel, &c->settings, opts);
	if (!opts->split) /* the smallest: one entry */
		bpf_map__set_max_entries(skel->maps.splits, 1);
	if (!opts->split || !opts->split_samples) /* no sample: a page */
		bpf_map__set_max_entries(skel->maps.split_events,
					 (__u32)sysconf(_SC_PAGESIZE));
	stack_drain_configure(skel, &c->settings);
	bpf_map__set_max_entries(skel->maps.stats, opts->max_stats ?
							   opts->max_stats :
							   DEFAULT_MAX_STATS);
	bpf_map__set_max_entries(skel->maps.procs, opts->max_procs ?
							   opts->max_procs :
							   DEFAULT_MAX_PROCS);
	if (!collector_uses_arrays(opts) || opts->progs == SC_PROGS_COUNT_ONLY)
		bpf_map__set_max_entries(skel->maps.nr_stats, 1);
	if (!collector_uses_arrays(opts))
		bpf_map__set_max_entries(skel->maps.nr_counts, 1);
	size_cgtags(skel, &c->settings,
		    opts->max_procs ? opts->max_procs : DEFAULT_MAX_PROCS);
	cgroups_configure(skel, opts->read_cgid);
	return collector_choose_progs(skel, opts, &c->kern);
}

/*
 * The programs built for kernels without every facility (SCPROF_LEGACY),
 * opened through the default build's skeleton: both builds have the same
 * maps, programs and global data (bpf/same_layout.sh checks it at build
 * time), so only the ELF the skeleton opens changes.
 */
static struct scprof_bpf *open_legacy(void)
{
	struct scprof_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = scprof_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)scprof_legacy_bpf__elf_bytes(
			&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		scprof_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
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

/* After load: map the latency array by syscall number (arrays in use,
 * not count-only) and give the programs the cgroup to filter on.
 */
static int setup_maps(struct collector *c)
{
	const struct collector_opts *opts = &c->opts;
	__u32 zero = 0;
	int err;

	if (collector_uses_arrays(opts) && opts->progs != SC_PROGS_COUNT_ONLY) {
		const struct bpf_map *m = c->skel->maps.nr_stats;
		void *p;

		c->nr_stats_len = (size_t)bpf_map__max_entries(m) *
				  bpf_map__value_size(m);
		p = mmap(NULL, c->nr_stats_len, PROT_READ, MAP_SHARED,
			 bpf_map__fd(m), 0);
		if (p == MAP_FAILED) {
			err = -errno;
			pr_err("cannot map the latency array: %s",
			       strerror(-err));
			return err;
		}
		c->nr_stats = p;
	}
	if (bpf_program__autoload(c->skel->progs.sc_sampled_exit)) {
		int fd = bpf_program__fd(c->skel->progs.sc_timed_exit);

		/* Else the timing program is attached as the exit one. */
		c->counting_exit = !bpf_map_update_elem(
			bpf_map__fd(c->skel->maps.timed_exit), &zero, &fd,
			BPF_ANY);
		if (!c->counting_exit)
			pr_info("the kernel refuses the tail call into the "
				"timing program (%s): it counts every call",
				strerror(errno));
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
	kernel_facilities_probe(&c->kern);
	if (kernel_facilities_all(&c->kern)) {
		c->skel = scprof_bpf__open();
	} else {
		pr_info("this kernel lacks a facility the default BPF build "
			"relies on (scprof features says which): loading the "
			"legacy build");
		c->skel = open_legacy();
	}
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(errno));
		goto err;
	}
	err = configure(c);
	err = err ?: load(c);
	err = err ?: setup_maps(c);
	err = err ?: inflight_new(&c->inflight, c->skel, opts->key_kind);
	err = err ?: cgroups_new(&c->cgroups, c->skel, opts->read_cgid);
	/* the kernel's names for both drains, when they name where calls
	 * slept (read before capabilities go: kallsyms shows addresses to
	 * root only; the daemon's split sums need none)
	 */
	if (!err && opts->split &&
	    (opts->split_samples || collector_keeps_sleeps(opts)) &&
	    !(c->ksyms = ksyms_load(NULL)))
		pr_warn("cannot read the kernel's symbols (/proc/kallsyms: "
			"%s): where calls slept is unnamed",
			strerror(errno));
	err = err   ?:
		      stack_drain_new(&c->stacks, c->skel, opts->stack_period,
				      opts->stack_by, c->settings.slow_ns != 0,
				      !opts->raw_symbols, opts->stack_cgroups,
				      opts->drain_few_caps, c->ksyms);
	/* on demand: off until a profile asks (collector__stacks_sample) */
	if (!err && c->stacks && opts->stacks_on_demand)
		stack_drain_pause(c->stacks, true);
	if (!err && opts->split)
		err = split_drain_new(&c->split, c->skel, opts->split_samples,
				      c->ksyms, opts->drain_few_caps);
	if (err)
		goto err;
	*out = c;
	return 0;
err:
	collector__destroy(c);
	return err;
}

/* The verdict cache's addresses go (the counting runs in its slots
 * stay: collector__cost).
 */
static void forget_verdicts(struct collector *c)
{
	struct sc_want_slot *s = c->skel->bss->want_cache;

	for (size_t i = 0; i < SC_WANT_SLOTS; i++) {
		s[i].no = 0;
		s[i].yes = 0;
		s[i].yes_want = 0;
	}
}

int collector__add_target(struct collector *c, pid_t tgid)
{
	__u32 t = (__u32)tgid;
	__u32 *w;

	if (tgid <= 0 || t >= SC_PID_LIMIT)
		return -EINVAL;
	w = &c->skel->bss->target_bits[t / 32];
	if (!(*w & (1U << (t % 32)))) {
		if (c->opts.cells == SC_CELLS_ONE_TARGET && c->ntargets)
			return -EINVAL;
		*w |= 1U << (t % 32);
		c->skel->bss->live_targets++;
		if (!c->first)
			c->first = tgid;
		if (!c->ntargets++ && c->opts.cells == SC_CELLS_ONE_TARGET) {
			c->one = tgid;
			c->skel->bss->one_tgid = (__u32)tgid;
		}
		/* Targets belong before attach; after it, at least forget
		 * the verdicts already cached.
		 */
		if (c->attached)
			forget_verdicts(c);
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

/* Sampled mode: the enter program, and the split's scheduler programs,
 * are attached by the latency windows; the timing exit program is
 * tail-called by the counting one, if that is in use, else it is the
 * exit program, alone.
 */
static bool not_attached(const struct collector *c,
			 const struct bpf_program *prog)
{
	struct scprof_bpf *skel = c->skel;

	return c->settings.progs == SC_PROGS_SAMPLED &&
	       (prog == skel->progs.sc_sys_enter ||
		prog == skel->progs.sc_switch ||
		prog == skel->progs.sc_waking ||
		prog == skel->progs.sc_waking_sleep ||
		prog == skel->progs.sc_wakeup ||
		prog == (c->counting_exit ? skel->progs.sc_timed_exit :
					    skel->progs.sc_sampled_exit));
}

static int attach_pass(struct collector *c, bool syscalls)
{
	const struct bpf_object_skeleton *s = c->skel->skeleton;

	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *prog = *s->progs[i].prog;
		struct bpf_link *l;

		if (!bpf_program__autoload(prog) || is_iter_prog(prog) ||
		    not_attached(c, prog) || is_syscall_prog(prog) != syscalls)
			continue;
		l = bpf_program__attach(prog);
		if (!l)
			return -errno;
		*s->progs[i].link = l;
	}
	return 0;
}

/*
 * Cgroup tags (read_cgid): once the moves are traced, and before any call
 * is recorded, the threads already in another cgroup than their process's
 * leader get theirs, from a task iterator run once. 0 or -errno.
 */
static int seed_cgtags(struct scprof_bpf *skel)
{
	struct bpf_program *prog = skel->progs.sc_cgtag_seed;
	struct bpf_link *link;
	char buf[64];
	int fd, err = 0;
	ssize_t n;

	if (!bpf_program__autoload(prog))
		return 0;
	link = bpf_program__attach_iter(prog, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

static int attach_ordered(struct collector *c)
{
	int err = attach_pass(c, false);

	err = err ?: seed_cgtags(c->skel);
	return err ?: attach_pass(c, true);
}

int collector__attach(struct collector *c)
{
	int err;

	/* What the programs remember about tasks by their stack address
	 * is stale after a detach: tasks exited unseen, stacks were reused.
	 */
	forget_verdicts(c);
	memset(c->skel->bss->flights, 0, sizeof(c->skel->bss->flights));
	/* the quota throttling of the first target's cgroup, or --cgroup's */
	if (c->split)
		split_drain_watch(c->split, c->first, c->opts.cgroup_path);
	err = attach_ordered(c);
	c->attached = !err;
	if (err) {
		pr_err("cannot attach to the raw_syscalls tracepoints: %s",
		       strerror(-err));
		return err;
	}
	return c->inflight ? inflight_attach(c->inflight) : 0;
}

void collector__detach(struct collector *c)
{
	scprof_bpf__detach(c->skel);
	c->attached = false;
}

int collector__stacks_poll(struct collector *c)
{
	int err = c->stacks ? stack_drain_error(c->stacks) : 0;

	if (err)
		pr_err("cannot unwind the sampled stacks: %s", strerror(-err));
	return err;
}

int collector__stacks_sample(struct collector *c, bool on)
{
	if (!c->stacks || !c->opts.stacks_on_demand)
		return -EINVAL;
	stack_drain_pause(c->stacks, !on);
	return 0;
}

int collector__stacks_pace(struct collector *c, uint32_t shift,
			   uint64_t *cpu_ns)
{
	if (!c->stacks || !c->opts.stacks_on_demand)
		return -EINVAL;
	stack_drain_pace(c->stacks, shift);
	*cpu_ns = stack_drain_cpu_ns(c->stacks);
	return 0;
}

int collector__stacks_take(struct collector *c, struct sc_model *m)
{
	if (!c->stacks || !c->opts.stacks_on_demand)
		return -EINVAL;
	return stack_drain_take(c->stacks, m);
}

int collector__slow_take(struct collector *c, struct sc_slowlog *out,
			 uint64_t *lost)
{
	*lost = 0;
	return c->stacks ? stack_drain_slow_take(c->stacks, out, lost) : 0;
}

void collector__unwind_stats(struct collector *c, uint64_t *samples,
			     uint64_t *frames)
{
	stack_drain_stats(c->stacks, samples, frames);
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
	if (c->nr_stats)
		munmap(c->nr_stats, c->nr_stats_len);
	inflight_free(c->inflight);
	stack_drain_free(c->stacks);
	split_drain_free(c->split);
	ksyms_free(c->ksyms);
	cgroups_free(c->cgroups);
	scprof_bpf__destroy(c->skel);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	model_free(c->folded);
	proc_counts__free(c->tdone);
	free(c);
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
		struct sc_stats_key key;

		if (caps_clear())
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

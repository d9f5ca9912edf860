// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF programs' settings (struct sc_settings, include/sc_settings.h),
 * decided in one place: settings_fill() turns the plan's options, what the
 * kernel offers and what the machine is into every field, and
 * settings_write() copies them to the skeleton's rodata once, before load,
 * with the tables beside them (each syscall's flags, -e's bitmaps). What
 * the machine and the environment say is read apart (settings_env_read()),
 * so that the decisions are a function of their inputs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>

#include "collect/settings.h"
#include "scprof.skel.h"
#include "model/names.h"
#include "model/trace_set.h"
#include "sc_split.h"
#include "util/log.h"
#include "util/procfs.h"

#define DEFAULT_PID_MAX 4194304 /* when /proc cannot say: PID_MAX_LIMIT */

/*
 * SCPROF_FAST_PATHS=0 turns off the non-target cache and the calls-in-
 * flight table: the BPF side then runs as on kernels without
 * bpf_task_pt_regs (before 5.15), on task storage alone. For ruling them
 * out when something looks wrong, and for testing that path (make check).
 */
static bool fast_paths_on(void)
{
	const char *v = getenv("SCPROF_FAST_PATHS");

	return !v || strcmp(v, "0");
}

/*
 * Tests only: SCPROF_TEST_MAP_FAIL=MAP:ERRNO (procs:EBUSY, stats:ENOMEM...)
 * makes every update of that map fail with that errno, so the reports of
 * failures that no kernel produces at will can be tested. Ignored when
 * malformed (it is no user's option).
 */
static void inject_map_fail(struct settings_env *e)
{
	const char *v = getenv("SCPROF_TEST_MAP_FAIL"), *colon;
	int map, err;

	e->inject_map = SC_MAP_COUNT;
	e->inject_errno = 0;
	if (!v || !(colon = strchr(v, ':')))
		return;
	map = names_map_parse(v, (size_t)(colon - v));
	err = names_errno_parse(colon + 1);
	if (map < 0 || err <= 0)
		return;
	e->inject_map = (uint32_t)map;
	e->inject_errno = err;
	pr_info("testing: every update of the %s map fails with %s",
		names_map((uint32_t)map), colon + 1);
}

void settings_env_read(struct settings_env *e, int cgroup_fd)
{
	char *line = procfs_read_line("/proc/sys/kernel/pid_max");
	int ncpus = libbpf_num_possible_cpus();
	struct stat st;

	memset(e, 0, sizeof(*e));
	e->self_tgid = (uint32_t)getpid();
	e->ncpus = ncpus > 0 ? (uint32_t)ncpus : 0;
	e->pid_max = line ? strtoull(line, NULL, 10) : 0;
	free(line);
	if (!e->pid_max)
		e->pid_max = DEFAULT_PID_MAX;
	/* a cgroup's id is its directory's inode number (kernfs) */
	if (cgroup_fd >= 0 && !fstat(cgroup_fd, &st))
		e->cgroup_id = (uint64_t)st.st_ino;
	e->fast_paths = fast_paths_on();
	inject_map_fail(e);
}

/*
 * Cgroup tags (read_cgid, bpf/cgtag.bpf.h): a slot per thread id up to
 * pid_max, within SC_CGTAG_SLOTS (a thread beyond shares a slot, and finds
 * its tag in the hash). Otherwise one.
 */
static void cgtag_slots(struct sc_settings *s, bool on, uint64_t pid_max)
{
	uint32_t slots = 1;

	if (!on) {
		s->cgtag_slots = 1;
		s->cgtag_exact = 0;
		return;
	}
	while (slots < SC_CGTAG_SLOTS && slots < pid_max)
		slots *= 2;
	s->cgtag_slots = slots;
	s->cgtag_exact = pid_max <= slots;
}

void settings_fill(struct sc_settings *s, const struct collector_opts *o,
		   const struct kernel_facilities *k,
		   const struct settings_env *e)
{
	/* The fast paths (the non-target cache, the calls-in-flight table,
	 * the per-thread slots) find a task's slots from its saved
	 * registers' address and claim them with compare-and-swap.
	 */
	bool fast = k->task_regs && k->cmpxchg && e->fast_paths;
	bool timed = o->stack_by != SC_STACKS_BY_COUNT && o->stack_period;
	const struct trace_set *t = o->trace;

	memset(s, 0, sizeof(*s));
	/* the kernel (the legacy build asks) */
	s->kern_task_btf = k->task_btf;
	s->kern_task_storage = k->task_storage;
	s->kern_task_regs = k->task_regs;
	/* whom */
	s->filter_mode = o->mode;
	s->self_tgid = e->self_tgid;
	s->follow_forks = o->follow;
	s->target_cgid = e->cgroup_id;
	s->only_tid = (uint32_t)o->only_tid;
	s->trace_on = t && t->on;
	s->trace_beyond = t && t->on && t->beyond;
	s->status_filter = o->status;
	s->want_cache_on =
		(o->mode == SC_FILTER_TGID || o->mode == SC_FILTER_ALL) && fast;
	s->want_slots = e->ncpus > 0 && e->ncpus < SC_WANT_SLOTS ?
				e->ncpus :
				SC_WANT_SLOTS;
	/* how, and what else is kept */
	s->progs = o->progs;
	s->cells = o->cells;
	s->flight_on = o->progs != SC_PROGS_COUNT_ONLY && fast;
	s->fd_types = o->fd_types;
	s->thread_totals = o->thread_totals;
	s->key_kind = o->key_kind;
	s->read_cgid = o->read_cgid;
	cgtag_slots(s, o->read_cgid, e->pid_max);
	/* the split, with samples of where calls slept or none */
	s->split_on = o->split;
	s->split_sample_ns = o->split && o->split_samples ? SC_SPLIT_SAMPLE_NS :
							    0;
	s->split_runq_timed = !k->run_delay;
	s->sleep_on = collector_keeps_sleeps(o);
	/* --stacks: µs of time in calls (or blocked) when by time */
	s->stack_period = o->stack_period;
	s->stack_by_time = timed;
	s->stack_by_blocked = o->stack_by == SC_STACKS_BY_BLOCKED &&
			      o->stack_period;
	s->stack_budget_ns = timed ? o->stack_period * 1000ULL : 0;
	/* --slow: calls are timed in full and sampled modes only */
	s->slow_ns = o->progs != SC_PROGS_COUNT_ONLY ? o->slow_ns : 0;
	s->inject_map = e->inject_map;
	s->inject_errno = e->inject_errno;
}

/* Each syscall's flags by ABI and number, and each ABI's rt_sigreturn. */
static void write_nr_flags(struct scprof_bpf *skel, bool fd_calls)
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
			if (fd_calls && names_is_fd_call(name))
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

void settings_write(struct scprof_bpf *skel, const struct sc_settings *s,
		    const struct collector_opts *o)
{
	const struct trace_set *t = o->trace;

	skel->rodata->settings = *s;
	/* --slow says what a slow call's fd is: fd calls are known */
	write_nr_flags(skel, s->fd_types || o->slow_ns);
	if (!s->trace_on)
		return;
	memcpy((void *)skel->rodata->trace_bits, t->bits, sizeof(t->bits));
	trace_set_exit_bits(
		t, (uint32_t(*)[SC_TRACE_WORDS])skel->rodata->trace_exit_bits);
}

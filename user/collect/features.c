// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What this kernel and these privileges allow, and the program variants. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/facilities.h"
#include "sc_settings.h" /* (before the skeleton, which uses it) */
#include "scprof.skel.h"
#include "util/caps.h"
#include "util/log.h"
#include "util/procfs.h"
#include "util/strlist.h"

static bool has_cap(uint64_t mask, int cap)
{
	return mask & (1ULL << cap);
}

int collector_preflight(void)
{
	char buf[128] = "";
	uint64_t caps;
	FILE *f;
	int err;

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
	err = caps_effective(&caps);
	if (err) {
		pr_err("cannot read capabilities: %s", strerror(-err));
		return err;
	}
	if (!has_cap(caps, CAP_SYS_ADMIN) &&
	    !(has_cap(caps, CAP_BPF) && has_cap(caps, CAP_PERFMON))) {
		pr_err("permission denied: scprof needs root, or the "
		       "CAP_BPF and CAP_PERFMON capabilities, to load its BPF "
		       "programs (try sudo)");
		return -EPERM;
	}
	return 0;
}

static bool helper_ok(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, id, NULL) == 1;
}

/* Does the kernel know compare-and-swap (BPF_ATOMIC | BPF_CMPXCHG, 5.12)?
 * A socket filter that swaps a word on its stack.
 */
static bool cmpxchg_ok(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_2,
		  .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW,
		  .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_2,
		  .off = -8,
		  .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Can a program with a subprogram make a tail call (x86-64's JIT since
 * 5.10, arm64's since 6.0; no interpreter)? A socket filter that calls
 * one and tail-calls into an empty program array.
 */
static bool tail_calls_ok(void)
{
	int map = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, sizeof(__u32),
				 sizeof(__u32), 1, NULL);
	const struct bpf_insn insns[] = {
		/* 0: r6 = r1; 1: call the subprogram at 9 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X,
		  .dst_reg = BPF_REG_6,
		  .src_reg = BPF_REG_1 },
		{ .code = BPF_JMP | BPF_CALL,
		  .src_reg = BPF_PSEUDO_CALL,
		  .imm = 7 },
		/* 2: r1 = r6; 3-4: r2 = the map; 5: r3 = 0; 6: tail call */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_REG_6 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_2,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_tail_call },
		/* 7-8: return 0; 9-10: the subprogram, return 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	if (map < 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * SCPROF_WITHOUT=FACILITY[,FACILITY...] (task_btf, task_storage,
 * task_regs, cmpxchg, or all): run as on a kernel without them, whatever
 * this one has. For testing the older kernels' paths here (make check),
 * and for ruling a facility out when something looks wrong.
 */
static bool without(const char *name)
{
	const char *v = getenv("SCPROF_WITHOUT"), *item;
	size_t len;

	if (!v)
		return false;
	while (strlist_next(&v, &item, &len))
		if ((len == 3 && !strncmp(item, "all", 3)) ||
		    (len == strlen(name) && !strncmp(item, name, len)))
			return true;
	return false;
}

static bool task_btf_ok(void)
{
	return helper_ok(BPF_FUNC_get_current_task_btf);
}

static bool task_storage_ok(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) ==
		       1 &&
	       helper_ok(BPF_FUNC_task_storage_get);
}

static bool task_regs_ok(void)
{
	return helper_ok(BPF_FUNC_task_pt_regs);
}

/* The scheduler keeps a task's run-queue delay (sched_info) if this
 * process, which has run, shows a time slice in /proc/self/schedstat
 * (without sched_info the kernel shows "0 0 0", or no file at all).
 */
static bool run_delay_ok(void)
{
	char *line = procfs_read_line("/proc/self/schedstat");
	unsigned long long run, wait, slices = 0;
	bool ok = line &&
		  sscanf(line, "%llu %llu %llu", &run, &wait, &slices) == 3 &&
		  slices > 0;

	free(line);
	return ok;
}

/* Each facility once: its probe, where it goes in struct
 * kernel_facilities, and what `scprof features` says of it.
 */
static const struct facility_def {
	bool (*ok)(void);
	size_t at; /* offsetof(struct kernel_facilities, ...) */
	struct sc_facility row;
} facility_defs[] = {
	{ task_btf_ok,
	  offsetof(struct kernel_facilities, task_btf),
	  { .name = "task_btf",
	    .what = "bpf_get_current_task_btf()",
	    .since = "5.11",
	    .probe = "libbpf_probe_bpf_helper(kprobe, get_current_task_btf)",
	    .without = "the current task's fields are read with "
		       "bpf_probe_read_kernel" } },
	{ task_storage_ok,
	  offsetof(struct kernel_facilities, task_storage),
	  { .name = "task_storage",
	    .what = "task local storage in tracing programs",
	    .since = "5.11",
	    .probe = "libbpf_probe_bpf_map_type(task_storage) and "
		     "libbpf_probe_bpf_helper(kprobe, task_storage_get)",
	    .without = "per-thread state in hashes keyed by thread id, "
		       "deleted when the thread exits" } },
	{ cmpxchg_ok,
	  offsetof(struct kernel_facilities, cmpxchg),
	  { .name = "cmpxchg",
	    .what = "BPF compare-and-swap",
	    .since = "5.12",
	    .probe = "a socket filter with BPF_ATOMIC | BPF_CMPXCHG",
	    .without = "no fast paths (the calls-in-flight table, the "
		       "non-target cache, the per-thread slots): stamps in "
		       "per-thread state" } },
	{ task_regs_ok,
	  offsetof(struct kernel_facilities, task_regs),
	  { .name = "task_regs",
	    .what = "bpf_task_pt_regs()",
	    .since = "5.15",
	    .probe = "libbpf_probe_bpf_helper(kprobe, task_pt_regs)",
	    .without = "a task's registers found at their offset from its "
		       "kernel stack, learned at the first syscall; no fast "
		       "paths" } },
	{ tail_calls_ok,
	  offsetof(struct kernel_facilities, tail_calls),
	  { .name = "tail_calls",
	    .what = "tail calls from programs with subprograms (arm64: "
		    "6.0)",
	    .since = "5.10",
	    .probe = "a socket filter with a subprogram and a tail call",
	    .optional = true,
	    .without = "sampled mode counts with its timing program: its "
		       "look for a stamp and its self-timing on every call "
		       "(5 ns a call)" } },
	{ run_delay_ok,
	  offsetof(struct kernel_facilities, run_delay),
	  { .name = "run_delay",
	    .what = "each task's run-queue delay kept by the scheduler "
		    "(sched_info: CONFIG_SCHED_INFO)",
	    .since = "5.10",
	    .probe = "/proc/self/schedstat shows a time slice",
	    .optional = true,
	    .without = "the split times each wait for a CPU at the switch "
		       "in: a look at the incoming task on every context "
		       "switch" } },
};

#define N_FACILITIES (sizeof(facility_defs) / sizeof(facility_defs[0]))

void kernel_facilities_probe(struct kernel_facilities *k)
{
	for (size_t i = 0; i < N_FACILITIES; i++) {
		const struct facility_def *f = &facility_defs[i];

		*(bool *)((char *)k + f->at) = !without(f->row.name) && f->ok();
	}
	/* task storage's helpers take the current task's BTF pointer */
	k->task_storage = k->task_storage && k->task_btf;
}

int collector__facilities(struct sc_facilities *out)
{
	struct kernel_facilities k;
	struct utsname u;

	_Static_assert(N_FACILITIES <= sizeof(out->rows) / sizeof(out->rows[0]),
		       "struct sc_facilities has a row for each facility");
	kernel_facilities_probe(&k);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < N_FACILITIES; i++) {
		const struct facility_def *f = &facility_defs[i];

		out->rows[i] = f->row;
		out->rows[i].present =
			*(const bool *)((const char *)&k + f->at);
		out->rows[i].forced_off = without(f->row.name);
	}
	out->n = N_FACILITIES;
	out->legacy = !kernel_facilities_all(&k);
	if (!uname(&u))
		snprintf(out->kernel, sizeof(out->kernel), "%s", u.release);
	return 0;
}

bool kernel_facilities_all(const struct kernel_facilities *k)
{
	return k->task_btf && k->task_storage && k->task_regs && k->cmpxchg;
}

/*
 * Before compare-and-swap (5.12) the kernel refuses a program holding one,
 * even in code that its settings never run (the fast paths, which need
 * it: they are off then). Each becomes r0 = -1, "the slot is taken", in
 * place, so that no instruction moves. 0 or -errno.
 */
static int drop_cmpxchg(struct bpf_program *prog)
{
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *copy = NULL;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		if (insns[i].code != (BPF_STX | BPF_ATOMIC | BPF_DW) &&
		    insns[i].code != (BPF_STX | BPF_ATOMIC | BPF_W))
			continue;
		if (insns[i].imm == BPF_ADD)
			continue; /* the old BPF_XADD, known to every kernel */
		if (!copy) {
			copy = malloc(n * sizeof(*copy));
			if (!copy)
				return -ENOMEM;
			memcpy(copy, insns, n * sizeof(*copy));
		}
		copy[i] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_MOV | BPF_K,
			.dst_reg = BPF_REG_0,
			.imm = -1,
		};
	}
	if (copy)
		err = bpf_program__set_insns(prog, copy, n);
	free(copy);
	return err;
}

/* The programs that load: each mode's, and those of what else is kept
 * (the others always load).
 */
static void choose_autoload(struct scprof_bpf *skel,
			    const struct collector_opts *o,
			    const struct kernel_facilities *k)
{
	enum sc_progs p = o->progs;
	const struct {
		struct bpf_program *prog;
		bool load;
	} choices[] = {
		/* full: enter and exit; sampled: the enter program in
		 * windows, and one exit program that counts every call
		 * and times those it can (with tail calls, a counting
		 * one that hands the calls to it in windows);
		 * count-only: one exit program
		 */
		{ skel->progs.sc_sys_enter, p != SC_PROGS_COUNT_ONLY },
		{ skel->progs.sc_sys_exit, p == SC_PROGS_FULL },
		{ skel->progs.sc_timed_exit, p == SC_PROGS_SAMPLED },
		{ skel->progs.sc_sampled_exit,
		  p == SC_PROGS_SAMPLED && k->tail_calls },
		{ skel->progs.sc_count_exit, p == SC_PROGS_COUNT_ONLY },
		/* execs counted under the ABI they were made in: the modes
		 * that count at exit from the registers
		 */
		{ skel->progs.sc_exec_call, p != SC_PROGS_FULL },
		/* the calls in flight: stamps exist in full mode only */
		{ skel->progs.sc_inflight_iter,
		  o->in_flight && p == SC_PROGS_FULL },
		/* fork: following them, and a new thread's cgroup tag */
		{ skel->progs.sc_fork, o->follow || o->read_cgid },
		{ skel->progs.sc_thread_rename, o->key_kind == SC_KEY_THREAD },
		/* cgroup tags: moves, and the threads apart at attach; the
		 * split: a target's move (its CPU quota)
		 */
		{ skel->progs.sc_cgroup_attach, o->read_cgid || o->split },
		{ skel->progs.sc_cgtag_seed, o->read_cgid },
		/* cgroup names: the paths of cgroups as they are removed */
		{ skel->progs.sc_cgroup_rmdir, o->read_cgid },
		/* the split of calls' time: the scheduler's tracepoints */
		{ skel->progs.sc_switch, o->split },
		{ skel->progs.sc_waking,
		  o->split && !collector_keeps_sleeps(o) },
		/* and keeping each call's longest sleep (--slow, by blocked) */
		{ skel->progs.sc_waking_sleep, collector_keeps_sleeps(o) },
		/* the end of a wake-up, where the kernel's run-queue delay
		 * gives the wait after it (else it is timed at the switch in)
		 */
		{ skel->progs.sc_wakeup, o->split && k->run_delay },
	};

	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++)
		bpf_program__set_autoload(choices[i].prog, choices[i].load);
}

/* Without task storage (before 5.11): the per-thread maps become hashes
 * keyed by thread id (task.bpf.h), room for this many threads each.
 */
#define TID_HASH_ENTRIES 65536

int collector_choose_progs(struct scprof_bpf *skel,
			   const struct collector_opts *o,
			   const struct kernel_facilities *kf)
{
	struct kernel_facilities k = *kf;

	if (!k.task_storage) {
		bpf_map__set_type(skel->maps.tstore, BPF_MAP_TYPE_HASH);
		bpf_map__set_max_entries(skel->maps.tstore, TID_HASH_ENTRIES);
	}
	choose_autoload(skel, o, &k);
	if (!k.cmpxchg) {
		struct bpf_program *prog;
		int err;

		bpf_object__for_each_program(prog, skel->obj)
		{
			err = drop_cmpxchg(prog);
			if (err)
				return err;
		}
	}
	return 0;
}

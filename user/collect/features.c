// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What this kernel and these privileges allow, and the program variants. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "util/caps.h"
#include "util/log.h"

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

int collector_choose_progs(struct scprof_bpf *skel,
			   const struct collector_opts *o)
{
	bool has_pt_regs, fast;
	int ncpus;

	if (!o->follow)
		bpf_program__set_autoload(skel->progs.sc_fork, false);
	/* The non-target cache needs bpf_task_pt_regs (5.15) to forget
	 * exited tasks; count-only needs it to count exit/exit_group.
	 */
	has_pt_regs = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
					      BPF_FUNC_task_pt_regs, NULL) == 1;
	fast = has_pt_regs && !fast_paths_off();
	if ((o->count_only || o->latency_sampled || o->thread_totals) &&
	    !has_pt_regs) {
		pr_err("%s needs a kernel with bpf_task_pt_regs "
		       "(Linux 5.15 or later)",
		       o->count_only ? "--count-only" : "--latency-duty");
		return -ENOTSUP;
	}
	ncpus = libbpf_num_possible_cpus();
	skel->rodata->nt_cache_on = o->mode == SC_FILTER_TGID && fast;
	skel->rodata->flight_on = !o->count_only && fast;
	skel->rodata->sampled = o->latency_sampled && !o->count_only;
	skel->rodata->nt_slots =
		ncpus > 0 && ncpus < SC_NT_SLOTS ? (__u32)ncpus : SC_NT_SLOTS;
	/* Full mode: enter and exit; count-only: one program on exit. */
	skel->rodata->count_only = o->count_only;
	/* Sampled: the enter program is attached in windows only, and one
	 * exit program counts every call and times those it can.
	 */
	bpf_program__set_autoload(skel->progs.sc_sys_enter, !o->count_only);
	bpf_program__set_autoload(skel->progs.sc_sys_exit,
				  !o->count_only && !o->latency_sampled);
	bpf_program__set_autoload(skel->progs.sc_sampled_exit,
				  !o->count_only && o->latency_sampled);
	bpf_program__set_autoload(skel->progs.sc_count_exit, o->count_only);
	/* The calls in flight: stamps exist in full mode only, and the
	 * iterator reads a thread's registers with bpf_task_pt_regs.
	 */
	bpf_program__set_autoload(skel->progs.sc_inflight_iter,
				  o->in_flight && !o->count_only &&
					  !o->latency_sampled && has_pt_regs);
	/* Counting execs under the ABI they were made in: the modes that
	 * count at exit from the registers.
	 */
	bpf_program__set_autoload(skel->progs.sc_exec_call,
				  o->count_only || o->latency_sampled);
	bpf_program__set_autoload(skel->progs.sc_thread_rename,
				  o->key_kind == SC_KEY_THREAD);
	return 0;
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

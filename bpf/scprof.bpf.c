// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof kernel side: count, time and size every syscall of the selected
 * processes, per process and syscall, on the raw_syscalls tracepoints.
 *
 * Full mode: enter stores a start stamp (in flights[], else in task local
 * storage); exit pairs with it and makes the one cell update of the call.
 * A call is counted when it returns, except exit/exit_group, which never
 * return and are counted at entry. An exit without a matching enter (a new
 * task's first return from clone, a call already running at attach time)
 * is ignored, so nothing is counted twice.
 *
 * Count-only mode (--count-only): one program, on sys_exit, counts calls,
 * errors and bytes; no stamps, no task storage, no clock. exit/exit_group
 * are counted when the thread exits (sched_process_exit). Sampled mode
 * (the daemon, top --latency-duty) counts the same way and times the calls
 * that the enter program, attached in latency windows, stamped.
 *
 * Every syscall of every task on the machine runs these programs, so the
 * hot path is short: the filter comes first (admit(): a task known not to
 * be a target is rejected without a helper call, others cost one); the
 * stamp is found again without task storage; the one target process (-p
 * PID or a command, without -f) and the aggregate of every target (no
 * per-process rows wanted) have their cells in arrays indexed by syscall
 * number instead of a hash map, their counters per CPU (enum sc_cells).
 * What is left is mostly the two clock reads. make bench measures each
 * step (see docs/overhead.md).
 *
 * This file holds the programs. What they use is in one header a concern,
 * each with its own state and maps, and including the headers it uses:
 * settings.bpf.h (every setting userspace writes before load, in
 * rodata), maps.bpf.h (map helpers, the counts of what did not fit),
 * task.bpf.h (the current task on every kernel), filter.bpf.h (which
 * tasks: pid bitmap, cgroup, non-target cache), syscall.bpf.h (number,
 * ABI, flags, return value), trace_filter.bpf.h (-e, -z/-Z, -p TID),
 * stamp.bpf.h (full mode's start stamp: flights[] or task storage),
 * admit.bpf.h (every program's prologue), cgtag.bpf.h (the cgroup tags
 * that file calls under the cgroup their thread was in, moves followed),
 * cgname.bpf.h (the paths of cgroups as they are removed), proc.bpf.h
 * (processes: key, name, exit), record.bpf.h (the cell update of a call),
 * split.bpf.h (the split of a call's time), fdkind.bpf.h (--fd-types),
 * tslots.bpf.h (per-thread totals), exit.bpf.h (a thread's exit),
 * exec.bpf.h (execs), inflight.bpf.h (the calls in flight at report
 * time, for a task iterator), cost.bpf.h (the programs timing
 * themselves), group.bpf.h (--by tid), stacks.bpf.h (--stacks) and
 * slow.bpf.h (--slow).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "scprof.h"
#include "admit.bpf.h"
#include "cgname.bpf.h"
#include "cgtag.bpf.h"
#include "cost.bpf.h"
#include "exec.bpf.h"
#include "exit.bpf.h"
#include "fdkind.bpf.h"
#include "filter.bpf.h"
#include "group.bpf.h"
#include "inflight.bpf.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "record.bpf.h"
#include "settings.bpf.h"
#include "slow.bpf.h"
#include "split.bpf.h"
#include "stacks.bpf.h"
#include "stamp.bpf.h"
#include "syscall.bpf.h"
#include "task.bpf.h"
#include "trace_filter.bpf.h"
#include "tslots.bpf.h"

/* Sampled mode, with tail calls: while userspace holds a latency window
 * or a cost window open (a bit each, enum sc_timing), the counting exit
 * program hands every call to the timing one.
 */
__u32 exit_timing = 0;

/* Sampled mode: the timing exit program (sc_timed_exit), in slot 0, for
 * the counting one to tail-call (userspace fills it after load).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} timed_exit SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_sys_enter, struct pt_regs *regs, long id)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	__u64 t0, addr;
	__u8 fl;

	c.w = admit(regs, id, false, NULL, &task, &addr);
	if (c.w == WANT_NO || id < 0) {
		/* (a window's cost: its dispatch, paid by every call) */
		cost_tick(SC_COST_ENTER_OTHER);
		return 0;
	}
	t0 = cost_begin(SC_COST_ENTER);
	/* A cached verdict leaves the task unfetched: most calls need it
	 * only when these are on, or their flight slot is taken.
	 */
	if (!task &&
	    (settings.read_cgid || settings.stack_period || settings.fd_types))
		task = current_task();
	call_nr_abi(regs, &task, id, &c.nr, &c.abi);
	/* full mode files a call under its thread's cgroup at entry */
	c.cgtag = task ? cgtag_of(task) : 0;
	if (settings.stack_period && !settings.stack_by_time && task)
		stack_sample(task, regs, c.nr, c.abi);
	fl = flags_of(c.nr, c.abi);
	if (fl & SC_NR_NORETURN) {
		/* The task ends in this call: nothing to stamp. Sampled
		 * mode counts it when the thread exits, as count-only does.
		 */
		if (settings.progs == SC_PROGS_FULL && status_ok(0))
			record(task, &c, fl, 0, false);
		goto out;
	}
	if (settings.fd_types && task && (fl & SC_NR_FD))
		c.fd_type = fd_kind(task, regs, c.abi);
	if (settings.flight_on && flight_enter(regs, addr, &c))
		goto out;
	/* Sampled: a call whose flight slot is taken goes untimed, so that
	 * the exit program never needs task storage.
	 */
	if (settings.progs == SC_PROGS_FULL || !settings.flight_on)
		task_enter(task ?: current_task(), &c);
out:
	cost_end(SC_COST_ENTER, t0);
	return 0;
}

/* Full mode's exit: the call stamped at its entry, timed and recorded. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sys_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .w = WANT_YES };
	struct task_struct *task;
	__u64 addr;

	c.w = admit(regs, syscall_nr(regs), true, &c, &task, &addr);
	if (c.w == WANT_NO)
		return 0;
	/* No task: the stamp was in flights[]; else it is in task storage,
	 * if the call's entry was seen.
	 */
	if (task && !task_exit(task, &c))
		return 0;
	split_claim(task, &c);
	if (settings.stack_period && settings.stack_by_time)
		stack_sample_time(
			task ?: current_task(), regs, c.nr, c.abi,
			settings.stack_by_blocked ? c.blocked_ns : c.delta_ns,
			settings.stack_by_blocked ? split_sleep(task) : NULL);
	if (status_ok(ret)) {
		slow_check(task, regs, &c, ret);
		record(task, &c, flags_of(c.nr, c.abi), ret, true);
	}
	return 0;
}

/* Count-only mode's one program: calls, errors and bytes at exit. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_count_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	long id = syscall_nr(regs);
	__u64 addr;
	__u8 fl;

	c.w = admit(regs, id, true, NULL, &task, &addr);
	if (c.w == WANT_NO)
		return 0;
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && (settings.read_cgid || settings.stack_period))
		task = current_task();
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		return 0;
	if (settings.stack_period && !settings.stack_by_time && id >= 0 && task)
		stack_sample(task, regs, c.nr, c.abi);
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return, from the fork or clone that made it,
	 * is not a call it made (full mode sees no enter for it); a
	 * successful exec was counted as made, when it renamed the thread
	 * (exec.bpf.h).
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC)))
		return 0;
	c.cgtag = task ? cgtag_of(task) : 0;
	if (trace_ok(c.nr, c.abi) && status_ok(ret))
		record(task, &c, fl, ret, false);
	return 0;
}

/*
 * Sampled mode's timing exit: counts every call as --count-only does, and
 * times it when the enter program stamped it in the current window; one
 * run in SC_COST_EVERY is timed itself (cost.bpf.h). With tail calls,
 * sc_sampled_exit below runs it in windows only (latency and cost ones);
 * without, it is the exit program attached.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_timed_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .delta_ns = 0 };
	struct task_struct *task;
	long id = syscall_nr(regs);
	enum want w;
	bool timed, counted = true;
	__u32 made_nr, made_abi;
	__u64 t0, addr;
	__u8 fl;

	w = admit(regs, id, true, NULL, &task, &addr);
	if (w == WANT_NO)
		return 0;
	/* (more of the runs are timed in a cost window, which is short) */
	t0 = cost_begin_every(SC_COST_EXIT, exit_timing & SC_TIMING_COST ?
						    SC_COST_WINDOW_EVERY - 1 :
						    SC_COST_EVERY - 1);
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && (settings.read_cgid || !settings.flight_on))
		task = current_task();
	timed = window_stamp(task, regs, addr, &c);
	if (timed) {
		cost_stamped();
		split_claim(task, &c);
	}
	/* The call as it exits: the stamp's verdict and kind are not kept
	 * (sampled mode splits nothing by fd kind), its number and ABI only
	 * for an exec.
	 */
	made_nr = c.nr;
	made_abi = c.abi;
	c.w = w;
	c.fd_type = SC_FD_NONE;
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		goto out;
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return: not a call it made (no stamp either).
	 * A successful exec was counted at rename (exec.bpf.h); timed, its
	 * latency is added under the call as its entry was stamped.
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC))) {
		if (!timed || !(fl & SC_NR_EXEC))
			goto out;
		c.nr = made_nr;
		c.abi = made_abi;
		fl = flags_of(c.nr, c.abi);
		counted = false;
	}
	/* filed under the thread's cgroup at exit, as counted */
	c.cgtag = task ? cgtag_of(task) : 0;
	record_call(task, &c, fl, ret, timed, counted);
	if (timed)
		slow_check(task, regs, &c, ret);
	thread_count(task, regs, addr, SCR_EXIT, fl, &c, ret, timed, counted);
out:
	cost_end(timed ? SC_COST_EXIT_TIMED : SC_COST_EXIT, t0);
	return 0;
}

/*
 * Sampled mode's counting exit (with tail calls): outside windows, every
 * call is counted here, with none of the timing program's work (the look
 * for a stamp, the self-timing and its per-CPU counters: 5 ns a call by
 * bpf_stats); in a window the timing program takes the call over. Its
 * runs are counted (in the verdict cache's slot when on), and their
 * cost measured by the timing program in the cost windows, where no call
 * is stamped: an untimed run there does the same work as one here, and a
 * look for a stamp besides (an upper bound).
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sc_sampled_exit, struct pt_regs *regs, long ret)
{
	struct ended_call c = { .fd_type = SC_FD_NONE };
	struct task_struct *task;
	__u32 slot;
	long id;
	__u64 addr;
	__u8 fl;

	if (exit_timing)
		bpf_tail_call(ctx, &timed_exit, 0);
	/* (the slot empty: counted here, untimed) */
	id = syscall_nr(regs);
	c.w = admit_at(regs, id, true, NULL, &task, &addr, &slot);
	if (c.w == WANT_NO)
		return 0;
	/* The run is counted in the verdict cache's slot if it is on (a
	 * line admit() has just read), else with the others (selfcost).
	 */
	if (settings.want_cache_on)
		want_cache[slot & (SC_WANT_SLOTS - 1)].runs++;
	else
		cost_tick(SC_COST_EXIT);
	/* (a cached verdict leaves the task unfetched, as in sc_sys_enter) */
	if (!task && settings.read_cgid)
		task = current_task();
	if (!call_exit_nr_abi(regs, &task, id, &c.nr, &c.abi))
		return 0;
	fl = flags_of(c.nr, c.abi);
	/* A new task's first return; a successful exec, counted at rename
	 * (as in sc_timed_exit)
	 */
	if (ret == 0 && (fl & (SC_NR_FORK | SC_NR_EXEC)))
		return 0;
	c.cgtag = task ? cgtag_of(task) : 0;
	record_call(task, &c, fl, ret, false, true);
	thread_count(task, regs, addr, SCR_EXIT, fl, &c, ret, false, true);
	return 0;
}

/* The split of calls' time (split.bpf.h): a context switch, a task being
 * woken, and on a run queue again. Attached with the split only; in
 * sampled mode in latency windows only, where they time themselves as the
 * syscall programs do (cost.bpf.h: nothing in full mode).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sc_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 t0 = cost_begin(SC_COST_SWITCH);

	split_switch(preempt, prev, next);
	cost_end(SC_COST_SWITCH, t0);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sc_waking, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKING);

	split_woken(ctx, p, false);
	cost_end(SC_COST_WAKING, t0);
	return 0;
}

/* The same, keeping each call's longest sleep (sleep_on): attached
 * instead of sc_waking.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(sc_waking_sleep, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKING);

	split_woken(ctx, p, true);
	cost_end(SC_COST_WAKING, t0);
	return 0;
}

/* With the run-queue delay only (else a wait is timed at the switch in). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(sc_wakeup, struct task_struct *p)
{
	__u64 t0 = cost_begin(SC_COST_WAKEUP);

	split_enqueued(p);
	cost_end(SC_COST_WAKEUP, t0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sc_fork, struct task_struct *parent, struct task_struct *child)
{
	/* a new thread, not a new process: its cgroup tag */
	if (child->pid != child->tgid) {
		cgtag_thread_born(parent, child);
		return 0;
	}
	if (!settings.follow_forks || settings.filter_mode != SC_FILTER_TGID)
		return 0;
	if (is_target(parent->tgid))
		set_target(child->tgid);
	return 0;
}

/* A thread moved to another cgroup (cgtag.bpf.h); a target process, for
 * its CPU quota throttling (split.bpf.h).
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(sc_cgroup_attach, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	if (settings.read_cgid)
		cgtag_moved(dst, task, threadgroup);
	split_moved(task);
	return 0;
}

/* A cgroup removed: its path, for userspace to name it by (cgname.bpf.h). */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(sc_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	cgname_removed(cgrp, path);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sc_exec, struct task_struct *p, pid_t old_pid)
{
	proc_exec(p, (__u32)old_pid);
	return 0;
}

/* Count-only and sampled modes: an exec renames the thread before it
 * loads the new program (begin_new_exec), while its registers still say
 * which call it is in; it is counted there. See exec.bpf.h.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(sc_exec_call, struct task_struct *task, const char *comm)
{
	exec_called(task);
	return 0;
}

/* --by tid: a thread's new name (prctl PR_SET_NAME, or a write to
 * /proc/.../comm), for its entry. See group.bpf.h.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(sc_thread_rename, struct task_struct *task, const char *comm)
{
	thread_renamed(task, comm);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sc_exit, struct task_struct *p)
{
	/* Count first: the thread's slots are forgotten after. */
	if (settings.progs != SC_PROGS_FULL)
		count_noreturn(p);
	stack_forget(p);
	split_forget(p);
	/* Its state in hashes by thread id, before the id is reused. */
	if (!KERN_TASK_STORAGE) {
		thread_state_delete(&tstore, p, true);
	}

	/* Only the last thread of the group closes the process. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0) {
		thread_exited(p);
	} else {
		if (settings.filter_mode == SC_FILTER_TGID) {
			clear_target(p->tgid);
			if (one_tgid == p->tgid)
				one_tgid = 0;
		}
		proc_exited(p);
	}
	/* Last: the entries above are found by the thread's cgroup tag. */
	cgtag_forget(p);
	return 0;
}

/* Report time: the calls in flight (inflight.bpf.h), one record each. */
SEC("iter/task")
int sc_inflight_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	return inflight_one(ctx->meta->seq, task);
}

/* At attach, once: the cgroup tags of threads already apart from their
 * process's leader (cgtag.bpf.h).
 */
SEC("iter/task")
int sc_cgtag_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		cgtag_seed(task);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

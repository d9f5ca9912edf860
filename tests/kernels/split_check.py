# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The split of a call's time (issue 41) on other kernels: the checks of
what both guests ran (guest/cases.sh's split_* cases, arm64/cases/3*),
the split workload (tests/workloads/split.c) under scprof --by tid, for
test_kernels.py and arm64/test_arm64.py.

The truth is the workload's and the kernel's, as in tests/e2e/test_split.py
(which says more): the worker reads its own clocks around the calls (wall,
on CPU, and its run-queue delay from /proc/thread-self/schedstat; blocked
is the rest), and the guest samples its kernel stack while it runs
(guest/split_sample.sh: "stack STATE SYSCALL FRAME..." lines). Under TCG
the syscall's way in and out, outside sys_enter..sys_exit, is slow: the
time a window spends outside the calls (its wall time less scprof's
total_ns) may be on CPU as well as waiting, so on CPU and waiting are each
held between the window's figure less that time and the window's figure.
And a sleep ends at sched_waking for scprof, at the enqueue for schedstat:
the wake-up between (an IPI to an idle CPU and its way out of idle, the
sched_waking program itself; microseconds on hardware, up to milliseconds
under TCG) is waiting for scprof and blocked for schedstat. So what was
off CPU (blocked and waiting) is held to the truth's, and blocked to no
more than the truth's; a window sleeps only inside its calls.
"""
import re

TOL = 0.05  # of the calls' time (the row's total_ns), as the issue asks
PARTS = ("on_cpu_ns", "cpu_wait_ns", "blocked_ns")
LISTS = {"blocked_in": "blocked_ns", "woken_by": "blocked_ns",
         "ran_instead": "cpu_wait_ns"}


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


class Facts:
    """What the split workload printed, and the guest's stack samples."""

    def __init__(self, text):
        self.pid = None
        self.threads = {}   # role: (tid, comm)
        self.truth = {}     # syscall: {calls, windows, wall_ns, ...}
        self.overhead = None
        self.stacks = []    # (state, syscall number or None, [frames])
        for line in text.splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "pid":
                self.pid = int(f[1])
            elif f[0] == "thread":
                self.threads[f[1]] = (int(f[2]), f[3])
            elif f[0] == "truth":
                self.truth[f[1]] = kv(f[2:])
            elif f[0] == "overhead":
                self.overhead = kv(f[1:])
            elif f[0] == "stack" and len(f) >= 3:
                nr = int(f[2]) if f[2].lstrip("-").isdigit() else None
                self.stacks.append((f[1], nr, f[3:]))
        assert self.pid and "work" in self.threads and self.truth, \
            f"the split workload said {text!r}"

    def tid(self, role="work"):
        return self.threads[role][0]


def kv(fields):
    return {k: int(v) for k, v in (f.split("=") for f in fields)}


def groups_of(report, tid):
    """{syscall: row} of one thread's group in a --by tid report."""
    groups = [g for g in report["groups"] if g["tid"] == tid]
    assert len(groups) == 1, f"thread {tid} has {len(groups)} groups"
    return {s["name"]: s for s in groups[0]["syscalls"]}


def row_of(report, facts, name, role="work"):
    rows = groups_of(report, facts.tid(role))
    assert name in rows, f"thread {role} made no {name}: {sorted(rows)}"
    return rows[name]


def describe(row):
    return (f"{row['name']}: total {ms(row['total_ns'])}, on CPU "
            f"{ms(row['on_cpu_ns'])}, waiting {ms(row['cpu_wait_ns'])}, "
            f"blocked {ms(row['blocked_ns'])} (I/O {ms(row['io_wait_ns'])});"
            f" blocked in {row['blocked_in']}; woken by {row['woken_by']}")


def check_adds_up(report):
    """Every row (the totals, each thread's): on CPU + waiting + blocked is
    its total_ns (to 0.1% and 1 us), I/O wait part of blocked, each list
    within the part it splits."""
    rows = [("syscalls", r) for r in report["syscalls"]]
    for g in report.get("groups") or []:
        rows += [(f"tid {g['tid']}", r) for r in g["syscalls"]]
    assert rows
    for where, row in rows:
        what = f"{where} {row['name']}"
        missing = [k for k in PARTS + ("io_wait_ns",) + tuple(LISTS)
                   if k not in row]
        assert not missing, f"{what} has no {missing}"
        parts = sum(row[k] for k in PARTS)
        assert min(row[k] for k in PARTS + ("io_wait_ns",)) >= 0, row
        assert abs(parts - row["total_ns"]) <= \
            0.001 * row["total_ns"] + 1000, \
            f"{what}: parts add up to {parts}, total_ns {row['total_ns']}"
        assert row["io_wait_ns"] <= row["blocked_ns"], what
        for key, part in LISTS.items():
            assert sum(e["ns"] for e in row[key]) <= row[part] + 1000, \
                (what, key, row[key], row[part])


def check_parts(row, facts, exact_calls=True, runq=True):
    """The row's parts against the worker's figures for its windows around
    the same calls, within 5% of the calls' time (see above for the slack
    of the time outside the calls, and for the wake-up's). runq False:
    the worker's run-queue delay is no truth (the kernel's delayed dequeue
    on, arm64/lib.sh): its time on and off CPU only."""
    t = facts.truth[row["name"]]
    total = row["total_ns"]
    if exact_calls:
        assert row["calls"] == t["calls"], \
            f"{row['calls']} calls, the workload made {t['calls']}"
    assert total <= t["wall_ns"] * 1.01 + 1e5, \
        f"{ms(total)} of calls in windows of {ms(t['wall_ns'])}"
    outside = max(0, t["wall_ns"] - total)
    tol = TOL * total
    why = f"{describe(row)}; truth {t}, {ms(outside)} outside the calls"
    off = row["blocked_ns"] + row["cpu_wait_ns"]
    for what, got, want in (
            ("on CPU", row["on_cpu_ns"], t["cpu_ns"]),
            ("off CPU", off, t["blocked_ns"] + t["runq_ns"])):
        assert want - outside - tol <= got <= want + tol, f"{what}: {why}"
    if not runq:
        return
    assert row["blocked_ns"] <= t["blocked_ns"] + tol, f"blocked: {why}"
    # waiting holds the run-queue delay inside the calls (the windows'
    # less what fell outside the calls): no more than 5% of the calls'
    # time under it, as the issue asks, and (where that is more than the
    # delay, as for pipe reads) no more than a quarter of the delay and a
    # millisecond, so that waits dropped still fail. (6.12's delayed
    # dequeue, on, put up to 220 ms of 40 pipe reads' sleep in the
    # delay under TCG: the guests turn it off for these cases.)
    runq_in = t["runq_ns"] - outside
    assert row["cpu_wait_ns"] >= max(runq_in - tol, 0.75 * runq_in - 1e6), \
        f"waiting: {why}"


def check_slept_in(row, facts, nr, pattern):
    """Where the calls slept: scprof's first function takes 90% of the
    blocked time or more, is named as pattern says, and is on the kernel
    stack of 80% or more of the samples of the worker asleep in syscall
    nr (the guest's own /proc/PID/stack, named from its kallsyms; a few
    are read as the thread wakes)."""
    # (a stack read as the thread wakes may come out as bare addresses)
    asleep = [fr for st, n, fr in facts.stacks if st in "SD" and n == nr
              and any(not f.startswith("0x") for f in fr)]
    assert len(asleep) >= 3, \
        f"{len(asleep)} samples of the worker asleep in {nr}: {facts.stacks}"
    assert row["blocked_in"], describe(row)
    top = row["blocked_in"][0]
    fn = top["function"]
    assert re.fullmatch(pattern, fn), f"slept in {fn}? {describe(row)}"
    assert top["share"] >= 0.9, describe(row)
    on = sum(fn in fr for fr in asleep)
    assert on >= 0.8 * len(asleep), \
        f"{fn} is on {on} of {len(asleep)} sampled stacks: {asleep[:5]}"
    return fn


def check_woken_by(row, facts, role):
    """Woken by the workload's thread of role (its comm, pid and tid), for
    90% of the blocked time or more."""
    w = row["woken_by"][0] if row["woken_by"] else {}
    tid, comm = facts.threads[role]
    assert (w.get("kind"), w.get("comm"), w.get("pid"), w.get("tid")) == \
        ("task", comm, facts.pid, tid), describe(row)
    assert w["share"] >= 0.9, describe(row)


def check_pipe(report, facts, nr_read, runq=True):
    """split pipe: 1-byte reads of a pipe another thread writes a byte to
    every few ms: blocked most of the time (90% or more by the workload's
    own claim), none of it I/O wait, in the pipe's read function (pipe_read;
    anon_pipe_read from 6.18), woken by the writer. (runq: check_parts.)"""
    check_adds_up(report)
    row = row_of(report, facts, "read")
    check_parts(row, facts, runq=runq)
    assert row["blocked_ns"] >= 0.8 * row["total_ns"], describe(row)
    assert row["io_wait_ns"] <= TOL * row["blocked_ns"], describe(row)
    check_woken_by(row, facts, "writer")
    return check_slept_in(row, facts, nr_read, r"(anon_)?pipe_read")


def check_pipe_stock(report, facts, ref, nr_read):
    """split pipe with the kernel's delayed dequeue on, whose run-queue
    delay the truth cannot take: check_pipe without it, and the reads'
    time blocked within 5% of their calls' time of what the same reads
    were blocked in ref, the truth of a run with it off (the same
    workload: 99% of its time the writer's fixed intervals). As shares of
    each run's calls' time: on a busy host the emulated guest's two runs
    last 100 ms or more apart (the writer's sleeps end later)."""
    fn = check_pipe(report, facts, nr_read, runq=False)
    row = row_of(report, facts, "read")
    t = ref.truth["read"]
    want = t["blocked_ns"] / t["wall_ns"]
    got = row["blocked_ns"] / row["total_ns"]
    assert abs(got - want) <= TOL, \
        f"blocked: {describe(row)}, {got:.1%}; with no delayed dequeue " \
        f"{ms(t['blocked_ns'])} of {ms(t['wall_ns'])}, {want:.1%}"
    return fn


def check_futex(report, facts, nr_futex):
    """split futex: pthread_mutex_lock()s of a mutex another thread holds
    a few ms at a time: blocked most of the time in a futex function, woken
    by the holder; the number of futex calls is the C library's."""
    check_adds_up(report)
    row = row_of(report, facts, "futex")
    check_parts(row, facts, exact_calls=False)
    assert row["calls"] >= facts.truth["futex"]["calls"] // 2, describe(row)
    assert row["blocked_ns"] >= 0.7 * row["total_ns"], describe(row)
    assert row["io_wait_ns"] <= TOL * row["blocked_ns"], describe(row)
    check_woken_by(row, facts, "holder")
    return check_slept_in(row, facts, nr_futex, r"\w*futex\w*")


def check_shared(report, facts):
    """split shared: reads of /dev/zero and getrandom()s on the CPU a
    spinning thread holds: never asleep, waiting for the CPU a large part
    of the time (the workload's claim: 25% or more), each part within 5%
    of the calls' time of the worker's figures."""
    check_adds_up(report)
    for name in ("read", "getrandom"):
        row = row_of(report, facts, name)
        check_parts(row, facts)
        assert row["blocked_ns"] <= TOL * row["total_ns"], describe(row)
        assert row["cpu_wait_ns"] >= 0.2 * row["total_ns"], describe(row)


def run_delay_kept(schedstat):
    """Does the kernel keep run-queue delays? A process that has run shows
    a time slice in /proc/PID/schedstat (the text of one)."""
    f = schedstat.split()
    return len(f) == 3 and all(x.isdigit() for x in f) and int(f[2]) > 0


def check_features(features, schedstat):
    """scprof features lists run_delay, present as the kernel's own
    schedstat says."""
    rows = {r["name"]: r for r in features["facilities"]}
    assert "run_delay" in rows, sorted(rows)
    r = rows["run_delay"]
    assert r["optional"] is True, r
    assert r["present"] == run_delay_kept(schedstat), (r, schedstat)


def check_features_without(without, features):
    """SCPROF_WITHOUT=run_delay (without): run_delay forced off and absent,
    nothing else, the same build of the BPF programs as without it."""
    for r in without["facilities"]:
        assert r["forced_off"] == (r["name"] == "run_delay"), r
    r = [r for r in without["facilities"] if r["name"] == "run_delay"][0]
    assert r["present"] is False, r
    assert without["build"] == features["build"], (without, features)

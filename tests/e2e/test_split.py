# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Why a call is slow (issue 41): each row's time split into on CPU, waiting
for a CPU, blocked (and of that, I/O wait), where it slept, who woke it and
what ran instead, and the cgroup's CPU throttling, against ground truth.

The truth comes from the `split` workload (tests/workloads/split.c): one
thread, "split-work", makes the measured calls and reads its own clocks
around them (wall, CLOCK_THREAD_CPUTIME_ID, and the run-queue delay
of /proc/thread-self/schedstat); blocked is what is left. The scheduler's
own books, not a model. Beside it: /proc/PID/task/TID/stack sampled while
the thread sleeps (the kernel's first function outside the scheduler, as
wchan names it), the cgroup's PSI (io.pressure: I/O wait), its cpu.stat
(throttling), and `perf sched timehist` to check the harness where perf
runs (never needed by the product's tests).

Two kinds of tests: test_truth_* check the workloads and the harness alone
(they pass without the feature); test_split_* compare scprof's JSON with
that truth, and fail until scprof reports the split. What was measured on
the machine the tests were written on is in SPLIT_TRUTH.md.

The tolerance is the issue's: a part within 5% of the calls' time (the
row's total_ns) of its truth. The workload's windows also hold each call's
way back to user space, where 6.18 often switches the thread out after
sys_exit (and always throttles a CPU quota there); in_call_truth takes that
out with scprof's own total_ns. Against a bpftrace model of the split the
corrected truth was within 2% of the calls' time in every mode, on a
loaded machine (SPLIT_TRUTH.md).
"""
import collections
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import (SCPROF, TIMEOUT, by_name, cgroup2_mount, run,
                      unit_slice, workload)

TOL = 0.05


# ---- the product's figures: the one place that knows the key names ---------

PARTS = ("on_cpu_ns", "cpu_wait_ns", "blocked_ns")
LISTS = {"blocked_in": "blocked_ns", "woken_by": "blocked_ns",
         "ran_instead": "cpu_wait_ns"}
SPLIT_KEYS = PARTS + ("io_wait_ns",) + tuple(LISTS)


class Split:
    """A syscall row's split, as scprof's JSON has it."""

    def __init__(self, row):
        missing = [k for k in SPLIT_KEYS if k not in row]
        assert not missing, \
            f"row {row['name']} has no {', '.join(missing)}: scprof does " \
            "not split a call's time yet (issue 41)"
        self.row = row
        self.name = row["name"]
        self.calls = row["calls"]
        self.total = row["total_ns"]
        self.on_cpu = row["on_cpu_ns"]
        self.cpu_wait = row["cpu_wait_ns"]
        self.blocked = row["blocked_ns"]
        self.io_wait = row["io_wait_ns"]
        self.blocked_in = row["blocked_in"]
        self.woken_by = row["woken_by"]
        self.ran_instead = row["ran_instead"]

    def __repr__(self):
        return (f"{self.name}: total {ms(self.total)}, on CPU "
                f"{ms(self.on_cpu)}, waiting {ms(self.cpu_wait)}, blocked "
                f"{ms(self.blocked)} (I/O {ms(self.io_wait)}); blocked in "
                f"{self.blocked_in}; woken by {self.woken_by}; ran instead "
                f"{self.ran_instead}")


def throttling_of(report):
    """The report's cpu_throttling object (None when there is none)."""
    assert "cpu_throttling" in report, \
        "the report has no cpu_throttling: scprof does not read cpu.stat " \
        "yet (issue 41)"
    return report["cpu_throttling"]


def thread_rows(report, tid):
    """{syscall: row} of one thread in a --by tid report."""
    groups = [g for g in report["groups"] if g["tid"] == tid]
    assert len(groups) == 1, f"thread {tid} has {len(groups)} groups"
    return by_name(groups[0]["syscalls"])


def thread_split(report, tid, name):
    rows = thread_rows(report, tid)
    assert name in rows, f"thread {tid} made no {name}: {sorted(rows)}"
    return Split(rows[name])


def every_row(report):
    """(where, row) for every syscall row of a report."""
    for row in report["syscalls"]:
        yield "syscalls", row
    for key in ("processes", "groups"):
        for p in report.get(key) or []:
            for row in p["syscalls"]:
                yield f"{key}[{p.get('by', p['pid'])}]", row


# ---- truth: the workload's own figures --------------------------------------

def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def kv(fields):
    return {k: int(v) for k, v in (f.split("=") for f in fields)}


class Facts:
    """What the split workload printed."""

    def __init__(self, text):
        self.text = text
        self.pid = None
        self.threads = {}   # role: (tid, comm)
        self.truth = {}     # syscall: {calls, wall_ns, cpu_ns, runq_ns, ...}
        self.spin = self.loop = self.overhead = None
        self.stolen = 0  # ns the hypervisor stole during the run, if known
        self.steal = None  # cpu, shared: its steal over the loop, by itself
        for line in text.splitlines():
            f = line.split()
            if f[0] == "pid":
                self.pid = int(f[1])
            elif f[0] == "thread":
                self.threads[f[1]] = (int(f[2]), f[3])
            elif f[0] == "truth":
                self.truth[f[1]] = kv(f[2:])
            elif f[0] == "spin":
                self.spin = kv(f[1:])
            elif f[0] == "loop":
                self.loop = kv(f[1:])
            elif f[0] == "overhead":
                self.overhead = kv(f[1:])
            elif f[0] == "steal":
                self.steal = kv(f[1:])
        assert self.pid and "work" in self.threads, f"split said {text!r}"

    def tid(self, role="work"):
        return self.threads[role][0]


def near(got, want, scale, what, tol=TOL, stolen=0):
    """got within tol * scale of want (scale: the calls' time), and of
    what the hypervisor stole meanwhile if said."""
    assert abs(got - want) <= tol * scale + stolen, \
        f"{what}: scprof {ms(got)}, truth {ms(want)}: more than " \
        f"{tol:.0%} of the calls' {ms(scale)}" + \
        (f" and the {ms(stolen)} stolen" if stolen else "") + " apart"


def steal_ns():
    """The hypervisor's steal time so far, all CPUs (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) * 1e9 / os.sysconf("SC_CLK_TCK")


def share(part, whole):
    return part / whole if whole else 0.0


def in_call_truth(s, t, overhead):
    """The truth for the part of the workload's windows that scprof times,
    sys_enter to sys_exit. A window also holds each call's way back to user
    space, where the kernel may switch the thread out after sys_exit
    (preemption on return to user space; 6.18's CPU quota throttling):
    waiting, never asleep, and not the call's. And it holds the workload's
    own clock reading, on CPU, which windows around no call measure (the
    overhead line: microseconds a window). So: on CPU is the windows' less
    that reading; the time outside the calls is the windows' wall time
    less scprof's total_ns for the calls; less the reading, it was
    waiting, and comes off the run-queue wait. Checked against a bpftrace
    model of the split: SPLIT_TRUTH.md."""
    reading = t["windows"] * overhead["cpu_ns"] / overhead["windows"]
    out = t["wall_ns"] - s.total - reading
    return {"on_cpu": t["cpu_ns"] - reading, "blocked": t["blocked_ns"],
            "cpu_wait": max(0, t["runq_ns"] - max(out, 0)), "out": out}


def check_against_truth(s, facts, exact_calls=True):
    """The row's parts against the workload's figures for the same calls
    of the same thread, each within 5% of the calls' time (the row's
    total_ns). scprof's calls lie inside the windows and hold what the
    windows spent on CPU and asleep."""
    t = facts.truth[s.name]
    if exact_calls:
        assert s.calls == t["calls"], f"{s.name}: {s.calls} calls, " \
            f"the workload made {t['calls']}"
    assert s.total <= t["wall_ns"] * 1.01 + 1e5, \
        f"{s.name}: scprof's {ms(s.total)} is more than the " \
        f"{ms(t['wall_ns'])} around the calls"
    want = in_call_truth(s, t, facts.overhead)
    assert s.total >= want["on_cpu"] + want["blocked"] - TOL * s.total, \
        f"{s.name}: scprof's {ms(s.total)} is less than the calls' time on " \
        f"CPU and asleep ({ms(want['on_cpu'])} + {ms(want['blocked'])})"
    # The truth's on CPU (the thread's schedstat) leaves out what the
    # hypervisor stole from its CPU meanwhile, scprof's cannot: the truth's
    # blocked (the rest) holds it. Allowed for, as the machine measured it.
    near(s.on_cpu, want["on_cpu"], s.total, f"{s.name} on CPU",
         stolen=facts.stolen)
    near(s.blocked, want["blocked"], s.total, f"{s.name} blocked",
         stolen=facts.stolen)
    near(s.cpu_wait, want["cpu_wait"], s.total,
         f"{s.name} waiting for a CPU (the windows waited "
         f"{ms(t['runq_ns'])}, {ms(max(want['out'], 0))} of it after "
         "sys_exit)")
    return want


# ---- truth: the kernel's books ----------------------------------------------

def schedstat(pid, tid):
    """(on CPU ns, run-queue wait ns, times run) of a thread, from
    /proc/PID/task/TID/schedstat; None once it is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            cpu, runq, slices = f.read().split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(cpu), int(runq), int(slices)


# syscall numbers, for /proc/PID/task/TID/syscall
NR = {"x86_64": {"read": 0, "pread64": 17, "futex": 202},
      "aarch64": {"read": 63, "pread64": 67, "futex": 98}}.get(
          platform.machine(), {})


class StackSampler:
    """Samples a thread every few ms while it runs: its state, the syscall
    it is in, the first frame of its kernel stack (/proc/PID/task/TID/stack
    leaves out the scheduler's functions, as wchan does: the first frame is
    where the sleep was asked for) and its schedstat."""

    def __init__(self, pid, tid, every=0.003):
        self.pid, self.tid, self.every = pid, tid, every
        self.samples = []   # (state, syscall nr or None, first frame, stack)
        self.first = self.last = None   # schedstat
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        base = f"/proc/{self.pid}/task/{self.tid}"
        while not self.stop.is_set():
            try:
                with open(f"{base}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                with open(f"{base}/syscall") as f:
                    sc = f.read().split()
                with open(f"{base}/stack") as f:
                    stack = [ln.split()[1].split("+")[0]
                             for ln in f.read().splitlines() if ln.strip()]
            except (FileNotFoundError, ProcessLookupError, IndexError):
                break
            st = schedstat(self.pid, self.tid)
            if st:
                self.first = self.first or st
                self.last = st
            nr = int(sc[0]) if sc and sc[0].lstrip("-").isdigit() else None
            self.samples.append((state, nr, stack[0] if stack else None,
                                 stack))
            time.sleep(self.every)

    def join(self):
        self.stop.set()
        self.thread.join(timeout=TIMEOUT)

    def sleeping_in(self, syscall, states="SD"):
        """Counter of first frames while asleep (states) in syscall."""
        nr = NR.get(syscall)
        return collections.Counter(
            top for state, n, top, _ in self.samples
            if state in states and top and (nr is None or n == nr))

    def top(self, syscall, states="SD"):
        c = self.sleeping_in(syscall, states)
        assert c, f"no sample of the thread asleep in {syscall}: " \
            f"{collections.Counter(s[0] for s in self.samples)}"
        fn, n = c.most_common(1)[0]
        return fn, n / sum(c.values())

    def stacks(self, state):
        return collections.Counter(tuple(s[3][:4]) for s in self.samples
                                   if s[0] == state)


def psi_some_us(cgroup, resource):
    """The 'some' total (µs) of a cgroup v2's RESOURCE.pressure, or None."""
    try:
        with open(os.path.join(cgroup, f"{resource}.pressure")) as f:
            for line in f:
                if line.startswith("some "):
                    return int(line.split("total=")[1])
    except (FileNotFoundError, OSError):
        return None
    return None


def cpu_stat(cgroup):
    """{throttled_ns, nr_throttled, nr_periods} of a cgroup's cpu.stat (v2:
    throttled_usec; v1: throttled_time, in ns)."""
    with open(os.path.join(cgroup, "cpu.stat")) as f:
        st = dict(ln.split() for ln in f if ln.strip())
    ns = int(st["throttled_usec"]) * 1000 if "throttled_usec" in st \
        else int(st["throttled_time"])
    return {"throttled_ns": ns, "nr_throttled": int(st["nr_throttled"]),
            "nr_periods": int(st["nr_periods"])}


# ---- perf sched timehist: a second opinion, where perf runs -----------------

_perf_reason = []


def perf_unusable():
    """Why `perf sched` cannot check the harness here, or None. Debian's
    perf may be older than the kernel: tried once, on a short command."""
    if _perf_reason:
        return _perf_reason[0]
    reason = None
    perf = shutil.which("perf")
    if not perf:
        reason = "perf is not installed (linux-perf)"
    else:
        with tempfile.TemporaryDirectory(prefix="scprof-perf-") as d:
            data = os.path.join(d, "perf.data")
            p = run([perf, "sched", "record", "-o", data, "--", "true"],
                    cwd=d)
            q = run([perf, "sched", "timehist", "-i", data], cwd=d) \
                if p.returncode == 0 else p
            if q.returncode != 0 or b"true[" not in q.stdout:
                ver = run([perf, "--version"]).stdout.decode().strip()
                reason = (f"{ver} cannot record the scheduler on Linux "
                          f"{platform.release()}: "
                          f"{q.stderr.decode(errors='replace')[-300:]}")
    _perf_reason.append(reason)
    return reason


TIMEHIST = re.compile(r"^\s*([\d.]+)\s+\[\d+\]\s+(.*)\[(\d+)(?:/(\d+))?\]\s+"
                      r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$")


def overlap(a, b, lo, hi):
    return max(0.0, min(b, hi) - max(a, lo))


def perf_threads(cmd, tmp_path):
    """Run cmd (the split workload) under `perf sched record` on
    CLOCK_MONOTONIC; return (its Facts, {tid: {run, runq, sleep, dsleep}} in
    ns, over the workload's measured loop) from `perf sched timehist
    --state`. Each line is a switch out: the run before it, and before
    that the time off CPU (wait: asleep until woken, or preempted; sch
    delay: woken until run). Time off CPU is run-queue wait when the
    switch out before it left the thread runnable (state R, R+), sleep
    until the wakeup and run-queue wait after it otherwise (D:
    uninterruptible, I/O)."""
    reason = perf_unusable()
    if reason:
        pytest.skip(reason)
    data = str(tmp_path / "perf.data")
    p = run(["perf", "sched", "record", "-k", "CLOCK_MONOTONIC", "-o", data,
             "--"] + cmd, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    facts = Facts(p.stdout.decode())
    lo, hi = facts.loop["start_ns"], facts.loop["end_ns"]
    q = run(["perf", "sched", "timehist", "--state", "-i", data],
            cwd=str(tmp_path))
    assert q.returncode == 0, q.stderr.decode(errors="replace")
    threads = {}
    prev = {}
    for line in q.stdout.decode(errors="replace").splitlines():
        m = TIMEHIST.match(line)
        if not m:
            continue
        tid = int(m.group(3))
        out = float(m.group(1)) * 1e9
        wait, delay, run_ns = (float(m.group(i)) * 1e6 for i in (5, 6, 7))
        t = threads.setdefault(tid, collections.Counter())
        t_in = out - run_ns
        t["run"] += overlap(t_in, out, lo, hi)
        before = prev.get(tid)
        if before is not None:
            state, last_out = before
            if tid == facts.tid() and lo <= out <= hi and wait == 0 and \
                    delay == 0 and state[0] in "SD":
                ver = run(["perf", "--version"]).stdout.decode().strip()
                pytest.skip(f"{ver} lost scheduler events on Linux "
                            f"{platform.release()}: the worker ran "
                            f"{run_ns / 1e6:.3f} ms from a sleep with no "
                            f"switch in recorded (at {m.group(1)})")
            if state.startswith("R") or state == "W":
                # preempted; perf older than the kernel reads R+ as W
                t["runq"] += overlap(last_out, t_in, lo, hi)
            else:
                woken = t_in - delay
                t["sleep"] += overlap(last_out, woken, lo, hi)
                t["runq"] += overlap(woken, t_in, lo, hi)
                if state.startswith("D"):
                    t["dsleep"] += overlap(last_out, woken, lo, hi)
        prev[tid] = (m.group(8), out)
    return facts, threads


# ---- running the workload -------------------------------------------------

def in_cgroup(cgroup, cmd):
    """cmd, moved into cgroup first (the shell moves itself, then execs)."""
    return ["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$@"',
            "sh"] + cmd


LAST_CPU = os.cpu_count() - 1


class Run:
    """The split workload, under scprof (--by tid, JSON unless fmt says
    otherwise: then no report is read) or alone, with
    its thread "split-work" sampled while it runs if asked; in a cgroup if
    given, on one CPU if pinned (the io mode's PSI needs every task of its
    cgroup on the CPU the worker is on: PSI weighs each CPU's stall by how
    busy the cgroup kept it)."""

    def __init__(self, tmp_path, args, profile=True, cgroup=None,
                 sample=False, pinned=False, scprof_args=(), fmt="json"):
        cmd = [workload("split")] + [str(a) for a in args]
        if cgroup:
            cmd = in_cgroup(cgroup, cmd)
        if pinned:
            cmd = ["taskset", "-c", str(LAST_CPU)] + cmd
        self.out = str(tmp_path / "report.json")
        if profile:
            cmd = [SCPROF, "--by", "tid"] + list(scprof_args) + \
                ["--format", fmt, "-o", self.out, "--"] + cmd
        errf = tempfile.TemporaryFile()
        stolen = steal_ns()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf,
                                stdin=subprocess.DEVNULL)
        # a hang is a failure: killed after TIMEOUT, wherever it hangs
        watchdog = threading.Timer(TIMEOUT, proc.kill)
        watchdog.start()
        self.sampler = None
        lines = []
        try:
            while not any(ln.startswith(b"thread work ") for ln in lines):
                line = proc.stdout.readline()
                assert line, "split ended before naming its worker"
                lines.append(line)
            if sample:
                pid = int(lines[0].split()[1])
                tid = int([ln for ln in lines
                           if ln.startswith(b"thread work ")][0].split()[2])
                self.sampler = StackSampler(pid, tid)
            # (read through the buffered pipe: communicate() reads the
            # descriptor, past lines readline had already buffered)
            lines.append(proc.stdout.read())
            proc.wait(timeout=TIMEOUT)
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if self.sampler:
                self.sampler.join()
        errf.seek(0)
        self.stderr = errf.read().decode(errors="replace")
        errf.close()
        self.rc = proc.returncode
        assert self.rc == 0, f"{cmd}: exit {self.rc}: {self.stderr}"
        self.facts = Facts(b"".join(lines).decode())
        self.facts.stolen = steal_ns() - stolen
        self.report = None
        if profile and fmt == "json":
            with open(self.out) as f:
                self.report = json.load(f, strict=True)

    def split(self, name, role="work"):
        return thread_split(self.report, self.facts.tid(role), name)


# ---- fixtures: a loop device with ext4, a cgroup with a CPU quota -----------

@pytest.fixture(scope="module")
def ext4_loop(tmp_path_factory):
    """A 32 MiB file on ext4 on a loop device over a file on the disk,
    the loop device doing direct I/O to its file where it can (so reads
    reach the disk, not the page cache). Unmounted and detached after,
    whatever happened."""
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed: no loop device to read")
    if not os.path.exists("/dev/loop-control"):
        pytest.skip("no /dev/loop-control (a container?): no loop device")
    d = tmp_path_factory.mktemp("ext4loop")
    img, mnt = d / "img", d / "mnt"
    with open(img, "wb") as f:
        f.truncate(96 << 20)
    mnt.mkdir()
    undo = []
    try:
        p = run(["losetup", "--find", "--show", "--direct-io=on", str(img)])
        if p.returncode != 0:
            p = run(["losetup", "--find", "--show", str(img)])
        if p.returncode != 0:
            pytest.skip("losetup cannot attach a loop device here: "
                        f"{p.stderr.decode(errors='replace').strip()}")
        dev = p.stdout.decode().strip()
        undo.append(["losetup", "-d", dev])
        # no lazy init: ext4lazyinit zeroing inode tables in the background
        # holds locks the reads then sleep on outside I/O wait
        p = run(["mkfs.ext4", "-q", "-F", "-E",
                 "lazy_itable_init=0,lazy_journal_init=0", dev])
        assert p.returncode == 0, p.stderr
        p = run(["mount", "-t", "ext4", dev, str(mnt)])
        if p.returncode != 0:
            pytest.skip("cannot mount ext4 on a loop device here: "
                        f"{p.stderr.decode(errors='replace').strip()}")
        undo.append(["umount", str(mnt)])
        data = mnt / "data"
        with open(data, "wb") as f:
            for _ in range(32):
                f.write(os.urandom(1 << 20))
            f.flush()
            os.fsync(f.fileno())
        yield str(data)
    finally:
        for cmd in reversed(undo):
            for _ in range(50):
                if run(cmd).returncode == 0:
                    break
                time.sleep(0.1)
            else:
                if cmd[0] == "umount":
                    run(["umount", "-l", cmd[1]])


@pytest.fixture
def psi_cgroup():
    """A cgroup v2 of its own (for its io.pressure), or None."""
    if not cgroup2_mount():
        yield None
        return
    for top in unit_slice("scprof-e2e-split-psi", []):
        yield top if psi_some_us(top, "io") is not None else None


def cgroup_v1_cpu_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype, opts = line.split()[:4]
            if fstype == "cgroup" and "cpu" in opts.split(","):
                return mnt
    return None


QUOTA_US, PERIOD_US = 10000, 100000


@pytest.fixture
def quota_cgroup():
    """A cgroup with a CPU quota of QUOTA_US every PERIOD_US: cgroup v2's
    cpu.max where v2 has the cpu controller, else cgroup v1's cpu
    controller (a hybrid machine: systemd's legacy layouts, this one);
    skipped where neither has it. Removed after."""
    mnt = cgroup2_mount()
    ctrl = ""
    if mnt:
        with open(os.path.join(mnt, "cgroup.controllers")) as f:
            ctrl = f.read().split()
    if "cpu" in ctrl:
        root_sub = os.path.join(mnt, "cgroup.subtree_control")
        with open(root_sub) as f:
            enabled_here = "cpu" not in f.read().split()
        if enabled_here:
            with open(root_sub, "w") as f:
                f.write("+cpu")
        slice_ = unit_slice("scprof-e2e-split-quota", ["quota"])
        path = None
        try:
            top = next(slice_)
            with open(os.path.join(top, "cgroup.subtree_control"), "w") as f:
                f.write("+cpu")
            path = os.path.join(top, "quota")
            with open(os.path.join(path, "cpu.max"), "w") as f:
                f.write(f"{QUOTA_US} {PERIOD_US}")
            yield path
        finally:
            if path:
                kill_all(path)
            for _ in slice_:    # unit_slice removes the cgroups
                pass
            if enabled_here:
                try:
                    with open(root_sub, "w") as f:
                        f.write("-cpu")
                except OSError:
                    pass
        return
    v1 = cgroup_v1_cpu_mount()
    if not v1:
        pytest.skip("no cpu controller, neither in cgroup v2 "
                    f"({mnt}: {' '.join(ctrl) or 'none'}) nor in a cgroup "
                    "v1 hierarchy: no CPU quota to throttle with")
    path = os.path.join(v1, f"scprof-e2e-split-{os.getpid()}")
    os.mkdir(path)
    try:
        with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
            f.write(str(PERIOD_US))
        with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(QUOTA_US))
        yield path
    finally:
        kill_all(path)
        for _ in range(500):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.01)


def kill_all(cgroup):
    try:
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            for pid in f.read().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
    except FileNotFoundError:
        pass


# ==== the truth alone: the workloads say what they claim ====================

def test_truth_cpu(tmp_path):
    """split cpu: nothing in /dev/zero's reads or getrandom sleeps, so what
    the calls spend is on CPU or waiting for it (blocked: interrupts, under
    5%, and the hypervisor's steal, which schedstat's time on CPU leaves
    out: the workload measures it over its loop, all CPUs, and checks
    this too). On a quiet CPU the wait is near nothing; on this shared
    machine it is what the other tenants' load makes it, which schedstat
    measures."""
    r = Run(tmp_path, ["cpu", 100], profile=False)
    steal = r.facts.steal
    assert steal and steal["grain_ns"] > 0, "split cpu did not say its steal"
    for name in ("read", "getrandom"):
        t = r.facts.truth[name]
        assert t["calls"] == 100
        assert t["blocked_ns"] <= 0.05 * t["wall_ns"] + steal["steal_ns"] + \
            steal["grain_ns"], (t, steal)


def test_truth_shared(tmp_path):
    """split shared: a spinning thread on the worker's CPU takes about half
    of it; schedstat's run-queue wait over the calls is then at least a
    quarter of their time (half on an otherwise idle CPU), and the spinner
    ran only while the worker waited (it runs nowhere else, and the worker
    never sleeps): its CPU time is at most the worker's wait. Seen from
    outside (/proc/PID/task/TID/schedstat sampled from before the loop to
    after it), the worker waited no less than it measured itself."""
    r = Run(tmp_path, ["shared", 100], profile=False, sample=True)
    rd, rnd = r.facts.truth["read"], r.facts.truth["getrandom"]
    loop = r.facts.loop
    wall = rd["wall_ns"] + rnd["wall_ns"]
    runq = rd["runq_ns"] + rnd["runq_ns"]
    assert runq >= 0.25 * wall, (rd, rnd)
    assert r.facts.spin["cpu_ns"] <= loop["runq_ns"] + TOL * wall, \
        (r.facts.spin, loop)
    # the calls' waits are the loop's, less a little between the calls;
    # seen from outside, from before the loop to after it, no less
    near(runq, loop["runq_ns"], wall, "the calls' wait vs the loop's")
    s = r.sampler
    assert s.first and s.last
    assert s.last[1] - s.first[1] >= loop["runq_ns"] - TOL * wall, \
        (s.first, s.last, loop)


@pytest.mark.parametrize("mode,syscall,where", [
    (["pipe", 50], "read", "pipe_read"),
    (["futex", 60], "futex", "futex"),
])
def test_truth_sleeps(tmp_path, mode, syscall, where):
    """split pipe / split futex: the reads (mutex locks) are blocked for
    90% (80%) of their time or more (the workload checks it); the kernel
    stack of the sleeping worker names the function it sleeps in:
    anon_pipe_read and futex_do_wait on 6.18 (pipe_read, futex_wait_queue
    on older kernels)."""
    r = Run(tmp_path, mode, profile=False, sample=True)
    t = r.facts.truth[syscall]
    assert t["blocked_ns"] >= 0.8 * t["wall_ns"], t
    fn, frac = r.sampler.top(syscall, "S")
    assert where in fn and frac >= 0.9, r.sampler.sleeping_in(syscall)


def test_truth_io(tmp_path, ext4_loop, psi_cgroup):
    """split io: O_DIRECT preads of ext4 on a loop device sleep in I/O wait
    (D state, in __iomap_dio_rw on 6.18); the worker is pinned to one CPU,
    so its cgroup's io.pressure 'some' (PSI, the kernel's own I/O-wait
    books) is its time in I/O wait, which is the blocked time schedstat
    leaves: within 5% of the calls' time."""
    before = psi_some_us(psi_cgroup, "io") if psi_cgroup else None
    r = Run(tmp_path, ["io", ext4_loop, 40], profile=False, sample=True,
            cgroup=psi_cgroup, pinned=True)
    t = r.facts.truth["pread64"]
    fn, frac = r.sampler.top("pread64", "D")
    assert frac >= 0.9, r.sampler.sleeping_in("pread64")
    if before is None:
        pytest.skip("no cgroup v2 io.pressure (PSI) here: the I/O wait is "
                    "checked by its D state only")
    io = (psi_some_us(psi_cgroup, "io") - before) * 1000
    # (PSI books from the dequeue to the enqueue, weighed over CPUs: seen
    # 40 ms of 350 from schedstat's blocked, both ways)
    near(io, t["blocked_ns"], t["wall_ns"], "PSI's I/O wait vs blocked",
         tol=0.2)


def test_truth_quota(tmp_path, quota_cgroup):
    """split quota in a cgroup allowed a tenth of a CPU: the loop waits
    for a CPU most of the time and cpu.stat counts the throttling. Where the
    throttled thread waits is the kernel's choice: 6.18 throttles a task
    when it returns to user space (task-based throttling: its stack is
    task_work_run <- exit_to_user_mode_loop, after sys_exit), older kernels
    at the next preemption point inside the call. This test prints which
    (pytest -s) and checks only what holds on both."""
    before = cpu_stat(quota_cgroup)
    r = Run(tmp_path, ["quota", 2], profile=False, sample=True,
            cgroup=quota_cgroup)
    after = cpu_stat(quota_cgroup)
    loop = r.facts.loop
    assert loop["runq_ns"] >= 0.5 * loop["wall_ns"], loop
    throttled = after["throttled_ns"] - before["throttled_ns"]
    assert after["nr_throttled"] > before["nr_throttled"]
    # the cgroup's throttled time is per CPU's run queue: one thread on
    # one run queue at a time, so about the thread's wait
    assert 0.5 * loop["runq_ns"] <= throttled <= 1.1 * loop["wall_ns"], \
        (throttled, loop)
    print("throttled thread's stacks:", r.sampler.stacks("R").most_common(3))


@pytest.mark.parametrize("mode", [["cpu", "60"], ["shared", "60"],
                                  ["pipe", "40"], ["futex", "40"]],
                         ids=lambda m: m[0])
def test_truth_perf_agrees(tmp_path, mode):
    """perf sched timehist's view of the worker thread over its measured
    loop (perf on CLOCK_MONOTONIC, cut to the loop's bounds as the
    workload printed them) agrees with the workload's schedstat figures for
    the loop: on CPU, waiting and asleep each within 5% of the loop's time.
    Skipped where perf cannot record this kernel's scheduler events;
    nothing else uses perf."""
    facts, threads = perf_threads([workload("split")] + mode, tmp_path)
    p = threads.get(facts.tid())
    assert p, f"perf saw no thread {facts.tid()}"
    loop = facts.loop
    blocked = loop["wall_ns"] - loop["cpu_ns"] - loop["runq_ns"]
    got = {k: round(v / 1e6, 2) for k, v in p.items()}
    near(p["run"], loop["cpu_ns"], loop["wall_ns"], f"perf on CPU {got}")
    near(p["runq"], loop["runq_ns"], loop["wall_ns"], f"perf waiting {got}")
    near(p["sleep"], blocked, loop["wall_ns"], f"perf asleep {got}")


# ==== scprof against the truth ===============================================

def test_split_cpu(tmp_path):
    """(a) Kernel work only: 8 MiB reads of /dev/zero and 1 MiB getrandom()s.
    Truth: the worker's own schedstat around the calls (on CPU, run-queue
    wait; blocked is the rest, under 5%: interrupts and steal), less what
    fell after sys_exit (in_call_truth). Each part within 5% of the calls'
    time of its truth; blocked under 5%. On a quiet CPU (the truth waited
    under 2%) on CPU is 95% of the time or more."""
    r = Run(tmp_path, ["cpu", 150])
    for name in ("read", "getrandom"):
        s, t = r.split(name), r.facts.truth[name]
        check_against_truth(s, r.facts)
        assert s.blocked <= TOL * s.total, s
        assert s.io_wait <= s.blocked, s
        if t["runq_ns"] <= 0.02 * t["wall_ns"]:
            assert s.on_cpu >= 0.95 * s.total, s


def test_split_shared(tmp_path):
    """(b) The same work pinned to one CPU with a thread spinning there:
    waiting for a CPU is a large part of the calls. Truth: schedstat's
    run-queue delay of the worker over the calls, less what fell after
    sys_exit (in_call_truth); scprof's waiting within 5% of the calls' time
    of it, as the issue asks. What ran instead names the spinner
    ("split-spin"), for no more than it spun (its own
    CLOCK_THREAD_CPUTIME_ID: it runs only while the worker waits), and for
    about its share of all the worker's waits (within 0.15). Skipped where
    the kernel let the calls run and made the worker wait only on its way
    back to user space (no waiting inside the calls to check)."""
    r = Run(tmp_path, ["shared", 100])
    spin_cpu = r.facts.spin["cpu_ns"]
    spin_share = min(1.0, spin_cpu / r.facts.loop["runq_ns"])
    spun, total = 0, 0
    for name in ("read", "getrandom"):
        s, t = r.split(name), r.facts.truth[name]
        want = check_against_truth(s, r.facts)
        assert s.blocked <= TOL * s.total, s
        assert sum(e["ns"] for e in s.ran_instead) <= s.cpu_wait * 1.001, s
        # (other tests' spinners may share the CPU: this one's, by pid)
        spin = [e for e in s.ran_instead if e["comm"] == "split-spin" and
                e["pid"] in (r.facts.pid, r.facts.tid("spin"))]
        assert len(spin) == 1, f"the spinner is not in ran_instead: {s}"
        spun += spin[0]["ns"]
        total += s.total
        if name == "getrandom":
            if want["cpu_wait"] < 0.1 * s.total:
                pytest.skip("the calls waited for a CPU only after sys_exit "
                            f"here ({ms(want['cpu_wait'])} of "
                            f"{ms(s.total)} inside): nothing to check")
            # what ran just before the worker got its CPU back names the
            # spinner first; others on that CPU (a loaded machine's: seen
            # 22% at a load of 6) take some of the rest
            assert s.ran_instead[0]["comm"] == "split-spin", s
            assert spin_share - 0.25 <= spin[0]["share"] <= \
                spin_share + 0.15, \
                f"the spinner took {spin_share:.0%} of the worker's waits; " \
                f"scprof: {s}"
    assert spun <= spin_cpu + TOL * total, \
        f"the spinner ran {ms(spin_cpu)}, scprof says {ms(spun)} instead"


def test_split_pipe(tmp_path):
    """(c) A pipe read fed a byte every 10 ms by another thread: blocked
    about all of the time (90% or more: the workload checks its truth),
    none of it I/O wait (a pipe is not I/O: in_iowait is 0), asleep in the
    function the sleeping thread's kernel stack names (sampled:
    anon_pipe_read on 6.18, pipe_read before) for 90% of the blocked time or
    more, woken by the writer thread (its comm, pid and tid) for 90% or
    more. Blocked and waiting within 5% of the calls' time of schedstat's
    figures for the same calls."""
    r = Run(tmp_path, ["pipe", 100], sample=True)
    s, t = r.split("read"), r.facts.truth["read"]
    check_against_truth(s, r.facts)
    assert s.blocked >= 0.9 * s.total, s
    assert s.io_wait <= TOL * s.blocked, s
    fn, _ = r.sampler.top("read", "S")
    assert s.blocked_in, s
    top = s.blocked_in[0]
    assert top["function"] == fn and "pipe_read" in fn, \
        f"slept in {fn} (kernel stack), scprof says {s.blocked_in}"
    assert top["share"] >= 0.9, s
    w = s.woken_by[0] if s.woken_by else {}
    writer_tid, writer_comm = r.facts.threads["writer"]
    assert (w.get("kind"), w.get("comm"), w.get("pid"), w.get("tid")) == \
        ("task", writer_comm, r.facts.pid, writer_tid), s
    assert w["share"] >= 0.9, s


def test_split_futex(tmp_path):
    """(d) A mutex another thread holds 5 ms at a time (sleeping while it
    holds it): the waiter's futex calls (the lock's wait and the unlock's
    wake) are blocked 80% of their time or more, in the futex path
    (futex_do_wait on 6.18: what the sampled kernel stack names), woken by
    the holder thread (its comm, pid and tid) for 90% of the blocked time
    or more; no I/O wait. Each part within 5% of the calls' time of the
    schedstat truth; the number of futex calls is glibc's, not counted."""
    r = Run(tmp_path, ["futex", 150], sample=True)
    s, t = r.split("futex"), r.facts.truth["futex"]
    check_against_truth(s, r.facts, exact_calls=False)
    assert s.calls >= t["calls"] // 2, s
    assert s.blocked >= 0.8 * s.total, s
    assert s.io_wait <= TOL * s.blocked, s
    fn, _ = r.sampler.top("futex", "S")
    assert s.blocked_in and s.blocked_in[0]["function"] == fn and \
        "futex" in fn, f"slept in {fn} (kernel stack), scprof: {s}"
    assert s.blocked_in[0]["share"] >= 0.9, s
    w = s.woken_by[0] if s.woken_by else {}
    holder_tid, holder_comm = r.facts.threads["holder"]
    assert (w.get("kind"), w.get("comm"), w.get("pid"), w.get("tid")) == \
        ("task", holder_comm, r.facts.pid, holder_tid), s
    assert w["share"] >= 0.9, s


def test_split_io(tmp_path, ext4_loop, psi_cgroup):
    """(e) O_DIRECT 4 MiB preads of a file on ext4 on a loop device (which
    reads its file on the disk with direct I/O): blocked most of the time,
    and all of the blocked time is I/O wait (the thread sleeps with
    in_iowait set). Truth: blocked from schedstat around each call; I/O
    wait from the cgroup's PSI io 'some' total (the worker is pinned to one
    CPU, so that is its own I/O wait; checked against blocked by
    test_truth_io); where it sleeps from its kernel stack, sampled
    (__iomap_dio_rw on 6.18, in D state). Parts within 5% of the calls'
    time; where PSI is missing, I/O wait is checked against blocked (a
    sleep on a lock in D state is blocked but not I/O wait: PSI tells)."""
    before = psi_some_us(psi_cgroup, "io") if psi_cgroup else None
    r = Run(tmp_path, ["io", ext4_loop, 50], sample=True, cgroup=psi_cgroup,
            pinned=True)
    s, t = r.split("pread64"), r.facts.truth["pread64"]
    check_against_truth(s, r.facts)
    # the blocked time is I/O wait as far as the sleeps sampled in D state
    # in the I/O path go (90% or more), never more than blocked
    fn, frac = r.sampler.top("pread64", "D")
    assert s.io_wait <= s.blocked + 1000, s
    assert s.io_wait >= (frac - TOL) * s.blocked, (frac, s)
    if before is not None:
        # PSI books I/O wait from the dequeue to the enqueue, weighed over
        # the CPUs by how busy each was: a looser truth (seen 40 ms of 350
        # apart, both ways, and 140 of 571 in one run of six): the same
        # order, within a factor of 2 either way. schedstat's blocked and
        # the D-state samples above are the exact checks.
        io = (psi_some_us(psi_cgroup, "io") - before) * 1000
        assert 0.5 * io <= s.io_wait <= 2 * io, \
            f"pread64's I/O wait: scprof {ms(s.io_wait)}, PSI {ms(io)}"
    assert s.blocked_in and s.blocked_in[0]["function"] == fn, \
        f"slept in {fn} (kernel stack), scprof: {s}"
    assert s.blocked_in[0]["share"] >= 0.9, s


def test_split_quota(tmp_path, quota_cgroup):
    """(f) 8 MiB reads of /dev/zero in a cgroup allowed 10% of a CPU, for
    2 s: cpu_throttling has the cgroup, its quota and period, and its
    throttled time, throttle count and periods as cpu.stat counts them over
    the run (read by the test before and after: throttled time within 5%
    (and 10 ms), counts within 2). The rows: on CPU and blocked as the
    worker measured them; waiting is what the run queue held the thread
    back inside the calls, which is the truth's wait less the time its
    windows spent outside the kernel's call (the window's wall time less
    scprof's own total_ns: time outside sys_enter..sys_exit is all waiting,
    the workload's clock reads take microseconds). That is the whole
    throttling where the kernel throttles inside the call (before 6.18),
    and nearly none of it on 6.18, which throttles after sys_exit, on the
    way back to user space (see test_truth_quota): a product that counts
    the throttling there, or misses it inside, fails."""
    before = cpu_stat(quota_cgroup)
    r = Run(tmp_path, ["quota", 2], cgroup=quota_cgroup)
    after = cpu_stat(quota_cgroup)
    th = throttling_of(r.report)
    assert th is not None, "no cpu_throttling for a throttled cgroup"
    name = os.path.basename(quota_cgroup)
    assert th["cgroup"].rstrip("/").endswith(name), th
    assert th["quota_us"] == QUOTA_US and th["period_us"] == PERIOD_US, th
    delta = {k: after[k] - before[k] for k in after}
    assert delta["throttled_ns"] > 0
    assert abs(th["throttled_ns"] - delta["throttled_ns"]) <= \
        TOL * delta["throttled_ns"] + 10e6, (th, delta)
    assert abs(th["nr_throttled"] - delta["nr_throttled"]) <= 2, (th, delta)
    # (the bandwidth timer counts a few idle periods after the task has
    # gone, between scprof's last read and the test's)
    assert -2 <= delta["nr_periods"] - th["nr_periods"] <= 5, (th, delta)
    check_against_truth(r.split("read"), r.facts)


@pytest.mark.parametrize("by", [[], ["--by", "tid"]], ids=["procs", "tids"])
def test_split_adds_up(tmp_path, by):
    """Every row of a report (the totals, each process's or thread's):
    on CPU + waiting + blocked is the row's total_ns (to 0.1% and 1 µs:
    the parts are sums of whole nanoseconds, as the total is); I/O wait
    is part of blocked; each list is largest first, its shares are its
    ns over the part it splits (blocked for blocked_in and woken_by,
    waiting for ran_instead) and add up to at most 1; a waker is a task
    (with comm, pid and tid), an interrupt or a timer. A mix of calls
    that sleep, wait and compute, from a shell and its children."""
    sh = (f"ls -l / /proc/self/ >/dev/null; {workload('split')} pipe 20 2 "
          f">/dev/null; {workload('split')} futex 20 2 >/dev/null; "
          f"{workload('split')} shared 10 >/dev/null; sleep 0.05")
    out = str(tmp_path / "r.json")
    p = run([SCPROF, "-f"] + by + ["--format", "json", "-o", out, "--",
                                   "sh", "-c", sh])
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        report = json.load(f, strict=True)
    rows = list(every_row(report))
    assert len(rows) > 20
    for where, row in rows:
        s = Split(row)
        what = f"{where} {s.name}"
        parts = s.on_cpu + s.cpu_wait + s.blocked
        assert min(s.on_cpu, s.cpu_wait, s.blocked, s.io_wait) >= 0, s
        assert abs(parts - s.total) <= 0.001 * s.total + 1000, \
            f"{what}: parts add up to {parts}, total_ns {s.total}"
        assert s.io_wait <= s.blocked, what
        for key, part in LISTS.items():
            lst = row[key]
            whole = row[part]
            ns = [e["ns"] for e in lst]
            assert ns == sorted(ns, reverse=True), f"{what} {key}: {lst}"
            assert sum(ns) <= whole + 1000, f"{what} {key}: {lst} > {whole}"
            assert sum(e["share"] for e in lst) <= 1 + 1e-6, (what, lst)
            for e in lst:
                assert 0 <= e["share"] <= 1, (what, e)
                assert abs(e["share"] - share(e["ns"], whole)) <= 1e-3, \
                    (what, key, e, whole)
        for e in row["blocked_in"]:
            assert isinstance(e["function"], str) and e["function"], e
        for e in row["woken_by"]:
            assert e["kind"] in ("task", "interrupt", "timer"), e
            if e["kind"] == "task":
                assert e["comm"] and e["pid"] > 0 and e["tid"] > 0, e
        for e in row["ran_instead"]:
            assert isinstance(e["comm"], str) and e["pid"] >= 0, e

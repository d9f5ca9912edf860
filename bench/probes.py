# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The probes `make bench` measures, and how to run one.

Each probe is a Config: how to start it on a target pid, how to tell it
is attached (its BPF programs have run, strace's TracerPid, perf's ring
buffers), how to read what it counted; Running runs one on a target,
for every section: the loops (loops.py), the real services (services.py)
and the cost sections (cost.py). Also here: bpf_stats, the BPF programs
a process holds, and the host's description.
"""
import ctypes
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

KINDS = ("getppid", "read", "write")
# Syscall numbers, for the bpftrace maps that are keyed by number.
NRS = {
    "x86_64": {"getppid": 110, "read": 0, "write": 1},
    "aarch64": {"getppid": 173, "read": 63, "write": 64},
}
BPF_PROG_TYPES = {"tracing", "tracepoint", "raw_tracepoint",
                  "raw_tracepoint_writable"}

BPFTRACE_COUNT = "tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }"
BPFTRACE_HIST = """
tracepoint:raw_syscalls:sys_enter { @start[tid] = nsecs; }
tracepoint:raw_syscalls:sys_exit /@start[tid]/ {
	@ns[args->id] = hist(nsecs - @start[tid]);
	delete(@start[tid]);
}
"""


# The floors' configuration names, by the floor a configuration has.
FLOORS = {"enter": "floor: empty sys_enter", "exit": "floor: empty sys_exit",
          "pair": "floor: empty sys_enter+exit"}

# The daemon's reference in the loops section: -C -a in long loops marked
# in their warm-up, as the daemon's are (Config.mark).
MARKED_C_A = "scprof -C -a (long loop, marked)"


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- bpf_stats: enabled only while we wait for programs to run ---------

class BpfStats:
    """bpf(BPF_ENABLE_STATS): run_time_ns/run_cnt counted while the fd is
    open. Refcounted in the kernel, so it does not clobber anyone else's."""
    BPF_ENABLE_STATS = 32
    NR_BPF = {"x86_64": 321, "aarch64": 280}

    def __init__(self):
        self.fd = -1

    def __enter__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(16)  # enable_stats.type = 0
        nr = self.NR_BPF.get(platform.machine())
        if nr is None:
            raise BenchError("bpf syscall number unknown on this arch")
        fd = libc.syscall(nr, self.BPF_ENABLE_STATS, attr, 16)
        if fd < 0:
            raise BenchError("BPF_ENABLE_STATS: %s" %
                             os.strerror(ctypes.get_errno()))
        self.fd = fd
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        self.fd = -1


def prog_ids_of(pid):
    """BPF program ids held by a process (prog fds and link fds)."""
    ids = set()
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


def progs_info():
    out = subprocess.run(["bpftool", "-j", "prog", "show"],
                         capture_output=True, text=True, check=False).stdout
    try:
        return {p["id"]: p for p in json.loads(out or "[]")}
    except ValueError:
        return {}


def tracing_progs(pid, info=None):
    info = progs_info() if info is None else info
    return {i: info[i] for i in prog_ids_of(pid)
            if i in info and info[i].get("type") in BPF_PROG_TYPES}


def foreign_probes(own_pids):
    """Attached tracing links that are not ours: other people's probes
    slow every syscall, the bare runs' included. (Probes attached without
    a BPF link, as bpftrace does, are not seen.)"""
    own = set()
    for pid in own_pids:
        own |= prog_ids_of(pid)
    out = subprocess.run(["bpftool", "-j", "link", "show"],
                         capture_output=True, text=True, check=False).stdout
    try:
        links = json.loads(out or "[]")
    except ValueError:
        return 0
    return sum(1 for ln in links
               if ln.get("type") in ("raw_tracepoint", "tracing", "perf_event")
               and ln.get("prog_id") not in own)


# ---- the probes --------------------------------------------------------

class Config:
    """One probe configuration: how to start it, how to tell it is
    attached, how to read what it counted."""

    def __init__(self, name, argv, attach, parse=None, min_progs=1,
                 note="", min_seen=1.0, long_run=False, floor=None,
                 label=None, service=False, mark=None):
        self.name = name
        # Short name for charts (floor-exit, -C -a, ...).
        self.label = label or name
        # Measured on the real services too (the default set there).
        self.service = service
        self.argv = argv  # fn(loop_pid, outfile) -> list, or None (bare)
        self.attach = attach  # "bpf", "line", "ptrace", "perf", None
        self.parse = parse  # fn(text, loop pid) -> {kind: count}, or None
        self.min_progs = min_progs
        self.note = note
        # Share of the loop's calls the probe must report. perf trace
        # reads its ring buffers from userspace and may lose a few events
        # on a loaded machine after attaching: that is not detachment.
        self.min_seen = min_seen
        # A probe whose cost changes over time (the daemon's latency
        # windows): its loops run --long-seconds and are compared by their
        # mean with the means of the bare runs on both sides.
        self.long_run = long_run
        # The physical floor this configuration is compared with: "exit"
        # (one empty program), "pair" (empty enter and exit programs) or
        # "enter" (for the peers on sys_enter only).
        self.floor = floor
        # True: its loops are marked in their warm-up (mark_running), so
        # that a probe which marks them itself midway (the daemon's first
        # closing window) is compared in one state all along, with a
        # reference marked alike.
        self.mark = mark


# The parsers return {syscall: calls} for every syscall a report shows;
# the loops look up their own kinds, the services add them all up.
NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*(\([a-z0-9_]+\))?$")


def _add(counts, name, n):
    if NAME_RE.match(name) and name != "total":
        counts[name] = counts.get(name, 0) + int(n)


def parse_strace_table(text, _pid=None):
    """scprof's and strace's -c table: calls is the 4th column."""
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 5 and tok[3].isdigit():
            _add(counts, tok[-1], tok[3])
    return counts


def parse_count_table(text, _pid=None):
    """scprof --count-only's table: calls is the 1st column."""
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 2 and tok[0].isdigit():
            _add(counts, tok[-1], tok[0])
    return counts


def parse_scprof_csv(text, pid):
    """scprof --format csv: the target's own rows."""
    counts = {}
    lines = [l for l in text.splitlines() if l.startswith(("pid,", "%d," % pid))]
    if not lines or not lines[0].startswith("pid,"):
        return counts
    head = lines[0].split(",")
    ip, isc, ic = head.index("pid"), head.index("syscall"), head.index("calls")
    for line in lines[1:]:
        f = line.split(",")
        if len(f) == len(head) and f[ip] == str(pid) and f[ic].isdigit():
            _add(counts, f[isc], f[ic])
    return counts


def parse_syscount(text, _pid=None):
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 2 and tok[1].isdigit():
            _add(counts, tok[0], tok[1])
    return counts


def _by_nr_names(by_nr):
    names = {nr: k for k, nr in NRS.get(platform.machine(), {}).items()}
    return {names.get(nr, "nr%d" % nr): n for nr, n in by_nr.items()}


def parse_bpftrace_count(text, _pid=None):
    return _by_nr_names({
        int(m.group(1)): int(m.group(2))
        for m in re.finditer(r"^@\[(\d+)\]: (\d+)$", text, re.M)})


def parse_bpftrace_hist(text, _pid=None):
    by_nr, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^@ns\[(\d+)\]:", line)
        if m:
            cur = int(m.group(1))
            by_nr[cur] = 0
            continue
        m = re.match(r"^[\[(].*?[\])]\s+(\d+)\s*\|", line)
        if m and cur is not None:
            by_nr[cur] += int(m.group(1))
    return _by_nr_names(by_nr)


def parse_perf_trace(text, _pid=None):
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 3 and tok[1].isdigit():
            _add(counts, tok[0], tok[1])
    return counts


def scprof_has(scprof, opt, cmd=()):
    out = subprocess.run([scprof] + list(cmd) + ["--help"],
                         capture_output=True, text=True, check=False).stdout
    return opt in out


def cgroup2_mount():
    """Where cgroup v2 is mounted (/sys/fs/cgroup, or .../unified on a
    hybrid host), or None."""
    with open("/proc/self/mounts") as f:
        for line in f:
            tok = line.split()
            if len(tok) > 2 and tok[2] == "cgroup2":
                return tok[1]
    return None


def bench_cgroup():
    root = cgroup2_mount()
    return os.path.join(root, "scprof-bench") if root else None


def into_cgroup(pid):
    """Put the loop in a cgroup of its own (for --cgroup); its path."""
    path = bench_cgroup()
    if pid and path:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(pid))
    return path or "/nonexistent-cgroup2"


def remove_cgroup():
    try:
        os.rmdir(bench_cgroup() or "/nonexistent-cgroup2")
    except OSError:
        pass


def make_configs(a, other_pid):
    """Every probe configuration; service=True marks the ones the
    services section measures by default (the floors, each scprof mode,
    the peers)."""
    S, B = a.scprof, a.bin
    count_only = scprof_has(S, "--count-only")
    cfgs = [
        Config("floor: empty sys_enter", lambda p, o: [B + "/floor"],
               "bpf", min_progs=1, label="floor-enter"),
        Config("floor: empty sys_exit", lambda p, o: [B + "/floor", "--exit"],
               "bpf", min_progs=1, label="floor-exit", service=True),
        Config("floor: empty sys_enter+exit",
               lambda p, o: [B + "/floor", "--both"], "bpf", min_progs=2,
               label="floor-pair", service=True),
    ]
    if count_only:
        cfgs.append(Config(
            "scprof --count-only",
            lambda p, o: [S, "-q", "--count-only", "--format", "csv",
                          "-o", o, "-p", str(p)],
            "bpf", parse_scprof_csv, min_progs=1, floor="exit",
            label="scprof -C -p", service=True))
        cfgs.append(Config(
            "scprof -C -a",
            lambda p, o: [S, "-q", "--count-only", "-a", "-o", o],
            "bpf", parse_count_table, min_progs=1, floor="exit",
            label="scprof -C -a", service=True))
    cfgs += [
        Config("scprof (full)",
               lambda p, o: [S, "-q", "--format", "csv", "-o", o,
                             "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               label="scprof -p", service=True),
        Config("scprof -a (full)",
               lambda p, o: [S, "-q", "-a", "-o", o],
               "bpf", parse_strace_table, min_progs=2, floor="pair",
               label="scprof -a", service=True),
        Config("scprof -a -P (full)",
               lambda p, o: [S, "-q", "-a", "--format", "csv", "-o", o],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               note="per-process rows: a hash cell per call",
               label="scprof -a -P"),
        Config("scprof --cgroup (full)",
               lambda p, o: [S, "-q", "--cgroup", into_cgroup(p),
                             "-o", o],
               "bpf", parse_strace_table, min_progs=2, floor="pair",
               label="scprof --cgroup"),
        Config("scprof -p LOOP,OTHER (full)",
               lambda p, o: [S, "-q", "-o", o,
                             "-p", "%d,%d" % (p, other_pid)],
               "bpf", parse_strace_table, min_progs=2, floor="pair",
               label="scprof -p A,B"),
        Config("scprof -f -p (full)",
               lambda p, o: [S, "-q", "-f", "-o", o, "-p", str(p)],
               "bpf", parse_strace_table, min_progs=2, floor="pair",
               label="scprof -f -p"),
        Config("scprof --stacks (1 in 1000)",
               lambda p, o: [S, "-q", "--stacks", "--format", "csv", "-o", o,
                             "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               label="scprof --stacks", service=True) if scprof_has(
                   S, "--stacks") else None,
        # #23: the time graph at its default (one sample per 1000 µs in
        # calls) must cost under 5% on nginx
        Config("scprof --stacks-by time",
               lambda p, o: [S, "-q", "--stacks-by", "time", "--format",
                             "csv", "-o", o, "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               label="scprof --stacks-by time", service=True) if scprof_has(
                   S, "--stacks-by") else None,
        # #23: the slow-call log at the threshold, likewise
        Config("scprof --slow 10ms",
               lambda p, o: [S, "-q", "--slow", "10ms", "--slow-out",
                             "/dev/null", "--format", "csv", "-o", o,
                             "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               label="scprof --slow 10ms", service=True) if scprof_has(
                   S, "--slow") else None,
        Config("scprof -p other (non-target)",
               lambda p, o: [S, "-q", "--format", "csv", "-o", o,
                             "-p", str(other_pid)],
               "bpf", None, min_progs=2, floor="pair",
               note="the loop is not a target", label="scprof non-target"),
        Config("scprof -C -p other (non-target)",
               lambda p, o: [S, "-q", "--count-only", "--format", "csv",
                             "-o", o, "-p", str(other_pid)],
               "bpf", None, min_progs=1, floor="exit",
               note="the loop is not a target",
               label="scprof -C non-target") if count_only else None,
    ]
    if scprof_has(S, "--latency-duty", ["daemon"]) or a.daemon_any:
        cfgs.append(Config(
            "scprof daemon (defaults)",
            lambda p, o: [S, "daemon", "--listen", "127.0.0.1:0"],
            "bpf", None, min_progs=1, floor="exit", long_run=True,
            note="latency windows on a budget: a long loop, its mean; "
            "marked", label="scprof daemon", service=True, mark=True))
        if count_only:
            # The daemon's reference: -C -a in the same state and the same
            # long loops.
            cfgs.append(Config(
                MARKED_C_A,
                lambda p, o: [S, "-q", "--count-only", "-a", "-o", o],
                "bpf", parse_count_table, min_progs=1, floor="exit",
                long_run=True, note="the daemon's reference",
                label="-C -a, marked", mark=True))
    cfgs += [
        Config("syscount -p", lambda p, o: ["syscount", "-p", str(p)],
               "bpf", parse_syscount, min_progs=1, floor="exit",
               service=True),
        Config("syscount -L -p",
               lambda p, o: ["syscount", "-L", "-p", str(p)],
               "bpf", parse_syscount, min_progs=2, floor="pair",
               service=True),
        Config("bpftrace count (all)",
               lambda p, o: ["bpftrace", "-e", BPFTRACE_COUNT],
               "bpf", parse_bpftrace_count, min_progs=1, floor="enter",
               label="bpftrace count"),
        Config("bpftrace latency hist (all)",
               lambda p, o: ["bpftrace", "-e", BPFTRACE_HIST],
               "bpf", parse_bpftrace_hist, min_progs=2, floor="pair",
               label="bpftrace latency", service=True),
        Config("strace -c -f -p",
               lambda p, o: ["strace", "-c", "-f", "-o", o, "-p", str(p)],
               "ptrace", parse_strace_table, label="strace -c -f",
               service=True),
        Config("perf trace -s -p",
               lambda p, o: ["perf", "trace", "-s", "-m", "1024", "-o", o,
                             "-p", str(p)],
               "perf", parse_perf_trace, min_seen=0.99,
               label="perf trace -s", service=True),
    ]
    cfgs = [c for c in cfgs if c is not None]

    for spec in a.probe or []:
        name, _, cmd = spec.partition("=")
        name, _, nprogs = name.partition("@")
        cfgs.append(Config(name, lambda p, o, cmd=cmd: [
            w.replace("{pid}", str(p)).replace("{out}", o)
            for w in cmd.replace("|", " ").split()], "bpf",
            min_progs=int(nprogs or 1), service=True))
    cfgs = [c for c in cfgs if not a.only or
            any(s in c.name for s in a.only)]
    for c in list(cfgs):
        tool = c.argv(0, "")[0]
        if not shutil.which(tool):
            log("bench: skipping %s: %s is not installed (make bench "
                "installs bench/deps)" % (c.name, tool))
            cfgs.remove(c)
    return cfgs


# ---- running one configuration -----------------------------------------

def wait_attached(cfg, tracer, loop_pid, timeout):
    """Return once the probe is attached, or raise."""
    deadline = time.monotonic() + timeout
    if cfg.attach == "bpf":
        with BpfStats():
            while time.monotonic() < deadline:
                if tracer.poll() is not None:
                    raise BenchError("%s exited before attaching" % cfg.name)
                # A program that has run is attached (some tools load
                # programs they do not attach: syscount without -L).
                ran = [p for p in tracing_progs(tracer.pid).values()
                       if p.get("run_cnt", 0) > 0]
                if len(ran) >= cfg.min_progs:
                    return
                # Make a fork, an exec and an exit for sched_* programs.
                subprocess.run(["/bin/true"], check=False)
                time.sleep(0.02)
    elif cfg.attach == "ptrace":
        while time.monotonic() < deadline:
            if tracer.poll() is not None:
                raise BenchError("%s exited before attaching" % cfg.name)
            with open("/proc/%d/status" % loop_pid) as f:
                m = re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M)
            if m and int(m.group(1)) == tracer.pid:
                time.sleep(0.2)  # seized; let it set up syscall stops
                return
            time.sleep(0.01)
    elif cfg.attach == "perf":
        # Ring buffers are mapped after the events are opened, right
        # before they are enabled.
        while time.monotonic() < deadline:
            if tracer.poll() is not None:
                raise BenchError("%s exited before attaching" % cfg.name)
            try:
                with open("/proc/%d/maps" % tracer.pid) as f:
                    if "perf_event" in f.read():
                        time.sleep(0.5)
                        return
            except OSError:
                pass
            time.sleep(0.02)
    else:
        return
    raise BenchError("%s: not attached after %gs" % (cfg.name, timeout))


# ---- RCU Tasks Trace marks ---------------------------------------------
#
# The syscall tracepoints run their probes under RCU Tasks Trace (kernels
# 6.13 on, before its reimplementation on SRCU). A grace period of it,
# which every removal of a probe from a syscall tracepoint starts (a probe
# that stops; a daemon's latency window that closes), leaves each thread
# that was running at that moment marked (need_qs), for good: from then on
# each of its syscall tracepoint calls takes the slow unlock, a full
# barrier. So a long-lived busy thread is marked sooner or later, and a
# fresh one is not: the budget section marks every loop it times, bare
# ones included, so that its figures compare alike, but the loops of one
# copy of -C -a, which price the mark (cost.UNMARKED); the services section
# tries to mark each server's main thread in its warm-up, before the first
# probe that stops would, and records whether it took (services.warm_up).

def rcu_marks(a, pid):
    """{tid: need_qs} for process pid's threads (bench/rcumark.c): 0 not
    marked, -1 a kernel without the state."""
    p = subprocess.run([a.bin + "/rcumark", str(pid)], capture_output=True,
                       text=True, check=False)
    if p.returncode:
        raise BenchError("rcumark: %s" % p.stderr.strip())
    marks = {}
    for line in p.stdout.splitlines():
        tok = line.split()
        if len(tok) == 2:
            marks[int(tok[0])] = int(tok[1])
    return marks


def rcu_marked(a, pid, tids=None):
    """Are all of process pid's threads (or those of tids) marked? None on
    a kernel without marks."""
    marks = rcu_marks(a, pid)
    if tids is not None:
        marks = {t: m for t, m in marks.items() if t in tids}
    if not marks or min(marks.values()) < 0:
        return None
    return all(marks.values())


def mark_running(a, pid, tries=3, timeout=2.0, tids=None):
    """Mark the threads of pid (or those of tids: a server's busy ones, its
    sleeping ones never are), which must be running syscalls: a grace
    period (an empty sys_enter program attached and removed), then wait
    until they are marked. True when they are, False when not in time,
    None on a kernel without marks."""
    for _ in range(tries):
        marked = rcu_marked(a, pid, tids)
        if marked is not False:
            return marked
        f = subprocess.Popen([a.bin + "/floor"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, text=True)
        try:
            attached = f.stdout.readline().strip() == "attached"
        finally:
            stop(f)
            f.stdout.close()
        if not attached:
            raise BenchError("floor did not attach")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if rcu_marked(a, pid, tids):
                return True
            time.sleep(0.05)
    return False


def settle(prog_ids, timeout=10):
    """Wait until a stopped probe's BPF programs are freed: the kernel
    tears them down after the process exits, and a teardown in progress
    was seen to slow the next (bare) run."""
    deadline = time.monotonic() + timeout
    while prog_ids and time.monotonic() < deadline:
        if not prog_ids & set(progs_info()):
            break
        time.sleep(0.05)
    time.sleep(0.2)


def stop(proc, timeout=20):
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        raise BenchError("pid %d did not stop on SIGINT" % proc.pid)


class Running:
    """A probe started on pid, its output in files under tmpdir (files,
    not pipes: a probe printing more than a pipe holds, such as
    bpftrace's maps, would block and never stop). As a context manager:
    attached on entering (or BenchError), killed on leaving if it still
    runs. The loops, the services and the cost sections all run a probe
    this way."""

    def __init__(self, a, cfg, pid, tmpdir):
        self.a, self.cfg, self.pid = a, cfg, pid
        self.out = os.path.join(tmpdir, "out.txt")
        if os.path.exists(self.out):
            os.unlink(self.out)
        self.tout = open(os.path.join(tmpdir, "tracer.out"), "w+")
        self.proc = None

    def __enter__(self):
        try:
            self.proc = subprocess.Popen(
                self.cfg.argv(self.pid, self.out),
                stdin=subprocess.DEVNULL, stdout=self.tout,
                stderr=subprocess.STDOUT, start_new_session=True)
            wait_attached(self.cfg, self.proc, self.pid,
                          self.a.attach_timeout)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.tout.close()

    def finish(self):
        """Stop the probe (it must still be running), wait until its
        programs are freed, and return what it printed and wrote."""
        if self.cfg.attach == "perf":
            time.sleep(1)  # perf reads its ring buffers behind
        if self.proc.poll() is not None:
            raise BenchError("%s exited during the run" % self.cfg.name)
        progs = prog_ids_of(self.proc.pid)
        stop(self.proc)
        settle(progs)
        self.tout.seek(0)
        text = self.tout.read()
        if os.path.exists(self.out):
            with open(self.out, errors="replace") as f:
                text += f.read()
        return text


def med(xs):
    return statistics.median(xs) if xs else float("nan")

def host_desc():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release(),
            "virt": subprocess.run(["systemd-detect-virt"],
                                   capture_output=True, text=True,
                                   check=False).stdout.strip()
            if shutil.which("systemd-detect-virt") else ""}


def ensure_tracefs():
    """syscount, bpftrace and perf need the tracepoints' ids from tracefs."""
    if os.path.exists("/sys/kernel/tracing/events/raw_syscalls"):
        return
    subprocess.run(["mount", "-t", "tracefs", "tracefs",
                    "/sys/kernel/tracing"], check=False)
    if not os.path.exists("/sys/kernel/tracing/events/raw_syscalls"):
        raise BenchError("tracefs is not mounted on /sys/kernel/tracing "
                         "and cannot be: syscount, bpftrace and perf need it")

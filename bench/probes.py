# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The probes `make bench` measures, and how to run one.

A Config says how to start a probe on a target pid, how to tell it is
attached (its BPF programs have run, strace's TracerPid, perf's ring
buffers) and how to read what it counted. Running runs one: attached
before the load starts, stopped after it, and its own report must count
what the load did, so a probe that missed part of the timed window is an
error, not a figure.
"""
import csv
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
# Syscall numbers, for bpftrace's maps keyed by number.
NRS = {"x86_64": {"getppid": 110, "read": 0, "write": 1},
       "aarch64": {"getppid": 173, "read": 63, "write": 64}}
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
# The floors: empty BPF programs (bench/floor.bpf.c), by what a
# configuration's floor= names.
FLOORS = {"enter": "floor: empty sys_enter", "exit": "floor: empty sys_exit",
          "pair": "floor: empty sys_enter+exit"}


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    """{"median", "min", "max"} of a figure's repetitions."""
    return {"median": med(xs), "min": min(xs), "max": max(xs)}


def md_table(head, rows):
    """Markdown table lines, the columns padded to be read on a terminal
    too: the first left-aligned, the figures right-aligned."""
    rows = [head, ["---"] * len(head)] + rows
    w = [max(len(r[i]) for r in rows) for i in range(len(head))]
    rows[1] = ["-" * w[0]] + ["-" * (n - 1) + ":" for n in w[1:]]
    return ["| %s |" % " | ".join(c.ljust(w[0]) if i == 0 else c.rjust(w[i])
                                  for i, c in enumerate(r)) for r in rows]


# ---- the BPF programs a process holds ------------------------------------

class BpfStats:
    """bpf(BPF_ENABLE_STATS): programs' run_cnt counted while the fd is
    open (refcounted in the kernel: nobody else's is turned off)."""
    NR_BPF = {"x86_64": 321, "aarch64": 280}

    def __enter__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(16)  # enable_stats.type = 0
        nr = self.NR_BPF.get(platform.machine())
        if nr is None:
            raise BenchError("bpf syscall number unknown on this arch")
        self.fd = libc.syscall(nr, 32, attr, 16)  # BPF_ENABLE_STATS
        if self.fd < 0:
            raise BenchError("BPF_ENABLE_STATS: %s" %
                             os.strerror(ctypes.get_errno()))
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def prog_ids_of(pid):
    """BPF program ids held by a process (prog and link fds)."""
    ids = set()
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                ids |= {int(l.split()[1]) for l in f
                        if l.startswith("prog_id:")}
        except (OSError, ValueError):
            pass
    return ids


def bpftool_json(*what):
    out = subprocess.run(["bpftool", "-j"] + list(what), capture_output=True,
                         text=True, check=False).stdout
    try:
        return json.loads(out or "[]")
    except ValueError:
        return []


def tracing_progs(pid):
    info = {p["id"]: p for p in bpftool_json("prog", "show")}
    return [info[i] for i in prog_ids_of(pid)
            if i in info and info[i].get("type") in BPF_PROG_TYPES]


def foreign_probes(own_pids):
    """Tracing links attached by others: other people's probes slow every
    syscall, the bare runs' too (bpftrace's, attached without a link, are
    not seen)."""
    own = set()
    for pid in own_pids:
        own |= prog_ids_of(pid)
    return sum(1 for ln in bpftool_json("link", "show")
               if ln.get("type") in ("raw_tracepoint", "tracing",
                                     "perf_event")
               and ln.get("prog_id") not in own)


# ---- the probes ------------------------------------------------------------

class Config:
    """One probe configuration.

    argv(pid, out) starts it on the target pid (out: a scratch file);
    attach is how to tell it is attached ("bpf" with min_progs programs
    run, "ptrace", "perf"); parse(text, pid) reads the calls it counted
    ({syscall: calls}), of which it must have seen min_seen of the load's
    (perf trace reads its ring buffers from userspace and may lose a few
    events on a loaded machine: that is not detachment); floor names the
    empty programs it is compared with; sections, where it is measured by
    default; long_run, a probe whose cost changes over a period (the
    daemon's windows)."""

    def __init__(self, name, argv, attach="bpf", parse=None, min_progs=1,
                 floor=None, label=None, sections=("loops",),
                 min_seen=1.0, long_run=False):
        self.name, self.argv, self.attach, self.parse = name, argv, attach, parse
        self.min_progs, self.floor, self.sections = min_progs, floor, sections
        self.label, self.min_seen = label or name, min_seen
        self.long_run = long_run


# The parsers return {syscall: calls} for every syscall a report shows.
NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*(\([a-z0-9_]+\))?$")


def _add(counts, name, n):
    if NAME_RE.match(name) and name != "total":
        counts[name] = counts.get(name, 0) + int(n)


def calls_in_column(col, name_col=-1):
    """A parser of a table with a row a syscall, its calls in column col."""
    def parse(text, _pid=None):
        counts = {}
        for line in text.splitlines():
            tok = line.split()
            if len(tok) > max(col, 1) and tok[col].isdigit():
                _add(counts, tok[name_col], tok[col])
        return counts
    return parse


# scprof's and strace's -c table; scprof --count-only's; syscount's and
# perf trace -s's
parse_strace_table = calls_in_column(3)
parse_count_table = calls_in_column(0)
parse_syscount = calls_in_column(1, 0)


def parse_scprof_csv(text, pid):
    """scprof --format csv: the target's own rows."""
    counts = {}
    for row in csv.DictReader(l for l in text.splitlines()
                              if l.startswith(("pid,", "%d," % pid))):
        if row.get("pid") == str(pid) and (row.get("calls") or "").isdigit():
            _add(counts, row["syscall"], row["calls"])
    return counts


def _by_nr_names(by_nr):
    names = {nr: k for k, nr in NRS.get(platform.machine(), {}).items()}
    return {names.get(nr, "nr%d" % nr): n for nr, n in by_nr.items()}


def parse_bpftrace_count(text, _pid=None):
    return _by_nr_names({int(m.group(1)): int(m.group(2)) for m in
                         re.finditer(r"^@\[(\d+)\]: (\d+)$", text, re.M)})


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


def scprof_config(a, name, *args, parse=True, pin=None, **kw):
    """`scprof -q -o OUT ARGS` ({pid}: the target; pin: a CPU to run on).
    With -C it runs one program (on sys_exit: floor-exit) and prints the
    count-only table, else two (floor-pair); its own parser reads --format
    csv's rows of the target (parse=False: none)."""
    count_only = "-C" in args
    if parse:
        parse = parse_scprof_csv if "csv" in args else \
            parse_count_table if count_only else parse_strace_table
    taskset = ["taskset", "-c", str(pin)] if pin is not None else []
    return Config(name, lambda p, o: taskset + [a.scprof, "-q", "-o", o] + [
        str(p) if x == "{pid}" else x for x in args], parse=parse or None,
        min_progs=1 if count_only else 2,
        floor="exit" if count_only else "pair", **kw)


def daemon_config(a):
    """`scprof daemon` at its defaults: its cost changes over its 10 s
    periods, so its services runs are long ones (its budget against -C -a
    is daemon.py's)."""
    return Config("scprof daemon", lambda p, o: [
        a.scprof, "daemon", "--listen", "127.0.0.1:0"], floor="exit",
        sections=("services",), long_run=True)


def make_configs(a, other_pid):
    """Every probe configuration, the floors first. Those with "services"
    in their sections are the services' default set; --only keeps those
    whose name contains one of its words."""
    B, L, SV, S = a.bin, ("loops",), ("loops", "services"), ("services",)
    csv, other = ("--format", "csv"), str(other_pid)

    def sc(name, *args, **kw):
        return scprof_config(a, name, *args, **kw)
    cfgs = [
        Config(FLOORS["enter"], lambda p, o: [B + "/floor"],
               label="floor-enter"),
        Config(FLOORS["exit"], lambda p, o: [B + "/floor", "--exit"],
               label="floor-exit", sections=SV),
        Config(FLOORS["pair"], lambda p, o: [B + "/floor", "--both"],
               min_progs=2, label="floor-pair", sections=SV),
        sc("scprof -C -p", "-C", *csv, "-p", "{pid}"),
        sc("scprof -C -a", "-C", "-a", sections=SV),
        sc("scprof -p", *csv, "-p", "{pid}", sections=SV),
        sc("scprof -a", "-a", sections=SV),
        sc("scprof -a -P", "-a", *csv),
        sc("scprof --stacks", "--stacks", *csv, "-p", "{pid}"),
        sc("scprof -p other (non-target)", *csv, "-p", other, parse=False,
           label="scprof non-target"),
        sc("scprof -C -p other (non-target)", "-C", *csv, "-p", other,
           parse=False, label="scprof -C non-target"),
        # the split's cost on a server (issue 41): -p against this
        sc("scprof -p --no-split", "--no-split", *csv, "-p", "{pid}",
           sections=S),
        sc("scprof --stacks-by time", "--stacks-by", "time", *csv, "-p",
           "{pid}", sections=S),
        sc("scprof --slow 10ms", "--slow", "10ms", "--slow-out", "/dev/null",
           *csv, "-p", "{pid}", sections=S),
        daemon_config(a),
        Config("syscount -p", lambda p, o: ["syscount", "-p", str(p)],
               parse=parse_syscount, floor="exit", sections=SV),
        Config("syscount -L -p", lambda p, o: ["syscount", "-L", "-p", str(p)],
               parse=parse_syscount, min_progs=2, floor="pair", sections=SV),
        Config("bpftrace count", lambda p, o: ["bpftrace", "-e",
                                               BPFTRACE_COUNT],
               parse=parse_bpftrace_count, floor="enter"),
        Config("bpftrace latency", lambda p, o: ["bpftrace", "-e",
                                                 BPFTRACE_HIST],
               parse=parse_bpftrace_hist, min_progs=2, floor="pair",
               sections=SV),
        Config("strace -c -f", lambda p, o: ["strace", "-c", "-f", "-o", o,
                                             "-p", str(p)],
               attach="ptrace", parse=parse_strace_table, sections=SV),
        # "syscall calls ..." rows, as syscount's
        Config("perf trace -s", lambda p, o: ["perf", "trace", "-s", "-m",
                                              "1024", "-o", o, "-p", str(p)],
               attach="perf", parse=parse_syscount, min_seen=0.99,
               sections=SV),
    ]
    for spec in a.probe or []:
        name, _, cmd = spec.partition("=")
        name, _, nprogs = name.partition("@")
        cfgs.append(Config(name, lambda p, o, cmd=cmd: [
            w.replace("{pid}", str(p)).replace("{out}", o)
            for w in cmd.replace("|", " ").split()],
            min_progs=int(nprogs or 1), sections=SV))
    cfgs = [c for c in cfgs if not a.only or any(s in c.name for s in a.only)]
    for c in list(cfgs):
        if not shutil.which(c.argv(0, "")[0]):
            log("bench: skipping %s: %s is not installed (make bench "
                "installs bench/deps)" % (c.name, c.argv(0, "")[0]))
            cfgs.remove(c)
    return cfgs


# ---- running one ----------------------------------------------------------

def wait_attached(cfg, tracer, target, timeout=60):
    """Return once the probe is attached, or raise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tracer.poll() is not None:
            raise BenchError("%s exited before attaching" % cfg.name)
        if cfg.attach == "bpf":
            # A program that has run is attached (syscount without -L
            # loads one it does not attach).
            with BpfStats():
                ran = [p for p in tracing_progs(tracer.pid)
                       if p.get("run_cnt", 0) > 0]
                if len(ran) >= cfg.min_progs:
                    return
                # a fork, an exec and an exit for the sched_* programs
                subprocess.run(["/bin/true"], check=False)
                time.sleep(0.02)
        elif cfg.attach == "ptrace":
            with open("/proc/%d/status" % target) as f:
                m = re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M)
            if m and int(m.group(1)) == tracer.pid:
                time.sleep(0.2)  # seized; let it set up its syscall stops
                return
        elif cfg.attach == "perf":
            # its ring buffers are mapped right before the events are on
            with open("/proc/%d/maps" % tracer.pid) as f:
                if "perf_event" in f.read():
                    time.sleep(0.5)
                    return
        time.sleep(0.02)
    raise BenchError("%s: not attached after %gs" % (cfg.name, timeout))


def stop(proc, timeout=20):
    """SIGINT (every probe's "report and exit"), then wait."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise BenchError("pid %d did not stop on SIGINT" % proc.pid)


def settle(prog_ids, timeout=10):
    """Wait until a stopped probe's programs are freed: a teardown in
    progress was seen to slow the next (bare) run."""
    deadline = time.monotonic() + timeout
    while prog_ids and time.monotonic() < deadline:
        if not prog_ids & {p["id"] for p in bpftool_json("prog", "show")}:
            break
        time.sleep(0.05)
    time.sleep(0.2)


class Running:
    """A probe started on pid, its output in files under tmpdir (a probe
    that prints more than a pipe holds would block). As a context manager:
    attached on entering (or BenchError), killed on leaving if still
    running; finish() stops it and returns what it printed and wrote."""

    def __init__(self, cfg, pid, tmpdir):
        self.cfg, self.pid = cfg, pid
        self.out = os.path.join(tmpdir, "out.txt")
        if os.path.exists(self.out):
            os.unlink(self.out)
        self.tout = open(os.path.join(tmpdir, "tracer.out"), "w+")
        self.proc = None

    def __enter__(self):
        try:
            self.proc = subprocess.Popen(
                self.cfg.argv(self.pid, self.out), stdin=subprocess.DEVNULL,
                stdout=self.tout, stderr=subprocess.STDOUT,
                start_new_session=True)
            wait_attached(self.cfg, self.proc, self.pid)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.tout.close()

    def text(self):
        """What it printed so far."""
        self.tout.seek(0)
        return self.tout.read()

    def finish(self):
        if self.cfg.attach == "perf":
            time.sleep(1)  # perf reads its ring buffers behind
        if self.proc.poll() is not None:
            raise BenchError("%s exited during the run" % self.cfg.name)
        progs = prog_ids_of(self.proc.pid)
        stop(self.proc)
        settle(progs)
        text = self.text()
        if os.path.exists(self.out):
            with open(self.out, errors="replace") as f:
                text += f.read()
        return text

    def check_seen(self, text, need, what):
        """The probe must have counted need calls of the target (a dict
        {syscall: calls}, or a total), or it was not attached all along:
        {syscall: calls} it counted."""
        seen = self.cfg.parse(text, self.pid) if self.cfg.parse else None
        if seen is None:
            return None
        short = [k for k, n in need.items()
                 if seen.get(k, 0) < n * self.cfg.min_seen] \
            if isinstance(need, dict) else \
            [] if sum(seen.values()) >= need * self.cfg.min_seen else ["all"]
        if short:
            raise BenchError("%s counted %s of %s: it was not attached for "
                             "the whole run\n%s" % (self.cfg.name, seen, what,
                                                    text[-2000:]))
        return seen


def grace_period(a):
    """Attach an empty sys_enter program and remove it. On kernels whose
    syscall tracepoints run under RCU Tasks Trace (6.13 on, before its
    reimplementation), a removal leaves every thread running then marked
    for good, dearer on each later traced call (docs/overhead.md, "The
    RCU Tasks Trace mark"), as the first probe to stop or the daemon's
    first window to close would: a long run calls this in its warm-up so
    that every configuration's runs are in the same state."""
    f = subprocess.Popen([a.bin + "/floor"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, text=True)
    try:
        if f.stdout.readline().strip() != "attached":
            raise BenchError("floor did not attach")
    finally:
        stop(f)
        f.stdout.close()
    time.sleep(0.5)  # (the grace period's scan of running threads)


def proc_cpu_s(pid):
    """The CPU time of a process's threads, in seconds: the sum of their
    /proc/PID/task/TID/schedstat run times (nanoseconds; utime + stime in
    /proc/PID/stat count clock ticks, 10 ms, a quarter of a percent of a
    CPU over a 4 s slice). A thread gone before the second reading takes
    its time with it."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def host_desc():
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    cpu = info.get("model name", "?")
    if "cpu family" in info:
        # a VM may name its CPU only by brand ("AMD EPYC")
        cpu += " (family %s, model %s)" % (info["cpu family"],
                                           info.get("model", "?"))
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True,
                          text=True, check=False).stdout.strip() \
        if shutil.which("systemd-detect-virt") else ""
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release(),
            "virt": virt}


def ensure_tracefs():
    """syscount, bpftrace and perf need the tracepoints' ids from tracefs."""
    ev = "/sys/kernel/tracing/events/raw_syscalls"
    if not os.path.exists(ev):
        subprocess.run(["mount", "-t", "tracefs", "tracefs",
                        "/sys/kernel/tracing"], check=False)
    if not os.path.exists(ev):
        raise BenchError("tracefs is not mounted on /sys/kernel/tracing and "
                         "cannot be: syscount, bpftrace and perf need it")

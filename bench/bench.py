#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof overhead benchmark (`make bench`).

What a syscall costs a process while a probe watches it, measured from the
inside by pinned C loops (bench/sysloop.c: getppid, 1-byte read of
/dev/zero, 1-byte write to /dev/null), bare and under each probe:

  floor     empty BPF programs on raw_syscalls (bench/floor.bpf.c): the price
            of being on those tracepoints at all
  scprof    count-only, full, and -p of another process (the loop then pays
            what a non-target pays)
  syscount  libbpf-tools, with and without -L, both -p LOOP
  bpftrace  a count one-liner and a latency histogram script (system-wide,
            as they are usually typed)
  strace -c -f -p LOOP, perf trace -s -p LOOP

Method: each repetition runs every configuration once, each one right after
a bare run, and a bare run closes the repetition (bare, A, bare, B, ...,
bare); the order of the configurations rotates between repetitions. A
probe is started, then detected as attached (its BPF programs have run, with
bpf_stats enabled only while waiting; strace's TracerPid; perf's ring
buffers), and only then is the loop told to start. Afterwards the probe is
stopped by its pid and its own report must count at least every call the
loop made, so a probe that was not attached for the whole timed window is
an error, not a result. The added cost of a run is its ns/call minus the
mean of the bare runs just before and after it; the table gives the median
over repetitions with min-max.

Also measured: scprof startup (exec until it says it is attached),
`scprof -- /bin/true` end to end, per-program BPF run time (bpf_stats) and,
when `scprof daemon` exists, the daemon's CPU and memory at a busy rate.

Only ratios within one run are comparable: the machine is shared and noisy.
"""
import argparse
import ctypes
import json
import os
import platform
import pty
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

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
                 note="", min_seen=1.0, long_run=False, floor=None):
        self.name = name
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
        # (one empty program) or "pair" (empty enter and exit programs).
        self.floor = floor


def parse_strace_table(text, _pid=None):
    """scprof's and strace's -c table: calls is the 4th column."""
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 5 and tok[-1] in KINDS and tok[3].isdigit():
            counts[tok[-1]] = counts.get(tok[-1], 0) + int(tok[3])
    return counts


def parse_count_table(text, _pid=None):
    """scprof --count-only's table: calls is the 1st column."""
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 2 and tok[-1] in KINDS and tok[0].isdigit():
            counts[tok[-1]] = counts.get(tok[-1], 0) + int(tok[0])
    return counts


def parse_scprof_csv(text, pid):
    """scprof --format csv: the loop's own rows."""
    counts = {}
    lines = [l for l in text.splitlines() if l.startswith(("pid,", "%d," % pid))]
    if not lines or not lines[0].startswith("pid,"):
        return counts
    head = lines[0].split(",")
    ip, isc, ic = head.index("pid"), head.index("syscall"), head.index("calls")
    for line in lines[1:]:
        f = line.split(",")
        if len(f) == len(head) and f[ip] == str(pid) and f[isc] in KINDS:
            counts[f[isc]] = counts.get(f[isc], 0) + int(f[ic])
    return counts


def parse_syscount(text, _pid=None):
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 2 and tok[0] in KINDS and tok[1].isdigit():
            counts[tok[0]] = counts.get(tok[0], 0) + int(tok[1])
    return counts


def parse_bpftrace_count(text, _pid=None):
    nrs = NRS.get(platform.machine(), {})
    by_nr = {int(m.group(1)): int(m.group(2))
             for m in re.finditer(r"^@\[(\d+)\]: (\d+)$", text, re.M)}
    return {k: by_nr.get(nr, 0) for k, nr in nrs.items()}


def parse_bpftrace_hist(text, _pid=None):
    nrs = NRS.get(platform.machine(), {})
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
    return {k: by_nr.get(nr, 0) for k, nr in nrs.items()}


def parse_perf_trace(text, _pid=None):
    counts = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) >= 3 and tok[0] in KINDS and tok[1].isdigit():
            counts[tok[0]] = counts.get(tok[0], 0) + int(tok[1])
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
    S, B = a.scprof, a.bin
    cfgs = [
        Config("floor: empty sys_enter", lambda p, o: [B + "/floor"],
               "bpf", min_progs=1),
        Config("floor: empty sys_exit", lambda p, o: [B + "/floor", "--exit"],
               "bpf", min_progs=1),
        Config("floor: empty sys_enter+exit",
               lambda p, o: [B + "/floor", "--both"], "bpf", min_progs=2),
    ]
    if scprof_has(S, "--count-only"):
        cfgs.append(Config(
            "scprof --count-only",
            lambda p, o: [S, "-q", "--count-only", "--format", "csv",
                          "-o", o, "-p", str(p)],
            "bpf", parse_scprof_csv, min_progs=1, floor="exit"))
        cfgs.append(Config(
            "scprof -C -a",
            lambda p, o: [S, "-q", "--count-only", "-a", "-o", o],
            "bpf", parse_count_table, min_progs=1, floor="exit"))
    cfgs += [
        Config("scprof (full)",
               lambda p, o: [S, "-q", "--format", "csv", "-o", o,
                             "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair"),
        Config("scprof -a (full)",
               lambda p, o: [S, "-q", "-a", "-o", o],
               "bpf", parse_strace_table, min_progs=2, floor="pair"),
        Config("scprof -a -P (full)",
               lambda p, o: [S, "-q", "-a", "--format", "csv", "-o", o],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair",
               note="per-process rows: a hash cell per call"),
        Config("scprof --cgroup (full)",
               lambda p, o: [S, "-q", "--cgroup", into_cgroup(p),
                             "-o", o],
               "bpf", parse_strace_table, min_progs=2, floor="pair"),
        Config("scprof -p LOOP,OTHER (full)",
               lambda p, o: [S, "-q", "-o", o,
                             "-p", "%d,%d" % (p, other_pid)],
               "bpf", parse_strace_table, min_progs=2, floor="pair"),
        Config("scprof -f -p (full)",
               lambda p, o: [S, "-q", "-f", "-o", o, "-p", str(p)],
               "bpf", parse_strace_table, min_progs=2, floor="pair"),
        Config("scprof --stacks (1 in 1000)",
               lambda p, o: [S, "-q", "--stacks", "--format", "csv", "-o", o,
                             "-p", str(p)],
               "bpf", parse_scprof_csv, min_progs=2, floor="pair") if scprof_has(
                   S, "--stacks") else None,
        Config("scprof -p other (non-target)",
               lambda p, o: [S, "-q", "--format", "csv", "-o", o,
                             "-p", str(other_pid)],
               "bpf", None, min_progs=2, floor="pair",
               note="the loop is not a target"),
        Config("scprof -C -p other (non-target)",
               lambda p, o: [S, "-q", "--count-only", "--format", "csv",
                             "-o", o, "-p", str(other_pid)],
               "bpf", None, min_progs=1, floor="exit",
               note="the loop is not a target") if scprof_has(
                   S, "--count-only") else None,
        Config("scprof daemon (defaults)",
               lambda p, o: [S, "daemon", "--listen", "127.0.0.1:0"],
               "bpf", None, min_progs=1, floor="exit", long_run=True,
               note="latency windows on a budget: a long loop, its mean")
        if scprof_has(S, "--latency-duty", ["daemon"]) or a.daemon_any
        else None,
        Config("syscount -p", lambda p, o: ["syscount", "-p", str(p)],
               "bpf", parse_syscount, min_progs=1),
        Config("syscount -L -p",
               lambda p, o: ["syscount", "-L", "-p", str(p)],
               "bpf", parse_syscount, min_progs=2),
        Config("bpftrace count (all)",
               lambda p, o: ["bpftrace", "-e", BPFTRACE_COUNT],
               "bpf", parse_bpftrace_count, min_progs=1),
        Config("bpftrace latency hist (all)",
               lambda p, o: ["bpftrace", "-e", BPFTRACE_HIST],
               "bpf", parse_bpftrace_hist, min_progs=2),
        Config("strace -c -f -p",
               lambda p, o: ["strace", "-c", "-f", "-o", o, "-p", str(p)],
               "ptrace", parse_strace_table),
        Config("perf trace -s -p",
               lambda p, o: ["perf", "trace", "-s", "-m", "1024", "-o", o,
                             "-p", str(p)],
               "perf", parse_perf_trace, min_seen=0.99),
    ]
    cfgs = [c for c in cfgs if c is not None]

    for spec in a.probe or []:
        name, _, cmd = spec.partition("=")
        name, _, nprogs = name.partition("@")
        cfgs.append(Config(name, lambda p, o, cmd=cmd: [
            w.replace("{pid}", str(p)).replace("{out}", o)
            for w in cmd.replace("|", " ").split()], "bpf",
            min_progs=int(nprogs or 1)))
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


def run_once(a, cfg, tmpdir, long_run=False):
    """One loop run, bare (cfg None) or under a probe: {kind: result}."""
    secs = a.long_seconds if long_run else a.seconds
    stat = "mean_ns" if long_run else a.stat
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu), str(secs),
                             ",".join(a.kinds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    tracer, out, results = None, os.path.join(tmpdir, "out.txt"), {}
    tout = None
    try:
        if loop.stdout.readline().strip() != "ready":
            raise BenchError("sysloop did not start")
        if cfg is not None:
            if os.path.exists(out):
                os.unlink(out)
            # Files, not pipes: a probe printing more than a pipe holds
            # (bpftrace's maps) would block and never stop.
            tout = open(os.path.join(tmpdir, "tracer.out"), "w+")
            tracer = subprocess.Popen(cfg.argv(loop.pid, out),
                                      stdin=subprocess.DEVNULL,
                                      stdout=tout, stderr=subprocess.STDOUT,
                                      start_new_session=True)
            wait_attached(cfg, tracer, loop.pid, a.attach_timeout)
        foreign = foreign_probes({tracer.pid} if tracer else set())
        loop.stdin.write("go\n")
        loop.stdin.flush()
        for _ in a.kinds:
            tok = loop.stdout.readline().split()
            if len(tok) != 5:
                raise BenchError("sysloop: bad result line %r" % tok)
            results[tok[0]] = {"mean_ns": float(tok[1]),
                               "batch_median_ns": float(tok[2]),
                               "timed": int(tok[3]), "total": int(tok[4])}
            results[tok[0]]["ns"] = results[tok[0]][stat]
        if tracer is not None:
            if cfg.attach == "perf":
                time.sleep(1)  # perf reads its ring buffers behind
            progs = prog_ids_of(tracer.pid)
            stop(tracer)
            settle(progs)
            tout.seek(0)
            text = tout.read()
            if os.path.exists(out):
                with open(out, errors="replace") as f:
                    text += f.read()
            if cfg.parse is not None:
                seen = cfg.parse(text, loop.pid)
                for k, r in results.items():
                    if seen.get(k, 0) < r["total"] * cfg.min_seen:
                        raise BenchError(
                            "%s saw %d %s calls of the loop's %d: it was "
                            "not attached for the whole run\n%s" %
                            (cfg.name, seen.get(k, 0), k, r["total"],
                             text[-2000:]))
                    r["seen"] = seen.get(k, 0)
        for r in results.values():
            r["foreign_probes"] = foreign
        return results
    finally:
        if tracer is not None and tracer.poll() is None:
            tracer.kill()
            tracer.wait()
        if tout is not None:
            tout.close()
        loop.stdin.close()
        loop.wait()


def run_matrix(a, cfgs, tmpdir):
    """{config name: [ {kind: result} per rep ]}, bare under "bare"."""
    res = {"bare": []}
    added = {c.name: {k: [] for k in a.kinds} for c in cfgs}
    for c in cfgs:
        res[c.name] = []
    for rep in range(a.reps):
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        before = run_once(a, None, tmpdir)
        res["bare"].append(before)
        for c in order:
            log("  rep %d/%d: %s" % (rep + 1, a.reps, c.name))
            pre = before
            for tries in range(3):
                try:
                    r = run_once(a, c, tmpdir, c.long_run)
                    break
                except BenchError as e:
                    if tries == 2:
                        raise
                    log("  retrying %s: %s" % (c.name,
                                               str(e).splitlines()[0]))
            post = run_once(a, None, tmpdir)
            res[c.name].append(r)
            res["bare"].append(post)
            # A long run is compared by its mean with its neighbours'.
            stat = "mean_ns" if c.long_run else "ns"
            for k in a.kinds:
                base = (pre[k][stat] + post[k][stat]) / 2
                added[c.name][k].append(r[k]["ns"] - base)
                r[k]["ratio_to_neighbours"] = r[k]["ns"] / base
            before = post
    return res, added


# ---- scprof startup, -- /bin/true, daemon ---------------------------------

def scprof_startup(a, other_pid):
    """Seconds from exec to scprof saying it is attached (on a tty it
    says "profiling ..." right after attaching)."""
    times = []
    for _ in range(a.reps * 2):
        master, slave = pty.openpty()
        t0 = time.monotonic()
        p = subprocess.Popen([a.scprof, "-p", str(other_pid), "-o",
                              os.devnull], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=slave,
                             start_new_session=True)
        os.close(slave)
        buf, t1 = b"", None
        deadline = t0 + 10
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                if b"profiling" in buf:
                    t1 = time.monotonic()
                    break
        stop(p)
        os.close(master)
        if t1 is None:
            raise BenchError("scprof never said it was attached: %r" % buf)
        times.append(t1 - t0)
    return times


def scprof_true(a):
    times = []
    for _ in range(a.reps * 2):
        t0 = time.monotonic()
        rc = subprocess.run([a.scprof, "--", "/bin/true"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        times.append(time.monotonic() - t0)
        if rc != 0:
            raise BenchError("scprof -- /bin/true exited %d" % rc)
    return times


def proc_cpu_s(pid):
    """CPU time of all the process's threads: schedstat's nanoseconds when
    the kernel has them, else stat's clock ticks."""
    total, tids = 0, []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
        for tid in tids:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tck  # utime + stime


def proc_mem_kb(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


def daemon_row(a):
    """CPU and memory of `scprof daemon` (whole system by default) while a
    pinned loop makes getppid calls as fast as it can, scraped every 5 s
    over loopback like a Prometheus server would."""
    h = subprocess.run([a.scprof, "daemon", "--help"], capture_output=True,
                       text=True, check=False)
    if h.returncode != 0:
        return {"skipped": "this scprof has no daemon subcommand"}
    argv = [a.scprof, "daemon"] + a.daemon_args.split()
    err = tempfile.TemporaryFile("w+")
    d = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=err,
                         start_new_session=True)
    url, deadline = None, time.monotonic() + 10
    while url is None and time.monotonic() < deadline and d.poll() is None:
        time.sleep(0.1)
        err.seek(0)
        m = re.search(r"serving metrics at (http://\S+)", err.read())
        url = m.group(1) if m else None
    if url is None:
        try:
            stop(d)
        except BenchError:
            pass
        err.seek(0)
        return {"skipped": "`%s` did not start serving: %s" %
                (" ".join(argv), err.read().strip()[:200])}
    # Idle first: what the daemon costs with nothing but the machine's
    # own background (its latency windows and budget checks included).
    c0, t0 = proc_cpu_s(d.pid), time.monotonic()
    time.sleep(a.daemon_idle_seconds)
    idle_cpu = 100 * (proc_cpu_s(d.pid) - c0) / (time.monotonic() - t0)
    idle_rss = proc_mem_kb(d.pid).get("VmRSS")
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu),
                             str(a.daemon_seconds), "getppid"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    scrapes, scrape_bytes = 0, 0
    try:
        loop.stdout.readline()
        c0, t0 = proc_cpu_s(d.pid), time.monotonic()
        loop.stdin.write("go\n")
        loop.stdin.flush()
        # The loop prints when it is done; scrape meanwhile.
        while True:
            r, _, _ = select.select([loop.stdout], [], [], 5)
            if r:
                break
            with urllib.request.urlopen(url, timeout=5) as resp:
                scrape_bytes = len(resp.read())
                scrapes += 1
        tok = loop.stdout.readline().split()
        c1, t1 = proc_cpu_s(d.pid), time.monotonic()
        mem = proc_mem_kb(d.pid)
    finally:
        loop.stdin.close()
        loop.wait()
        try:
            stop(d)
        except BenchError:
            pass
    calls = int(tok[4])
    return {"argv": argv, "seconds": t1 - t0,
            "calls_per_s": calls / (t1 - t0),
            "cpu_percent": 100 * (c1 - c0) / (t1 - t0),
            "rss_kb": mem.get("VmRSS"), "peak_rss_kb": mem.get("VmHWM"),
            "idle_cpu_percent": idle_cpu, "idle_rss_kb": idle_rss,
            "scrapes": scrapes, "scrape_bytes": scrape_bytes}


# ---- per-program cost (bpf_stats) ---------------------------------------

def prog_stats_once(a, c, tmpdir):
    """One getppid loop under c with bpf_stats on: {prog: (runs, ns)} and
    the loop's call count."""
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu), str(a.seconds),
                             "getppid"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    tracer = None
    try:
        loop.stdout.readline()
        tracer = subprocess.Popen(
            c.argv(loop.pid, os.path.join(tmpdir, "ps.txt")),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        wait_attached(c, tracer, loop.pid, a.attach_timeout)
        with BpfStats():
            p0 = tracing_progs(tracer.pid)
            loop.stdin.write("go\n")
            loop.stdin.flush()
            tok = loop.stdout.readline().split()
            p1 = tracing_progs(tracer.pid)
        out = {}
        for i, p in p1.items():
            q = p0.get(i, {})
            out[p.get("name", str(i))] = (
                p.get("run_cnt", 0) - q.get("run_cnt", 0),
                p.get("run_time_ns", 0) - q.get("run_time_ns", 0))
        return out, int(tok[4])
    finally:
        if tracer is not None:
            try:
                stop(tracer)
            except BenchError:
                pass
        loop.stdin.close()
        loop.wait()


def prog_stats(a, cfgs, tmpdir):
    """Nanoseconds per BPF program run (bpf_stats), median over
    repetitions. The stats' own clock reads are in every figure: the empty
    floor program shows how much, and "above empty" takes it out. Only
    programs run about once per loop call (the syscall ones) count in a
    configuration's work per call."""
    samples = {}
    for rep in range(a.reps):
        for c in cfgs:
            if c.attach != "bpf":
                continue
            log("  bpf_stats %d/%d: %s" % (rep + 1, a.reps, c.name))
            progs, calls = prog_stats_once(a, c, tmpdir)
            for name, (n, t) in progs.items():
                samples.setdefault(c.name, {}).setdefault(name, []).append(
                    (n, t, calls))
    empty = None
    for name, ss in samples.get("floor: empty sys_enter", {}).items():
        empty = med([t / n for n, t, _ in ss if n])
    out = {}
    for cname, progs in samples.items():
        rows, work = [], 0.0
        for pname, ss in sorted(progs.items()):
            per_run = [t / n for n, t, _ in ss if n]
            share = med([n / calls for n, _, calls in ss])
            ns = med(per_run) if per_run else None
            above = ns - empty if ns is not None and empty is not None \
                else None
            rows.append({"prog": pname, "runs_per_loop_call": share,
                         "ns_per_run": ns, "above_empty_ns": above})
            if above is not None and 0.5 <= share <= 2:
                work += above
        out[cname] = {"progs": rows, "work_per_call_ns": work,
                      "empty_ns_per_run": empty}
    return out


# ---- report ------------------------------------------------------------

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(a, cfgs, res, added):
    bare = {k: med([r[k]["ns"] for r in res["bare"]]) for k in a.kinds}
    rows = [{"config": "bare", "kind": k, "median_ns": bare[k],
             "added_ns": 0.0, "added_min": 0.0, "added_max": 0.0,
             "ratio_bare": 1.0, "ratio_syscount_L": None}
            for k in a.kinds]
    ref = "syscount -L -p"
    for c in cfgs:
        for k in a.kinds:
            ad = added[c.name][k]
            rows.append({
                "config": c.name, "kind": k,
                "median_ns": med([r[k]["ns"] for r in res[c.name]]),
                "added_ns": med(ad), "added_min": min(ad),
                "added_max": max(ad),
                # Against the bare runs next to it, like added ns: other
                # people's probes come and go during a run.
                "ratio_bare": med([r[k]["ratio_to_neighbours"]
                                   for r in res[c.name]]),
                "ratio_syscount_L": None})
    floors = {"exit": "floor: empty sys_exit",
              "pair": "floor: empty sys_enter+exit"}
    for r in rows:
        r["over_floor"] = None
        c = next((c for c in cfgs if c.name == r["config"]), None)
        if c is None or c.floor is None:
            continue
        fl = [x["added_ns"] for x in rows if x["kind"] == r["kind"] and
              x["config"] == floors[c.floor]]
        if fl:
            r["over_floor"] = (c.floor, r["added_ns"] - fl[0])
    for r in rows:
        refs = [x for x in rows if x["config"] == ref and
                x["kind"] == r["kind"]]
        if refs and refs[0]["added_ns"] > 0 and r["config"] != "bare":
            r["ratio_syscount_L"] = r["added_ns"] / refs[0]["added_ns"]
    return rows


def fmt_ns(v):
    if v >= 10000:
        return "%.1fk" % (v / 1000)
    return "%.0f" % v


def print_table(rows, kinds):
    print("%-30s %-7s %9s %24s %8s %10s %16s" % (
        "config", "syscall", "ns/call", "added ns (min..max)", "x bare",
        "x sc -L", "over floor (ns)"))
    print("-" * 109)
    for k in kinds:
        for r in rows:
            if r["kind"] != k:
                continue
            rng = "" if r["config"] == "bare" else "%s (%s..%s)" % (
                fmt_ns(r["added_ns"]), fmt_ns(r["added_min"]),
                fmt_ns(r["added_max"]))
            of = r.get("over_floor")
            print("%-30s %-7s %9s %24s %8.2f %10s %16s" % (
                r["config"], k, fmt_ns(r["median_ns"]), rng,
                r["ratio_bare"],
                "" if r["ratio_syscount_L"] is None else
                "%.2f" % r["ratio_syscount_L"],
                "" if of is None else "%+.0f %s" % (of[1], of[0])))
        print()


def check_targets(rows, kinds):
    """The issue's targets, on every syscall kind measured: (what, value,
    limit) with added ns medians."""
    def get(cfg, k):
        for r in rows:
            if r["config"] == cfg and r["kind"] == k:
                return r["added_ns"]
        return None
    out = []

    def add(name, cfg, ref, slack):
        v, r = get(cfg, k), get(ref, k)
        if v is not None and r is not None:
            out.append(("%s: %s" % (k, name), v, r + slack))

    for k in kinds:
        scl = get("syscount -L -p", k)
        full = get("scprof (full)", k)
        if full is not None and scl is not None:
            out.append(("%s: full <= syscount -L / 2" % k, full, scl / 2))
        fe, fp = "floor: empty sys_exit", "floor: empty sys_enter+exit"
        add("full <= floor-pair + 100", "scprof (full)", fp, 100)
        add("-a <= -p + 15", "scprof -a (full)", "scprof (full)", 15)
        add("-C <= floor-exit + 15", "scprof --count-only", fe, 15)
        add("-C -a <= -C -p + 10", "scprof -C -a", "scprof --count-only",
            10)
        add("-C -a <= floor-exit + 25", "scprof -C -a", fe, 25)
        add("daemon <= -C -a + 20", "scprof daemon (defaults)",
            "scprof -C -a", 20)
        add("non-target (full) <= floor-pair + 10",
            "scprof -p other (non-target)", fp, 10)
        add("non-target (-C) <= floor-exit + 10",
            "scprof -C -p other (non-target)", fe, 10)
    return out


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scprof", required=True, help="scprof binary")
    ap.add_argument("--bin", required=True,
                    help="folder with the floor and sysloop binaries")
    ap.add_argument("--reps", type=int, default=5,
                    help="repetitions of the whole matrix (default 5)")
    ap.add_argument("--seconds", type=float, default=0.3,
                    help="timed seconds per syscall kind and run (0.3)")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1,
                    help="CPU the loop is pinned to (default: the last)")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="syscall loops, comma-separated (%s)" %
                    ",".join(KINDS))
    ap.add_argument("--only", action="append",
                    help="only configurations whose name contains this "
                    "(repeatable)")
    ap.add_argument("--probe", action="append", metavar="NAME[@N]=CMD",
                    help="an extra BPF probe to measure, attached once N "
                    "(default 1) of its programs have run: CMD is split on "
                    "spaces or |, {pid} is the loop's pid, {out} a scratch "
                    "file")
    ap.add_argument("--stat", choices=("batch_median_ns", "mean_ns"),
                    default="batch_median_ns",
                    help="per-run figure: the median over batches of 256 "
                    "calls (default: robust to bursts of noise) or the "
                    "mean over the run")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--attach-timeout", type=float, default=60)
    ap.add_argument("--no-startup", action="store_true",
                    help="skip scprof startup and -- /bin/true")
    ap.add_argument("--no-prog-stats", action="store_true",
                    help="skip the per-program bpf_stats pass")
    ap.add_argument("--daemon-args", default="--listen 127.0.0.1:0",
                    help="arguments for `scprof daemon` in the daemon row")
    ap.add_argument("--daemon-seconds", type=float, default=60)
    ap.add_argument("--daemon-idle-seconds", type=float, default=20)
    ap.add_argument("--readme", metavar="FILE",
                    help="rewrite the results between the bench-results "
                    "markers of FILE (README.md) from this run")
    ap.add_argument("--long-seconds", type=float, default=11,
                    help="timed seconds per syscall kind for probes whose "
                    "cost changes over time (the daemon's latency windows "
                    "open once every 10 s period): default 11")
    ap.add_argument("--daemon-any", action="store_true",
                    help="measure `scprof daemon` in the matrix even "
                    "without --latency-duty (an older scprof)")
    a = ap.parse_args()
    a.kinds = a.kinds.split(",")
    if any(k not in KINDS for k in a.kinds) or a.reps < 1 or \
            a.seconds <= 0:
        ap.error("bad --kinds, --reps or --seconds")
    if os.geteuid() != 0:
        print("bench: needs root (BPF, ptrace, perf)", file=sys.stderr)
        return 1
    try:
        ensure_tracefs()
        return bench(a)
    except BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 1


def bench(a):
    host = host_desc()
    other = subprocess.Popen(["sleep", "100000"])
    try:
        with tempfile.TemporaryDirectory(prefix="scprof-bench.") as tmp:
            cfgs = make_configs(a, other.pid)
            log("bench: %d configurations x %d repetitions, %gs per loop"
                % (len(cfgs), a.reps, a.seconds))
            res, added = run_matrix(a, cfgs, tmp)
            rows = summarize(a, cfgs, res, added)
            startup = true_e2e = None
            if not a.no_startup:
                log("bench: scprof startup and -- /bin/true")
                startup = scprof_startup(a, other.pid)
                true_e2e = scprof_true(a)
            pstats = None if a.no_prog_stats else prog_stats(a, cfgs, tmp)
            log("bench: daemon")
            daemon = daemon_row(a)
    finally:
        other.kill()
        other.wait()
        remove_cgroup()

    foreign = max(r[k]["foreign_probes"] for v in res.values() for r in v
                  for k in a.kinds)
    print("scprof overhead benchmark: %s, %d CPUs, %s, kernel %s" %
          (host["cpu"], host["cpus"], host["virt"] or "bare metal?",
           host["kernel"]))
    print("loops pinned to CPU %d, %gs per loop, %d repetitions, "
          "interleaved with bare runs; ns/call: %s\n" % (
              a.cpu, a.seconds, a.reps,
              "median over batches of 256 calls" if
              a.stat == "batch_median_ns" else "mean over the run"))
    print_table(rows, a.kinds)
    if foreign:
        print("warning: up to %d BPF tracing programs of other processes "
              "were loaded during runs: bare is not bare\n" % foreign)
    targets = check_targets(rows, a.kinds)
    if targets:
        print("Targets (added ns, median):")
        for name, val, lim in targets:
            print("  %-42s %7.0f <= %7.0f  %s" % (
                name, val, lim, "ok" if val <= lim else "MISSED"))
        for k in a.kinds:
            f2 = [r["added_ns"] for r in rows if r["kind"] == k and
                  r["config"] == "floor: empty sys_enter+exit"]
            fl = [r["added_ns"] for r in rows if r["kind"] == k and
                  r["config"] == "floor: empty sys_enter"]
            if f2 and fl:
                print("  %s: a second (empty) program, on sys_exit, adds "
                      "%.0f ns by itself" % (k, f2[0] - fl[0]))
        print()
    if startup:
        print("scprof startup, exec -> attached: median %.1f ms (%.1f..%.1f)"
              "  target <= 50 ms: %s" % (
                  med(startup) * 1e3, min(startup) * 1e3, max(startup) * 1e3,
                  "ok" if med(startup) <= 0.05 else "MISSED"))
        print("scprof -- /bin/true, end to end: median %.1f ms (%.1f..%.1f)"
              "  target < 200 ms: %s" % (
                  med(true_e2e) * 1e3, min(true_e2e) * 1e3,
                  max(true_e2e) * 1e3,
                  "ok" if med(true_e2e) < 0.2 else "MISSED"))
    if "skipped" in daemon:
        print("scprof daemon: skipped (%s)" % daemon["skipped"])
    else:
        print("scprof daemon (%s) with a loop at %.0f calls/s for %.0f s, "
              "scraped %d times: %.2f%% of a CPU, RSS %s KiB (peak %s KiB); "
              "idle: %.2f%% of a CPU, RSS %s KiB"
              % (" ".join(daemon["argv"][2:]) or "defaults",
                 daemon["calls_per_s"], daemon["seconds"], daemon["scrapes"],
                 daemon["cpu_percent"], daemon["rss_kb"],
                 daemon["peak_rss_kb"], daemon["idle_cpu_percent"],
                 daemon["idle_rss_kb"]))
    if pstats:
        empty = next(iter(pstats.values()))["empty_ns_per_run"]
        print("\nBPF programs, ns per run (bpf_stats, median of %d; getppid "
              "loop; the stats' own cost, %s ns, is what the empty program "
              "shows):" % (a.reps, "?" if empty is None else "%.1f" % empty))
        print("  %-32s %-15s %9s %8s %12s" % ("config", "program",
                                             "runs/call", "ns/run",
                                             "above empty"))
        for name, v in pstats.items():
            for p in v["progs"]:
                print("  %-32s %-15s %9.2f %8s %12s" % (
                    name, p["prog"], p["runs_per_loop_call"],
                    "-" if p["ns_per_run"] is None else
                    "%.1f" % p["ns_per_run"],
                    "-" if p["above_empty_ns"] is None else
                    "%.1f" % p["above_empty_ns"]))
        print("  work per loop call above empty programs (syscall programs "
              "only):")
        for name, v in pstats.items():
            print("    %-32s %6.1f ns" % (name, v["work_per_call_ns"]))
    if a.readme:
        update_readme(a.readme, markdown(a, host, rows, targets, startup,
                                         true_e2e, daemon, pstats, foreign))
    if a.json:
        doc = {"host": host, "reps": a.reps, "seconds": a.seconds,
               "cpu": a.cpu, "rows": rows, "raw": res, "added": added,
               "targets": [{"target": n, "value": v, "limit": l,
                            "ok": v <= l} for n, v, l in targets],
               "startup_s": startup, "true_e2e_s": true_e2e,
               "daemon": daemon, "prog_stats": pstats,
               "foreign_probes": foreign}
        tmpf = a.json + ".tmp"
        with open(tmpf, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmpf, a.json)
    return 0


README_BEGIN = "<!-- bench-results:begin (make bench BENCH_ARGS=--readme README.md) -->"
README_END = "<!-- bench-results:end -->"


def markdown(a, host, rows, targets, startup, true_e2e, daemon, pstats,
             foreign):
    """This run's results as the README's "A run on this machine"."""
    out = ["%s, %d CPUs (%s), Linux %s; `make bench`, %d repetitions of "
           "%g s loops interleaved with bare runs; added ns is the median "
           "over repetitions (min-max)%s." % (
               host["cpu"], host["cpus"], host["virt"] or "bare metal?",
               host["kernel"], a.reps, a.seconds,
               "; up to %d BPF tracing programs of other processes were "
               "loaded during runs" % foreign if foreign else ""), ""]
    for k in a.kinds:
        out += ["The %s loop:" % k, "",
                "| config | ns/call | added ns (min-max) | x bare | "
                "over its floor |", "| --- | ---: | ---: | ---: | ---: |"]
        for r in rows:
            if r["kind"] != k:
                continue
            of = r.get("over_floor")
            out.append("| %s | %s | %s | %.2f | %s |" % (
                r["config"], fmt_ns(r["median_ns"]),
                "" if r["config"] == "bare" else "%s (%s-%s)" % (
                    fmt_ns(r["added_ns"]), fmt_ns(r["added_min"]),
                    fmt_ns(r["added_max"])),
                r["ratio_bare"],
                "" if of is None else "%+.0f (%s)" % (
                    of[1], "floor-pair" if of[0] == "pair" else
                    "floor-exit")))
        out.append("")
    if targets:
        out += ["| target (added ns, median) | this run | limit | |",
                "| --- | ---: | ---: | --- |"]
        for name, val, lim in targets:
            out.append("| %s | %.0f | %.0f | %s |" % (
                name, val, lim, "met" if val <= lim else "**missed**"))
        out.append("")
    if startup:
        out.append("Startup, exec to attached: %.0f ms (target <= 50 ms: "
                   "%s); `scprof -- /bin/true` end to end: %.0f ms." % (
                       med(startup) * 1e3,
                       "met" if med(startup) <= 0.05 else "**missed**",
                       med(true_e2e) * 1e3))
    if daemon and "skipped" not in daemon:
        out.append("`scprof daemon` (defaults, the whole machine): idle, "
                   "%.2f%% of a CPU and %s KiB resident; with the loop at "
                   "%.1f million calls/s for %.0f s, scraped every 5 s, "
                   "%.2f%% of a CPU, %s KiB resident (peak %s KiB)." % (
                       daemon["idle_cpu_percent"], daemon["idle_rss_kb"],
                       daemon["calls_per_s"] / 1e6, daemon["seconds"],
                       daemon["cpu_percent"], daemon["rss_kb"],
                       daemon["peak_rss_kb"]))
    if pstats:
        out += ["", "Work per loop call above the empty programs "
                "(`bpf_stats`, syscall programs, same run): " +
                ", ".join("%s %.1f ns" % (n, v["work_per_call_ns"])
                          for n, v in pstats.items()
                          if not n.startswith("floor")) + "."]
    return "\n".join(out) + "\n"


def update_readme(path, text):
    with open(path) as f:
        doc = f.read()
    i, j = doc.find(README_BEGIN), doc.find(README_END)
    if i < 0 or j < i:
        raise BenchError("%s has no %s ... %s markers" % (
            path, README_BEGIN, README_END))
    doc = doc[:i + len(README_BEGIN)] + "\n" + text + doc[j:]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, path)
    log("bench: results written into %s" % path)


if __name__ == "__main__":
    sys.exit(main())

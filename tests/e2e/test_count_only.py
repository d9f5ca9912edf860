# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""End-to-end tests of --count-only and of the single-target ("solo") fast
path: exact counts against ground truth and strace -c, in every BPF path
the cheap probe added (per-CPU solo counts, solo stats array, hash cells
of count-only, exit/exit_group at thread exit, fork returns).

Self-contained: run by `make e2e` (SCPROF, WORKLOADS set) as root. Other
scprof runs may profile the machine meanwhile; every assertion is about
this test's own target processes.
"""
import json
import os
import pty
import select
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCPROF = os.environ.get("SCPROF", os.path.join(ROOT, "scprof"))
WORKLOADS = os.environ.get("WORKLOADS",
                           os.path.join(ROOT, ".output", "workloads"))
TIMEOUT = 60
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C",
       "HOME": "/root"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="loads BPF programs: needs root")


def workload(name):
    path = os.path.join(WORKLOADS, name)
    assert os.access(path, os.X_OK), "workload %s is not built" % path
    return path


def scprof_json(args):
    """Run scprof ARGS with a JSON report; (report, completed process)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cp = subprocess.run([SCPROF, "--format", "json", "-o", out] + args,
                            capture_output=True, env=ENV, timeout=TIMEOUT)
        assert os.path.exists(out), cp.stderr.decode(errors="replace")
        with open(out) as f:
            return json.load(f), cp


def strace_counts(args, follow):
    """{syscall: (calls, errors)} from strace -c (-f) on a command."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "st")
        subprocess.run(["strace", "-c"] + (["-f"] if follow else []) +
                       ["-o", out, "--"] + args, env=ENV, timeout=TIMEOUT,
                       stdout=subprocess.DEVNULL, check=True)
        with open(out) as f:
            text = f.read()
    rows = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) < 5 or not tok[3].isdigit() or tok[-1] == "total":
            continue
        errors = int(tok[4]) if len(tok) == 6 else 0
        rows[tok[-1]] = (int(tok[3]), errors)
    assert rows, "no strace table:\n" + text
    return rows


def by_name(syscalls):
    """{name: syscall object}, 64-bit ABI only."""
    return {s["name"]: s for s in syscalls if s["abi"] == "64"}


def proc_of(report, pid):
    procs = [p for p in report["processes"] if p["pid"] == pid]
    assert len(procs) == 1, "pid %d: %r" % (pid, report["processes"])
    return by_name(procs[0]["syscalls"])


GT_ARGS = ["1000", "10", "100", "3", "50"]  # see groundtruth.c


@pytest.mark.parametrize("follow", [False, True], ids=["solo", "follow"])
@pytest.mark.parametrize("count_only", [False, True], ids=["full", "count"])
def test_counts_match_strace(follow, count_only):
    """Every syscall strace -c lists has the same calls and errors; without
    -f the command is the single target (solo arrays), with -f the hash
    cells are used."""
    cmd = [workload("groundtruth")] + GT_ARGS
    want = strace_counts(cmd, follow)
    report, cp = scprof_json((["-f"] if follow else []) +
                             (["-C"] if count_only else []) + ["--"] + cmd)
    assert cp.returncode == 0, cp.stderr
    assert report.get("count_only", False) is count_only
    got = by_name(report["syscalls"])
    for name, (calls, errors) in want.items():
        assert name in got, "%s missing: %r" % (name, sorted(got))
        assert (got[name]["calls"], got[name]["errors"]) == (calls, errors), \
            name
    # What strace -c leaves out: exit_group, once per process.
    assert got["exit_group"]["calls"] == (2 if follow else 1)
    # The child's 0 return from fork is not a call of its own.
    assert got["fork"]["calls"] == 1
    assert got["getppid"]["calls"] == 1000 + (50 if follow else 0)
    if count_only:
        assert all(s["total_ns"] == 0 for s in report["syscalls"])
    else:
        assert got["getppid"]["total_ns"] > 0


@pytest.mark.parametrize("follow", [False, True], ids=["solo", "follow"])
def test_count_only_bytes_match_full(follow):
    """Bytes of I/O calls are the same with and without --count-only."""
    cmd = ["-f"] if follow else []
    cmd += ["--", workload("groundtruth")] + GT_ARGS
    full, _ = scprof_json(cmd)
    cnt, _ = scprof_json(["-C"] + cmd)
    f, c = by_name(full["syscalls"]), by_name(cnt["syscalls"])
    assert c["read"]["bytes"] == f["read"]["bytes"]
    assert c["read"]["bytes"] >= 100
    assert c["pread64"]["bytes"] == f["pread64"]["bytes"]
    assert c["getppid"]["bytes"] is None


class Attached:
    """scprof -p PID, started with its stderr on a terminal, which is where
    it says it is attached ("profiling ...")."""

    def __init__(self, args):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "r.json")
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [SCPROF, "--format", "json", "-o", self.out] + args,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=slave, env=ENV)
        os.close(slave)
        self.master, self.said = master, b""
        deadline = time.monotonic() + TIMEOUT
        while b"profiling" not in self.said:
            assert time.monotonic() < deadline, self.said
            assert self.proc.poll() is None, self.said
            r, _, _ = select.select([master], [], [], 1)
            if r:
                self.said += os.read(master, 4096)

    def report(self):
        self.proc.wait(TIMEOUT)
        os.close(self.master)
        with open(self.out) as f:
            rep = json.load(f)
        self.dir.cleanup()
        return rep


@pytest.mark.parametrize("count_only", [False, True], ids=["full", "count"])
def test_pid_target_threads(count_only):
    """-p of a running multi-threaded process: its calls from every thread,
    summed over CPUs (count-only keeps them per CPU), exactly."""
    threads, n, bad, reads = 4, 20000, 7, 300
    w = subprocess.Popen([workload("gocalls"), str(threads), str(n),
                          str(bad), str(reads)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=ENV)
    try:
        assert w.stdout.readline() == b"ready\n"
        sc = Attached((["-C"] if count_only else []) + ["-p", str(w.pid)])
        w.stdin.write(b"go\n")
        w.stdin.flush()
        assert w.stdout.readline() == b"done\n"
    finally:
        w.stdin.close()
        w.wait(TIMEOUT)
    rep = sc.report()
    assert sc.proc.returncode == 0
    got = proc_of(rep, w.pid)
    assert got["getppid"]["calls"] == threads * n
    assert got["openat"]["calls"] == threads * bad
    assert got["openat"]["errors"] == threads * bad
    assert got["pread64"]["calls"] == threads * reads
    assert got["pread64"]["bytes"] == threads * reads
    # Thread exits (exit) and the process's exit_group.
    assert got["exit"]["calls"] == threads - 1
    assert got["exit_group"]["calls"] == 1
    if not count_only:
        assert got["getppid"]["min_ns"] > 0


def test_pid_non_target_not_counted():
    """A process that is not the target is not recorded, in either mode."""
    w = subprocess.Popen([workload("gocalls"), "1", "5000", "0", "0"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=ENV)
    idle = subprocess.Popen(["sleep", "30"])
    try:
        assert w.stdout.readline() == b"ready\n"
        scs = [Attached(m + ["-p", str(idle.pid)]) for m in ([], ["-C"])]
        w.stdin.write(b"go\n")
        w.stdin.flush()
        assert w.stdout.readline() == b"done\n"
    finally:
        w.stdin.close()
        w.wait(TIMEOUT)
        idle.kill()
        idle.wait()
    for sc in scs:
        rep = sc.report()
        assert all(p["pid"] != w.pid for p in rep["processes"])


@pytest.mark.parametrize("args", [["-C", "-H"], ["-C", "-U", "calls,p50"],
                                  ["-C", "-S", "avg-time"]])
def test_count_only_usage_errors(args):
    cp = subprocess.run([SCPROF] + args + ["--", "true"], capture_output=True,
                        timeout=TIMEOUT)
    assert cp.returncode == 2
    assert len(cp.stderr.decode().strip().splitlines()) == 1


def test_count_only_table():
    """The table is strace's calls/errors/syscall table, sorted by calls,
    and says what it leaves out."""
    cp = subprocess.run([SCPROF, "-C", "--", workload("groundtruth")] +
                        GT_ARGS, capture_output=True, env=ENV,
                        timeout=TIMEOUT)
    assert cp.returncode == 0
    lines = cp.stderr.decode().splitlines()
    assert lines[0].split() == ["calls", "errors", "syscall"]
    assert lines[2].split() == ["1000", "getppid"]
    assert "no times were measured" in lines[-1]


SIGNALS = ("import os, signal\n"
           "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
           "for _ in range(200): os.kill(os.getpid(), signal.SIGUSR1)\n")


@pytest.mark.parametrize("count_only", [False, True], ids=["full", "count"])
def test_rt_sigreturn_is_counted(count_only):
    """rt_sigreturn leaves sys_exit with its number erased (-1): the modes
    that count at exit from the registers file that exit under it, so
    every mode counts what strace -c does."""
    cmd = ["python3", "-c", SIGNALS]
    want = strace_counts(cmd, True)
    report, cp = scprof_json(["-f"] + (["-C"] if count_only else []) +
                             ["--"] + cmd)
    assert cp.returncode == 0, cp.stderr
    got = by_name(report["syscalls"])
    assert want["rt_sigreturn"][0] >= 200
    assert got["rt_sigreturn"]["calls"] == want["rt_sigreturn"][0]
    assert got["kill"]["calls"] == want["kill"][0] == 200


def test_count_only_interval_tables_say_what_they_leave_out():
    """-C -i: every interval table is the count-only table with its note,
    as the one-shot table is (interval models keep the run's facts)."""
    cp = subprocess.run([SCPROF, "-C", "-i", "0.3", "--",
                         workload("pacer"), "1000", "2", "100", "12"],
                        capture_output=True, env=ENV, timeout=TIMEOUT)
    assert cp.returncode == 0, cp.stderr
    err = cp.stderr.decode()
    headers = [ln for ln in err.splitlines()
               if ln.split()[:2] == ["calls", "calls/s"] or
               ln.split()[:1] == ["calls"]]
    notes = err.count("no times were measured")
    assert len(headers) >= 3, err
    assert notes == len(headers), err

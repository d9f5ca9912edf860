# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--by, -T and -p TID against ground truth.

tests/workloads/threads makes known calls per named thread: worker-K
(prctl PR_SET_NAME) makes 100*K getppid and K failing close, the main
thread 7 getppid. Cgroups named like systemd units (a.service, b.scope,
docker-<64 hex>.scope and one with hostile bytes) under a slice of the
cgroup v2 mount get one such process each.
"""
import csv
import io
import os
import signal
import subprocess

import pytest

from conftest import (cgroup2_mounts, counts, run, run_scprof,
                      scprof_json, scprof_report, stderr_lines, unit_slice,
                      workload)

ID64 = "0123456789abcdef" * 4
# the links of a --count-only run
COUNT_ONLY = {"sys_exit", "sched_process_exit"}


def worker_counts(k):
    return {"getppid": (100 * k, 0), "close": (k, k)}


def mine(syscalls):
    """The calls the workload counts exactly."""
    c = counts(syscalls)
    return {n: c[n] for n in ("getppid", "close") if n in c}


def test_threads_by_tid():
    proc, rep = scprof_json(["-T"], [workload("threads"), "3"])
    assert proc.returncode == 0, proc.stderr
    groups = rep["groups"]
    assert "processes" not in rep
    by_comm = {g["comm"]: g for g in groups}
    assert sorted(by_comm) == ["threads", "worker-1", "worker-2", "worker-3"]
    pids = {g["pid"] for g in groups}
    assert len(pids) == 1
    tids = {g["tid"] for g in groups}
    assert len(tids) == 4 and pids <= tids
    for k in (1, 2, 3):
        g = by_comm[f"worker-{k}"]
        assert g["by"] == {"tid": str(g["tid"])}
        assert mine(g["syscalls"]) == worker_counts(k)
    main = by_comm["threads"]
    assert main["tid"] == main["pid"]
    assert counts(main["syscalls"])["getppid"] == (7, 0)
    # largest first: by time (the main thread waits in futex longest)
    times = [sum(c["total_ns"] for c in g["syscalls"]) for g in groups]
    assert times == sorted(times, reverse=True) and times[-1] > 0
    # the groups add up to the total
    total = counts(rep["syscalls"])
    assert total["getppid"] == (607, 0) and total["close"][1] == 6


def test_threads_table_and_csv():
    proc, text = scprof_report(["-T"], [workload("threads"), "2"],
                               fmt="table")
    assert proc.returncode == 0, proc.stderr
    heads = [l for l in text.splitlines() if l.startswith("tid ")]
    assert len(heads) == 3 and any("(worker-2), pid " in h for h in heads)
    proc, text = scprof_report(["--by", "tid"], [workload("threads"), "2"],
                               fmt="csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[:5] == ["pid", "tid", "comm", "abi", "syscall"]
    got = {(r["comm"], r["syscall"]): int(r["calls"]) for r in rows}
    assert got[("worker-2", "getppid")] == 200
    assert got[("worker-1", "close")] == 1


def test_by_comm_and_pid():
    """comm is the process's name (a thread's with tid)."""
    proc, rep = scprof_json(["-f", "--by", "comm", "-C"],
                            ["sh", "-c", f"{workload('threads')} 3; "
                             f"{workload('threads')} 1; /bin/true"])
    assert proc.returncode == 0, proc.stderr
    got = {g["by"]["comm"]: mine(g["syscalls"]) for g in rep["groups"]}
    # (the C library's own closes succeed: the failed ones are the workers')
    assert got["threads"]["getppid"] == (607 + 107, 0)
    assert got["threads"]["close"][1] == 7
    assert set(got) == {"sh", "threads", "true"}
    assert "pid" not in rep["groups"][0]
    assert [g["members"] for g in rep["groups"]
            if g["by"]["comm"] == "threads"] == [2]
    proc, rep = scprof_json(["--by", "tid,comm", "-C"],
                            [workload("threads"), "2"])
    got = {g["by"]["comm"]: mine(g["syscalls"]) for g in rep["groups"]}
    assert got["worker-2"] == worker_counts(2)
    proc, rep = scprof_json(["--by", "pid"], [workload("threads"), "3"])
    [g] = rep["groups"]
    assert g["comm"] == "threads" and "tid" not in g
    assert mine(g["syscalls"])["getppid"] == (607, 0)
    assert mine(g["syscalls"])["close"][1] == 6


def start_waiting(n):
    """threads N wait: returns (Popen, {k: tid}) once every thread is named."""
    p = subprocess.Popen([workload("threads"), str(n), "wait"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    tids = {}
    for _ in range(n):
        k, tid = p.stdout.readline().split()
        tids[int(k)] = int(tid)
    return p, tids


def profile_thread(background, nthreads, k, args=(), **kw):
    """scprof ARGS -p TID of worker k while the threads run: (pid, tid,
    status, stderr, report)."""
    p, tids = start_waiting(nthreads)
    try:
        s = background(list(args) + ["-p", str(tids[k])], **kw)
        p.stdin.write(b"go\n")
        p.stdin.flush()
        assert p.wait(timeout=30) == 0
        rc, err, rep = s.stop()
    finally:
        p.kill()
        p.wait()
    return p.pid, tids[k], rc, err, rep


EXITED = "scprof: the target process exited: reporting what was collected"


def test_pid_of_a_thread_profiles_that_thread(background):
    pid, tid, rc, err, rep = profile_thread(background, 3, 2)
    assert rc == 0, err
    assert f"pid {tid} is a thread of process {pid}: profiling that " \
           "thread only" in err
    # nothing else said, but that the target exited when scprof saw its
    # exit before the test's SIGINT (a loaded machine delays the signal)
    said = [ln for ln in err.strip().splitlines() if ln != EXITED]
    assert len(said) == 1, err
    assert rep["target"] == f"thread {tid} of pid {pid}"
    assert mine(rep["syscalls"]) == worker_counts(2)


def test_pid_of_a_thread_count_only(background):
    _, _, rc, err, rep = profile_thread(background, 2, 1, ["-C"],
                                        need=COUNT_ONLY)
    assert rc == 0, err
    assert mine(rep["syscalls"]) == worker_counts(1)


# ---- cgroups --------------------------------------------------------------

HOSTILE = "evil\x1b[31m\tx\\y.scope"
UNITS = {"a.service": 1, "b.scope": 2, f"docker-{ID64}.scope": 3,
         HOSTILE: 1}


@pytest.fixture
def slice_():
    yield from unit_slice("scprof-test", UNITS)


def run_in_units(top, background, args):
    """One waiting threads process per unit, moved there; scprof on the
    slice; returns the report."""
    procs = []
    try:
        for u, n in UNITS.items():
            p, _ = start_waiting(n)
            procs.append(p)
            with open(os.path.join(top, u, "cgroup.procs"), "w") as f:
                f.write(str(p.pid))
        kw = {"need": COUNT_ONLY} if "-C" in args else {}
        if args[-2:-1] == ["--format"]:
            kw["fmt"] = args[-1]
            args = args[:-2]
        s = background(["--cgroup", top] + args, **kw)
        for p in procs:
            p.stdin.write(b"go\n")
            p.stdin.flush()
        for p in procs:
            assert p.wait(timeout=30) == 0
        rc, err, rep = s.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert rc == 0, err
    return rep


def getppid_of(n):
    return sum(100 * k for k in range(1, n + 1)) + 7


def test_by_unit_cgroup_container(slice_, background):
    rep = run_in_units(slice_, background,
                       ["--by", "unit,cgroup,container"])
    base = "/" + os.path.basename(slice_)
    got = {g["by"]["unit"]: g for g in rep["groups"]}
    assert sorted(got) == sorted(UNITS)
    for u, n in UNITS.items():
        g = got[u]
        assert g["by"]["cgroup"] == f"{base}/{u}"
        assert counts(g["syscalls"])["getppid"] == (getppid_of(n), 0)
        assert g["by"]["container"] == (ID64 if u.startswith("docker-")
                                        else "")
    rep = run_in_units(slice_, background, ["-C", "--by", "container"])
    got = {g["by"]["container"]: counts(g["syscalls"])["getppid"][0]
           for g in rep["groups"]}
    assert got == {ID64: getppid_of(3),
                   "": getppid_of(1) + getppid_of(2) + getppid_of(1)}


def test_unit_names_escaped(slice_, background):
    text = run_in_units(slice_, background,
                        ["--by", "unit", "--format", "table"])
    assert "\x1b" not in text and "\t" not in text
    heads = [l for l in text.splitlines() if l.startswith("unit ")]
    assert len(heads) == len(UNITS)
    assert "unit evil\\x1b[31m\\x09x\\\\y.scope:" in heads, heads
    text = run_in_units(slice_, background,
                        ["--by", "unit", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(text)))
    units = {r["unit"] for r in rows}
    assert len(units) == len(UNITS) and "a.service" in units
    assert not any("\x1b" in u for u in units)


def test_v1_only_host_says_cgroup_keys_need_v2():
    mounts = cgroup2_mounts()
    assert mounts
    # a mount namespace without any cgroup2 mount (this machine may have
    # several: a chroot's too): a cgroup v1-only host
    umounts = " && ".join(f"umount -l '{m}'" for m in reversed(mounts))
    proc = run(["unshare", "-m", "sh", "-c",
                f"{umounts} && exec \"$0\" \"$@\"",
                os.environ.get("SCPROF", "./scprof"), "--by", "unit", "-a",
                "-d", "0.1"])
    lines = stderr_lines(proc)
    assert proc.returncode == 1 and len(lines) == 1, lines
    assert "need cgroup v2" in lines[0]


@pytest.mark.parametrize("args,msg", [
    (["--by", "bogus"], "invalid or repeated --by key 'bogus'"),
    (["--by", "pid,pid"], "invalid or repeated --by key 'pid'"),
    (["--by", "unit,"], "invalid or repeated --by key ''"),
    (["--by", "tid", "-P"], "-P is --by pid"),
    (["-T", "-P"], "-P is --by pid"),
])
def test_bad_by(args, msg):
    proc = run_scprof(args + ["true"])
    lines = stderr_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert msg in lines[0]


# ---- calls in flight under -e and -p TID ----------------------------------

def test_in_flight_follows_the_filters(background):
    """The blocked workload's threads sleep in read, epoll_wait and wait4:
    -e trace=read lists the read only, -p TID of the epoll thread that one
    only (ground truth: /proc/PID/task/TID/syscall)."""
    from test_in_flight import blocked_threads
    p = subprocess.Popen([workload("blocked")], stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline().startswith(b"ready")
        threads = blocked_threads(p.pid)
        s = background(["-p", str(p.pid), "-e", "trace=read", "-d", "0.3"])
        rc, err, rep = s.stop(sig=None)
        assert rc == 0, err
        assert [f["syscall"] for f in rep["in_flight"]] == ["read"]
        epoll = [t for t, n in threads.items() if n == "epoll_wait"][0]
        s = background(["-p", str(epoll), "-d", "0.3"])
        rc, err, rep = s.stop(sig=None)
        assert rc == 0, err
        assert [(f["tid"], f["syscall"]) for f in rep["in_flight"]] == \
            [(epoll, "epoll_wait")]
    finally:
        p.kill()
        p.wait()

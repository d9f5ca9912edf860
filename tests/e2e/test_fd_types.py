# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--fd-types: calls on an fd, one row per kind of fd, with exact counts.

The workload tests/workloads/fdkinds makes known numbers of raw calls on a
regular file, a directory, a socket pair, a pipe, a FIFO, /dev/null, an
eventfd, a timerfd, a signalfd, an epoll fd, an inotify fd, a pidfd and fds
that are not open (see its header for the table EXPECTED mirrors). Every
(syscall, kind) row must have exactly those calls; the file kind also gets
the dynamic loader's calls on the libraries, which a run with N=0 measures
(and which must be the same in both). The sums over kinds must equal
strace -c -f's counts of the same run, an independent count.
"""
import csv
import io
import os

import pytest

from conftest import (CLEAN_ENV, parse_tables, run_scprof, scprof_json,
                      scprof_report, strace_summary, workload)

N = 37


def expected(n):
    """{(syscall, kind): (calls, errors)} the workload makes itself."""
    e = {}

    def add(name, kind, calls, errors=0):
        c, er = e.get((name, kind), (0, 0))
        e[(name, kind)] = (c + calls, er + errors)

    add("fstat", "file", n)
    add("write", "file", n)
    add("pread64", "file", n)
    add("lseek", "file", n)
    add("fsync", "file", 1)
    add("close", "file", 1)
    add("fstat", "dir", 2 * n)
    add("lseek", "dir", n)
    add("getdents64", "dir", 1)
    add("close", "dir", 1)
    add("fstat", "socket", 3 * n)
    for c in ("write", "read", "sendto", "recvfrom"):
        add(c, "socket", n)
    add("close", "socket", 2)
    add("fstat", "pipe", 4 * n + 5 * n)  # the pipe, then the FIFO
    add("write", "pipe", 2 * n)
    add("read", "pipe", 2 * n)
    add("close", "pipe", 3)
    add("fstat", "chr", 6 * n)
    add("write", "chr", n)
    add("read", "chr", n)
    add("close", "chr", 1)
    add("fstat", "eventfd", 7 * n)
    add("write", "eventfd", n)
    add("read", "eventfd", n)
    add("close", "eventfd", 1)
    add("fstat", "timerfd", 8 * n)
    add("timerfd_gettime", "timerfd", n)
    add("close", "timerfd", 1)
    add("fstat", "signalfd", 9 * n)
    add("close", "signalfd", 1)
    add("fstat", "epoll", 10 * n)
    add("epoll_wait", "epoll", n)
    add("close", "epoll", 1)
    add("fstat", "inotify", 11 * n)
    add("close", "inotify", 1)
    add("fstat", "pidfd", 12 * n)
    add("pidfd_send_signal", "pidfd", n)
    add("close", "pidfd", 1)
    for c in ("fstat", "close", "read"):
        add(c, "bad", n, n)
    return {k: v for k, v in e.items() if v[0]}


FD_CALLS = {name for name, _ in expected(1)}


def fd_rows(syscalls):
    """{(name, kind): (calls, errors)} of the JSON rows of calls on an fd."""
    out = {}
    for s in syscalls:
        if s["abi"] != "64":
            continue
        key = (s["name"], s["fd_type"])
        assert key not in out, f"{key} listed twice"
        out[key] = (s["calls"], s["errors"])
    return out


def run_json(tmp_path, n, extra=()):
    d = tmp_path / f"n{n}"
    d.mkdir()
    proc, rep = scprof_json(["--fd-types"] + list(extra),
                            [workload("fdkinds"), str(n), str(d)],
                            env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return rep


def check_counts(got, base, n):
    """got and base: fd_rows of runs with N=n and N=0."""
    want = expected(n)
    want0 = expected(0)
    for key, (calls, errors) in sorted(want.items()):
        name, kind = key
        g = got.get(key, (0, 0))
        if kind == "file":
            b = base.get(key, (0, 0))
            b0 = want0.get(key, (0, 0))
            # the loader's calls: the same with N=0 and N=n
            assert (g[0] - b[0], g[1] - b[1]) == (calls - b0[0],
                                                  errors - b0[1]), \
                f"{name} ({kind}): {g} with N={n}, {b} with N=0"
        else:
            assert g == (calls, errors), f"{name} ({kind}): {g}, want {(calls, errors)}"
    for key, g in got.items():
        name, kind = key
        if kind not in (None, "file"):
            assert key in want, f"unexpected row {name} ({kind}): {g}"


@pytest.mark.parametrize("fast", ["1", "0"])
def test_fd_types_json_exact(tmp_path, fast, monkeypatch):
    """Exact per-kind counts in JSON, on the flights[] and task storage paths."""
    monkeypatch.setenv("SCPROF_FAST_PATHS", fast)
    base = fd_rows(run_json(tmp_path, 0)["syscalls"])
    rep = run_json(tmp_path, N)
    got = fd_rows(rep["syscalls"])
    check_counts(got, base, N)
    # calls on no fd have fd_type null, fd calls never do
    for s in rep["syscalls"]:
        if s["name"] in FD_CALLS:
            assert s["fd_type"] is not None, s
    assert ("openat", None) in got and ("execve", None) in got
    # the process list splits the same way
    procs = [p for p in rep["processes"] if p["comm"] == "fdkinds"]
    assert len(procs) == 1
    assert fd_rows(procs[0]["syscalls"]) == got


def test_fd_types_match_strace(tmp_path):
    """Summed over kinds, each fd call's count is strace -c -f's."""
    d = tmp_path / "s"
    d.mkdir()
    st = strace_summary([workload("fdkinds"), str(N), str(d)], env=CLEAN_ENV)
    got = fd_rows(run_json(tmp_path, N)["syscalls"])
    sums = {}
    for (name, _), (calls, errors) in got.items():
        c, e = sums.get(name, (0, 0))
        sums[name] = (c + calls, e + errors)
    for name in FD_CALLS:
        assert sums[name] == st[name][:2], \
            f"{name}: scprof {sums[name]}, strace {st[name][:2]}"


def test_fd_types_table_and_csv(tmp_path):
    """The table rows read 'read (socket)'; CSV has an fd_type column."""
    base = fd_rows(run_json(tmp_path, 0)["syscalls"])
    for fmt in ("table", "csv"):
        d = tmp_path / fmt
        d.mkdir()
        proc, text = scprof_report(["--fd-types", "-S", "calls"],
                                   [workload("fdkinds"), str(N), str(d)],
                                   fmt, env=CLEAN_ENV)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        got = {}
        if fmt == "table":
            (_, header, rows, _), = parse_tables(text)
            for r in rows:
                name, _, kind = r["syscall"].partition(" (")
                key = (name, kind.rstrip(")") or None)
                got[key] = (int(r["calls"]), int(r["errors"] or 0))
        else:
            rows = list(csv.DictReader(io.StringIO(text)))
            assert list(rows[0].keys())[:6] == ["pid", "comm", "abi",
                                                "syscall", "fd_type", "nr"]
            for r in rows:
                if r["comm"] != "fdkinds":
                    continue
                key = (r["syscall"], r["fd_type"] or None)
                got[key] = (int(r["calls"]), int(r["errors"]))
        check_counts(got, base, N)


def test_without_flag_unchanged(tmp_path):
    """Without --fd-types: one row per syscall, no fd_type anywhere."""
    d = tmp_path / "plain"
    d.mkdir()
    proc, rep = scprof_json([], [workload("fdkinds"), "5", str(d)],
                            env=CLEAN_ENV)
    assert proc.returncode == 0
    names = [s["name"] for s in rep["syscalls"] if s["abi"] == "64"]
    assert len(names) == len(set(names))
    assert all("fd_type" not in s for s in rep["syscalls"])
    (d / "file").unlink()
    (d / "fifo").unlink()
    proc, text = scprof_report([], [workload("fdkinds"), "5", str(d)], "csv",
                               env=CLEAN_ENV)
    assert text.splitlines()[0] == ("pid,comm,abi,syscall,nr,calls,errors,"
                                    "total_ns,min_ns,max_ns,avg_ns,p50_ns,"
                                    "p90_ns,p99_ns,bytes,on_cpu_ns,"
                                    "cpu_wait_ns,blocked_ns,io_wait_ns")


def test_fd_types_count_only_refused():
    proc = run_scprof(["-C", "--fd-types", "--", "true"])
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "--fd-types" in err, err


def test_fd_types_compat_abi():
    """i386 calls (int $0x80) take their fd from ebx."""
    proc, rep = scprof_json(["--fd-types"], [workload("fdkinds32"), "23"],
                            env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    got = {(s["name"], s["fd_type"]): (s["calls"], s["errors"])
           for s in rep["syscalls"] if s["abi"] == "32"}
    assert got == {("write", "pipe"): (23, 0), ("close", "bad"): (23, 23)}, got

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon --series-ttl (issue 44, item 4): a node's series are
bounded by what it did lately, not by every syscall it ever made.

- A rare syscall's row appears with the workload's own count, leaves
  /metrics and the OTLP push once it has had no call for the TTL (every
  family of it at once, and the process's group series likewise), and
  comes back, when the workload calls it again, with the workload's whole
  count: the same cumulative stream, under the daemon's start time.
- Under a churn of distinct syscalls (the syschurn workload: a few new ones
  every round, going round some 350), every row a scrape shows was called
  within the TTL of it, every row called since the scrape before is shown,
  with the workload's count, and so the rows shown stay a small fraction
  of the syscalls made.

Times: the workload reads CLOCK_MONOTONIC around its rounds and the test
around its scrapes (time.monotonic, the same clock as the daemon's); the
checks are the bounds those readings imply whatever the machine's load
(a slow scrape only widens them), never a duration the test expects.
The TTL is short (2 s) so that the tests last seconds.
"""
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import TIMEOUT, run_scprof, stderr_lines, workload
from test_daemon import daemons, parse  # noqa: F401 (fixtures)
import otlp_util as ou

TTL_S = 2.0
UNISTD = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"


def syscall_names():
    """x86_64 numbers to names, from the kernel's own header (scprof's
    tables are generated from the same kind of file, not read here)."""
    names = {}
    with open(UNISTD) as f:
        for line in f:
            m = re.match(r"#define __NR_(\w+) (\d+)$", line.strip())
            if m:
                names[int(m.group(2))] = m.group(1)
    return names


def rows(samples, family="scprof_syscalls_total"):
    """{(abi, syscall): value} of one per-syscall family."""
    return {(lab["abi"], lab["syscall"]): v for n, lab, v in samples
            if n == family}


def families_of(samples, syscall):
    """The per-syscall families that have a series of syscall."""
    return {n for n, lab, _ in samples if lab.get("syscall") == syscall}


class Scraper:
    """Scrapes with the monotonic times around each: sent, answered."""

    def __init__(self, d):
        self.d, self.log = d, []

    def scrape(self):
        sent = time.monotonic()
        samples, _ = parse(self.d.metrics())
        self.log.append((sent, time.monotonic(), samples))
        return samples


@pytest.fixture
def receivers():
    made = []

    def make(**kw):
        r = ou.Receiver(**kw)
        made.append(r)
        return r
    yield make
    for r in made:
        r.close()


@pytest.fixture
def procs():
    made = []

    def make(args, **kw):
        p = subprocess.Popen(args, **kw)
        made.append(p)
        return p
    yield make
    for p in made:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=TIMEOUT)


def otlp_syscalls(req):
    """{syscall: (value, start_time_unix_nano)} of scprof.syscalls in an
    export, and whether any metric has a point of getppid."""
    out, any_getppid = {}, False
    for m in ou.metrics(req):
        kind = m.WhichOneof("data")
        if kind not in ("sum", "gauge", "histogram"):
            continue
        for p in getattr(m, kind).data_points:
            a = ou.attrs(p)
            if a.get("syscall") == "getppid":
                any_getppid = True
            if m.name == "scprof.syscalls" and a.get("abi") == "64":
                out[a["syscall"]] = (p.as_int, p.start_time_unix_nano)
    return out, any_getppid


def taken_after(req, t_ns):
    """Whether an export's points were taken after t_ns (unix)."""
    return any(p.time_unix_nano > t_ns for m in ou.metrics(req)
               if m.WhichOneof("data") == "sum" for p in m.sum.data_points)


def exports_since(r, n, pred, what):
    """The exports received after the n-th one, once one satisfies pred."""
    reqs = r.wait(lambda reqs: any(pred(q) for _, _, q in reqs[n:]),
                  TIMEOUT, what)
    return [q for _, _, q in reqs[n:]]


def test_rare_syscall_row_expires_and_returns(daemons, receivers, procs,
                                              tmp_path):
    # trigger makes N getppid in its main thread on each 'c', then says k
    N = 7
    fifo = tmp_path / "cmd"
    os.mkfifo(fifo)
    w = procs([workload("trigger"), str(fifo), "0", str(N)],
              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert w.stdout.readline() == b"ready\n"
    cmd = open(fifo, "wb", buffering=0)
    r = receivers()
    d = daemons(["-p", str(w.pid), "--series-ttl", "2s", "--otlp-endpoint",
                 r.url(), "--otlp-interval", "0.3"])
    sc = Scraper(d)

    def order():
        sent = time.monotonic()
        cmd.write(b"c")
        assert w.stdout.read(1) == b"k"
        return sent

    def group(samples):
        return {lab.get("comm") for n, lab, _ in samples
                if n == "scprof_group_syscalls_total"}

    t_call = order()
    s = sc.scrape()
    assert rows(s)[("64", "getppid")] == N
    assert rows(s, "scprof_syscall_errors_total")[("64", "getppid")] == 0
    fams = families_of(s, "getppid")
    assert {"scprof_syscall_duration_seconds_bucket",
            "scprof_syscall_duration_seconds_count",
            "scprof_syscall_on_cpu_seconds_total"} <= fams, fams
    assert "trigger" in group(s)
    # an export with the row, under the daemon's start time
    n0 = len(r.requests)
    q = exports_since(r, n0, lambda q: "getppid" in otlp_syscalls(q)[0],
                      "an export with getppid")[-1]
    value, start = otlp_syscalls(q)[0]["getppid"]
    assert value == N
    starts = {st for _, st in otlp_syscalls(q)[0].values()}
    assert starts == {start}

    # idle: gone after the TTL, every family of it at once, never sooner
    deadline = time.monotonic() + TIMEOUT
    while True:
        s = sc.scrape()
        if ("64", "getppid") not in rows(s):
            break
        assert time.monotonic() < deadline, "getppid's row never left"
        time.sleep(0.2)
    sent, answered, _ = sc.log[-1]
    assert answered - t_call > TTL_S, "left before it was idle for the TTL"
    assert families_of(s, "getppid") == set(), families_of(s, "getppid")
    # the process's group series goes the same way (same TTL)
    while "trigger" in group(s):
        assert time.monotonic() < deadline, "the group series never left"
        time.sleep(0.2)
        s = sc.scrape()
    # and from the push: the exports made after that scrape (the daemon
    # makes an export and answers a scrape one after the other, on one
    # thread: an export's time after the answer is an export made after)
    t_gone = time.time_ns()
    qs = exports_since(r, 0, lambda q: taken_after(q, t_gone),
                       "an export after the row left")
    assert not any(otlp_syscalls(q)[1] for q in qs if taken_after(q, t_gone)), \
        "getppid still pushed"

    # called again: back with the workload's whole count, same stream
    order()
    s = sc.scrape()
    assert rows(s)[("64", "getppid")] == 2 * N
    assert families_of(s, "getppid") == fams
    assert "trigger" in group(s)
    n2 = len(r.requests)
    q = exports_since(r, n2, lambda q: "getppid" in otlp_syscalls(q)[0],
                      "an export with getppid back")[-1]
    assert otlp_syscalls(q)[0]["getppid"] == (2 * N, start)
    cmd.write(b"q")
    cmd.close()
    assert w.wait(timeout=TIMEOUT) == 0


def test_series_stay_bounded_under_syscall_churn(daemons, procs):
    PER_ROUND, ROUNDS, PAUSE_MS = 8, 44, 250
    names = syscall_names()
    w = procs([workload("syschurn"), str(PER_ROUND), str(ROUNDS),
               str(PAUSE_MS)], stdin=subprocess.PIPE,
              stdout=subprocess.PIPE)
    listed = int(w.stdout.readline().split()[1])
    d = daemons(["-p", str(w.pid), "--series-ttl", "2s",
                 "--comm-series", "0"])
    rounds = []  # (start, [syscall names])

    def read_rounds():
        for line in w.stdout:
            f = line.split()
            rounds.append((int(f[1]) / 1e9, [names[int(x)] for x in f[2:]]))
    reader = threading.Thread(target=read_rounds, daemon=True)
    reader.start()
    sc = Scraper(d)
    w.stdin.write(b"go\n")
    w.stdin.close()
    while w.poll() is None:
        sc.scrape()
        time.sleep(0.2)
    reader.join(TIMEOUT)
    sc.scrape()
    assert len(rounds) == ROUNDS
    # the workload's own calls, in every round: not judged here
    own = {"read", "write", "clock_nanosleep", "exit_group"}
    made = {n for _, ns in rounds for n in ns}
    assert len(made) >= 300, f"only {len(made)} distinct syscalls made"
    ends = [t for t, _ in rounds[1:]] + [float("inf")]

    def called_after(name, t):
        """Some call of name was certainly made after time t."""
        return any(end > t for (_, ns), end in zip(rounds, ends)
                   if name in ns)

    most = 0
    for k, (sent, answered, samples) in enumerate(sc.log):
        shown = {n for (abi, n) in rows(samples) if abi == "64"} - own
        most = max(most, len(shown))
        # shown: its calls grew at a scrape answered TTL before this one
        # was sent, or later, so it was called after the scrape before it
        first = next(j for j, (_, a, _) in enumerate(sc.log)
                     if a >= sent - TTL_S)
        since = sc.log[first - 1][0] if first else float("-inf")
        stale = {n for n in shown if not called_after(n, since)}
        assert not stale, f"scrape {k}: idle past the TTL yet shown: {stale}"
        # called between the scrape before and this one: shown, with the
        # workload's count (between its rounds done and begun)
        if k:
            prev = sc.log[k - 1][1]
            fresh = {n for (t, ns), end in zip(rounds, ends)
                     if t >= prev and end <= sent for n in ns}
            assert fresh <= shown, f"scrape {k}: not shown: {fresh - shown}"
        counts = rows(samples)
        for n in shown:
            lo = sum(ns.count(n) for (_, ns), end in zip(rounds, ends)
                     if end <= sent)
            hi = sum(ns.count(n) for t, ns in rounds if t < answered)
            assert lo <= counts[("64", n)] <= hi, (k, n, lo, hi)
    # a few rounds' worth at a time, never the whole churn
    assert most < len(made) / 2, (most, len(made), listed)
    # once it is over, every row of it leaves
    deadline = time.monotonic() + TIMEOUT
    while rows(sc.scrape()):
        assert time.monotonic() < deadline, "rows left after the churn"
        time.sleep(0.2)


@pytest.mark.parametrize("arg", ["10", "0s", "500ms", "1h", "x", ""])
def test_bad_series_ttl_is_one_line(arg):
    p = run_scprof(["daemon", "--series-ttl", arg])
    assert p.returncode == 2
    (line,) = stderr_lines(p)
    assert line.startswith(f"scprof daemon: invalid --series-ttl '{arg}'")

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon's split of the calls' time (issue 41, item 3): per syscall
and per series, the time of the calls timed on a CPU, waiting for a CPU,
blocked, and of that in I/O wait, against the split workload's own truth
(tests/workloads/split.c: its thread "split-work" reads its clocks and its
schedstat around the calls; see tests/e2e/test_split.py).

At --latency-duty 1 every call is timed, so the daemon's figures are those
of every call. The daemon has no per-thread rows: a syscall's row holds the
worker's calls and the few the loader makes (reads of ELF headers, a few
microseconds), and the tolerance is test_split.py's, 5% of the calls' time,
after the same correction (in_call_truth: what the workload's windows hold
outside sys_enter..sys_exit). While the workload runs the daemon is scraped
over and over: no counter goes back, the parts add up to the time (on a
CPU + waiting + blocked = _sum, I/O wait within blocked) at every scrape.
"""
import math
import re
import subprocess
import threading
import time

from conftest import TIMEOUT, workload
from test_daemon import daemons, gates, parse, quiesce, value  # noqa: F401
from test_split import LAST_CPU, TOL, Facts, Split, check_against_truth, \
    ext4_loop, ms, psi_cgroup, psi_some_us, in_cgroup, steal_ns  # noqa: F401

PARTS = {"on_cpu_ns": "scprof_syscall_on_cpu_seconds_total",
         "cpu_wait_ns": "scprof_syscall_cpu_wait_seconds_total",
         "blocked_ns": "scprof_syscall_blocked_seconds_total",
         "io_wait_ns": "scprof_syscall_io_wait_seconds_total"}
SERIES = {"on_cpu_ns": "scprof_group_syscall_on_cpu_seconds_total",
          "cpu_wait_ns": "scprof_group_syscall_cpu_wait_seconds_total",
          "blocked_ns": "scprof_group_syscall_blocked_seconds_total",
          "io_wait_ns": "scprof_group_syscall_io_wait_seconds_total",
          "total_ns": "scprof_group_syscall_seconds_total"}


def ns(seconds):
    return round(seconds * 1e9)


def syscall_row(samples, name):
    """A syscall's figures from the metrics, as test_split.Split takes a
    row of scprof's JSON (no estimates: the daemon has none)."""
    lbl = {"syscall": name, "abi": "64"}
    row = {"name": name,
           "calls": value(samples, "scprof_syscalls_total", **lbl),
           "total_ns": ns(value(samples, "scprof_syscall_duration_seconds_sum",
                                **lbl)),
           "blocked_in": [], "woken_by": [], "ran_instead": []}
    for key, metric in PARTS.items():
        v = value(samples, metric, **lbl)
        assert v is not None, f"no {metric} for {name}: the daemon does " \
            "not split the calls' time"
        row[key] = ns(v)
    return Split(row)


def check_adds_up(samples):
    """Every syscall: on a CPU + waiting + blocked is the histogram's _sum
    (to the nanosecond the decimals carry), I/O wait within blocked."""
    by = {(n, l.get("syscall"), l.get("abi")): v for n, l, v in samples}
    rows = 0
    for n, l, v in samples:
        if n != "scprof_syscall_duration_seconds_sum":
            continue
        rows += 1
        got = {k: by.get((m, l["syscall"], l["abi"]))
               for k, m in PARTS.items()}
        assert None not in got.values(), (l, got)
        parts = got["on_cpu_ns"] + got["cpu_wait_ns"] + got["blocked_ns"]
        assert abs(parts - v) <= 3e-9 + 1e-12 * v, \
            f"{l['syscall']}: parts add up to {parts} s, _sum is {v} s"
        assert got["io_wait_ns"] <= got["blocked_ns"] + 1e-9, (l, got)
        assert min(got.values()) >= 0, (l, got)
    return rows


class Scraper:
    """Scrapes a daemon every few ms in a thread until stopped: every
    counter's last value by series; fails (at join) if one went back, or
    if a scrape's parts did not add up."""

    def __init__(self, d, every=0.01):
        self.d, self.every = d, every
        self.last, self.errors, self.scrapes = {}, [], 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop.is_set():
            try:
                self.check(*parse(self.d.metrics()))
            except AssertionError as e:
                self.errors.append(str(e))
                return
            time.sleep(self.every)

    def check(self, samples, typed):
        self.scrapes += 1
        check_adds_up(samples)
        for n, l, v in samples:
            fam = re.sub(r"_(bucket|sum|count)$", "", n)
            if typed.get(n) != "counter" and typed.get(fam) != "histogram":
                continue
            key = (n, tuple(sorted(l.items())))
            assert v >= self.last.get(key, 0), \
                f"{key} went from {self.last[key]} to {v}"
            self.last[key] = v

    def join(self, at_least=5):
        """Stop once at least at_least scrapes were checked (a workload
        of a few ms ends before the fifth), the last of them after every
        figure was folded; the number of scrapes."""
        deadline = time.monotonic() + TIMEOUT
        while (self.scrapes < at_least and not self.errors and
               self.thread.is_alive() and time.monotonic() < deadline):
            time.sleep(self.every)
        self.stop.set()
        self.thread.join(timeout=TIMEOUT)
        assert not self.errors, self.errors[0]
        return self.scrapes


def run_split(daemons, gates, args, cmd_prefix=lambda c: c):
    """The split workload under a daemon timing every call, scraped while
    it runs; its Facts and the scrape once it is folded."""
    g = gates(cmd_prefix([workload("split")] + [str(a) for a in args]),
              stdout=subprocess.PIPE)
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1"])
    scraper = Scraper(d)
    stolen = steal_ns()
    g.release()
    out = g.proc.stdout.read()
    assert g.wait() == 0, out
    stolen = steal_ns() - stolen
    samples = quiesce(d, lambda s: value(
        s, "scprof_processes_folded_total") == 1, "the workload folded")
    # at least 5 scrapes checked over the run and its fold: a workload of
    # a few ms can end and be folded before the fifth (4, once, in a make
    # test run), so the scraper goes on until it has made them
    assert scraper.join(5) >= 5, "the scraper stopped before 5 scrapes"
    # (once the scraper's thread is done: one scrape after another)
    scraper.check(*parse(d.metrics()))
    facts = Facts(out.decode())
    facts.stolen = stolen
    return facts, samples


def series_split(samples, comm):
    lbl = {"comm": comm}
    got = {k: value(samples, m, **lbl) for k, m in SERIES.items()}
    assert None not in got.values(), \
        f"the series of {comm} has no split: {got}"
    return {k: ns(v) for k, v in got.items()}


def check_series(samples, comm="split"):
    """The groups' series split the time as the syscalls' rows do (the
    same calls, from per-thread totals rather than per-syscall cells):
    summed over every group, each part within 1% (and 1 ms) of the rows'
    sum; comm's own series adds up. The sum, not comm's series alone: a
    process's growth goes to the name it has when a scrape sees it, so
    the calls of the shells that exec the workload (the gate's read, and
    in_cgroup's write to cgroup.procs, blocked 11-18 ms here while the
    cgroup's threads are moved) are filed under sh or taskset when a
    scrape falls between that call and the exec. Returns comm's series."""
    s = series_split(samples, comm)
    assert abs(s["on_cpu_ns"] + s["cpu_wait_ns"] + s["blocked_ns"] -
               s["total_ns"]) <= 1000, s
    rows = {k: sum(ns(v) for n, _, v in samples if n == m)
            for k, m in list(PARTS.items()) +
            [("total_ns", "scprof_syscall_duration_seconds_sum")]}
    groups = {k: sum(ns(v) for n, _, v in samples if n == m)
              for k, m in SERIES.items()}
    for k in SERIES:
        assert abs(groups[k] - rows[k]) <= 0.01 * rows["total_ns"] + 1e6, \
            f"the groups' series {k} {ms(groups[k])} ({comm}'s " \
            f"{ms(s[k])}), the syscalls' {ms(rows[k])}"
    return s


def test_pipe_reads_are_blocked(daemons, gates):
    """split pipe: 1-byte reads of a pipe fed every 10 ms, blocked about
    all of their time (90% or more by the workload's truth), none of it I/O
    wait; on a CPU, waiting and blocked within 5% of the calls' time of the
    worker's own schedstat figures. The series of the process says the
    same."""
    facts, s = run_split(daemons, gates, ["pipe", 100])
    r = syscall_row(s, "read")
    assert r.calls >= facts.truth["read"]["calls"], r
    check_against_truth(r, facts, exact_calls=False)
    assert r.blocked >= 0.9 * r.total, r
    assert r.io_wait <= TOL * r.blocked, r
    series = check_series(s)
    assert series["blocked_ns"] >= 0.9 * r.blocked, series


def test_shared_calls_wait_for_a_cpu(daemons, gates):
    """split shared: reads of /dev/zero and getrandom()s pinned to a CPU a
    spinning thread shares: about half of their time waiting for it. Each
    part within 5% of the calls' time of the schedstat truth, never
    blocked; where the kernel made the calls wait inside them (not only on
    their way back to user space), the waiting shows."""
    facts, s = run_split(daemons, gates, ["shared", 100])
    for name in ("read", "getrandom"):
        r = syscall_row(s, name)
        want = check_against_truth(r, facts, exact_calls=False)
        assert r.blocked <= TOL * r.total, r
        if want["cpu_wait"] >= 0.1 * r.total:
            assert r.cpu_wait >= 0.05 * r.total, (r, want)
    check_series(s)


def test_direct_reads_are_io_wait(daemons, gates, ext4_loop, psi_cgroup):
    """split io: O_DIRECT preads of ext4 on a loop device, blocked most of
    their time and in I/O wait for nearly all of it (the worker's PSI when
    its cgroup has one: test_split.py's looser 20%; else I/O wait most of
    blocked)."""
    before = psi_some_us(psi_cgroup, "io") if psi_cgroup else None

    def prefix(cmd):
        cmd = ["taskset", "-c", str(LAST_CPU)] + cmd
        return in_cgroup(psi_cgroup, cmd) if psi_cgroup else cmd

    facts, s = run_split(daemons, gates, ["io", ext4_loop, 40], prefix)
    r = syscall_row(s, "pread64")
    check_against_truth(r, facts, exact_calls=False)
    assert r.io_wait <= r.blocked + 1000, r
    assert r.io_wait >= 0.8 * r.blocked, r
    if before is not None:
        io = (psi_some_us(psi_cgroup, "io") - before) * 1000
        assert abs(r.io_wait - io) <= 0.2 * r.total, (r, ms(io))
    series = check_series(s)
    assert series["io_wait_ns"] >= 0.8 * r.io_wait, series


def test_split_programs_are_priced_and_run_in_windows_only(daemons, gates):
    """The split's scheduler programs time themselves and count in the
    windows' cost; with --latency-duty 0 (no window) they never run."""
    for duty, runs in (("0", False), ("1", True)):
        g = gates([workload("split"), "pipe", "20"])
        d = daemons(["-p", str(g.pid), "-f", "--latency-duty", duty])
        g.release()
        assert g.wait() == 0
        s, _ = parse(d.metrics())
        sw = value(s, "scprof_bpf_run_seconds_total", program="sched_switch")
        wk = value(s, "scprof_bpf_run_seconds_total", program="sched_waking")
        assert sw is not None and wk is not None, "no split program figures"
        if runs:
            # the pipe's 20 sleeps and wake-ups, and the machine's
            assert sw > 0 and wk > 0, (sw, wk)
            lat = value(s, "scprof_bpf_cost_seconds_total", part="latency")
            enter = value(s, "scprof_bpf_run_seconds_total",
                          program="sys_enter")
            assert lat >= sw + wk, (lat, sw, wk)
            assert value(s, "scprof_latency_cost_seconds_total") >= \
                lat * (1 - 1e-9), s
            assert enter > 0
        else:
            assert sw == 0 and wk == 0, (sw, wk)
            assert math.isclose(value(s, "scprof_bpf_cost_seconds_total",
                                      part="latency"), 0, abs_tol=1e-12)

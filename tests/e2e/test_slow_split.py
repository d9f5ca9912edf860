# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--slow with the split (issue 41): each slow call's time split into on a
CPU, waiting for a CPU, blocked and I/O wait, where its longest sleep slept
and who woke it, in its line, its JSON line and its trace event.

The truth is the split workload's (tests/workloads/split.c, and the
harness of test_split.py): in pipe mode its worker, "split-work", reads a
pipe that the thread "split-writer" writes a byte to every few ms, in
futex mode it locks a mutex the thread "split-holder" holds a few ms at a
time; the workload prints each thread's tid and name, and checks that its
calls were blocked for most of their time (schedstat). Where the worker
slept is what its own kernel stack says while it sleeps
(/proc/PID/task/TID/stack, sampled by test_split's StackSampler:
anon_pipe_read and futex_do_wait on 6.18).
"""
import json
import re

import pytest

from conftest import CLEAN_ENV, run_scprof, workload
from test_split import Run
from test_slow import LINE, check_trace, dur_ns

MS = 1_000_000
# mode, its argument list, the worker's syscall, the thread that wakes it,
# the threshold: each call waits for the other thread (10 ms, 5 ms)
MODES = {
    "pipe": (["pipe", 40, 10], "read", "writer", 5),
    "futex": (["futex", 60, 5], "futex", "holder", 2),
}


def parts_add_up(c, dur):
    """On a CPU, waiting and blocked are the call's time, none negative;
    I/O wait is part of blocked."""
    on, wait, blocked, io = (c["on_cpu_ns"], c["cpu_wait_ns"],
                             c["blocked_ns"], c["io_wait_ns"])
    assert min(on, wait, blocked, io) >= 0, c
    assert on + wait + blocked == dur, c
    assert io <= blocked, c


def check_sleeps(calls, r, syscall, role, threshold_ns):
    """The worker's slow calls against the workload's truth for all its
    calls of syscall: their blocked time is part of it, and all of it but
    what the calls under the threshold can hold (each less than the
    threshold), within 5% of the calls' time; blocked dominates them, as
    it does the truth (the workload checks 90% of the pipe reads' time,
    80% of the locks'; slow calls on a busy machine wait for a CPU more);
    no I/O wait; each asleep where the worker's kernel stack said it
    sleeps, and woken by the other thread (90% of them at least: a call
    may be woken otherwise once in a while, a signal, a spurious futex
    wake-up)."""
    t = r.facts.truth[syscall]
    fn, _ = r.sampler.top(syscall, "S")
    other_tid, other_comm = r.facts.threads[role]
    assert len(calls) >= 10, f"{len(calls)} slow {syscall} calls"
    for c in calls:
        parts_add_up(c, c["duration_ns"])
        assert c["io_wait_ns"] == 0, c
        # the longest sleep is one of the call's sleeps
        assert 0 < c["sleep_ns"] <= c["blocked_ns"], c
        assert c["slept_in"] == fn, \
            f"the worker slept in {fn} (its kernel stack); scprof: {c}"
    blocked = sum(c["blocked_ns"] for c in calls)
    dur = sum(c["duration_ns"] for c in calls)
    row = r.split(syscall)
    tol = 0.05 * row.total
    assert blocked <= t["blocked_ns"] + tol, (blocked, t)
    fast = row.calls - len(calls)
    assert blocked >= t["blocked_ns"] - fast * threshold_ns - tol, \
        (blocked, fast, t)
    assert blocked >= 0.7 * dur, \
        f"blocked {blocked} of the slow calls' {dur} ns; truth {t}"
    woken = sum(c["woken_by"] == {"kind": "task", "comm": other_comm,
                                  "pid": r.facts.pid, "tid": other_tid}
                for c in calls)
    assert woken >= 0.9 * len(calls), \
        f"{woken} of {len(calls)} woken by {other_comm}[{other_tid}]: " \
        f"{[c['woken_by'] for c in calls]}"


@pytest.mark.parametrize("mode", sorted(MODES))
def test_json_lines_and_trace(tmp_path, mode):
    args, syscall, role, threshold = MODES[mode]
    log, trace = tmp_path / "slow.jsonl", tmp_path / "slow.trace.json"
    r = Run(tmp_path, args, sample=True,
            scprof_args=["--slow", f"{threshold}ms", "--slow-out", str(log),
                         "--trace-out", str(trace)])
    work = r.facts.tid("work")
    objs = [json.loads(ln) for ln in log.read_text().splitlines()]
    mine = [o for o in objs if o["tid"] == work and o["syscall"] == syscall]
    check_sleeps(mine, r, syscall, role, threshold * MS)
    # the trace's events carry the same in their args
    with open(trace) as f:
        xs = check_trace(json.load(f))
    events = [ev["args"] for ev in xs
              if ev["tid"] == work and ev["name"] == syscall]
    assert len(events) == len(mine)
    for ev, o in zip(events, mine):
        for key in ("on_cpu_ns", "cpu_wait_ns", "blocked_ns", "io_wait_ns",
                    "sleep_ns", "slept_in", "woken_by"):
            assert ev[key] == o[key], (key, ev, o)


SPLIT = re.compile(
    r"^ on-cpu (?P<on>[\d.]+ m?s), cpu-wait (?P<wait>[\d.]+ m?s), "
    r"blocked (?P<blocked>[\d.]+ m?s) \(io-wait (?P<io>[\d.]+ m?s)\)"
    r"(?:; slept in (?P<where>\S+), woken by (?P<waker>\S+))?$")


def ns_of(text):
    v, unit = text.split()
    return float(v) * (MS if unit == "ms" else 1000 * MS)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_table_lines(tmp_path, mode):
    """The strace-like line says the same: its parts add up to its time
    (to the line's rounding), where it slept and who woke it as
    comm[pid/tid]."""
    args, syscall, role, threshold = MODES[mode]
    log = tmp_path / "slow.log"
    r = Run(tmp_path, args, sample=True, fmt="table", scprof_args=[
        "--slow", f"{threshold}ms", "--slow-out", str(log)])
    work = r.facts.tid("work")
    other_tid, other_comm = r.facts.threads[role]
    calls = []
    for line in log.read_text().splitlines():
        m = LINE.match(line)
        assert m, f"not a slow call's line: {line!r}"
        c = m.groupdict()
        if int(c["tid"]) != work or c["syscall"] != syscall:
            continue
        s = SPLIT.match(c["split"] or "")
        assert s, f"no split in {line!r}"
        c.update(s.groupdict())
        calls.append(c)
    assert len(calls) >= 10, calls
    fn, _ = r.sampler.top(syscall, "S")
    waker = f"{other_comm}[{r.facts.pid}/{other_tid}]"
    woken = 0
    blocked = dur = 0
    for c in calls:
        d = dur_ns(c)
        parts = ns_of(c["on"]) + ns_of(c["wait"]) + ns_of(c["blocked"])
        assert abs(parts - d) <= 3000, c   # three roundings to 1 µs
        assert c["where"] == fn, (fn, c)
        woken += c["waker"] == waker
        blocked += ns_of(c["blocked"])
        dur += d
    assert blocked >= 0.7 * dur, (blocked, dur)
    assert woken >= 0.9 * len(calls), (waker, calls)


def test_no_split_no_split_in_the_log(tmp_path):
    """--no-split: the slow calls are reported without a split (sleepmix's
    reads of 5 and 15 ms)."""
    log = tmp_path / "slow.jsonl"
    p = run_scprof(["--no-split", "--slow", "3ms", "--slow-out", str(log),
                    "--format", "json", "-o", str(tmp_path / "r.json"), "--",
                    workload("sleepmix"), "5", "5"], env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    objs = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [o for o in objs if o["syscall"] == "read"], objs
    for o in objs:
        for key in ("on_cpu_ns", "blocked_ns", "slept_in", "woken_by"):
            assert key not in o, o

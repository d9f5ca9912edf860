# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--stacks-by blocked (issue 41): an off-CPU flame graph. Each sampled
stack is weighted by its call's blocked time, with the kernel stack of
where the call slept (its longest sleep) on top of its user stack.

The truth is tests/workloads/sleepmix.c: two call sites read a pipe that
another thread writes to, long_wait three times as long per call as
short_wait; the workload times each read itself (it is asleep for nearly
all of it) and prints each site's total. The folded weights of the two
sites must share the blocked time as those totals do; their kernel frames
end where a pipe read sleeps (anon_pipe_read on 6.18, pipe_read before).
slowmix's getppid calls never block: by blocked time they are never
sampled.
"""
import json
import re

import pytest

from conftest import CLEAN_ENV, run, run_scprof, scprof_json, workload
from test_pprof import go_pprof, parse_raw

ROUNDS, MS = 20, 10
PIPE_READ = ("anon_pipe_read", "pipe_read")
COMMENT = ("# scprof --stacks-by blocked: counts are microseconds blocked "
           "in calls; kernel frames end in _[k]")


def sleepmix_truth(stdout):
    """{site: ns} the workload measured around its reads."""
    truth = {}
    for line in stdout.decode().splitlines():
        f = line.split()
        if f[0] == "truth":
            truth[f[1]] = int(f[3].split("=")[1])
    assert set(truth) == {"short_wait", "long_wait"}, stdout
    return truth


def folded_lines(path):
    lines = path.read_text().splitlines()
    assert lines and lines[0] == COMMENT, lines[:1]
    out = []
    for ln in lines[1:]:
        stack, count = ln.rsplit(" ", 1)
        out.append((stack.split(";"), int(count)))
    return out


def run_sleepmix(tmp_path, extra=()):
    folded = tmp_path / "b.folded"
    proc, rep = scprof_json(["--stacks-by", "blocked", "--stacks=500",
                             "--folded", str(folded)] + list(extra),
                            [workload("sleepmix"), str(ROUNDS), str(MS)],
                            env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    return rep, folded_lines(folded), sleepmix_truth(proc.stdout)


def site_of(frames):
    return next((s for s in ("short_wait", "long_wait") if s in frames),
                None)


@pytest.mark.parametrize("run_", range(2))
def test_blocked_weights_follow_the_sleeps(tmp_path, run_):
    """long_wait holds about 3/4 of the two sites' blocked time: its share
    of their folded weight within 5 points of the share the workload
    measured; each site's weight (µs) is its blocked time, no more than
    the time the workload measured around its reads and most of it. Every
    line of theirs has the read, then kernel frames (_[k]) from the
    syscall's entry to where it slept, the pipe's read."""
    rep, lines, truth = run_sleepmix(tmp_path)
    assert rep["stack_sampling"]["weighting"] == "blocked"
    weight = {"short_wait": 0, "long_wait": 0}
    for frames, count in lines:
        site = site_of(frames)
        if not site:
            continue
        weight[site] += count
        i = frames.index("read", frames.index(site))
        kernel = frames[i + 1:]
        while kernel and not kernel[0].endswith("_[k]"):
            kernel = kernel[1:]   # the libc wrapper's own "read"
        assert kernel and all(f.endswith("_[k]") for f in kernel), frames
        assert kernel[-1][:-len("_[k]")] in PIPE_READ, frames
        assert kernel[0].startswith("entry_SYSCALL"), frames
    total = sum(weight.values())
    want = truth["long_wait"] / sum(truth.values())
    got = weight["long_wait"] / total
    assert abs(got - want) <= 0.05, (weight, truth)
    for site, us in weight.items():
        ns = us * 1000
        assert 0.7 * truth[site] <= ns <= truth[site] * 1.02 + 1e6, \
            (site, us, truth)


def test_never_blocked_never_sampled(tmp_path):
    """slowmix: 20000 getppid calls that never sleep and 200 nanosleeps of
    450 µs: by blocked time every sample is a nanosleep's (by time about
    10% of the weight is getppid's: test_stacks_by_time.py)."""
    proc, rep = scprof_json(["--stacks-by", "blocked", "--stacks=100"],
                            [workload("slowmix"), "20000", "200", "450"],
                            env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    names = {s["syscall"] for s in rep["stacks"]}
    assert "getppid" not in names, rep["stacks"]
    assert "nanosleep" in names, rep["stacks"]
    for s in rep["stacks"]:
        if s["syscall"] == "nanosleep":
            fns = [f["function"] for f in s["kernel_frames"]]
            assert "hrtimer_nanosleep" in fns or \
                any("nanosleep" in (f or "") for f in fns), s


def test_outputs_say_blocked(tmp_path):
    """The table's call-sites header, the flame graph's title and its
    orange kernel frames, pprof's sample type and [kernel] mapping, JSON's
    weighting and kernel_frames."""
    svg, pb = tmp_path / "b.svg", tmp_path / "b.pb.gz"
    report = tmp_path / "report.txt"
    p = run_scprof(["--stacks-by", "blocked", "--stacks=500", "--flamegraph",
                    str(svg), "--pprof", str(pb), "-o", str(report), "--",
                    workload("sleepmix"), "10", "5"], env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    text = report.read_text()
    assert re.search(r"^call sites by blocked time in calls \(the user stack "
                     r"and where it slept, at one call per 500 µs blocked: "
                     r"\d+ samples", text, re.M), text
    assert re.search(r"^  read \(via libc\) +\d+%  (timed_read <- )?"
                     r"long_wait <- main", text, re.M), text
    s = svg.read_text()
    assert "(by blocked time, off CPU)</text>" in s
    assert re.search(r"data-n=\"(anon_)?pipe_read\".*?fill=\"rgb\(\d+,\d+,0\)",
                     s), "no orange kernel frame"
    types, samples, locs, maps, _ = parse_raw(go_pprof(["-raw"], pb,
                                                       tmp_path))
    assert any(t.startswith("blocked-nanoseconds/nanoseconds")
               for t in types), types
    kernel = [m for m, f in maps.items() if f == "[kernel]"]
    assert kernel, maps
    # leaf first: where it slept, in the [kernel] mapping
    leaves = {locs[s["locs"][0]]["func"] for s in samples
              if locs[s["locs"][0]]["mapping"] in kernel}
    assert leaves & set(PIPE_READ), leaves


@pytest.mark.parametrize("args,msg", [
    (["--stacks-by", "blocked", "-C"],
     "--stacks-by blocked weighs calls by their blocked time: --count-only"),
    (["-C", "--stacks-by", "blocked"], "--count-only does not time them"),
    (["--stacks-by", "blocked", "--no-split"], "--no-split does not measure"),
    (["--stacks-by", "asleep"],
     "invalid --stacks-by 'asleep': expected count, time or blocked"),
])
def test_bad_stacks_by_blocked(args, msg):
    p = run_scprof(args + ["--", "true"])
    assert p.returncode == 2
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], lines


def test_diff_of_blocked_folded_files(tmp_path):
    """scprof diff compares two blocked folded files, and refuses one
    against a time one."""
    def folded(name, by):
        f = tmp_path / name
        p = run_scprof(["--stacks-by", by, "--folded", str(f), "-o",
                        str(tmp_path / (name + ".txt")), "--",
                        workload("sleepmix"), "5", "5"], env=CLEAN_ENV)
        assert p.returncode == 0, p.stderr
        return str(f)
    a, b = folded("a", "blocked"), folded("b", "blocked")
    p = run_scprof(["diff", a, b])
    assert p.returncode in (0, 1), p.stderr
    assert any("anon_pipe_read_[k]" in ln or "pipe_read_[k]" in ln
               for ln in p.stdout.decode().splitlines()), p.stdout
    c = folded("c", "time")
    p = run_scprof(["diff", a, c])
    assert p.returncode == 2
    assert "weighted by blocked time" in p.stderr.decode()

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""split: what the split of a call's time (on a CPU, waiting, blocked)
costs, the split on against off (issue 41).

The split's programs run on every context switch and wake-up, so its cost
shows on a load made of them: `perf bench sched pipe`, its two tasks
pinned to one CPU (a.cpu), scprof -a on the other; the figure is the
bench's CPU time per operation (`perf stat -e task-clock`, both tasks),
bare, under `scprof -a --no-split` and under `scprof -a`, interleaved
and rotated. Goal: the split adds at most 10% over full mode without it.

On the services, `scprof -p SERVER` against `scprof -p SERVER --no-split`
(rows of the services section): each repetition's ratio of the two
(requests/s), whose goal is to be within the services' noise.
"""
import os
import re
import subprocess

from loops import interleaved
from probes import BenchError, Running, log, med, scprof_config, spread

PIPE_GOAL = 1.10  # split / no-split, CPU time per operation


def parse_task_clock(text):
    """msec of task-clock from `perf stat -x,` output, or None."""
    m = re.search(r"^([\d.]+),[^,]*,task-clock,", text, re.M)
    return float(m.group(1)) if m else None


def pipe_once(a, cfg, tmp):
    """One `perf bench sched pipe` run, bare or under scprof: {"cpu_ns"}
    (its two tasks' CPU time an operation)."""
    stat = os.path.join(tmp, "perf-stat.txt")
    argv = ["perf", "stat", "-x,", "-e", "task-clock", "-o", stat, "--",
            "taskset", "-c", str(a.cpu), "perf", "bench", "sched", "pipe",
            "-l", str(a.pipe_loops)]

    def bench():
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        with open(stat) as f:
            ms = parse_task_clock(f.read())
        if p.returncode or ms is None:
            raise BenchError("perf bench sched pipe failed (%d): %s" % (
                p.returncode, (p.stderr or p.stdout).strip()[-300:]))
        return {"cpu_ns": ms * 1e6 / a.pipe_loops}
    if cfg is None:
        return bench()
    with Running(cfg, os.getpid(), tmp) as t:
        r = bench()
        text = t.finish()
    # each operation is a write and a read on each side
    t.check_seen(text, {"read": 2 * a.pipe_loops}, "the pipe's reads")
    return r


def run(a, tmp):
    # scprof on the CPU the pipe does not use
    cfgs = [scprof_config(a, "scprof -a --no-split", "-a", "--no-split",
                          pin=a.client_cpu),
            scprof_config(a, "scprof -a", "-a", pin=a.client_cpu)]
    log("bench: split: perf bench sched pipe -l %d on CPU %d, %d "
        "repetitions" % (a.pipe_loops, a.cpu, a.reps))
    bare, runs = interleaved(cfgs, lambda c: pipe_once(a, c, tmp), "split",
                             a.reps)
    off, on = ([r["cpu_ns"] for _, r, _ in runs[c.name]] for c in cfgs)
    return {"reps": a.reps, "loops": a.pipe_loops, "cpu": a.cpu,
            "bare_cpu_ns": med([r["cpu_ns"] for r in bare]),
            "no_split_cpu_ns": med(off), "split_cpu_ns": med(on),
            # each repetition's split against its no-split run
            "ratio": spread([x / y for x, y in zip(on, off)])}


def verdict(s, goal, worse_above=True):
    """A spread {"median", "min", "max"} against a goal: met or missed by
    the whole spread, or by the median only ("not resolved")."""
    lo, hi = (s["min"], s["max"]) if worse_above else \
        (-s["max"], -s["min"])
    g, m = (goal, s["median"]) if worse_above else (-goal, -s["median"])
    if hi <= g:
        return "met"
    if lo > g:
        return "missed"
    return "%s by the median, not resolved by the spread" % (
        "met" if m <= g else "missed")


def services_split(svc):
    """{workload: {"ratio" (split / no-split requests/s), "noise",
    "verdict"}} from the services record's -p and -p --no-split rows."""
    out = {}
    for name, wl in (svc or {}).get("workloads", {}).items():
        by = {r["config"]: r for r in wl["rows"]}
        on, off = by.get("scprof -p"), by.get("scprof -p --no-split")
        if not on or not off:
            continue
        s = spread([x / y for x, y in zip(on["ratios"], off["ratios"])])
        out[name] = {"ratio": s, "noise": wl["noise"],
                     "verdict": verdict(s, 1 - wl["noise"], False)}
    return out


def lines(doc):
    """The split's results, one sentence each."""
    out = []
    sec = doc.get("split")
    if sec:
        r = sec["ratio"]
        out.append(
            "perf bench sched pipe (-l %d, pinned to CPU %d, %d "
            "repetitions), CPU time an operation: bare %.2f us, scprof -a "
            "--no-split %.2f, scprof -a %.2f; split / no-split %.3f "
            "(%.3f-%.3f), goal <= %.2f: %s" % (
                sec["loops"], sec["cpu"], sec["reps"],
                sec["bare_cpu_ns"] / 1e3, sec["no_split_cpu_ns"] / 1e3,
                sec["split_cpu_ns"] / 1e3, r["median"], r["min"], r["max"],
                PIPE_GOAL, verdict(r, PIPE_GOAL)))
    for name, s in services_split(doc.get("services")).items():
        r = s["ratio"]
        out.append("%s, requests/s under scprof -p / under -p --no-split: "
                   "%.3f (%.3f-%.3f), goal: within the noise (%.1f points): "
                   "%s" % (name, r["median"], r["min"], r["max"],
                           100 * s["noise"], s["verdict"]))
    return out


def markdown(doc):
    ls = lines(doc)
    return "\n".join(["**The split's cost** (issue 41):", ""] +
                     ["- " + line + "." for line in ls] + [""]) if ls else ""

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof overhead benchmark (`make bench`; docs/overhead.md, "Method").

What a syscall costs a process while a probe watches it, in sections
(--sections): loops (loops.py: pinned C loops under the floors, scprof and
the peers), services (services.py: nginx and redis), split (split.py: the
split of a call's time on against off), budget and churn (daemon.py: the
daemon's budget on a long loop, its CPU and bpf() calls under process
churn). The report is Markdown, printed and with --readme written into
docs/overhead.md between its bench-results markers; the run goes to
OUT/bench.json, the services' chart to OUT/services.svg; --from-json
reports a saved run again. Each run is compared with --baseline
(compare.py): when a figure got dearer the exit status is 3.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import chart
import compare
import daemon
import loops
import services
import split
from probes import KINDS, BenchError, ensure_tracefs, host_desc, log, \
    make_configs

SECTIONS = ("loops", "services", "split", "budget", "churn")
HERE = os.path.dirname(os.path.abspath(__file__))
OVERHEAD_DOC = os.path.join(os.path.dirname(HERE), "docs", "overhead.md")
RESULTS_BEGIN = "<!-- bench-results:begin (make bench BENCH_ARGS=--readme) -->"
RESULTS_END = "<!-- bench-results:end -->"
README_CHART = "bench-services.svg"  # beside the --readme page
EXIT_DEARER = 3


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Examples: make bench BENCH_ARGS='--sections services "
        "--reps 3'; make bench BENCH_ARGS=--quick; bench/bench.py "
        "--from-json .output/bench/bench.json --readme")
    arg = ap.add_argument
    arg("--scprof", help="scprof binary")
    arg("--bin", help="folder with the floor and sysloop binaries")
    arg("--out", default=".output/bench",
        help="folder for bench.json and the chart (.output/bench)")
    arg("--sections", default=",".join(SECTIONS),
        help="what to measure, comma-separated (default: all, %s)" %
        ",".join(SECTIONS))
    arg("--reps", type=int, default=5,
        help="repetitions of each section (5; the budget's: at most 3; "
        "churn: its slices)")
    arg("--quick", action="store_true",
        help="for development: 1 repetition, short budget and churn runs")
    arg("--only", action="append",
        help="only configurations whose name contains this (repeatable)")
    arg("--probe", action="append", metavar="NAME[@N]=CMD",
        help="an extra BPF probe, attached once N (1) of its programs have "
        "run: CMD split on spaces or |, {pid} the target, {out} a file")
    arg("--cpu", type=int, default=os.cpu_count() - 1,
        help="CPU of the loop, server or pipe (the last)")
    arg("--client-cpu", type=int, default=0,
        help="CPU of the load generator, and of scprof in split (0)")
    arg("--seconds", type=float, default=0.3,
        help="loops: timed seconds a kind and run (0.3)")
    arg("--kinds", default=",".join(KINDS),
        help="loops: syscalls, comma-separated (%s)" % ",".join(KINDS))
    arg("--services", default=",".join(services.WORKLOADS),
        help="services: workloads (%s)" % ",".join(services.WORKLOADS))
    arg("--service-seconds", type=float, default=2,
        help="services: timed seconds a run (2; the daemon's: %d)" %
        services.LONG_SECONDS)
    arg("--pipe-loops", type=int, default=100000,
        help="split: perf bench sched pipe -l (100000)")
    arg("--budget-seconds", type=float, default=20,
        help="budget: seconds of a loop, whole periods (20)")
    arg("--churn-seconds", type=float, default=20,
        help="churn: seconds under the cp, true and rm loop, each stage "
        "(20)")
    arg("--churn-loops", default="1,%d" % max(2, os.cpu_count() or 1),
        help="churn: how many loops run at once, a stage for each (1 and "
        "the CPUs, at least 2: one loop here is short of the goal's rate)")
    arg("--from-json", metavar="FILE",
        help="measure nothing: report, chart, compare and --readme from a "
        "saved bench.json")
    arg("--baseline", default=os.path.join(HERE, "baseline.json"),
        help="compare with this baseline (bench/baseline.json; 'none')")
    arg("--save-baseline", metavar="FILE",
        help="write this run's figures as a baseline file")
    arg("--readme", metavar="FILE", nargs="?", const=OVERHEAD_DOC,
        help="write the results between the bench-results markers of FILE "
        "(docs/overhead.md), the chart beside it (%s)" % README_CHART)
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.budget_seconds, a.churn_seconds = 1, 10, 5
        a.pipe_loops = 30000
    a.out = os.path.abspath(a.out)
    for opt, known in (("kinds", KINDS), ("sections", SECTIONS),
                       ("services", services.WORKLOADS)):
        setattr(a, opt, getattr(a, opt).split(","))
        if not set(getattr(a, opt)) <= set(known):
            ap.error("bad --%s: expected some of %s" % (opt, ",".join(known)))
    try:
        a.churn_loops = [int(n) for n in a.churn_loops.split(",")]
    except ValueError:
        a.churn_loops = []
    if not a.churn_loops or not all(0 < n <= 64 for n in a.churn_loops):
        ap.error("bad --churn-loops: expected numbers of loops from 1 to 64, "
                 "such as 1,2")
    if min(a.reps, a.pipe_loops) < 1 or min(
            a.seconds, a.service_seconds, a.budget_seconds,
            a.churn_seconds) <= 0:
        ap.error("bad --reps, --pipe-loops or seconds")
    if not a.from_json and not (a.scprof and a.bin):
        ap.error("--scprof and --bin are needed to measure")
    if a.cpu == a.client_cpu:
        ap.error("--cpu and --client-cpu must differ")
    return a


def write_text(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def measure(a):
    """Run the sections asked for: the run's record (bench.json), written
    after each section (one that fails later loses only itself)."""
    git = subprocess.run(["git", "-C", HERE, "describe", "--always",
                          "--dirty"], capture_output=True, text=True,
                         check=False).stdout.strip() or "unknown"
    doc = {"version": 3, "host": host_desc(), "git": git,
           "sections": a.sections,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           # the machine's load as each section ends (others' work on a
           # shared machine: the runs' noise)
           "loadavg": {}}
    other = subprocess.Popen(["sleep", "100000"])  # the non-target
    try:
        with tempfile.TemporaryDirectory(prefix="scprof-bench.") as tmp:
            cfgs = make_configs(a, other.pid)
            for name, fn in (("loops", lambda: loops.run(a, cfgs, tmp)),
                             ("services",
                              lambda: services.run(a, cfgs, tmp)),
                             ("split", lambda: split.run(a, tmp)),
                             ("budget", lambda: daemon.run_budget(a, tmp)),
                             ("churn", lambda: daemon.run_churn(a, tmp))):
                if name in a.sections:
                    doc[name] = fn()
                    doc["loadavg"][name] = os.getloadavg()[0]
                    write_text(os.path.join(a.out, "bench.json"),
                               json.dumps(doc, indent=1) + "\n")
    finally:
        other.kill()
        other.wait()
    return doc


def markdown(doc, chart_path):
    """The run's report: a line for the machine and the run, then each
    section's."""
    h, la = doc["host"], doc.get("loadavg")
    out = ["%s, %d CPUs (%s), Linux %s; `make bench` on scprof %s, %s%s." % (
        h["cpu"], h["cpus"], h["virt"] or "bare metal?", h["kernel"],
        doc["git"], doc["date"],
        "; load average (1 min) as each section ended: %s, on %d CPUs" % (
            ", ".join("%s %.1f" % kv for kv in la.items()), h["cpus"])
        if la else "")]
    if doc.get("loops"):
        out.append(loops.markdown(doc["loops"]))
    if doc.get("services"):
        out.append(services.markdown(doc["services"], chart_path))
    out += [split.markdown(doc), daemon.markdown(doc)]
    # (the first line a paragraph of its own)
    return out[0] + "\n\n" + "\n".join(x for x in out[1:] if x)


def update_results(path, text):
    """Put text between the bench-results markers of the page at path,
    leaving the rest as it is."""
    with open(path) as f:
        page = f.read()
    i, j = page.find(RESULTS_BEGIN), page.find(RESULTS_END)
    if i < 0 or j < i:
        raise BenchError("%s has no %s ... %s markers" % (
            path, RESULTS_BEGIN, RESULTS_END))
    write_text(path, page[:i + len(RESULTS_BEGIN)] + "\n" + text + page[j:])
    log("bench: results written into %s" % path)


def report(a, doc):
    """Print the run and write its files: the exit status."""
    svg = chart.services_chart(doc["services"], doc["host"]) \
        if doc.get("services") else None
    if svg:
        write_text(os.path.join(a.out, "services.svg"), svg)
    print(markdown(doc, svg and os.path.join(a.out, "services.svg")))
    if a.readme:
        if svg:
            write_text(os.path.join(os.path.dirname(a.readme) or ".",
                                    README_CHART), svg)
        update_results(a.readme, markdown(doc, svg and README_CHART))
    if a.save_baseline:
        write_text(a.save_baseline, compare.baseline_text(doc, doc["git"]))
        log("bench: baseline written to %s" % a.save_baseline)
    if a.baseline == "none" or os.path.abspath(a.baseline) == \
            os.path.abspath(a.save_baseline or ""):
        return 0
    if not os.path.exists(a.baseline):
        log("bench: no baseline %s to compare with" % a.baseline)
        return 0
    res = compare.compare(doc, compare.load(a.baseline))
    compare.report(res, a.baseline)
    return EXIT_DEARER if res["dearer"] else 0


def main():
    a = parse_args()
    # (probes stop on SIGINT, which a shell in the background ignores for
    # its children: let them have it back)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if a.from_json:
            doc = compare.load(a.from_json)
            if doc.get("version") != 3:
                raise BenchError("%s is not a bench.json of this version" %
                                 a.from_json)
            doc.setdefault("date", time.strftime(
                "%Y-%m-%d %H:%M UTC (when its bench.json was written)",
                time.gmtime(os.path.getmtime(a.from_json))))
        else:
            if os.geteuid() != 0:
                print("bench: needs root (BPF, ptrace, perf)",
                      file=sys.stderr)
                return 1
            ensure_tracefs()
            os.makedirs(a.out, exist_ok=True)
            doc = measure(a)
        return report(a, doc)
    except BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

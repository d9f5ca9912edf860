#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof overhead benchmark (`make bench`).

What a syscall costs a process while a probe watches it, in sections
(--sections, default all of them):

  loops     pinned C loops (getppid, 1-byte read, 1-byte write) bare and
            under the floors (empty BPF programs on raw_syscalls), scprof's
            modes and the peers: syscount, bpftrace, strace -c, perf trace
            (loops.py)
  services  nginx and redis, requests/s traced / untraced (services.py)
  split     the split of a call's time on against off: perf bench sched
            pipe, and scprof -p against -p --no-split on the services
            (split.py)
  budget    the daemon on a long getppid loop against -C -a and its
            budget, and its own metrics against that (daemon.py)
  churn     the daemon's CPU and bpf() calls under a /bin/true loop
            (daemon.py)

Each probed run sits between bare runs, the order rotating between
repetitions; a probe is attached before the load starts and must count
what the load did. Only ratios within one run are comparable: the machine
is shared and noisy.

The results go to OUT/bench.json with the services' chart, OUT/services.svg;
--readme writes them into docs/overhead.md between its bench-results
markers; --from-json reports a saved run again. Each run is compared with
--baseline (bench/baseline.json): a figure dearer by more than 15% and more
than the noise is named, and the exit status is then 3.
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
        help="repetitions of each section (5; churn: its slices)")
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
    arg("--attach-timeout", type=float, default=60)
    arg("--seconds", type=float, default=0.3,
        help="loops: timed seconds a kind and run (0.3)")
    arg("--kinds", default=",".join(KINDS),
        help="loops: syscalls, comma-separated (%s)" % ",".join(KINDS))
    arg("--stat", choices=("batch_median_ns", "mean_ns"),
        default="batch_median_ns",
        help="loops: a run's figure, the median batch of 256 calls or the "
        "mean")
    arg("--services", default=",".join(services.WORKLOADS),
        help="services: workloads (%s)" % ",".join(services.WORKLOADS))
    arg("--service-seconds", type=float, default=2,
        help="services: timed seconds a run (2)")
    arg("--long-seconds", type=float, default=11,
        help="services: the daemon's runs, a period and more (11)")
    arg("--pipe-loops", type=int, default=100000,
        help="split: perf bench sched pipe -l (100000)")
    arg("--budget-seconds", type=float, default=20,
        help="budget: seconds of a loop, whole periods (20)")
    arg("--budget-reps", type=int, default=3,
        help="budget: repetitions (3)")
    arg("--churn-seconds", type=float, default=20,
        help="churn: seconds under the /bin/true loop (20)")
    arg("--from-json", metavar="FILE",
        help="measure nothing: report, chart, compare and --readme from a "
        "saved bench.json")
    arg("--baseline", default=os.path.join(HERE, "baseline.json"),
        help="compare with this baseline (bench/baseline.json; 'none')")
    arg("--save-baseline", metavar="FILE",
        help="write this run's figures as a baseline file")
    arg("--threshold", type=float, default=0.15,
        help="dearer than the baseline by more than this share is a "
        "regression (0.15)")
    arg("--floor-tolerance", type=float, default=0.25,
        help="compare the loops only when the floors are within this share "
        "of the baseline's (0.25)")
    arg("--readme", metavar="FILE", nargs="?", const=OVERHEAD_DOC,
        help="write the results between the bench-results markers of FILE "
        "(docs/overhead.md)")
    arg("--readme-chart", default="bench-services.svg",
        help="the chart's path for --readme, relative to FILE's folder")
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.budget_reps = 1, 1
        a.budget_seconds, a.churn_seconds, a.pipe_loops = 10, 5, 30000
    a.kinds, a.sections = a.kinds.split(","), a.sections.split(",")
    a.services = a.services.split(",")
    a.out = os.path.abspath(a.out)
    if any(k not in KINDS for k in a.kinds) or min(a.reps, a.budget_reps,
                                                   a.pipe_loops) < 1 or \
            min(a.seconds, a.service_seconds, a.budget_seconds,
                a.churn_seconds) <= 0:
        ap.error("bad --kinds, --reps or seconds")
    if any(s not in SECTIONS for s in a.sections):
        ap.error("bad --sections: expected some of %s" % ",".join(SECTIONS))
    if any(s not in services.WORKLOADS for s in a.services):
        ap.error("bad --services: expected some of %s" %
                 ",".join(services.WORKLOADS))
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


def write_json(path, doc):
    write_text(path, json.dumps(doc, indent=1) + "\n")


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
                    write_json(os.path.join(a.out, "bench.json"), doc)
    finally:
        other.kill()
        other.wait()
    return doc


def markdown(doc, chart_rel):
    h = doc["host"]
    out = ["%s, %d CPUs (%s), Linux %s; `make bench` on scprof %s, %s%s." % (
        h["cpu"], h["cpus"], h["virt"] or "bare metal?", h["kernel"],
        doc.get("git", "?"), doc.get("date", "date not recorded"),
        load_text(doc))]
    if doc.get("loops"):
        out.append(loops.markdown(doc["loops"]))
    if doc.get("services"):
        out.append(services.markdown(doc["services"], chart_rel))
    out += [split.markdown(doc), daemon.markdown(doc)]
    # (the first line a paragraph of its own)
    return out[0] + "\n\n" + "\n".join(x for x in out[1:] if x)


def load_text(doc):
    """The load average as each section ended, if recorded."""
    la = doc.get("loadavg")
    if not la:
        return ""
    return "; load average (1 min) as each section ended: %s, on %d " \
        "CPUs" % (", ".join("%s %.1f" % kv for kv in la.items()),
                  doc["host"]["cpus"])


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
    h = doc["host"]
    print("scprof overhead benchmark: %s, %d CPUs, %s, Linux %s, scprof "
          "%s, %s%s\n" % (h["cpu"], h["cpus"], h["virt"] or "bare metal?",
                          h["kernel"], doc.get("git", "?"),
                          doc.get("date", "date not recorded"),
                          load_text(doc)))
    if doc.get("loops"):
        loops.report(doc["loops"])
    if doc.get("services"):
        services.report(doc["services"])
        write_text(os.path.join(a.out, "services.svg"),
                   chart.services_chart(doc["services"], h))
    split.report(doc)
    daemon.report(doc)
    if a.readme:
        rel = None
        if doc.get("services"):
            rel = a.readme_chart
            write_text(os.path.join(os.path.dirname(a.readme) or ".", rel),
                       chart.services_chart(doc["services"], h))
        update_results(a.readme, markdown(doc, rel))
    if a.save_baseline:
        write_text(a.save_baseline, compare.baseline_text(doc, doc["git"]))
        log("bench: baseline written to %s" % a.save_baseline)
    if a.baseline == "none" or os.path.abspath(a.baseline) == \
            os.path.abspath(a.save_baseline or ""):
        return 0
    if not os.path.exists(a.baseline):
        log("bench: no baseline %s to compare with" % a.baseline)
        return 0
    res = compare.compare(doc, compare.load(a.baseline), a.threshold,
                          a.floor_tolerance)
    compare.report(res, a.baseline, a.threshold)
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

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof overhead benchmark (`make bench`).

What a syscall costs a process while a probe watches it, in sections
(--sections, default loops,services,machine):

  loops     pinned C loops (bench/sysloop.c: getppid, 1-byte read of
            /dev/zero, 1-byte write to /dev/null) bare and under each
            probe, in ns per call (loops.py)
  services  nginx and redis, requests/s traced / untraced (services.py)
  budget    the daemon's latency budget against what it really adds, on a
            long getppid loop and on nginx (cost.py)
  where     where full mode's time goes: bpf_stats per program on nginx
            against the loop, per call and per syscall (cost.py)
  machine   what this machine charges for the seed experiments' operations
            (vDSO against a crossing, bytes per crossing, copies from an
            mmap): ratios from one quick `scprof calibrate` beside what
            most machines show; no probe involved (machine.py)

The probes, in every section: the floors, empty BPF programs on
raw_syscalls (bench/floor.bpf.c); scprof's modes; libbpf-tools syscount,
with and without -L; bpftrace; strace -c -f; perf trace -s (probes.py).

Method: each probed run sits between bare (untraced) runs, and the order
of the configurations rotates between repetitions. A probe is started,
detected as attached (its BPF programs have run; strace's TracerPid;
perf's ring buffers), and only then does the load start; afterwards its
own report must count what the load did, so a probe that was not attached
for the whole timed window is an error, not a result.

The results go to OUT/bench.json (--out) with the services' chart in
OUT/services.svg; --readme also writes them into docs/overhead.md, between
its bench-results markers; --from-json reports a saved run again without
measuring. Each run is compared with --baseline (bench/baseline.json):
a configuration dearer than it by more than 15% and more than the noise
is named, and the exit status is then 3.

Only ratios within one run are comparable: the machine is shared and noisy.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import chart
import compare
import cost
import loops
import machine
import services
from probes import (KINDS, BenchError, ensure_tracefs, host_desc, log,
                    make_configs, remove_cgroup, tracing_progs)  # noqa: F401

SECTIONS = ("loops", "services", "budget", "where", "machine")
HERE = os.path.dirname(os.path.abspath(__file__))
# --readme writes the run's results between these markers of the overhead
# page (docs/overhead.md): the text around them is written by hand.
OVERHEAD_DOC = os.path.join(os.path.dirname(HERE), "docs", "overhead.md")
RESULTS_BEGIN = "<!-- bench-results:begin (make bench BENCH_ARGS=--readme) -->"
RESULTS_END = "<!-- bench-results:end -->"
EXIT_DEARER = 3


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Examples: make bench BENCH_ARGS='--sections services "
        "--reps 3'; make bench BENCH_ARGS='--sections loops --only "
        "floor --only \"-C -a\"'; bench/bench.py --from-json "
        ".output/bench/bench.json --readme")
    ap.add_argument("--scprof", help="scprof binary")
    ap.add_argument("--bin", help="folder with the floor and sysloop "
                    "binaries")
    ap.add_argument("--out", default=".output/bench",
                    help="folder for bench.json, the chart and the "
                    "services' files (default .output/bench)")
    ap.add_argument("--sections", default="loops,services,machine",
                    help="what to measure, comma-separated: %s (default "
                    "loops,services,machine)" % ",".join(SECTIONS))
    ap.add_argument("--reps", type=int, default=5,
                    help="repetitions of each section's matrix (default 5)")
    ap.add_argument("--only", action="append",
                    help="only configurations whose name contains this "
                    "(repeatable)")
    ap.add_argument("--probe", action="append", metavar="NAME[@N]=CMD",
                    help="an extra BPF probe to measure, attached once N "
                    "(default 1) of its programs have run: CMD is split on "
                    "spaces or |, {pid} is the target's pid, {out} a "
                    "scratch file")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1,
                    help="CPU the loop or server is pinned to (default: the "
                    "last)")
    ap.add_argument("--attach-timeout", type=float, default=60)
    ap.add_argument("--long-seconds", type=float, default=11,
                    help="timed seconds of a run under a probe whose cost "
                    "changes over time (the daemon's latency windows open "
                    "once every 10 s period): default 11")
    ap.add_argument("--daemon-any", action="store_true",
                    help="measure `scprof daemon` even without "
                    "--latency-duty (an older scprof)")

    g = ap.add_argument_group("loops")
    g.add_argument("--seconds", type=float, default=0.3,
                   help="timed seconds per syscall kind and run (0.3)")
    g.add_argument("--kinds", default=",".join(KINDS),
                   help="syscall loops, comma-separated (%s)" %
                   ",".join(KINDS))
    g.add_argument("--stat", choices=("batch_median_ns", "mean_ns"),
                   default="batch_median_ns",
                   help="per-run figure: the median over batches of 256 "
                   "calls (default: robust to bursts of noise) or the "
                   "mean over the run")
    g.add_argument("--no-startup", action="store_true",
                   help="skip scprof startup and -- /bin/true")
    g.add_argument("--no-prog-stats", action="store_true",
                   help="skip the per-program bpf_stats pass")
    g.add_argument("--daemon-args", default="--listen 127.0.0.1:0",
                   help="arguments for `scprof daemon` in the daemon row")
    g.add_argument("--daemon-seconds", type=float, default=60)
    g.add_argument("--daemon-idle-seconds", type=float, default=20)

    g = ap.add_argument_group("services")
    g.add_argument("--services", default=",".join(services.WORKLOADS),
                   help="workloads, comma-separated (default %s)" %
                   ",".join(services.WORKLOADS))
    g.add_argument("--service-seconds", type=float, default=2,
                   help="timed seconds of a service run (default 2)")
    g.add_argument("--service-configs", choices=("default", "all"),
                   default="default",
                   help="the floors, each scprof mode and the peers "
                   "(default), or every configuration the loops have")
    g.add_argument("--client-cpu", type=int, default=0,
                   help="CPU of the load generator (default 0)")
    g.add_argument("--ab-conns", type=int, default=8,
                   help="ab's concurrent connections (default 8)")
    g.add_argument("--redis-conns", type=int, default=50,
                   help="redis-benchmark's clients (default 50)")

    g = ap.add_argument_group("budget and where")
    g.add_argument("--budget-seconds", type=float, default=20,
                   help="seconds of each budget loop: whole periods of the "
                   "daemon's, about 60-80 million calls (default 20)")
    g.add_argument("--budget-loads", default="loop,nginx",
                   help="what the budget section loads: the getppid loop, "
                   "nginx (when --services has it) or both (default "
                   "loop,nginx)")
    g.add_argument("--where-seconds", type=float, default=2,
                   help="seconds of each bpf_stats run (default 2)")

    g = ap.add_argument_group("results")
    g.add_argument("--json", help="also write the results to this file")
    g.add_argument("--from-json", metavar="FILE",
                   help="measure nothing: report, chart, compare and "
                   "--readme from a saved bench.json")
    g.add_argument("--baseline", default=os.path.join(HERE, "baseline.json"),
                   help="compare with this saved run or baseline file "
                   "(default bench/baseline.json; 'none': do not)")
    g.add_argument("--save-baseline", metavar="FILE",
                   help="write this run's figures as a baseline file")
    g.add_argument("--threshold", type=float, default=0.15,
                   help="dearer than the baseline by more than this share "
                   "is a regression (default 0.15)")
    g.add_argument("--floor-tolerance", type=float, default=0.25,
                   help="compare the loops only when the floors are within "
                   "this share of the baseline's (default 0.25)")
    g.add_argument("--readme", metavar="FILE", nargs="?",
                   const=OVERHEAD_DOC,
                   help="rewrite the results between the bench-results "
                   "markers of FILE (default docs/overhead.md, the "
                   "overhead page the README links to) from this run")
    g.add_argument("--readme-chart", default="bench-services.svg",
                   help="where --readme puts the services' chart, relative "
                   "to FILE's folder (default bench-services.svg: "
                   "docs/bench-services.svg)")
    a = ap.parse_args()
    a.kinds = a.kinds.split(",")
    a.sections = a.sections.split(",")
    a.services = a.services.split(",")
    a.budget_loads = a.budget_loads.split(",")
    a.out = os.path.abspath(a.out)
    if any(k not in KINDS for k in a.kinds) or a.reps < 1 or \
            a.seconds <= 0 or a.service_seconds <= 0:
        ap.error("bad --kinds, --reps, --seconds or --service-seconds")
    if any(s not in SECTIONS for s in a.sections):
        ap.error("bad --sections: expected some of %s" % ",".join(SECTIONS))
    if any(s not in ("loop", "nginx") for s in a.budget_loads):
        ap.error("bad --budget-loads: expected loop, nginx or both")
    if any(s not in services.WORKLOADS for s in a.services):
        ap.error("bad --services: expected some of %s" %
                 ",".join(services.WORKLOADS))
    if not a.from_json and not (a.scprof and a.bin):
        ap.error("--scprof and --bin are needed to measure")
    if a.cpu == a.client_cpu and ("services" in a.sections or
                                  "budget" in a.sections):
        ap.error("--cpu and --client-cpu must differ")
    return a


def git_rev():
    p = subprocess.run(["git", "-C", HERE, "describe", "--always",
                        "--dirty"], capture_output=True, text=True,
                       check=False)
    return p.stdout.strip() or "unknown"


def measure(a):
    """Run the sections asked for: the run's record (bench.json)."""
    doc = {"version": 2, "host": host_desc(), "git": git_rev(),
           "sections": a.sections}
    os.makedirs(a.out, exist_ok=True)
    other = subprocess.Popen(["sleep", "100000"])
    try:
        with tempfile.TemporaryDirectory(prefix="scprof-bench.") as tmp:
            cfgs = make_configs(a, other.pid)
            # (bench.json after each section: a later one that fails
            # loses only itself)
            partial = os.path.join(a.out, "bench.json")
            if "loops" in a.sections:
                doc["loops"] = loops.run(a, cfgs, tmp, other.pid)
                write_json(partial, doc)
            if "services" in a.sections:
                scfgs = [c for c in cfgs if c.service or
                         a.service_configs == "all"]
                doc["services"] = services.run(a, scfgs, tmp)
                write_json(partial, doc)
            if "budget" in a.sections:
                doc["budget"] = cost.run_budget(a, cfgs, tmp) \
                    if "loop" in a.budget_loads else {}
                write_json(partial, doc)
                if "nginx" in a.services and "nginx" in a.budget_loads:
                    doc["budget"]["nginx"] = cost.run_budget_nginx(
                        a, cfgs, tmp)
                    write_json(partial, doc)
            if "where" in a.sections:
                doc["where"] = cost.run_where(a, cfgs, tmp)
                write_json(partial, doc)
            if "machine" in a.sections:
                doc["machine"] = machine.run(a, tmp)
    finally:
        other.kill()
        other.wait()
        remove_cgroup()
    return doc


def write_json(path, doc):
    tmpf = path + ".tmp"
    with open(tmpf, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmpf, path)


def write_text(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmpf = path + ".tmp"
    with open(tmpf, "w") as f:
        f.write(text)
    os.replace(tmpf, path)


def markdown(doc, chart_rel):
    h = doc["host"]
    out = ["%s, %d CPUs (%s), Linux %s; `make bench` (scprof %s)." % (
        h["cpu"], h["cpus"], h["virt"] or "bare metal?", h["kernel"],
        doc.get("git", "?")), ""]
    if doc.get("loops"):
        out.append(loops.markdown(doc["loops"]))
    if doc.get("services"):
        out.append(services.markdown(doc["services"], chart_rel))
    return "\n".join(out)


def update_results(path, text):
    """Put text between the bench-results markers of the page at path,
    leaving the rest of it as it is."""
    with open(path) as f:
        doc = f.read()
    i, j = doc.find(RESULTS_BEGIN), doc.find(RESULTS_END)
    if i < 0 or j < i:
        raise BenchError("%s has no %s ... %s markers" % (
            path, RESULTS_BEGIN, RESULTS_END))
    doc = doc[:i + len(RESULTS_BEGIN)] + "\n" + text + doc[j:]
    write_text(path, doc)
    log("bench: results written into %s" % path)


def report(a, doc):
    """Print the run, write its files; the exit status."""
    h = doc["host"]
    print("scprof overhead benchmark: %s, %d CPUs, %s, kernel %s, scprof %s"
          "\n" % (h["cpu"], h["cpus"], h["virt"] or "bare metal?",
                  h["kernel"], doc.get("git", "?")))
    if doc.get("loops"):
        loops.report(doc["loops"])
    if doc.get("services"):
        services.report(doc["services"])
        path = os.path.join(a.out, "services.svg")
        write_text(path, chart.services_chart(doc["services"], h))
        log("bench: the services' chart: %s" % path)
    if doc.get("budget"):
        if doc["budget"].get("rows"):
            cost.report_budget(doc["budget"])
        if doc["budget"].get("nginx"):
            cost.report_budget_nginx(doc["budget"]["nginx"])
    if doc.get("where"):
        cost.report_where(doc["where"])
    if doc.get("machine"):
        machine.report(doc["machine"])
    if a.readme:
        rel = None
        if doc.get("services"):
            rel = a.readme_chart
            write_text(os.path.join(os.path.dirname(a.readme) or ".", rel),
                       chart.services_chart(doc["services"], h))
        update_results(a.readme, markdown(doc, rel))
    if a.save_baseline:
        write_json(a.save_baseline, compare.baseline_doc(doc, doc["git"]))
        log("bench: baseline written to %s" % a.save_baseline)
    rc = 0
    if a.baseline != "none" and os.path.exists(a.baseline) and \
            os.path.abspath(a.baseline) != os.path.abspath(
                a.save_baseline or ""):
        res = compare.compare(doc, compare.load(a.baseline), a.threshold,
                              a.floor_tolerance)
        compare.report(res, a.baseline, a.threshold)
        doc["compared"] = {"baseline": a.baseline, **res}
        if res["dearer"]:
            rc = EXIT_DEARER
    elif a.baseline != "none":
        log("bench: no baseline %s to compare with" % a.baseline)
    return rc


def main():
    a = parse_args()
    try:
        if a.from_json:
            doc = compare.load(a.from_json)
            if doc.get("version") != 2:
                raise BenchError("%s is not a bench.json of this version" %
                                 a.from_json)
        else:
            if os.geteuid() != 0:
                print("bench: needs root (BPF, ptrace, perf)",
                      file=sys.stderr)
                return 1
            ensure_tracefs()
            doc = measure(a)
            write_json(os.path.join(a.out, "bench.json"), doc)
        rc = report(a, doc)
        if not a.from_json:
            write_json(os.path.join(a.out, "bench.json"), doc)
            if a.json:
                write_json(a.json, doc)
        return rc
    except BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What a call left out by -e costs: the BPF programs' own run time per
call (bpf_stats run_time_ns / run_cnt, kernel.bpf_stats_enabled), with a
getppid/clock_gettime loop (tests/workloads/highrate) profiled by -p, with
no filter, with -e trace=read (every call of the loop left out), and with
the loop not a target at all (-p of a sleeping process: the floor, what
bpf_stats itself and the non-target cache cost). Usage (root):
    tests/tools/trace_filter_cost.py [SCPROF [WORKLOADS [SECONDS]]]
Prints ns per program run for each case, and their ratios."""
import json, os, subprocess, sys, time

scprof = sys.argv[1] if len(sys.argv) > 1 else "./scprof"
wl = sys.argv[2] if len(sys.argv) > 2 else ".output/workloads"
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 3


# The programs a process holds, by name: the bench's reading of fdinfo and
# bpftool.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
from probes import tracing_progs  # noqa: E402


def progs_of(pid):
    return {p["name"]: p for p in tracing_progs(pid).values()}


def measure(args):
    loop = subprocess.Popen([os.path.join(wl, "highrate")],
                            stdout=subprocess.PIPE)
    loop.stdout.readline()  # "ready"
    other = subprocess.Popen(["sleep", "1000"])
    target = other.pid if "other" in args else loop.pid
    args = [a for a in args if a != "other"]
    sc = subprocess.Popen([scprof, "-q", "-p", str(target)] + args,
                          stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    before = progs_of(sc.pid)
    time.sleep(secs)
    after = progs_of(sc.pid)
    sc.terminate(); sc.wait(); loop.kill(); loop.wait(); other.kill(); other.wait()
    res = {}
    for name in ("sc_sys_enter", "sc_sys_exit", "sc_count_exit"):
        if name in after and name in before:
            cnt = after[name].get("run_cnt", 0) - before[name].get("run_cnt", 0)
            ns = after[name].get("run_time_ns", 0) - before[name].get("run_time_ns", 0)
            if cnt:
                res[name] = (ns / cnt, cnt)
    return res


old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
try:
    cases = {"loop not a target": ["other"],
             "no filter": [], "-e trace=read": ["-e", "trace=read"],
             "-C, no filter": ["-C"], "-C -e trace=read": ["-C", "-e", "trace=read"]}
    got = {k: measure(v) for k, v in cases.items()}
finally:
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
for k, v in got.items():
    print(f"{k:20s} " + "  ".join(f"{n}: {ns:6.1f} ns/run ({cnt} runs)"
                                  for n, (ns, cnt) in v.items()))
for prog in ("sc_sys_enter", "sc_sys_exit"):
    a, b = got["no filter"].get(prog), got["-e trace=read"].get(prog)
    if a and b:
        print(f"{prog}: filtered out / counted = {b[0] / a[0]:.2f}")
a, b = got["-C, no filter"].get("sc_count_exit"), got["-C -e trace=read"].get("sc_count_exit")
if a and b:
    print(f"sc_count_exit: filtered out / counted = {b[0] / a[0]:.2f}")

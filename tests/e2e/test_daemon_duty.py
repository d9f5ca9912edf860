# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The daemon's latency duty cycle and budget (issue 12): every call is
counted whatever the duty, only calls inside a window are timed, a call
that straddles a window edge is never timed, and the budget shrinks the
windows under load, from the cost the BPF programs measure themselves.

Workloads run behind a gate (-p GATE -f), so other processes on the
machine do not matter; counts are compared with what the workload made.
"""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import CLEAN_ENV, SCPROF, TIMEOUT, workload
from test_daemon import (check_histograms, daemons, gates,  # noqa: F401
                         parse, quiesce, value)

GETPPID = {"syscall": "getppid", "abi": "64"}


def folded(n):
    return lambda s: value(s, "scprof_processes_folded_total") == n


def pacer(gates, calls, ticks, tick_ms=10):
    return gates([workload("pacer"), str(calls), "0", str(tick_ms),
                  str(ticks)])


def run_pacer(daemons, gates, args, calls, ticks, tick_ms=10, prefix=()):
    g = pacer(gates, calls, ticks, tick_ms)
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1"] + args,
                prefix=prefix)
    g.release()
    assert g.wait() == 0
    return d, quiesce(d, folded(1), "the pacer folded")


def timed_and_counted(samples):
    return (value(samples, "scprof_syscall_duration_seconds_count",
                  **GETPPID) or 0,
            value(samples, "scprof_syscalls_total", **GETPPID))


def test_duty_1_times_every_call(daemons, gates):
    d, s = run_pacer(daemons, gates, ["--latency-duty", "1"], 2000, 50)
    timed, counted = timed_and_counted(s)
    assert counted == 100000
    assert timed == counted
    # What the windows cost: their programs' time and the tracepoint's
    # dispatch of every call timed
    dispatch = value(s, "scprof_latency_dispatch_seconds")
    assert 1e-9 < dispatch < 1e-5, dispatch
    cost = value(s, "scprof_latency_cost_seconds_total")
    part = value(s, "scprof_bpf_cost_seconds_total", part="latency")
    assert cost - part >= 0.95 * dispatch * timed, (cost, part, dispatch)
    assert value(s, "scprof_latency_duty_ratio") == 1
    assert value(s, "scprof_latency_budget_ratio") is None
    check_histograms(s)


def test_windows_pay_for_the_calls_of_processes_not_watched(daemons, gates):
    # A window's sys_enter runs on every call of the machine: the calls of
    # processes the daemon does not watch pay its dispatch too, and the
    # budget counts them (#21). The watched process makes none here.
    g = gates(["true"])
    d = daemons(["-p", str(g.pid), "--latency-duty", "1"])
    s0, _ = parse(d.metrics())
    calls = 100000
    subprocess.run([workload("pacer"), "2000", "0", "10", "50"], check=True,
                   timeout=TIMEOUT)
    s, _ = parse(d.metrics())
    dispatch = value(s, "scprof_latency_dispatch_seconds")
    cost = value(s, "scprof_latency_cost_seconds_total") - \
        value(s0, "scprof_latency_cost_seconds_total")
    assert cost >= 0.95 * dispatch * calls, (cost, dispatch)
    assert (value(s, "scprof_syscalls_total", **GETPPID) or 0) == 0


def test_default_counts_every_call_and_times_fewer(daemons, gates):
    # 1.5 s of calls from the daemon's start: the first period's window
    # (10 s periods, budgeted, starting at one tenth) closes before the
    # pacer is done.
    d, s = run_pacer(daemons, gates, [], 20000, 150)
    timed, counted = timed_and_counted(s)
    # the windows' cost: at least the dispatch of the calls timed
    dispatch = value(s, "scprof_latency_dispatch_seconds")
    cost = value(s, "scprof_latency_cost_seconds_total")
    part = value(s, "scprof_bpf_cost_seconds_total", part="latency")
    assert cost - part >= 0.95 * dispatch * timed, (cost, part, dispatch)
    assert counted == 3000000, "a call was lost"
    assert 0 < timed < counted, (timed, counted)
    assert check_histograms(s) >= 1
    # _sum / _count is a mean of timed calls: a getppid takes well under
    # 100 us even on a loaded machine
    mean = value(s, "scprof_syscall_duration_seconds_sum", **GETPPID) / timed
    assert 0 < mean < 1e-4, mean
    assert value(s, "scprof_latency_budget_ratio") == 0.01
    assert 0 < value(s, "scprof_latency_duty_ratio") <= 1
    assert value(s, "scprof_latency_windows_total") >= 1


def test_duty_0_times_nothing_and_counts_everything(daemons, gates):
    d, s = run_pacer(daemons, gates, ["--latency-duty", "0"], 2000, 50)
    timed, counted = timed_and_counted(s)
    assert counted == 100000 and timed == 0
    assert value(s, "scprof_latency_windows_total") == 0
    assert value(s, "scprof_latency_sample_ratio") == 0
    # the counting part still costs, and says so
    assert value(s, "scprof_bpf_run_seconds_total", program="sys_exit") > 0
    assert value(s, "scprof_bpf_run_seconds_total", program="sys_enter") == 0
    # no window opens, not even to measure a window's dispatch: closing
    # one marks the threads running then for good (docs/daemon.md, "What
    # closing a window leaves behind")
    assert value(s, "scprof_latency_dispatch_seconds") is None


def attached_programs(pid):
    """Names of the BPF programs that the process's links attach."""
    names = []
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            continue
        if not any(ln.startswith("link_type:") for ln in lines):
            continue
        for ln in lines:
            if ln.startswith("prog_id:"):
                show = json.loads(subprocess.run(
                    ["bpftool", "-j", "prog", "show", "id", ln.split()[1]],
                    capture_output=True, check=True).stdout)
                names.append(show["name"])
    return sorted(names)


EXITS = ("sc_sampled_exit", "sc_timed_exit")


def has_tail_calls():
    """Does scprof use them here (scprof features, under this SCPROF_WITHOUT:
    make check sets it to all)?"""
    out = subprocess.run([SCPROF, "features", "--format", "json"],
                         capture_output=True, check=True)
    rows = json.loads(out.stdout)["facilities"]
    return any(r["name"] == "tail_calls" and r["present"] for r in rows)


@pytest.mark.parametrize("without", [None, "tail_calls"],
                         ids=["tail_calls", "without"])
@pytest.mark.parametrize("duty", ["0", "1"])
def test_the_counting_program_hands_calls_to_the_timing_one(daemons, gates,
                                                            duty, without):
    # With tail calls, sampled mode's exit program counts with no
    # self-timing and hands every call to the timing program in windows
    # (latency ones, and cost ones where the timing program measures what
    # a counting run costs); without, the timing program is the exit
    # program. Either way every call is counted, timed in windows, and
    # the counting part's cost is measured.
    prefix = ("env", f"SCPROF_WITHOUT={without}") if without else ()
    without = without or not has_tail_calls()
    g = pacer(gates, 2000, 50)
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", duty, "--latency-period", "0.5"],
                prefix=prefix)
    exits = [p for p in attached_programs(d.pid) if p in EXITS]
    assert exits == (["sc_timed_exit"] if without else ["sc_sampled_exit"])
    g.release()
    assert g.wait() == 0
    s = quiesce(d, folded(1), "the pacer folded")
    timed, counted = timed_and_counted(s)
    assert counted == 100000
    assert timed == (counted if duty == "1" else 0)
    assert value(s, "scprof_bpf_run_seconds_total", program="sys_exit") > 0
    window = value(s, "scprof_bpf_cost_window_seconds_total")
    assert (window is None) if without else (window > 0)


def test_the_counting_runs_are_priced_with_the_verdict_cache_off(daemons,
                                                                 gates):
    # The counting program counts its runs in the verdict cache's per-CPU
    # line; with the cache off (SCPROF_FAST_PATHS=0 here, a --cgroup
    # filter in use) in the self-timing's per-CPU counters instead. Either
    # way every run is priced in the exit program's run time. Runs not
    # counted there would leave only the cost windows' runs priced: a
    # tenth of the price a call (0.10 when the tick was left out). The
    # cache saves a helper call a run: the two prices differ by much less
    # (1.1-1.3x here).
    per_call = {}
    for fast in ("1", "0"):
        d, s = run_pacer(daemons, gates, ["--latency-duty", "0",
                                          "--latency-period", "0.5"],
                         2000, 50,
                         prefix=("env", f"SCPROF_FAST_PATHS={fast}"))
        _, counted = timed_and_counted(s)
        assert counted == 100000
        per_call[fast] = value(s, "scprof_bpf_run_seconds_total",
                               program="sys_exit") / counted
        d.kill()
    assert 0.25 < per_call["0"] / per_call["1"] < 4, per_call


def test_cost_windows_shrink_once_the_cost_is_known(daemons, gates):
    # A cost window lasts until the timing program has timed 256 runs of
    # the counting kind (4096 calls of the target, one in 16 timed: the
    # pacer makes them in a few ms; the daemon looks every second), then
    # the last 1% of each period. Were it never to close, every call would
    # pay for the timing program (5 ns).
    if not has_tail_calls():
        pytest.skip("no tail calls here: the timing program counts")
    g = pacer(gates, 2000, 50)
    t0 = time.monotonic()
    d = daemons(["-p", str(g.pid), "-f", "--latency-duty", "0",
                 "--latency-period", "0.2"])
    g.release()
    assert g.wait() == 0
    time.sleep(4)
    s, _ = parse(d.metrics())
    elapsed = time.monotonic() - t0
    window = value(s, "scprof_bpf_cost_window_seconds_total")
    assert 0.005 * elapsed < window < 0.5 * elapsed, (window, elapsed)
    assert value(s, "scprof_bpf_run_seconds_total", program="sys_exit") > 0


def test_calls_that_straddle_a_window_edge_are_not_timed(daemons, gates):
    # Windows of 0.25 s every 0.5 s: a 0.35 s sleep can never begin and
    # end inside one, so none is timed, though each is counted. The
    # pacer's getppid calls in between are timed about half the time.
    g = gates(["python3", "-c",
               "import os, time\n"
               "for _ in range(6):\n"
               "    time.sleep(0.35)\n"
               "    for _ in range(20000): os.getppid()\n"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "0.5", "--latency-period", "0.5"])
    g.release()
    assert g.wait() == 0
    s = quiesce(d, folded(1), "python folded")
    sleeps = {"syscall": "clock_nanosleep", "abi": "64"}
    assert value(s, "scprof_syscalls_total", **sleeps) == 6
    assert (value(s, "scprof_syscall_duration_seconds_count", **sleeps)
            or 0) == 0
    timed, counted = timed_and_counted(s)
    assert counted >= 120000
    assert 0 < timed < counted
    assert value(s, "scprof_latency_windows_total") >= 3


def test_budget_shrinks_the_windows_under_load(daemons, gates):
    # A budget of 0.01% of a CPU cannot afford timing 2 M calls/s: the
    # first window (a tenth of a 2 s period) closes early, and the next
    # periods plan smaller ones; the programs' measured cost rises with
    # the load.
    g = pacer(gates, 20000, 500)
    d = daemons(["-p", str(g.pid), "-f", "--max-overhead", "0.01",
                 "--latency-period", "2"])
    before, _ = parse(d.metrics())
    g.release()
    deadline = time.monotonic() + TIMEOUT
    while True:
        s, _ = parse(d.metrics())
        if value(s, "scprof_latency_windows_total") >= 2:
            break
        assert g.proc.poll() is None, "pacer done before a second period"
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert value(s, "scprof_latency_windows_closed_early_total") >= 1
    assert value(s, "scprof_latency_duty_ratio") < 0.1
    assert value(s, "scprof_latency_sample_ratio") < 0.1
    for prog in ("sys_enter", "sys_exit"):
        assert value(s, "scprof_bpf_run_seconds_total", program=prog) > \
            value(before, "scprof_bpf_run_seconds_total", program=prog)
    assert value(s, "scprof_bpf_cost_seconds_total", part="count") > 0
    assert value(s, "scprof_bpf_cost_seconds_total", part="latency") > 0
    assert g.wait() == 0
    s = quiesce(d, folded(1), "the pacer folded")
    timed, counted = timed_and_counted(s)
    assert counted == 10000000, "a call was lost"
    assert timed < counted / 10


def test_per_name_series_from_threads_are_exact(daemons, gates):
    # Per-name series come from per-thread totals (a slot per thread,
    # freed after it exits, a hash by process when a slot is taken): 800
    # short-lived threads in turn, 8 at a time, each making 1000 getppid
    # calls, then a process exit. Every call is in the name's series, and
    # the series sum to the per-syscall totals.
    g = gates(["python3", "-c",
               "import os, threading\n"
               "def work():\n"
               "    for _ in range(1000): os.getppid()\n"
               "for _ in range(100):\n"
               "    ts = [threading.Thread(target=work) for _ in range(8)]\n"
               "    [t.start() for t in ts]\n"
               "    [t.join() for t in ts]\n"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1"])
    g.release()
    assert g.wait() == 0
    s = quiesce(d, folded(1), "python folded")
    total = sum(v for n, l, v in s if n == "scprof_syscalls_total")
    getppid = value(s, "scprof_syscalls_total", **GETPPID)
    assert getppid >= 800000
    assert value(s, "scprof_group_syscalls_total", comm="python3") == total
    timed = sum(v for n, l, v in s
                if n == "scprof_syscall_duration_seconds_sum")
    assert value(s, "scprof_group_syscall_seconds_total",
                 comm="python3") == pytest.approx(timed, rel=1e-6)


def test_rt_sigreturn_is_counted_at_exit(daemons, gates):
    # The daemon counts at sys_exit, where rt_sigreturn has left its number
    # erased: it is filed under rt_sigreturn all the same.
    g = gates(["python3", "-c",
               "import os, signal\n"
               "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
               "for _ in range(300): os.kill(os.getpid(), signal.SIGUSR1)\n"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1"])
    g.release()
    assert g.wait() == 0
    s = quiesce(d, folded(1), "python folded")
    kills = value(s, "scprof_syscalls_total", syscall="kill", abi="64")
    assert kills == 300
    assert value(s, "scprof_syscalls_total", syscall="rt_sigreturn",
                 abi="64") >= 300


def map_calls(pid, name):
    """Calls counted in the daemon's map called name: procs, the counts of
    threads without a slot (struct sc_proc_info's counts)."""
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        ids = [int(line.split()[1])
               for line in open(f"/proc/{pid}/fdinfo/{fd}")
               if line.startswith("map_id:")]
        for i in ids:
            show = json.loads(subprocess.run(
                ["bpftool", "-j", "map", "show", "id", str(i)],
                capture_output=True, check=True).stdout)
            if show.get("name") != name:
                continue
            dump = json.loads(subprocess.run(
                ["bpftool", "-j", "map", "dump", "id", str(i)],
                capture_output=True, check=True).stdout)
            return sum(e["formatted"]["value"]["counts"]["calls"]
                       for e in dump)
    raise AssertionError(f"the daemon has no map {name}")


def test_a_thread_on_a_dead_threads_stack_gets_its_slot(daemons, gates):
    # A new thread often runs on the kernel stack of one that has just
    # exited (the kernel keeps freed stacks per CPU), so it maps to that
    # thread's slot, which it can take only once userspace has read and
    # freed it; until then it counts in its process's procs entry, a hash
    # lookup and atomic adds a call. The daemon frees dead slots at each
    # wake-up (every 250 ms at most), not at folds (every 60 s here). Each
    # process here starts on the stack of the one before it (a sleep that
    # has just exited) and waits 0.5 s before its loop, so that its loop
    # does not race the wake-up: its calls are in its slot. Freed at folds
    # only, 83% of them went to the hash (with a 50 ms wake-up and no
    # wait, 2-12% did: the loops' first milliseconds).
    feats = json.loads(subprocess.run(
        [SCPROF, "features", "--format", "json"], capture_output=True,
        check=True).stdout)
    present = {f["name"]: f["present"] for f in feats["facilities"]}
    if not (present["task_regs"] and present["cmpxchg"]) or \
            os.environ.get("SCPROF_FAST_PATHS") == "0":
        pytest.skip("no per-thread slots without bpf_task_pt_regs and "
                    "compare-and-swap: every thread counts by process")
    loop = "import os, time\ntime.sleep(0.5)\n" \
        "for _ in range(300000): os.getppid()\n"
    g = gates(["sh", "-c", "for i in 1 2 3 4 5 6; do taskset -c 1 "
               f"python3 -c '{loop}' || exit 1; sleep 0.2; done"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "60",
                 "--latency-duty", "0"])
    g.release()
    assert g.wait() == 0
    s = quiesce(d, lambda s: (value(s, "scprof_group_syscalls_total",
                                    comm="python3") or 0) >= 1800000,
                "the loops counted")
    calls = value(s, "scprof_group_syscalls_total", comm="python3")
    in_hash = map_calls(d.pid, "procs")
    assert in_hash < calls * 0.1, \
        f"{in_hash} of {calls} calls counted by process, not in slots"


# ---- an exec: counted as made, timed under the call as made -----------------

def exec_calls_of(samples, metric):
    """{(syscall, abi): value} of metric for execve and execveat."""
    return {(l["syscall"], l["abi"]): v for n, l, v in samples
            if n == metric and l.get("syscall") in ("execve", "execveat")}


@pytest.mark.parametrize("duty", [pytest.param("1", marks=pytest.mark.soak),
                                  "0"])
def test_exec_is_counted_and_timed_as_made(daemons, gates, duty):
    """Sampled mode counts a successful exec when it renames the thread,
    under the ABI and number it was made with (the kernel rewrites both
    for the new program), and its sys_exit adds only the latency, under
    the call its entry stamped (exec.bpf.h). The gate's own exec is a
    64-bit execve: each case's counts are strace's (test_modes) plus one,
    and at --latency-duty 1 every exec is timed once, in its own row."""
    from test_modes import exec_cases
    fexecve = ["python3", "-c", "import os; os.execve(os.open('/bin/true', "
               "os.O_RDONLY), ['true'], {})"]
    cases = [(what, cmd, {("execve", abi): n for abi, n in want.items()})
             for what, cmd, want in exec_cases()]
    cases.append(("execveat", fexecve,
                  {("execve", "64"): 1, ("execveat", "64"): 1}))
    for what, cmd, want in cases:
        # (the gate's sh would try PATH's directories in turn: failed
        # execs, counted too; and the clean PATH's python3, not a
        # version manager's shim script, which execs more)
        g = gates([shutil.which(cmd[0], path=CLEAN_ENV["PATH"])] + cmd[1:])
        d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                     "--latency-duty", duty])
        g.release()
        assert g.wait() == 0, what
        s = quiesce(d, lambda s: sum(exec_calls_of(
            s, "scprof_syscalls_total").values()) >= sum(want.values()),
            f"{what}: its execs counted")
        time.sleep(0.5)  # anything counted twice would show now
        s, _ = parse(d.metrics())
        assert exec_calls_of(s, "scprof_syscalls_total") == want, what
        timed = exec_calls_of(s, "scprof_syscall_duration_seconds_count")
        if duty == "1":
            assert timed == want, (what, timed)
            sums = exec_calls_of(s, "scprof_syscall_duration_seconds_sum")
            assert all(0 < v < 10 for v in sums.values()), (what, sums)
        else:
            assert not any(timed.values()), (what, timed)
        check_histograms(s)
        # the per-name series count each exec once too
        comm = sum(v for n, _, v in s if n == "scprof_group_syscalls_total")
        total = sum(v for n, _, v in s if n == "scprof_syscalls_total")
        assert comm == total, (what, comm, total)
        # no 32-bit call was filed in the 64-bit table under its number
        assert value(s, "scprof_syscalls_total", syscall="writev",
                     abi="64") is None, what


@pytest.mark.soak
def test_dispatch_is_measured_alike_on_a_busy_machine(daemons):
    """The window's dispatch is measured in the daemon's own loops: with
    every CPU kept busy by others those loops wait, and the waits must not
    count (on the monotonic clock 3 rounds read from -153 to +218 ns a call
    beside an nginx load, where a quiet machine reads 33)."""
    def measured(args):
        d = daemons(args)
        s = quiesce(d, lambda s: value(
            s, "scprof_latency_dispatch_seconds") is not None,
            "the dispatch measured")
        v = value(s, "scprof_latency_dispatch_seconds")
        d.kill()
        return v

    # a tracer stopped just before would mark the measuring thread (some
    # 8 ns dearer a call): let any grace period end first
    time.sleep(2)
    quiet = measured([])
    spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(2 * (os.cpu_count() or 1))]
    try:
        time.sleep(0.2)
        busy = [measured([]) for _ in range(3)]
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    # Each reading is some 30-110 ns with a noise of tens of ns on its
    # own (a CI machine read 110 quiet, then 51, 86 and 35 busy); counted
    # waits put readings hundreds of ns off, or below zero.
    assert quiet > 1e-9, quiet
    assert all(b > 0 and abs(b - quiet) < 150e-9 for b in busy), \
        (quiet, busy)
    mid = sorted(busy)[1]
    assert quiet / 3 < mid < 3 * quiet, (quiet, busy)

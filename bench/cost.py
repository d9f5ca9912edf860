# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where the cost goes: measurements to design the fixes of issue #21 on.

budget  The daemon's latency budget against what it really costs. Long
        getppid loops (--budget-seconds, whole daemon periods) bare and
        under floor-exit, floor-pair, `-C -a`, and the daemon (defaults,
        --max-overhead 5, --latency-duty 0 and 1), each between bare runs.
        The daemon is scraped when the loop starts and when it ends: what
        its metrics say the BPF programs cost over the loop against what
        the loop lost (added ns x calls), and the part its self-timing
        cannot see, attaching sys_enter (floor-pair - floor-exit) for
        every call made while a window was open. A budgeted daemon's
        loop starts in phase with its periods (one window each), and its
        windows are also compared one at a time with a period's budget.
        Every loop, bare ones included, is marked by an RCU Tasks Trace
        grace period in its warm-up (probes.mark_running), the state a
        daemon's first closing window leaves a busy thread in. The same
        figures are also taken inside each run, from the loop's batches
        and the daemon's windows' times, without the machine's slow
        spells outside the windows (in_run_cost). Then the same on
        nginx (run_budget_nginx): per request, its load timed in batches
        by bench/httpload.c.

where   bpf_stats per program (run_cnt, run_time_ns) for scprof's modes on
        the getppid loop and on nginx under ab: ns per run, per call of
        the target (the non-target runs, ab's and everyone else's, taken
        out at the price the non-target configuration measures on the
        same workload), and per request. bpf_stats puts its own clock
        reads in every figure: the empty floor programs show how much.
"""
import bisect
import copy
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request

import loops
import services
from probes import FLOORS, BenchError, BpfStats, Config, Running, log, med, \
    parse_scprof_csv, tracing_progs


# ---- the daemon's budget ---------------------------------------------------

METRICS = ("scprof_bpf_run_seconds_total", "scprof_bpf_cost_seconds_total",
           "scprof_latency_sample_ratio", "scprof_latency_duty_ratio",
           "scprof_latency_budget_ratio", "scprof_latency_windows_total",
           "scprof_latency_windows_closed_early_total",
           "scprof_latency_cost_seconds_total",
           "scprof_latency_dispatch_seconds")


def scrape(url):
    """The daemon's own cost metrics: {name{labels}: value}."""
    with urllib.request.urlopen(url, timeout=5) as resp:
        return cost_metrics(resp.read().decode(errors="replace"))


def cost_metrics(text):
    """The cost metrics (METRICS) of an exposition text."""
    out = {}
    for line in text.splitlines():
        if line.startswith(METRICS):
            name, _, val = line.rpartition(" ")
            try:
                out[name] = float(val)
            except ValueError:
                pass
    return out


def counter_deltas(m0, m1):
    """What each counter (a *_total metric) of scrape m1 gained since m0."""
    return {k: m1[k] - m0.get(k, 0) for k in m1
            if k.split("{")[0].endswith("_total")}


def daemon_url(tout):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        tout.seek(0)
        m = re.search(r"serving metrics at (http://\S+)", tout.read())
        if m:
            return m.group(1)
        time.sleep(0.05)
    raise BenchError("the daemon never said where it serves metrics")


# The one configuration whose loops are not marked (probes.py, "RCU Tasks
# Trace marks"): against -C -a's, what the mark costs.
UNMARKED = "scprof -C -a (loop not marked)"


def budget_configs(a, cfgs):
    by = {c.name: c for c in cfgs}
    out = [by[n] for n in (FLOORS["exit"], FLOORS["pair"], "scprof -C -a")
           if n in by]
    if "scprof -C -a" in by:
        c = copy.copy(by["scprof -C -a"])
        c.name, c.label = UNMARKED, "-C -a, not marked"
        out.append(c)
    S = a.scprof
    for label, extra in (("defaults", []),
                         ("--max-overhead 5", ["--max-overhead", "5"]),
                         ("--latency-duty 0", ["--latency-duty", "0"]),
                         ("--latency-duty 1", ["--latency-duty", "1"])):
        out.append(Config(
            "scprof daemon (%s)" % label,
            # (-vv: its windows' times, for the in-run figures)
            lambda p, o, extra=extra: [S, "daemon", "--listen",
                                       "127.0.0.1:0", "-vv"] + extra,
            "bpf", None, min_progs=1, floor="exit", long_run=True,
            label="daemon %s" % label))
    return out


# The daemon's default --latency-period, and sysloop's warm-up (a tenth of
# its seconds) before its timed part.
PERIOD_S = 10.0
WARMUP = 0.1


def wait_for_phase(url, secs, warmup=None):
    """Hold a budgeted daemon's loop until the timed part will hold whole
    periods: wait for a window to open (a period begins), then until its
    period's end less the warm-up, so that the timed part begins just
    before a period does and the scrapes at its ends fall between
    windows. Without it, a 20 s loop's scrapes could take in a third
    window (the first one, at the daemon's start, ran into the loop's
    warm-up): 3 windows of cost against 2 periods of budget. warmup:
    the load's seconds before its timed part, if not sysloop's."""
    key = "scprof_latency_windows_total"
    first = scrape(url).get(key, 0)
    deadline = time.monotonic() + PERIOD_S + 5
    while scrape(url).get(key, 0) == first:
        if time.monotonic() > deadline:
            raise BenchError("the daemon opened no latency window in %g s" %
                             (PERIOD_S + 5))
        time.sleep(0.02)
    time.sleep(max(0, PERIOD_S - (WARMUP * secs if warmup is None
                                  else warmup) - 0.5))


# ---- in-run figures: the load's batches, inside windows and out -----------
#
# The machine's slow spells (a bare getppid loop at 165 ns a call runs at
# 220-380 for a second or several, now and then) move a 20 s loop's mean
# by several ns, as much as what the budget is about (a window a period at
# 1% of a CPU: 3 ns a call); nginx's rate drifts and steps as well (by 10%
# within one 20 s load). So each budget load also writes its batches (256
# calls or requests each, sysloop's SYSLOOP_BATCHES, httpload's
# HTTPLOAD_BATCHES) and the daemon its windows' times (-vv). A run's
# steady cost is its median batch outside the windows, which the spells do
# not move; what a window cost is what its batches cost over the batches
# just around it (NEAR_S either side, outside every window, slow spells
# left out): against one median for the whole run, a window would be
# charged for the drift, and for the batches' skew (their mean is over
# their median, nginx's by 2%, inside windows as outside). The spells
# inside a window count against the daemon.

WINDOW_LINE = re.compile(
    r"(latency|cost) window (opens|closes) at ([0-9.]+) s")


def window_intervals(text):
    """{"latency": [(start, end)], "cost": [...]} from a daemon's -vv
    output, in seconds of CLOCK_MONOTONIC; a window still open at the end
    of the text ends at infinity."""
    out = {"latency": [], "cost": []}
    opened = {}
    for kind, what, t in WINDOW_LINE.findall(text):
        t = float(t)
        if what == "opens":
            opened.setdefault(kind, t)
        elif kind in opened:
            out[kind].append((opened.pop(kind), t))
    for kind, t in opened.items():
        out[kind].append((t, float("inf")))
    return out


DISPATCH_LINE = re.compile(
    r"latency windows: ([-0-9.]+) ns a call of dispatch \(rounds "
    r"([-0-9.]+) to ([-0-9.]+)\)")


def dispatch_measures(text):
    """[(kept, least round, greatest round)] of each dispatch measurement
    in a daemon's -vv output (ns a call)."""
    return [tuple(float(x) for x in m)
            for m in DISPATCH_LINE.findall(text)]


def read_batches(path, kind="getppid"):
    """[(end s, ns a call)] of one kind's batches (SYSLOOP_BATCHES, or
    kind "http": HTTPLOAD_BATCHES)."""
    out = []
    with open(path) as f:
        for line in f:
            tok = line.split()
            if len(tok) == 3 and tok[0] == kind:
                out.append((float(tok[1]), float(tok[2])))
    return out


# Calls (requests) in a batch: sysloop.c's and httpload.c's BATCH.
BATCH_CALLS = 256
# The batches a window is set against: those outside every window that
# ended within this many seconds of its own; slower than SPELL x the
# run's steady cost, a batch is in a slow spell and left out.
NEAR_S = 2.0
SPELL = 1.25


def in_run_cost(batches, windows=None):
    """A run's figures from its batches and a daemon's windows (None: a
    probe without any): "steady_ns", the median batch outside every
    window; for each kind of window, the seconds its batches cost over
    the batches around each window ("<kind>_s"; each window's,
    "<kind>_each_s") and their share of the batches ("<kind>_share");
    "ns", the run's mean with the slow spells outside windows taken out
    (steady_ns plus that excess over all batches). A batch is in a window
    when part of its time is (in a latency window first, when it overlaps
    both kinds).

    A window is set against the calm batches around it plus what the
    slow spells add to a batch over the whole run outside windows
    ("spell_ns"): a window's own batches keep their spells, so leaving
    them out of its base alone would charge every window the spells
    that happen to fall in it (measured: 0.6% of a window's length on
    nginx, 1.1% on the getppid loop, read where no window was; see
    placebo()), and taking only the nearby ones in would let one spell
    beside a window decide its figure."""
    windows = windows or {}
    spans = [(k, a, b) for k, iv in windows.items() for a, b in iv]
    inside = []
    for end, ns in batches:
        start = end - ns * BATCH_CALLS / 1e9
        kind = None
        for k, a, b in spans:
            if start < b and end > a:
                kind = k
                if k == "latency":
                    break
        inside.append(kind)
    outside = [(end, ns) for (end, ns), k in zip(batches, inside)
               if k is None]
    if not outside:
        return None
    steady = med([ns for _, ns in outside])
    calm = [(end, ns) for end, ns in outside if ns < SPELL * steady]
    calm_ends = [end for end, _ in calm]
    ends = [end for end, _ in batches]
    longest = max(ns for _, ns in batches) * BATCH_CALLS / 1e9
    out = {"steady_ns": steady, "batches": len(batches)}
    spell_ns = sum(ns for _, ns in outside) / len(outside) - \
        sum(ns for _, ns in calm) / len(calm) if calm else 0.0
    if windows:
        out["spell_ns"] = spell_ns
    excess = 0.0
    for k in windows:
        xs, each = [], []
        for _, a, b in (s for s in spans if s[0] == k):
            # its batches: those of its kind that overlap it
            mine = [(end, ns) for end, ns, w in (
                batches[i] + (inside[i],) for i in range(
                    bisect.bisect_right(ends, a),
                    bisect.bisect_left(ends, b + longest)))
                if w == k and end - ns * BATCH_CALLS / 1e9 < b]
            if not mine:
                continue
            near = [ns for _, ns in calm[
                bisect.bisect_left(calm_ends, mine[0][0] - NEAR_S):
                bisect.bisect_right(calm_ends, mine[-1][0] + NEAR_S)]]
            base = (sum(near) / len(near) if near else steady) + spell_ns
            xs += [ns - base for _, ns in mine]
            each.append(sum(ns - base for _, ns in mine) *
                        BATCH_CALLS / 1e9)
        out[k + "_s"] = sum(xs) * BATCH_CALLS / 1e9
        out[k + "_each_s"] = each
        out[k + "_share"] = len(xs) / len(batches)
        excess += sum(xs)
    out["ns"] = steady + excess / len(batches)
    return out


# The placebo: windows of PLACEBO_S every PERIOD_S, from each of these
# offsets in turn, set in a bare run's batches, where nothing happened.
PLACEBO_S = 1.0
PLACEBO_OFFSETS = (1.0, 3.5, 6.0, 8.5)


def placebo(batches):
    """What in_run_cost reads for windows where none was (a bare run's
    batches): each such window's seconds, which should scatter around
    zero."""
    if not batches:
        return []
    t0, t1 = batches[0][0], batches[-1][0]
    out = []
    for off in PLACEBO_OFFSETS:
        spans, t = [], t0 + off
        while t + PLACEBO_S < t1 - 1:
            spans.append((t, t + PLACEBO_S))
            t += PERIOD_S
        r = in_run_cost(batches, {"latency": spans}) if spans else None
        if r:
            out += r["latency_each_s"]
    return out


def bare_in_run(batches):
    """A bare run's in-run figures, with its placebo windows."""
    r = in_run_cost(batches)
    if r:
        r["placebo_each_s"] = placebo(batches)
    return r


def pool_placebo(bare):
    """The bare runs' placebo windows pooled: mean, standard error and
    count, or {} without any."""
    xs = [x for b in bare for x in (b.get("in_run") or {}).get(
        "placebo_each_s", [])]
    if len(xs) < 2:
        return {}
    mean, se = mean_se(xs)
    return {"placebo_s": PLACEBO_S, "placebo_n": len(xs),
            "placebo_mean_s": mean, "placebo_se_s": se}


def mean_se(xs):
    """The mean of xs (at least one) and its standard error (infinite
    for one)."""
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return mean, float("inf")
    sd = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5
    return mean, sd / len(xs) ** 0.5


def report_placebo(sec, indent):
    if "placebo_n" in sec:
        print("%splacebo: %d windows of %g s set where none was, in the "
              "bare runs' batches, cost %+.4f s +- %.4f (two standard "
              "errors; zero expected)" % (
                  indent, sec["placebo_n"], sec["placebo_s"],
                  sec["placebo_mean_s"], 2 * sec["placebo_se_s"]))


def run_budget(a, cfgs, tmp):
    bcfgs = budget_configs(a, cfgs)
    secs = a.budget_seconds
    log("bench: budget: %d configurations x %d repetitions, %g s loops: "
        "about %.0f minutes" % (len(bcfgs), a.reps, secs,
                                a.reps * (2 * len(bcfgs) + 1) *
                                (secs + 2) / 60))
    runs = {c.name: [] for c in bcfgs}
    bare = []
    batches = os.path.join(tmp, "batches")

    def bare_run():
        r = loops.run_once(a, None, tmp, True, secs, ["getppid"],
                           mark=True, batches=batches)["getppid"]
        r["in_run"] = bare_in_run(read_batches(batches))
        return r

    for rep in range(a.reps):
        order = bcfgs[rep % len(bcfgs):] + bcfgs[:rep % len(bcfgs)]
        before = bare_run()
        bare.append(before)
        for c in order:
            log("  budget, rep %d/%d: %s" % (rep + 1, a.reps, c.name))
            seen = {}

            def hook(when, tracer, tout, c=c, seen=seen):
                if not c.name.startswith("scprof daemon"):
                    return
                if "url" not in seen:
                    seen["url"] = daemon_url(tout)
                if when == "start" and budgeted(c):
                    wait_for_phase(seen["url"], secs)
                seen[when] = (time.monotonic(), scrape(seen["url"]))
                if when == "end":
                    tout.seek(0)
                    text = tout.read()
                    seen["windows"] = window_intervals(text)
                    seen["dispatch_measures"] = dispatch_measures(text)

            r = loops.run_once(a, c, tmp, True, secs, ["getppid"], hook,
                               mark=c.name != UNMARKED, batches=batches)
            in_run = in_run_cost(read_batches(batches), seen.get("windows"))
            after = bare_run()
            g = r["getppid"]
            base = (before["mean_ns"] + after["mean_ns"]) / 2
            row = {"ns": g["mean_ns"], "bare_ns": base,
                   "rcu_marked": g.get("rcu_marked"),
                   "added_ns": g["mean_ns"] - base,
                   "calls": g["timed"], "seconds": g["timed"] * g["mean_ns"]
                   / 1e9}
            if in_run and before["in_run"] and after["in_run"]:
                # The same without the slow spells outside windows.
                row["in_run"] = in_run
                row["steady_added_ns"] = in_run["ns"] - (
                    before["in_run"]["ns"] + after["in_run"]["ns"]) / 2
            if "start" in seen and "end" in seen:
                t0, m0 = seen["start"]
                t1, m1 = seen["end"]
                row["metrics_seconds"] = t1 - t0
                row["metrics"] = counter_deltas(m0, m1)
                row["gauges"] = {k: m1[k] for k in m1
                                 if not k.split("{")[0].endswith("_total")}
                row["dispatch_measures"] = seen.get("dispatch_measures", [])
            runs[c.name].append(row)
            bare.append(after)
            before = after
    return summarize_budget(bcfgs, runs, bare, secs)


def budget_share(name):
    """The share of a CPU a daemon configuration's windows may cost, None
    for one not on a budget (budget_configs' --latency-duty ones)."""
    return 0.01 if "defaults" in name else \
        0.05 if "max-overhead 5" in name else None


def budgeted(c):
    """A daemon configuration with windows on a budget (one a period)."""
    return budget_share(c.name) is not None


def summarize_budget(bcfgs, runs, bare, secs):
    rows = []
    for c in bcfgs:
        rs = runs[c.name]
        row = {"config": c.name, "label": c.label,
               "added_ns": med([r["added_ns"] for r in rs]),
               "added_min": min(r["added_ns"] for r in rs),
               "added_max": max(r["added_ns"] for r in rs),
               "calls": med([r["calls"] for r in rs]), "runs": rs,
               "rcu_marked": sum(1 for r in rs if r.get("rcu_marked"))}
        # The loop's lost time over its timed part: added ns x calls.
        row["lost_s"] = med([r["added_ns"] * r["calls"] / 1e9 for r in rs])
        steady = [r for r in rs if "steady_added_ns" in r]
        if steady:
            row["steady_added_ns"] = med([r["steady_added_ns"]
                                          for r in steady])
            for k in ("latency", "cost"):
                xs = [r["in_run"][k + "_s"] for r in steady
                      if k + "_s" in r["in_run"]]
                if xs:
                    row["in_run_%s_s" % k] = med(xs)
            # a latency window's cost in the loop's batches, against what
            # the metrics counted of it (both over the same timed part)
            ws = [(r["in_run"]["latency_s"] / r["metrics"][
                "scprof_latency_windows_total"],
                r["metrics"]["scprof_latency_cost_seconds_total"] /
                r["metrics"]["scprof_latency_windows_total"])
                for r in steady if "latency_s" in r["in_run"] and
                r.get("metrics", {}).get("scprof_latency_windows_total")]
            if ws:
                row["in_run_window_s"] = med([w[0] for w in ws])
                row["in_run_window_claimed_s"] = med([w[1] for w in ws])
                row.update(pool_windows([
                    r for r in steady if "latency_s" in r["in_run"] and
                    r.get("metrics", {}).get(
                        "scprof_latency_windows_total")]))
        ms = [r for r in rs if "metrics" in r]
        if ms:
            def mv(key):
                return med([r["metrics"].get(key, 0) for r in ms])
            row["claimed"] = {
                "count_s": mv('scprof_bpf_cost_seconds_total{part="count"}'),
                "latency_s": mv(
                    'scprof_bpf_cost_seconds_total{part="latency"}'),
                # the windows' whole cost, dispatch included: what the
                # budget holds (#21)
                "cost_s": mv("scprof_latency_cost_seconds_total"),
                "dispatch_ns": med([r["gauges"].get(
                    "scprof_latency_dispatch_seconds", 0) * 1e9
                    for r in ms]),
                "enter_s": mv(
                    'scprof_bpf_run_seconds_total{program="sys_enter"}'),
                "exit_s": mv(
                    'scprof_bpf_run_seconds_total{program="sys_exit"}'),
                "windows": mv("scprof_latency_windows_total"),
                "closed_early": mv(
                    "scprof_latency_windows_closed_early_total"),
                "over_s": med([r["metrics_seconds"] for r in ms]),
                "sample_ratio": med([r["gauges"].get(
                    "scprof_latency_sample_ratio", 0) for r in ms]),
                "duty_ratio": med([r["gauges"].get(
                    "scprof_latency_duty_ratio", 0) for r in ms]),
            }
        rows.append(row)
    by = {r["config"]: r for r in rows}
    bare_ns = med([b["mean_ns"] for b in bare])
    steady_bare = [b["in_run"]["ns"] for b in bare if b.get("in_run")]
    out = {"seconds": secs, "bare_ns": bare_ns, "rows": rows,
           "bare_rcu_marked": sum(1 for b in bare if b.get("rcu_marked")),
           "bare_runs": len(bare)}
    if steady_bare:
        out["steady_bare_ns"] = med(steady_bare)
    out.update(pool_placebo(bare))
    fe, fp, ca = (by.get(FLOORS["exit"]), by.get(FLOORS["pair"]),
                  by.get("scprof -C -a"))
    d0 = by.get("scprof daemon (--latency-duty 0)")
    if d0 and ca:
        # The daemon's counting path (no window ever) over -C -a's.
        out["daemon_count_over_C_a_ns"] = d0["added_ns"] - ca["added_ns"]
        if "steady_added_ns" in d0 and "steady_added_ns" in ca:
            out["steady_daemon_count_over_C_a_ns"] = \
                d0["steady_added_ns"] - ca["steady_added_ns"]
    if fe and fp:
        out["enter_attach_ns"] = fp["added_ns"] - fe["added_ns"]
    if ca and UNMARKED in by:
        # What a thread's mark costs it a call (-C -a marked - not)
        out["mark_ns"] = ca["added_ns"] - by[UNMARKED]["added_ns"]
    for r in rows:
        if not r["config"].startswith("scprof daemon") or "claimed" not in r:
            continue
        cl = r["claimed"]
        a = {}
        if ca:
            # What timing really added: the daemon over -C -a, on every
            # call of the loop.
            a["latency_real_s"] = (r["added_ns"] - ca["added_ns"]) * \
                r["calls"] / 1e9
            a["vs_C_a_ns"] = r["added_ns"] - ca["added_ns"]
            # the limit with the configuration's own budget (1%
            # of a CPU for those without one)
            a["limit_share"] = budget_share(r["config"]) or 0.01
            a["limit_ns"] = ca["added_ns"] + a["limit_share"] * bare_ns + 5
            if "steady_added_ns" in r and "steady_added_ns" in ca and \
                    "steady_bare_ns" in out:
                # the same without the slow spells outside windows
                a["steady_vs_C_a_ns"] = r["steady_added_ns"] - \
                    ca["steady_added_ns"]
                a["steady_limit_ns"] = ca["steady_added_ns"] + \
                    a["limit_share"] * out["steady_bare_ns"] + 5
        if d0 and r is not d0:
            # What the windows really cost: over the same daemon with
            # none, on every call of the loop.
            a["timing_real_s"] = (r["added_ns"] - d0["added_ns"]) * \
                r["calls"] / 1e9
            a["timing_real_ns"] = r["added_ns"] - d0["added_ns"]
        # The budget of the periods the scrapes took in: the loop is put
        # in phase with them (wait_for_phase), one window each.
        share = budget_share(r["config"])
        a["budget_s"] = None if share is None else \
            share * PERIOD_S * cl["windows"]
        if share is not None and cl["windows"] > 0 and "timing_real_s" in a:
            # The timed part holds secs / PERIOD_S whole periods.
            periods = max(1.0, round(secs / PERIOD_S))
            a["window_real_s"] = a["timing_real_s"] / periods
            a["window_claimed_s"] = cl["cost_s"] / cl["windows"]
            a["window_budget_s"] = share * PERIOD_S
        if share is not None and "window_mean_s" in r:
            # the pooled windows against the budget, and against the
            # limit's 5 ns on each call of a window's period
            r["window_budget_s"] = share * PERIOD_S
            r["window_limit_s"] = (share + 5 / bare_ns) * PERIOD_S
            r["window_verdict"] = window_verdict(r)
        if "enter_attach_ns" in out:
            # Calls made while sys_enter was attached pay its dispatch,
            # which no program run time includes.
            a["unseen_enter_s"] = out["enter_attach_ns"] * r["calls"] * \
                cl["sample_ratio"] / 1e9
        r["analysis"] = a
    return out


def report_pooled(r, indent):
    """A configuration's windows pooled over its runs, and their
    verdict."""
    print("%s%s: its %d windows pooled: %.3f s a window in-run +- %.3f "
          "(two standard errors), %.3f s in its metrics (%.2fx); the "
          "budget of a period is %.3f s%s: %s" % (
              indent, r["config"], r["window_n"], r["window_mean_s"],
              2 * r["window_se_s"], r.get("window_claimed_mean_s", 0),
              r.get("window_claimed_mean_s", 0) / r["window_mean_s"]
              if r["window_mean_s"] > 0 else float("nan"),
              r["window_budget_s"],
              "" if "window_limit_s" not in r else
              ", the limit's 5 ns a call %.3f s" % r["window_limit_s"],
              r["window_verdict"]))


def report_marks(sec):
    rows = [r for r in sec["rows"] if r["config"] != UNMARKED]
    runs = sec["bare_runs"] + sum(len(r["runs"]) for r in rows)
    marked = sec["bare_rcu_marked"] + \
        sum(r.get("rcu_marked", 0) for r in rows)
    print("  loops marked by an RCU Tasks Trace grace period in their "
          "warm-up: %d of %d" % (marked, runs), end="")
    for r in sec["rows"]:
        if r["config"] == UNMARKED:
            print("; %s: %d of %d marked all the same" % (
                r["config"], r.get("rcu_marked", 0), len(r["runs"])), end="")
    print()


def report_steady(sec):
    """The in-run figures (in_run_cost): without the machine's slow spells
    outside the daemon's windows, and each latency window's cost in the
    loop's own batches."""
    if "steady_bare_ns" not in sec:
        return
    print("  Without the slow spells outside windows (median batch outside "
          "the daemon's windows + what the batches in them cost over it; "
          "bare %.1f ns):" % sec["steady_bare_ns"])
    for r in sec["rows"]:
        if "steady_added_ns" in r:
            print("    %-34s %+7.1f ns/call%s" % (
                r["config"], r["steady_added_ns"],
                "" if "in_run_latency_s" not in r else
                "; in its latency windows %.3f s, its cost windows %.3f s"
                % (r["in_run_latency_s"], r.get("in_run_cost_s", 0))))
    if "steady_daemon_count_over_C_a_ns" in sec:
        print("    the daemon's counting path (--latency-duty 0) over -C -a: "
              "%+.1f ns/call" % sec["steady_daemon_count_over_C_a_ns"])
    if any("steady_limit_ns" in r.get("analysis", {}) for r in sec["rows"]):
        print("    (a limit is on the configuration's added ns: -C -a's + "
              "its budget's share of bare, 1% without one, + 5 ns)")
    for r in sec["rows"]:
        a = r.get("analysis", {})
        if "steady_limit_ns" in a:
            print("    %s: over -C -a %+.1f ns/call (limit %.1f, %s)" % (
                r["config"], a["steady_vs_C_a_ns"], a["steady_limit_ns"],
                "met" if r["steady_added_ns"] <= a["steady_limit_ns"]
                else "MISSED"))
        if "in_run_window_s" in r:
            print("    %s: a latency window cost %.3f s in the loop's "
                  "batches; its metrics count %.3f s (%.2fx)%s" % (
                      r["config"], r["in_run_window_s"],
                      r["in_run_window_claimed_s"],
                      r["in_run_window_claimed_s"] / r["in_run_window_s"]
                      if r["in_run_window_s"] > 0 else float("nan"),
                      "" if "window_budget_s" not in a else
                      "; the budget of a period is %.3f s" %
                      a["window_budget_s"]))
        if "window_verdict" in r:
            report_pooled(r, "    ")


def report_budget(sec):
    print("Budget: getppid loops of %g s (means), each between bare runs; "
          "bare %.0f ns/call" % (sec["seconds"], sec["bare_ns"]))
    if "bare_runs" in sec:  # (runs before e80462d marked nothing)
        report_marks(sec)
    if "mark_ns" in sec:
        print("  the mark costs a thread %+.1f ns a call (-C -a, marked - "
              "not)" % sec["mark_ns"])
    if "enter_attach_ns" in sec:
        print("  attaching an empty sys_enter next to sys_exit adds %.0f ns "
              "a call (floor-pair - floor-exit)" % sec["enter_attach_ns"])
    print("  %-34s %9s %15s %7s %8s %9s %9s %8s" % (
        "config", "added ns", "(min..max)", "Mcalls", "lost s",
        "claim cnt", "claim lat", "duty"))
    for r in sec["rows"]:
        cl = r.get("claimed")
        print("  %-34s %9.1f %15s %7.1f %8.3f %9s %9s %8s" % (
            r["config"], r["added_ns"], "(%.0f..%.0f)" % (
                r["added_min"], r["added_max"]), r["calls"] / 1e6,
            r["lost_s"], "" if not cl else "%.3f" % cl["count_s"],
            "" if not cl else "%.3f" % cl["latency_s"],
            "" if not cl else "%.3f" % cl["sample_ratio"]))
    if "daemon_count_over_C_a_ns" in sec:
        print("  the daemon's counting path (--latency-duty 0) adds %+.1f ns "
              "a call over -C -a's" % sec["daemon_count_over_C_a_ns"])
    report_steady(sec)
    report_placebo(sec, "  ")
    for r in sec["rows"]:
        a = r.get("analysis")
        if not a:
            continue
        if "timing_real_s" in a:
            print("  %s: its windows really cost %+.1f ns a call over "
                  "--latency-duty 0, %.3f s over the loop; its metrics "
                  "claim %.3f s of latency part (ratio %.1f)" % (
                      r["config"], a["timing_real_ns"], a["timing_real_s"],
                      r["claimed"]["latency_s"],
                      a["timing_real_s"] / r["claimed"]["latency_s"]
                      if r["claimed"]["latency_s"] > 0 else float("nan")))
        print("  %s: over -C -a %+.1f ns/call (limit -C -a + %g%% of bare + "
              "5 ns: %.1f, %s), timing really cost %.3f s, claimed %.3f s%s"
              "%s" % (r["config"], a.get("vs_C_a_ns", float("nan")),
                      100 * a.get("limit_share", 0.01),
                      a.get("limit_ns", float("nan")),
                      "?" if "limit_ns" not in a else
                      "met" if r["added_ns"] <= a["limit_ns"] else "MISSED",
                      a.get("latency_real_s", float("nan")),
                      r["claimed"]["latency_s"],
                      "" if a["budget_s"] is None else
                      " (budget %.3f s)" % a["budget_s"],
                      "" if "unseen_enter_s" not in a else
                      "; sys_enter's dispatch in the windows: %.3f s" %
                      a["unseen_enter_s"]))
        if "window_real_s" in a:
            print("  %s: a window (one a period) cost %.3f s by the "
                  "differences between runs (the in-run figure above "
                  "leaves out their noise); its "
                  "metrics count %.3f s (%.2fx); the budget of a period is "
                  "%.3f s" % (r["config"], a["window_real_s"],
                              a["window_claimed_s"],
                              a["window_claimed_s"] / a["window_real_s"]
                              if a["window_real_s"] > 0 else float("nan"),
                              a["window_budget_s"]))
        cl = r["claimed"]
        print("  %s: its metrics count %.3f s of window cost with the "
              "dispatch (measured %.1f ns a call)%s" % (
                  r["config"], cl.get("cost_s", 0), cl.get("dispatch_ns", 0),
                  "" if "timing_real_s" not in a or not cl.get("cost_s")
                  else ", %.2fx what timing really cost" % (
                      cl["cost_s"] / a["timing_real_s"]
                      if a["timing_real_s"] > 0 else float("nan"))))
    print()


# ---- the budget on nginx ----------------------------------------------------
#
# The same check on a real server (#21: "verify on nginx too"): nginx as
# the services section runs it, its load from httpload (bench/httpload.c:
# ab -k's load, timed in batches of 256 responses) so that the requests
# served while a window was open can be told from the others. A run's
# figures are per request: "steady" the median batch outside the
# daemon's windows, "ns" the run's mean with the slow spells outside
# windows taken out, as for the loops. The windows' share of a run is
# what its batches in windows cost over those around them, over the run's
# time: at most the budget's share of a CPU when the windows' cost falls
# on the server's CPU, the one the requests wait for.

NGINX_BUDGET = ("scprof -C -a", "scprof daemon (defaults)",
                "scprof daemon (--max-overhead 5)",
                "scprof daemon (--latency-duty 0)")


def nginx_load(a, w, secs, batches):
    """httpload on the client CPU for secs: {"rps", "requests"}."""
    p = subprocess.run(
        [os.path.join(a.bin, "httpload"), str(w.port), str(w.conns),
         "%g" % secs], capture_output=True, text=True, check=False,
        env=dict(os.environ, HTTPLOAD_BATCHES=batches),
        preexec_fn=services.pinned(a.client_cpu))
    m = re.match(r"requests (\d+) seconds ([\d.]+) rps ([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise BenchError("httpload failed (%d): %s" % (
            p.returncode, (p.stderr or p.stdout).strip()[-300:]))
    return {"requests": int(m.group(1)), "rps": float(m.group(3))}


def nginx_budget_run(a, w, c, tmp, secs):
    """One load, bare (c None) or under c, with its in-run figures; a
    daemon's metrics scraped at the load's ends."""
    batches = os.path.join(tmp, "batches")
    if c is None:
        r = nginx_load(a, w, secs, batches)
        r["in_run"] = bare_in_run(read_batches(batches, "http"))
        return r
    daemon = c.name.startswith("scprof daemon")
    with Running(a, c, w.pid, tmp) as t:
        if daemon:
            url = daemon_url(t.tout)
            if budgeted(c):
                wait_for_phase(url, secs, warmup=0)
            t0, m0 = time.monotonic(), scrape(url)
        r = nginx_load(a, w, secs, batches)
        if daemon:
            t1, m1 = time.monotonic(), scrape(url)
        text = t.finish()
    r["in_run"] = in_run_cost(read_batches(batches, "http"),
                              window_intervals(text) if daemon else None)
    if daemon:
        r["metrics_seconds"] = t1 - t0
        r["metrics"] = counter_deltas(m0, m1)
        r["dispatch_ns"] = m1.get("scprof_latency_dispatch_seconds", 0) * 1e9
        r["dispatch_measures"] = dispatch_measures(text)
    elif c.parse is not None:
        # -C -a: every process's calls, the load's too
        r["calls"] = sum(c.parse(text, w.pid).values())
    return r


# What sys_enter's dispatch really costs nginx, the part of a window the
# daemon prices from its own hot loop: an empty sys_enter program (the
# floor's, loaded once: `floor --toggle`) attached for ENTER_ON_S every
# ENTER_EVERY_S beside an empty sys_exit one held throughout. Two
# measures: the load's batches in those windows against the calm ones
# around them (in_run_cost: everything the windows cost the requests,
# noisy), and the CPUs' time in the dispatch's functions per request,
# sampled by bench/dsample.c in and out of the windows (precise, but only
# the dispatch: not the program's own run, not what it does to the code
# around it).
ENTER_ON_S, ENTER_EVERY_S = 1.5, 5.0
DSAMPLE_HZ, DSAMPLE_SLICE_MS = 1000, 100
# Slices this near a window's ends are left out (attaching, detaching).
DSAMPLE_SETTLE_S = 0.1
# The functions a sys_enter probe runs, from the syscall's slow path to
# the program (the tracepoint, the BPF raw tracepoint's wrapper, its RCU
# and migration guards, the retpoline of the call into the program). Some
# run for sys_exit too, and elsewhere: what counts is the difference with
# and without the sys_enter program. A name this kernel lacks is skipped.
DISPATCH_FUNCS = ("syscall_trace_enter", "__traceiter_sys_enter",
                  "__bpf_trace_sys_enter", "bpf_trace_run2",
                  "__bpf_trace_run", "__rcu_read_lock", "__rcu_read_unlock",
                  "rcu_read_unlock_trace_special", "migrate_disable",
                  "migrate_enable", "__x86_indirect_thunk_rax")


def read_slices(text):
    """[(start, end, in, all, (per function...))] from dsample's "slice
    END IN ALL F1..." lines (a slice starts where the one before it
    ended; the first is left out)."""
    out, last = [], None
    for line in text.splitlines():
        p = line.split()
        if len(p) < 4 or p[0] != "slice":
            continue
        end = float(p[1])
        if last is not None:
            out.append((last, end, int(p[2]), int(p[3]),
                        tuple(int(x) for x in p[4:])))
        last = end
    return out


def dsample_names(err):
    """The functions dsample found, in its slices' order (its stderr's
    "dsample: NAME START SIZE" lines)."""
    return [p[1] for p in (line.split() for line in err.splitlines())
            if len(p) == 4 and p[0] == "dsample:" and
            p[2].startswith("0x")]


def sampled_dispatch(slices, windows, batches, hz, names=()):
    """{"ns_per_request", "in", "out", "funcs"}: the CPUs' time in the
    dispatch's functions a request inside the windows (slices wholly in
    one, settled) less outside them (slices DSAMPLE_SETTLE_S or more from
    any), and the same for each of the functions named (the slices'
    order); None when either side has no request."""
    spans = [(end - ns * BATCH_CALLS / 1e9, end) for end, ns in batches]
    ends = [e for _, e in spans]
    hits = {"in": 0, "out": 0}
    reqs = {"in": 0.0, "out": 0.0}
    each = {"in": [0] * len(names), "out": [0] * len(names)}
    for start, end, n_in, _, per in slices:
        inside = any(start >= a + DSAMPLE_SETTLE_S and end <= b
                     for a, b in windows)
        near = any(start < b + DSAMPLE_SETTLE_S and
                   end > a - DSAMPLE_SETTLE_S for a, b in windows)
        side = "in" if inside else None if near else "out"
        if side is None:
            continue
        r = 0.0
        for i in range(bisect.bisect_right(ends, start), len(spans)):
            s, e = spans[i]
            if s >= end:
                break
            if e > s:
                r += BATCH_CALLS * (min(e, end) - max(s, start)) / (e - s)
        hits[side] += n_in
        reqs[side] += r
        for i, n in enumerate(per[:len(names)]):
            each[side][i] += n
    if not reqs["in"] or not reqs["out"]:
        return None
    per = {k: hits[k] / reqs[k] * 1e9 / hz for k in hits}
    return {"ns_per_request": per["in"] - per["out"], "in": per["in"],
            "out": per["out"],
            "funcs": {name: (each["in"][i] / reqs["in"] -
                             each["out"][i] / reqs["out"]) * 1e9 / hz
                      for i, name in enumerate(names)}}


def nginx_enter_dispatch(a, w, tmp, secs):
    """{"ns_per_request", "windows", "sampled"}: what the empty sys_enter
    program's windows added to a request in them, by the load's batches,
    and sampled_dispatch()'s figures (None when dsample cannot run)."""
    batches = os.path.join(tmp, "batches")
    windows, stop, failed = [], threading.Event(), []

    def say(word):
        tog.stdin.write(word + "\n")
        tog.stdin.flush()
        if tog.stdout.readline().strip() != word:
            raise BenchError("floor --toggle: no answer to %s" % word)

    def toggle():
        stop.wait(1.0)
        try:
            while not stop.is_set():
                say("on")
                opened = time.monotonic()
                stop.wait(ENTER_ON_S)
                closing = time.monotonic()
                say("off")
                windows.append((opened, closing, time.monotonic()))
                stop.wait(ENTER_EVERY_S - ENTER_ON_S)
        except (BenchError, OSError) as e:
            failed.append(e)  # (raised once the load is over)

    ds = subprocess.Popen(
        [os.path.join(a.bin, "dsample"), str(DSAMPLE_HZ),
         str(DSAMPLE_SLICE_MS)] + list(DISPATCH_FUNCS),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if ds.stdout.readline().strip() != "attached":
        log("bench: budget on nginx: no sampled dispatch: %s" % (
            ds.communicate()[1].strip().splitlines() or ["no answer"])[-1])
        ds = None
    ex = subprocess.Popen([os.path.join(a.bin, "floor"), "--exit"],
                          stdout=subprocess.PIPE, text=True)
    tog = subprocess.Popen([os.path.join(a.bin, "floor"), "--toggle"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
    t = threading.Thread(target=toggle)
    try:
        if ex.stdout.readline().strip() != "attached":
            raise BenchError("floor --exit did not attach")
        if tog.stdout.readline().strip() != "loaded":
            raise BenchError("floor --toggle did not load")
        t.start()
        nginx_load(a, w, secs, batches)
    finally:
        stop.set()
        if t.is_alive():
            t.join()
        tog.stdin.close()
        tog.wait()
        ex.terminate()
        ex.wait()
        slices, names = None, []
        if ds is not None:
            ds.terminate()
            out, err = ds.communicate()
            slices, names = read_slices(out), dsample_names(err)
    if failed:
        raise BenchError(str(failed[0]))
    b = read_batches(batches, "http")
    r = in_run_cost(b, {"latency": [(o, c) for o, _, c in windows]})
    if not r or not r.get("latency_share"):
        raise BenchError("no sys_enter window fell in the load")
    requests = r["latency_share"] * r["batches"] * BATCH_CALLS
    return {"ns_per_request": r["latency_s"] / requests * 1e9,
            "windows": len(windows),
            "sampled": slices and sampled_dispatch(
                slices, [(o, c) for o, c, _ in windows], b, DSAMPLE_HZ,
                names)}


def run_budget_nginx(a, cfgs, tmp):
    """The budget section's record on nginx, None when it cannot run."""
    missing = [t for t in ("nginx", "ab") if not shutil.which(t)]
    if missing:
        log("bench: budget: no nginx run: %s not installed (make bench "
            "installs bench/deps)" % ", ".join(missing))
        return None
    bcfgs = [c for c in budget_configs(a, cfgs) if c.name in NGINX_BUDGET]
    secs = a.budget_seconds
    log("bench: budget on nginx: %d configurations x %d repetitions, %g s "
        "loads: about %.0f minutes" % (
            len(bcfgs), a.reps, secs,
            a.reps * ((2 * len(bcfgs) + 2) * (secs + 1.5) + 2 * PERIOD_S)
            / 60))
    w = services.Nginx(a, os.path.join(a.out, "budget-nginx"))
    runs = {c.name: [] for c in bcfgs}
    bare, enter = [], []
    try:
        w.start()
        marked = services.warm_up(a, w)
        for rep in range(a.reps):
            order = bcfgs[rep % len(bcfgs):] + bcfgs[:rep % len(bcfgs)]
            before = nginx_budget_run(a, w, None, tmp, secs)
            bare.append(before)
            for c in order:
                log("  budget on nginx, rep %d/%d: %s" % (rep + 1, a.reps,
                                                        c.name))
                r = nginx_budget_run(a, w, c, tmp, secs)
                after = nginx_budget_run(a, w, None, tmp, secs)
                r["ratio"] = r["rps"] / ((before["rps"] + after["rps"]) / 2)
                r["bare_ns"] = (before["in_run"]["ns"] +
                                after["in_run"]["ns"]) / 2
                runs[c.name].append(r)
                bare.append(after)
                before = after
            log("  budget on nginx, rep %d/%d: sys_enter's dispatch (an "
                "empty program toggled)" % (rep + 1, a.reps))
            enter.append(nginx_enter_dispatch(a, w, tmp, secs))
    finally:
        w.stop()
    out = summarize_budget_nginx(bcfgs, runs, bare, secs, marked, w.conns)
    out["enter_runs"] = enter
    summarize_enter(out)
    return out


def summarize_enter(out):
    """sys_enter's dispatch on nginx a call (over -C -a's calls a
    request) against what the daemon priced it at."""
    enter = out.get("enter_runs")
    by = {r["config"]: r for r in out["rows"]}
    ca, dd = by.get("scprof -C -a"), by.get("scprof daemon (defaults)")
    if not enter or not ca or "calls_per_request" not in ca:
        return
    out["enter_ns_per_request"] = med([e["ns_per_request"] for e in enter])
    out["enter_ns_per_call"] = [e["ns_per_request"] / ca["calls_per_request"]
                                for e in enter]
    sampled = [e["sampled"] for e in enter if e.get("sampled")]
    if sampled:
        out["enter_sampled_ns_per_call"] = [
            e["ns_per_request"] / ca["calls_per_request"] for e in sampled]
        out["enter_sampled_out_ns_per_call"] = med([
            e["out"] / ca["calls_per_request"] for e in sampled])
        names = [n for n in sampled[0].get("funcs", {})
                 if all(n in e.get("funcs", {}) for e in sampled)]
        out["enter_sampled_funcs_ns_per_call"] = {
            n: med([e["funcs"][n] for e in sampled]) /
            ca["calls_per_request"] for n in names}
    if dd:
        out["daemon_dispatch_ns"] = med([r["dispatch_ns"] for r in dd["runs"]
                                         if "dispatch_ns" in r])


def pool_windows(ws):
    """Every window of the runs ws as one sample: "window_n", the mean
    of their in-run costs and its standard error ("window_mean_s",
    "window_se_s"; one window's figure moves by tens of ms between
    runs, so it is the mean over many that a budget is judged by), and
    the metrics' cost a window over all the runs ("window_claimed_mean_s").
    """
    xs = [x for r in ws for x in r["in_run"].get("latency_each_s", [])]
    out = {}
    if xs:
        mean, se = mean_se(xs)
        out.update(window_n=len(xs), window_mean_s=mean, window_se_s=se)
    n = sum(r["metrics"]["scprof_latency_windows_total"] for r in ws)
    if n:
        out["window_claimed_mean_s"] = sum(
            r["metrics"]["scprof_latency_cost_seconds_total"]
            for r in ws) / n
    return out


def window_verdict(r):
    """The pooled windows against the budget and the limit, at two
    standard errors: "met", "within the limit", "OVER", or "not
    resolved" (the interval spans the limit)."""
    hi = r["window_mean_s"] + 2 * r["window_se_s"]
    lo = r["window_mean_s"] - 2 * r["window_se_s"]
    limit = r.get("window_limit_s", r["window_budget_s"])
    if hi <= r["window_budget_s"]:
        return "met"
    if hi <= limit:
        return "within the limit"
    return "OVER" if lo > limit else "not resolved"


def summarize_budget_nginx(bcfgs, runs, bare, secs, marked=None, conns=8):
    bare_ns = [b["in_run"]["ns"] for b in bare]
    # The noise: a bare run's ns a request against its neighbours'.
    noise = [abs(bare_ns[i] / ((bare_ns[i - 1] + bare_ns[i + 1]) / 2) - 1)
             for i in range(1, len(bare_ns) - 1)]
    out = {"seconds": secs, "conns": conns,
           "bare_rps": med([b["rps"] for b in bare]),
           "bare_ns": med(bare_ns), "marked": marked,
           "noise": med(noise) if noise else None,
           "noise_max": max(noise) if noise else None, "rows": []}
    out.update(pool_placebo(bare))
    by = {}
    for c in bcfgs:
        rs = runs[c.name]
        row = {"config": c.name, "label": c.label, "runs": rs,
               "ratio": med([r["ratio"] for r in rs]),
               "ratio_min": min(r["ratio"] for r in rs),
               "ratio_max": max(r["ratio"] for r in rs),
               # ns a request over the bare runs on its sides, in-run
               "added_ns": med([r["in_run"]["ns"] - r["bare_ns"]
                                for r in rs]),
               "steady_ns": med([r["in_run"]["steady_ns"] for r in rs])}
        calls = [r["calls"] / r["requests"] for r in rs if "calls" in r]
        if calls:
            row["calls_per_request"] = med(calls)
        ws = [r for r in rs if "latency_s" in r["in_run"] and
              r.get("metrics", {}).get("scprof_latency_windows_total")]
        if ws:
            # what the windows cost the run: their batches over steady,
            # a share of the load's time
            row["window_share"] = med([
                r["in_run"]["latency_s"] / r["metrics_seconds"] for r in ws])
            row["window_s"] = med([
                r["in_run"]["latency_s"] /
                r["metrics"]["scprof_latency_windows_total"] for r in ws])
            row["window_claimed_s"] = med([
                r["metrics"]["scprof_latency_cost_seconds_total"] /
                r["metrics"]["scprof_latency_windows_total"] for r in ws])
            row["windows"] = med([r["metrics"]["scprof_latency_windows_total"]
                                  for r in ws])
            row.update(pool_windows(ws))
        out["rows"].append(row)
        by[c.name] = row
    ca = by.get("scprof -C -a")
    for r in out["rows"]:
        share = budget_share(r["config"])
        if share is None:
            continue
        r["budget_share"] = share
        r["window_budget_s"] = share * PERIOD_S
        if ca and "calls_per_request" in ca:
            slack = 5 * ca["calls_per_request"]
            r["vs_C_a_ns"] = r["added_ns"] - ca["added_ns"]
            r["limit_ns"] = ca["added_ns"] + share * out["bare_ns"] + slack
            # the windows alone against the budget with the limit's 5 ns
            # a call (all of it: as if the counting path cost nothing
            # over -C -a's)
            r["window_limit_s"] = (share + slack / out["bare_ns"]) * \
                PERIOD_S
            # the across-run check resolves nothing when the runs' noise
            # is larger than what the limit allows over -C -a
            r["resolved"] = out["noise"] is not None and \
                out["noise"] * out["bare_ns"] < share * out["bare_ns"] + \
                slack
        if "window_mean_s" in r:
            r["window_verdict"] = window_verdict(r)
    return out


def report_budget_nginx(sec):
    print("Budget on nginx: the services' nginx, httpload with %d "
          "connections (ab -k's load, timed in batches) for %g s, each "
          "between bare runs; bare %.0f requests/s, %.0f ns a request "
          "in-run; noise: a bare run against its neighbours, median %.1f%%, "
          "max %.1f%%" % (
              sec.get("conns", 8), sec["seconds"], sec["bare_rps"],
              sec["bare_ns"],
              100 * (sec["noise"] or 0), 100 * (sec["noise_max"] or 0)))
    if sec.get("marked") is not None:
        print("  the server's main thread %s in the warm-up (RCU Tasks "
              "Trace)" % ("marked" if sec["marked"] else "NOT marked"))
    print("  %-34s %6s %15s %12s %10s %9s" % (
        "config", "ratio", "(min..max)", "added ns/req", "steady ns",
        "calls/req"))
    for r in sec["rows"]:
        print("  %-34s %6.3f %15s %12.0f %10.0f %9s" % (
            r["config"], r["ratio"], "(%.3f..%.3f)" % (
                r["ratio_min"], r["ratio_max"]), r["added_ns"],
            r["steady_ns"], "" if "calls_per_request" not in r else
            "%.1f" % r["calls_per_request"]))
    report_placebo(sec, "  ")
    for r in sec["rows"]:
        if "window_share" in r:
            print("  %s: its windows cost %.2f%% of the load's time "
                  "(budget %s of a CPU); a window %.3f s in the load's "
                  "batches, %.3f s in its metrics (%.2fx)%s" % (
                      r["config"], 100 * r["window_share"],
                      "-" if "budget_share" not in r else
                      "%g%%" % (100 * r["budget_share"]), r["window_s"],
                      r["window_claimed_s"],
                      r["window_claimed_s"] / r["window_s"]
                      if r["window_s"] > 0 else float("nan"),
                      "" if "window_budget_s" not in r or
                      "window_verdict" in r else
                      "; the budget of a period is %.3f s: %s" % (
                          r["window_budget_s"],
                          "met" if r["window_s"] <= r["window_budget_s"]
                          else "within the limit's 5 ns a call (%.3f s)" %
                          r["window_limit_s"] if r["window_s"] <=
                          r.get("window_limit_s", 0) else "OVER")))
        if "window_verdict" in r:
            report_pooled(r, "  ")
        if "limit_ns" in r:
            print("  %s: over -C -a %+.0f ns a request (limit -C -a + "
                  "%g%% of bare + 5 ns a call: %.0f, %s)" % (
                      r["config"], r["vs_C_a_ns"], 100 * r["budget_share"],
                      r["limit_ns"],
                      ("met" if r["added_ns"] <= r["limit_ns"]
                       else "MISSED") if r.get("resolved", True) else
                      "not resolved: the runs' noise, %.0f ns a request, "
                      "is more than the limit allows" % (
                          sec["noise"] * sec["bare_ns"])))
    if "enter_ns_per_call" in sec:
        xs = sec["enter_ns_per_call"]
        print("  sys_enter's dispatch on nginx (an empty program toggled "
              "in-run): %.0f ns a request, %.0f ns a call (%.0f..%.0f)%s" % (
                  sec["enter_ns_per_request"], med(xs), min(xs), max(xs),
                  "" if sec.get("daemon_dispatch_ns") is None else
                  "; the daemon priced it at %.1f ns a call" %
                  sec["daemon_dispatch_ns"]))
    if "enter_sampled_ns_per_call" in sec:
        xs = sec["enter_sampled_ns_per_call"]
        print("  sys_enter's dispatch on nginx, sampled (the CPUs' time in "
              "its functions, %d Hz, with the empty program against "
              "without; its own run left out): %.1f ns a call (%.1f..%.1f; "
              "those functions %.1f ns a call without it)" % (
                  DSAMPLE_HZ, med(xs), min(xs), max(xs),
                  sec["enter_sampled_out_ns_per_call"]))
        funcs = sec.get("enter_sampled_funcs_ns_per_call")
        if funcs:
            print("    by function (median of runs): " + ", ".join(
                "%s %.1f" % (n, v) for n, v in sorted(
                    funcs.items(), key=lambda x: -x[1])))
    print()


# ---- where full mode's time goes: bpf_stats per program -------------------

WHERE_CONFIGS = (FLOORS["exit"], FLOORS["pair"], "scprof --count-only",
                 "scprof -C -a", "scprof (full)", "scprof -a (full)",
                 "scprof -a -P (full)", "scprof -p LOOP,OTHER (full)",
                 "scprof -p other (non-target)",
                 "scprof -C -p other (non-target)",
                 "scprof daemon (defaults)")


def prog_delta(p0, p1):
    out = {}
    for i, p in p1.items():
        q = p0.get(i, {})
        out[p.get("name", str(i))] = {
            "runs": p.get("run_cnt", 0) - q.get("run_cnt", 0),
            "ns": p.get("run_time_ns", 0) - q.get("run_time_ns", 0)}
    return out


def where_loop(a, c, tmp):
    """bpf_stats over a getppid loop; the loop's calls are the target's."""
    got = {}

    def hook(when, tracer, tout):
        if when == "start":
            got["stats"] = BpfStats().__enter__()
            got["p0"] = tracing_progs(tracer.pid)
            got["t0"] = time.monotonic()
        else:
            got["p1"] = tracing_progs(tracer.pid)
            got["t1"] = time.monotonic()
            got["stats"].__exit__()

    try:
        r = loops.run_once(a, c, tmp, False, a.where_seconds, ["getppid"],
                           hook)
    finally:
        if "stats" in got and got["stats"].fd >= 0:
            got["stats"].__exit__()
    return {"progs": prog_delta(got["p0"], got["p1"]),
            "target_calls": r["getppid"]["total"],
            "seconds": got["t1"] - got["t0"]}


def where_service(a, w, c, tmp):
    """bpf_stats over a service's load; the target's calls are what the
    probe counted for it, when it counts one process."""
    with Running(a, c, w.pid, tmp) as t:
        with BpfStats():
            p0, t0 = tracing_progs(t.proc.pid), time.monotonic()
            load = w.load(a.where_seconds)
            p1, t1 = tracing_progs(t.proc.pid), time.monotonic()
        text = t.finish()
    res = {"progs": prog_delta(p0, p1), "requests": load["requests"],
           "rps": load["rps"], "seconds": t1 - t0}
    if c.parse is parse_scprof_csv:
        res["mix"] = c.parse(text, w.pid)
        res["target_calls_seen"] = sum(res["mix"].values())
    return res


SYSCALL_PROGS = ("sc_sys_enter", "sc_sys_exit", "sc_count_exit",
                 "sc_sampled_exit", "sc_timed_exit", "floor_enter",
                 "floor_exit")


def summarize_where(samples, target_calls, requests):
    """Per configuration and program: runs per target call, ns per run,
    and ns per run above the empty program's (bpf_stats' own share). Per
    configuration: the syscall programs' work above empty, all runs (the
    whole machine's, the load generator's included) per target call and
    per request, and for probes of one process the target's own share,
    its non-target runs priced at what the non-target configuration
    measured on the same workload."""
    def per_run(name, prog):
        ss = [s["progs"][prog] for s in samples.get(name, [])
              if prog in s["progs"] and s["progs"][prog]["runs"]]
        return med([s["ns"] / s["runs"] for s in ss]) if ss else None

    empty = per_run(FLOORS["exit"], "floor_exit")
    nt_price = {}
    for nt, progs in (("scprof -p other (non-target)",
                       ("sc_sys_enter", "sc_sys_exit")),
                      ("scprof -C -p other (non-target)",
                       ("sc_count_exit",))):
        for p in progs:
            v = per_run(nt, p)
            if v is not None:
                nt_price[p] = v
    out = {"empty_ns_per_run": empty, "nontarget_ns_per_run": nt_price,
           "configs": {}}
    for name, ss in samples.items():
        calls = med([target_calls(s) for s in ss])
        reqs = med([requests(s) for s in ss]) if requests else None
        one_target = name in ONE_TARGET
        progs, work_all, work_target = {}, 0.0, 0.0
        for prog in sorted({p for s in ss for p in s["progs"]}):
            runs = med([s["progs"].get(prog, {}).get("runs", 0) for s in ss])
            total = med([s["progs"].get(prog, {}).get("ns", 0) for s in ss])
            v = {"runs": runs, "ns_per_run": per_run(name, prog),
                 "runs_per_target_call": runs / calls if calls else None}
            if v["ns_per_run"] is not None and empty is not None:
                v["above_empty_ns"] = v["ns_per_run"] - empty
            progs[prog] = v
            if prog not in SYSCALL_PROGS or not runs or empty is None:
                continue
            work_all += total - runs * empty
            if one_target and prog in nt_price:
                others = max(0.0, runs - calls)
                work_target += total - others * nt_price[prog] - \
                    min(runs, calls) * empty
        row = {"progs": progs, "target_calls": calls,
               "work_ns_per_target_call": work_all / calls if calls
               else None}
        if one_target:
            row["target_work_ns_per_call"] = work_target / calls \
                if calls else None
        if reqs:
            row["requests"] = reqs
            row["calls_per_request"] = calls / reqs
            row["work_ns_per_request"] = work_all / reqs
        out["configs"][name] = row
    return out


# Configurations that profile the target alone (the rest record everyone,
# the floors and non-targets included).
ONE_TARGET = ("scprof --count-only", "scprof (full)",
              "scprof -p LOOP,OTHER (full)")


def run_where(a, cfgs, tmp):
    by = {c.name: c for c in cfgs}
    wcfgs = [by[n] for n in WHERE_CONFIGS if n in by]
    log("bench: where: %d configurations x %d repetitions on the getppid "
        "loop and nginx" % (len(wcfgs), a.reps))
    loop_s, svc_s = {}, {}
    for rep in range(a.reps):
        for c in wcfgs:
            log("  where, loop, rep %d/%d: %s" % (rep + 1, a.reps, c.name))
            loop_s.setdefault(c.name, []).append(where_loop(a, c, tmp))
    nginx = services.Nginx(a, os.path.join(a.out, "services"))
    nginx.name = "nginx"
    try:
        nginx.start()
        nginx.load(1.0)  # warm-up
        for rep in range(a.reps):
            for c in wcfgs:
                log("  where, nginx, rep %d/%d: %s" % (rep + 1, a.reps,
                                                      c.name))
                svc_s.setdefault(c.name, []).append(
                    where_service(a, nginx, c, tmp))
    finally:
        nginx.stop()
    # The worker's calls per request, from full mode's own count of it.
    cpr = [s["target_calls_seen"] / s["requests"]
           for s in svc_s.get("scprof (full)", [])
           if s.get("target_calls_seen") and s["requests"]]
    cpr = med(cpr) if cpr else None
    if cpr is None:
        raise BenchError("where: no count of the nginx worker's calls")
    mix = svc_s["scprof (full)"][0].get("mix", {})
    return {
        "seconds": a.where_seconds, "reps": a.reps,
        "loop": summarize_where(loop_s, lambda s: s["target_calls"], None),
        "nginx": summarize_where(
            svc_s, lambda s: s["requests"] * cpr, lambda s: s["requests"]),
        "nginx_calls_per_request": cpr,
        "nginx_mix_per_request": {
            k: v / svc_s["scprof (full)"][0]["requests"]
            for k, v in sorted(mix.items(), key=lambda kv: -kv[1])},
        "raw": {"loop": loop_s, "nginx": svc_s}}


def report_where(sec):
    print("Where the time goes (bpf_stats, %d repetitions of %g s). "
          "bpf_stats' own clock reads are in every run: \"above empty\" "
          "takes the empty program's ns/run off" % (sec["reps"],
                                                    sec["seconds"]))
    print("  nginx worker: %.1f calls per request: %s" % (
        sec["nginx_calls_per_request"], ", ".join(
            "%s %.2f" % kv for kv in sec["nginx_mix_per_request"].items()
            if kv[1] >= 0.01)))
    for wname in ("loop", "nginx"):
        w = sec[wname]
        print("  %s: empty program %s ns/run; non-target runs: %s" % (
            wname, "?" if w["empty_ns_per_run"] is None else
            "%.1f" % w["empty_ns_per_run"], ", ".join(
                "%s %.1f ns" % kv for kv in
                w["nontarget_ns_per_run"].items())))
        print("    %-32s %-16s %9s %8s %11s" % (
            "config", "program", "runs/call", "ns/run", "above empty"))
        for name, row in w["configs"].items():
            for prog, v in row["progs"].items():
                if prog not in SYSCALL_PROGS:
                    continue
                print("    %-32s %-16s %9s %8s %11s" % (
                    name, prog,
                    "-" if v["runs_per_target_call"] is None else
                    "%.2f" % v["runs_per_target_call"],
                    "-" if v["ns_per_run"] is None else
                    "%.1f" % v["ns_per_run"],
                    "-" if v.get("above_empty_ns") is None else
                    "%.1f" % v["above_empty_ns"]))
            line = "      work above empty: %.1f ns per target call (all " \
                "runs)" % (row["work_ns_per_target_call"] or 0)
            if row.get("target_work_ns_per_call") is not None:
                line += ", %.1f the target's own" % \
                    row["target_work_ns_per_call"]
            if row.get("work_ns_per_request") is not None:
                line += "; %.0f ns per request" % row["work_ns_per_request"]
            print(line)
    print()

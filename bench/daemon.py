# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""budget and churn: `scprof daemon` at its defaults.

budget  Long getppid loops (--budget-seconds, whole 10 s periods of the
        daemon's) bare, under `scprof -C -a` and under the daemon, each
        between bare runs; a run's added ns is its mean less the mean of
        its bare neighbours. The daemon counts every call as -C -a does
        and times some in latency windows on a budget (1% of a CPU): over
        -C -a it may add that share of a bare call plus 5 ns (issue #21).
        Its own metric scprof_latency_cost_seconds_total, scraped as the
        loop starts and ends, says what its windows cost: set against
        what the loop lost over -C -a and against the budget. Each probed
        loop goes through a grace period in its warm-up
        (probes.grace_period), as the daemon's first window to close
        would put it through midway.

churn   The daemon while a shell loop starts processes (`while :; do
        /bin/true; done`: a fork and an execve each) for --churn-seconds:
        the churn as execve calls a second (the daemon's own
        scprof_syscalls_total{syscall="execve"}, every process's on the
        machine) and as processes started (/proc/stat's processes
        counter), the daemon's CPU (its threads' schedstat, a share of one CPU)
        and its bpf() calls a second, counted by `scprof -C -p` on it, in
        --reps slices. Issue 44's goal is for ~1,000 execve/s: at most
        0.5% of a CPU and 10x fewer bpf() calls than the 6,170 a second
        measured then (so at most 0.62 a execve); at another churn rate
        the figures per execve are the ones to compare.
"""
import os
import re
import signal
import subprocess
import time
import urllib.request

from loops import interleaved, run_once
from probes import (BenchError, Config, Running, grace_period, log, med,
                    parse_count_table, proc_cpu_s, spread)

LIMIT_NS = 5  # issue #21: the daemon <= -C -a + budget x bare + 5 ns
# Issue 44's goal for the daemon under ~1,000 execve/s, for the report:
# 10x fewer bpf() calls than the 6,170/s measured at that rate.
CHURN_GOAL = {"cpu_percent": 0.5, "bpf_per_s": 617, "execve_per_s": 1000,
              "bpf_per_execve": 0.617}
EXECVE = 'syscall="execve"'



def daemon_config(a):
    return Config("scprof daemon", lambda p, o: [
        a.scprof, "daemon", "--listen", "127.0.0.1:0"], floor="exit")


def metrics_url(t):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = re.search(r"serving metrics at (http://\S+)", t.text())
        if m:
            return m.group(1)
        time.sleep(0.05)
    raise BenchError("the daemon never said where it serves its metrics")


def parse_metrics(text):
    """{name: value} of the samples without labels of an exposition."""
    out = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 2 and not line.startswith("#") and "{" not in tok[0]:
            try:
                out[tok[0]] = float(tok[1])
            except ValueError:
                pass
    return out


def labelled(text, name, label):
    """The sum of a metric's samples whose labels include label (such as
    'syscall="execve"')."""
    total = 0.0
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 2 and tok[0].startswith(name + "{") and \
                label in tok[0]:
            total += float(tok[1])
    return total


def scrape_text(url):
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.read().decode(errors="replace")


def scrape(url):
    return parse_metrics(scrape_text(url))


# ---- budget ----------------------------------------------------------------

def budget_once(a, cfg, tmp):
    got = {}

    def hook(when, t):
        if t is None:
            return
        if when == "go":
            grace_period(a)
            if cfg.name == "scprof daemon":
                got["url"] = metrics_url(t)
        if "url" in got:
            got[when] = (time.monotonic(), scrape(got["url"]))
    r = run_once(a, cfg, tmp, ["getppid"], a.budget_seconds, hook)["getppid"]
    if "end" in got:
        (t0, m0), (t1, m1) = got["go"], got["end"]
        k = "scprof_latency_cost_seconds_total"
        timed_s = r["timed"] * r["mean_ns"] / 1e9
        # the windows' cost over the loop's timed part, by their rate
        r["metrics_cost_s"] = (m1[k] - m0.get(k, 0)) * timed_s / (t1 - t0)
        r["budget_s"] = m1.get("scprof_latency_budget_ratio", 0) * timed_s
        r["windows"] = m1.get("scprof_latency_windows_total", 0) - \
            m0.get("scprof_latency_windows_total", 0)
        r["daemon_cpu"] = (m1.get("scprof_cpu_seconds_total", 0) -
                           m0.get("scprof_cpu_seconds_total", 0)) / (t1 - t0)
        r["rss_bytes"] = m1.get("scprof_resident_memory_bytes")
    return r


def run_budget(a, tmp):
    ca = Config("scprof -C -a", lambda p, o: [a.scprof, "-q", "-C", "-a",
                                              "-o", o],
                parse=parse_count_table, floor="exit")
    d = daemon_config(a)
    log("bench: budget: %d repetitions of %g s getppid loops" % (
        a.budget_reps, a.budget_seconds))
    res, triples = interleaved(a, [ca, d], lambda c: budget_once(a, c, tmp),
                               "budget", a.budget_reps)
    added = {c.name: [r["mean_ns"] - (pre["mean_ns"] + post["mean_ns"]) / 2
                      for pre, r, post, name in triples if name == c.name]
             for c in (ca, d)}
    ds = res[d.name]
    bare = med([r["mean_ns"] for r in res["bare"]])
    ca_ns, d_ns = med(added[ca.name]), med(added[d.name])
    share = med([r["budget_s"] / (r["timed"] * r["mean_ns"] / 1e9)
                 for r in ds])
    calls = med([r["timed"] for r in ds])
    return {
        "reps": a.budget_reps, "seconds": a.budget_seconds, "bare_ns": bare,
        "c_a_added": spread(added[ca.name]), "added": spread(added[d.name]),
        "over_c_a_ns": d_ns - ca_ns, "budget_share": share,
        "limit_ns": share * bare + LIMIT_NS,
        # seconds over a loop's timed part (medians over its runs)
        "calls": calls, "lost_s": (d_ns - ca_ns) * calls / 1e9,
        "metrics_cost_s": med([r["metrics_cost_s"] for r in ds]),
        "budget_s": med([r["budget_s"] for r in ds]),
        "windows": med([r["windows"] for r in ds]),
        "daemon_cpu": med([r["daemon_cpu"] for r in ds]),
        "rss_bytes": med([r["rss_bytes"] or 0 for r in ds]),
        "raw": res}


def budget_verdict(b):
    """The daemon over -C -a against its limit, by the medians and by
    the two configurations' spreads together: met or missed, or "not
    resolved" when the spreads reach across the limit."""
    over, limit = b["over_c_a_ns"], b["limit_ns"]
    noise = sum((s["max"] - s["min"]) / 2 for s in (b["added"],
                                                    b["c_a_added"]))
    if over + noise <= limit:
        return "met"
    if over - noise > limit:
        return "MISSED"
    return "%s by the medians, not resolved by the spreads (+-%.1f ns)" % (
        "met" if over <= limit else "missed", noise)


def budget_lines(b):
    return [
        "getppid loops of %g s, %d repetitions, bare %.0f ns a call: -C -a "
        "adds %.1f ns (%.1f-%.1f), the daemon %.1f (%.1f-%.1f)" % (
            b["seconds"], b["reps"], b["bare_ns"], b["c_a_added"]["median"],
            b["c_a_added"]["min"], b["c_a_added"]["max"],
            b["added"]["median"], b["added"]["min"], b["added"]["max"]),
        "the daemon over -C -a: %+.1f ns a call, limit %.1f (its budget, "
        "%g%% of a CPU, of a bare call + %d ns): %s" % (
            b["over_c_a_ns"], b["limit_ns"], 100 * b["budget_share"],
            LIMIT_NS, budget_verdict(b)),
        "over a loop (%.0f M calls, %g windows): its metrics count %.3f s "
        "of window cost, its budget %.3f s; the loop lost %.3f s over -C -a"
        % (b["calls"] / 1e6, b["windows"], b["metrics_cost_s"],
           b["budget_s"], b["lost_s"]),
        "the daemon itself: %.2f%% of a CPU, %.1f MiB resident" % (
            100 * b["daemon_cpu"], b["rss_bytes"] / 2**20)]


# ---- churn -----------------------------------------------------------------

def processes_started():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("processes "):
                return int(line.split()[1])
    raise BenchError("/proc/stat has no processes line")


def run_churn(a, tmp):
    slices = max(1, a.reps)
    secs = a.churn_seconds / slices
    log("bench: churn: the daemon under a /bin/true loop, %d x %g s" % (
        slices, secs))
    sub = os.path.join(tmp, "counter")
    os.makedirs(sub, exist_ok=True)
    rows = []
    with Running(a, daemon_config(a), 0, tmp) as dt:
        url = metrics_url(dt)

        def execves():
            return labelled(scrape_text(url), "scprof_syscalls_total",
                            EXECVE)
        churn = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"],
                                 start_new_session=True)
        try:
            time.sleep(2)  # (the daemon's first processes folded)
            for _ in range(slices):
                counter = Config("scprof -C -p DAEMON", lambda p, o: [
                    a.scprof, "-q", "-C", "-o", o, "-p", str(p)],
                    parse=parse_count_table)
                # the execve calls by scrapes on either side of the
                # counted window (a scrape's own CPU and bpf() calls are
                # not in the figures: the daemon was not scraped)
                e0, te0 = execves(), time.monotonic()
                with Running(a, counter, dt.proc.pid, sub) as t:
                    p0, c0 = processes_started(), proc_cpu_s(dt.proc.pid)
                    t0 = time.monotonic()
                    time.sleep(secs)
                    p1, c1 = processes_started(), proc_cpu_s(dt.proc.pid)
                    dur = time.monotonic() - t0
                    text = t.finish()
                e1, te1 = execves(), time.monotonic()
                bpf = parse_count_table(text).get("bpf", 0)
                # per execve: the counted window's execve calls at the
                # rate of the scrapes' (wider) window
                ex = max(1.0, (e1 - e0) * dur / (te1 - te0))
                rows.append({"seconds": dur, "churn_per_s": (p1 - p0) / dur,
                             "execve_per_s": ex / dur,
                             "cpu_percent": 100 * (c1 - c0) / dur,
                             "bpf_per_s": bpf / dur,
                             # per process started and per execve: what a
                             # regression check can compare whatever the
                             # churn rate
                             "cpu_us_per_process": (c1 - c0) * 1e6 /
                             max(1, p1 - p0),
                             "bpf_per_process": bpf / max(1, p1 - p0),
                             "bpf_per_execve": bpf / ex})
        finally:
            os.killpg(churn.pid, signal.SIGKILL)
            churn.wait()
        dt.finish()
    return {"slices": rows, **{k: spread([r[k] for r in rows])
                               for k in rows[0] if k != "seconds"}}


def churn_line(c):
    def f(k, fmt):
        if k not in c:  # (a bench.json written before it)
            return "?"
        return (fmt + " (" + fmt + "-" + fmt + ")") % (
            c[k]["median"], c[k]["min"], c[k]["max"])
    g = CHURN_GOAL
    cpu_ok = c["cpu_percent"]["median"] <= g["cpu_percent"]
    bpe = c.get("bpf_per_execve", {}).get("median")
    return ("the daemon under %s execve calls a second (%s processes "
            "started a second): %s%% of a CPU (issue 44's goal at ~%d "
            "execve/s: <= %g, %s at this rate), %s bpf() calls a second, "
            "%s an execve (goal: <= %d a second at ~%d execve/s, %.2f an "
            "execve: %s); a process started costs it %s us of CPU and %s "
            "bpf() calls" % (
                f("execve_per_s", "%.0f"), f("churn_per_s", "%.0f"),
                f("cpu_percent", "%.2f"), g["execve_per_s"],
                g["cpu_percent"], "met" if cpu_ok else "missed",
                f("bpf_per_s", "%.0f"), f("bpf_per_execve", "%.2f"),
                g["bpf_per_s"], g["execve_per_s"], g["bpf_per_execve"],
                "?" if bpe is None else
                "met" if bpe <= g["bpf_per_execve"] else "missed",
                f("cpu_us_per_process", "%.1f"),
                f("bpf_per_process", "%.2f")))


def report(doc):
    if doc.get("budget"):
        print("budget (scprof daemon, defaults):")
        for line in budget_lines(doc["budget"]):
            print("  " + line)
    if doc.get("churn"):
        print("churn:\n  " + churn_line(doc["churn"]))
    print()


def markdown(doc):
    out = []
    if doc.get("budget"):
        out += ["**The daemon's budget** (`scprof daemon`, its defaults):",
                ""] + ["- %s." % l for l in budget_lines(doc["budget"])] + [""]
    if doc.get("churn"):
        out += ["**The daemon under churn** (a `/bin/true` loop; median "
                "(min-max) of %d slices): %s." % (
                    len(doc["churn"]["slices"]), churn_line(doc["churn"])),
                ""]
    return "\n".join(out)

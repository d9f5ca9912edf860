# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The loops section of `make bench`: what a syscall costs a pinned C loop
(bench/sysloop.c) bare and under each probe, in ns per call, each probed
run next to bare runs; plus scprof's startup, `scprof -- /bin/true`, the
daemon's CPU and memory, and each BPF program's run time (bpf_stats).
"""
import os
import pty
import re
import select
import subprocess
import tempfile
import time
import urllib.request

from probes import (FLOORS, MARKED_C_A, BenchError, BpfStats, Running,
                    foreign_probes, log, mark_running, med, rcu_marked, stop,
                    tracing_progs, wait_attached)


def run_once(a, cfg, tmpdir, long_run=False, secs=None, kinds=None,
             hook=None, mark=None, batches=None):
    """One loop run, bare (cfg None) or under a probe: {kind: result}.
    secs and kinds override the section's; hook(when, tracer, tracer
    output file) is called with "start" once the probe is attached and
    "end" when the loop is done, while the probe still runs. mark True:
    the loop is marked (probes.mark_running) in its warm-up; True or
    False: each result's "rcu_marked" says whether the loop was marked
    when it ended (None: a kernel without marks). batches: a file for
    the loop's batches (sysloop's SYSLOOP_BATCHES)."""
    kinds = kinds or a.kinds
    secs = secs or (a.long_seconds if long_run else a.seconds)
    stat = "mean_ns" if long_run else a.stat
    env = None
    if batches:
        env = dict(os.environ, SYSLOOP_BATCHES=batches)
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu), str(secs),
                             ",".join(kinds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    try:
        if loop.stdout.readline().strip() != "ready":
            raise BenchError("sysloop did not start")
        after_go = (lambda: mark_running(a, loop.pid)) if mark else None
        if cfg is None:
            results = timed_loop(loop, kinds, stat, after_go)
            foreign = foreign_probes(set())
        else:
            with Running(a, cfg, loop.pid, tmpdir) as t:
                foreign = foreign_probes({t.proc.pid})
                if hook:
                    hook("start", t.proc, t.tout)
                results = timed_loop(loop, kinds, stat, after_go)
                if hook:
                    hook("end", t.proc, t.tout)
                text = t.finish()
            check_seen(cfg, text, loop.pid, results)
        marked = None if mark is None else rcu_marked(a, loop.pid)
        for r in results.values():
            r["foreign_probes"] = foreign
            if mark is not None:
                r["rcu_marked"] = marked
        return results
    finally:
        loop.stdin.close()
        loop.wait()


def timed_loop(loop, kinds, stat, after_go=None):
    """Let a ready sysloop go; its result line for each kind. after_go()
    is called once it goes, in its warm-up."""
    results = {}
    loop.stdin.write("go\n")
    loop.stdin.flush()
    if after_go:
        after_go()
    for _ in kinds:
        tok = loop.stdout.readline().split()
        if len(tok) != 5:
            raise BenchError("sysloop: bad result line %r" % tok)
        results[tok[0]] = {"mean_ns": float(tok[1]),
                           "batch_median_ns": float(tok[2]),
                           "timed": int(tok[3]), "total": int(tok[4])}
        results[tok[0]]["ns"] = results[tok[0]][stat]
    return results


def check_seen(cfg, text, pid, results):
    """The probe must have counted (nearly) every call of each kind."""
    if cfg.parse is None:
        return
    seen = cfg.parse(text, pid)
    for k, r in results.items():
        if seen.get(k, 0) < r["total"] * cfg.min_seen:
            raise BenchError(
                "%s saw %d %s calls of the loop's %d: it was not attached "
                "for the whole run\n%s" % (cfg.name, seen.get(k, 0), k,
                                           r["total"], text[-2000:]))
        r["seen"] = seen.get(k, 0)


def neighbour_base(pre, post):
    """The bare figure a probed run is compared with: the faster of the
    bare runs just before and after it. Noise only ever slows a run down,
    and a bare run sometimes is, as a whole: in one run 8 of 120 bare
    getppid runs took 45-60 ns a call more than the other 112 (165 +- 0.3
    ns), and with the two runs' mean each of them took ~25 ns off two
    probes' added cost (floor-exit's came out at 61 ns while it ran at
    250.7 ns a call, 85.7 over bare, in all five repetitions)."""
    return min(pre, post)


def run_matrix(a, cfgs, tmpdir):
    """{config name: [ {kind: result} per rep ]}, bare under "bare"."""
    res = {"bare": []}
    added = {c.name: {k: [] for k in a.kinds} for c in cfgs}
    for c in cfgs:
        res[c.name] = []
    for rep in range(a.reps):
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        before = run_once(a, None, tmpdir)
        res["bare"].append(before)
        for c in order:
            log("  rep %d/%d: %s" % (rep + 1, a.reps, c.name))
            pre = before
            for tries in range(3):
                try:
                    r = run_once(a, c, tmpdir, c.long_run, mark=c.mark)
                    break
                except BenchError as e:
                    if tries == 2:
                        raise
                    log("  retrying %s: %s" % (c.name,
                                               str(e).splitlines()[0]))
            post = run_once(a, None, tmpdir)
            res[c.name].append(r)
            res["bare"].append(post)
            # A long run is compared by its mean with its neighbours'.
            stat = "mean_ns" if c.long_run else "ns"
            for k in a.kinds:
                base = neighbour_base(pre[k][stat], post[k][stat])
                added[c.name][k].append(r[k]["ns"] - base)
                r[k]["ratio_to_neighbours"] = r[k]["ns"] / base
            before = post
    return res, added


# ---- scprof startup, -- /bin/true, daemon ---------------------------------

def scprof_startup(a, other_pid):
    """Seconds from exec to scprof saying it is attached (on a tty it
    says "profiling ..." right after attaching)."""
    times = []
    for _ in range(a.reps * 2):
        master, slave = pty.openpty()
        t0 = time.monotonic()
        p = subprocess.Popen([a.scprof, "-p", str(other_pid), "-o",
                              os.devnull], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=slave,
                             start_new_session=True)
        os.close(slave)
        buf, t1 = b"", None
        deadline = t0 + 10
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                if b"profiling" in buf:
                    t1 = time.monotonic()
                    break
        stop(p)
        os.close(master)
        if t1 is None:
            raise BenchError("scprof never said it was attached: %r" % buf)
        times.append(t1 - t0)
    return times


def scprof_true(a):
    times = []
    for _ in range(a.reps * 2):
        t0 = time.monotonic()
        rc = subprocess.run([a.scprof, "--", "/bin/true"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        times.append(time.monotonic() - t0)
        if rc != 0:
            raise BenchError("scprof -- /bin/true exited %d" % rc)
    return times


def proc_cpu_s(pid):
    """CPU time of all the process's threads: schedstat's nanoseconds when
    the kernel has them, else stat's clock ticks."""
    total, tids = 0, []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
        for tid in tids:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tck  # utime + stime


def proc_mem_kb(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


def daemon_row(a):
    """CPU and memory of `scprof daemon` (whole system by default) while a
    pinned loop makes getppid calls as fast as it can, scraped every 5 s
    over loopback like a Prometheus server would."""
    h = subprocess.run([a.scprof, "daemon", "--help"], capture_output=True,
                       text=True, check=False)
    if h.returncode != 0:
        return {"skipped": "this scprof has no daemon subcommand"}
    argv = [a.scprof, "daemon"] + a.daemon_args.split()
    err = tempfile.TemporaryFile("w+")
    d = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=err,
                         start_new_session=True)
    url, deadline = None, time.monotonic() + 10
    while url is None and time.monotonic() < deadline and d.poll() is None:
        time.sleep(0.1)
        err.seek(0)
        m = re.search(r"serving metrics at (http://\S+)", err.read())
        url = m.group(1) if m else None
    if url is None:
        try:
            stop(d)
        except BenchError:
            pass
        err.seek(0)
        return {"skipped": "`%s` did not start serving: %s" %
                (" ".join(argv), err.read().strip()[:200])}
    # Idle first: what the daemon costs with nothing but the machine's
    # own background (its latency windows and budget checks included).
    c0, t0 = proc_cpu_s(d.pid), time.monotonic()
    time.sleep(a.daemon_idle_seconds)
    idle_cpu = 100 * (proc_cpu_s(d.pid) - c0) / (time.monotonic() - t0)
    idle_rss = proc_mem_kb(d.pid).get("VmRSS")
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu),
                             str(a.daemon_seconds), "getppid"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    scrapes, scrape_bytes = 0, 0
    try:
        loop.stdout.readline()
        c0, t0 = proc_cpu_s(d.pid), time.monotonic()
        loop.stdin.write("go\n")
        loop.stdin.flush()
        # The loop prints when it is done; scrape meanwhile.
        while True:
            r, _, _ = select.select([loop.stdout], [], [], 5)
            if r:
                break
            with urllib.request.urlopen(url, timeout=5) as resp:
                scrape_bytes = len(resp.read())
                scrapes += 1
        tok = loop.stdout.readline().split()
        c1, t1 = proc_cpu_s(d.pid), time.monotonic()
        mem = proc_mem_kb(d.pid)
    finally:
        loop.stdin.close()
        loop.wait()
        try:
            stop(d)
        except BenchError:
            pass
    calls = int(tok[4])
    return {"argv": argv, "seconds": t1 - t0,
            "calls_per_s": calls / (t1 - t0),
            "cpu_percent": 100 * (c1 - c0) / (t1 - t0),
            "rss_kb": mem.get("VmRSS"), "peak_rss_kb": mem.get("VmHWM"),
            "idle_cpu_percent": idle_cpu, "idle_rss_kb": idle_rss,
            "scrapes": scrapes, "scrape_bytes": scrape_bytes}


# ---- per-program cost (bpf_stats) ---------------------------------------

def prog_stats_once(a, c, tmpdir):
    """One getppid loop under c with bpf_stats on: {prog: (runs, ns)} and
    the loop's call count."""
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu), str(a.seconds),
                             "getppid"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    tracer = None
    try:
        loop.stdout.readline()
        tracer = subprocess.Popen(
            c.argv(loop.pid, os.path.join(tmpdir, "ps.txt")),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        wait_attached(c, tracer, loop.pid, a.attach_timeout)
        with BpfStats():
            p0 = tracing_progs(tracer.pid)
            loop.stdin.write("go\n")
            loop.stdin.flush()
            tok = loop.stdout.readline().split()
            p1 = tracing_progs(tracer.pid)
        out = {}
        for i, p in p1.items():
            q = p0.get(i, {})
            out[p.get("name", str(i))] = (
                p.get("run_cnt", 0) - q.get("run_cnt", 0),
                p.get("run_time_ns", 0) - q.get("run_time_ns", 0))
        return out, int(tok[4])
    finally:
        if tracer is not None:
            try:
                stop(tracer)
            except BenchError:
                pass
        loop.stdin.close()
        loop.wait()


def prog_stats(a, cfgs, tmpdir):
    """Nanoseconds per BPF program run (bpf_stats), median over
    repetitions. The stats' own clock reads are in every figure: the empty
    floor program shows how much, and "above empty" takes it out. Only
    programs run about once per loop call (the syscall ones) count in a
    configuration's work per call."""
    samples = {}
    for rep in range(a.reps):
        for c in cfgs:
            # (the marked -C -a runs the same programs as -C -a)
            if c.attach != "bpf" or c.name == MARKED_C_A:
                continue
            log("  bpf_stats %d/%d: %s" % (rep + 1, a.reps, c.name))
            progs, calls = prog_stats_once(a, c, tmpdir)
            for name, (n, t) in progs.items():
                samples.setdefault(c.name, {}).setdefault(name, []).append(
                    (n, t, calls))
    empty = None
    for name, ss in samples.get("floor: empty sys_enter", {}).items():
        empty = med([t / n for n, t, _ in ss if n])
    out = {}
    for cname, progs in samples.items():
        rows, work = [], 0.0
        for pname, ss in sorted(progs.items()):
            per_run = [t / n for n, t, _ in ss if n]
            share = med([n / calls for n, _, calls in ss])
            ns = med(per_run) if per_run else None
            above = ns - empty if ns is not None and empty is not None \
                else None
            rows.append({"prog": pname, "runs_per_loop_call": share,
                         "ns_per_run": ns, "above_empty_ns": above})
            if above is not None and 0.5 <= share <= 2:
                work += above
        out[cname] = {"progs": rows, "work_per_call_ns": work,
                      "empty_ns_per_run": empty}
    return out


# ---- report ------------------------------------------------------------

def summarize(a, cfgs, res, added):
    bare = {k: med([r[k]["ns"] for r in res["bare"]]) for k in a.kinds}
    rows = [{"config": "bare", "kind": k, "median_ns": bare[k],
             "added_ns": 0.0, "added_min": 0.0, "added_max": 0.0,
             "ratio_bare": 1.0, "ratio_syscount_L": None}
            for k in a.kinds]
    ref = "syscount -L -p"
    for c in cfgs:
        for k in a.kinds:
            ad = added[c.name][k]
            rows.append({
                "config": c.name, "kind": k,
                "median_ns": med([r[k]["ns"] for r in res[c.name]]),
                "added_ns": med(ad), "added_min": min(ad),
                "added_max": max(ad),
                # Against the bare runs next to it, like added ns: other
                # people's probes come and go during a run.
                "ratio_bare": med([r[k]["ratio_to_neighbours"]
                                   for r in res[c.name]]),
                "ratio_syscount_L": None,
                # runs whose loop was marked by its end (Config.mark)
                "rcu_marked": sum(1 for r in res[c.name]
                                  if r[k].get("rcu_marked"))
                if c.mark else None,
                "runs": len(res[c.name])})
    for r in rows:
        r["over_floor"] = None
        c = next((c for c in cfgs if c.name == r["config"]), None)
        if c is None or c.floor is None:
            continue
        fl = [x["added_ns"] for x in rows if x["kind"] == r["kind"] and
              x["config"] == FLOORS[c.floor]]
        if fl:
            r["over_floor"] = (c.floor, r["added_ns"] - fl[0])
    for r in rows:
        refs = [x for x in rows if x["config"] == ref and
                x["kind"] == r["kind"]]
        if refs and refs[0]["added_ns"] > 0 and r["config"] != "bare":
            r["ratio_syscount_L"] = r["added_ns"] / refs[0]["added_ns"]
    return rows


def fmt_ns(v):
    if v >= 10000:
        return "%.1fk" % (v / 1000)
    return "%.0f" % v


def print_table(rows, kinds):
    print("%-30s %-7s %9s %24s %8s %10s %16s" % (
        "config", "syscall", "ns/call", "added ns (min..max)", "x bare",
        "x sc -L", "over floor (ns)"))
    print("-" * 109)
    for k in kinds:
        for r in rows:
            if r["kind"] != k:
                continue
            rng = "" if r["config"] == "bare" else "%s (%s..%s)" % (
                fmt_ns(r["added_ns"]), fmt_ns(r["added_min"]),
                fmt_ns(r["added_max"]))
            of = r.get("over_floor")
            print("%-30s %-7s %9s %24s %8.2f %10s %16s" % (
                r["config"], k, fmt_ns(r["median_ns"]), rng,
                r["ratio_bare"],
                "" if r["ratio_syscount_L"] is None else
                "%.2f" % r["ratio_syscount_L"],
                "" if of is None else "%+.0f %s" % (of[1], of[0])))
        print()


def mark_lines(rows, kinds):
    """Which configurations' loops were marked in their warm-up, and
    what the mark cost -C -a (marked less not, per kind)."""
    marked = {}
    for r in rows:
        if r.get("rcu_marked") is not None:
            marked.setdefault(r["config"], []).append(
                "%d/%d" % (r["rcu_marked"], r["runs"]))
    if not marked:
        return []
    out = ["loops marked in their warm-up (RCU Tasks Trace: the state a "
           "daemon's first closing window leaves its loop in), of each "
           "kind's runs: " + "; ".join(
               "%s %s" % (n, ", ".join(v)) for n, v in marked.items())]
    cost = []
    for k in kinds:
        m = [r["added_ns"] for r in rows if r["kind"] == k and
             r["config"] == MARKED_C_A]
        u = [r["added_ns"] for r in rows if r["kind"] == k and
             r["config"] == "scprof -C -a"]
        if m and u:
            cost.append("%s %+.0f" % (k, m[0] - u[0]))
    if cost:
        out.append("the mark, -C -a's long marked loops less its short "
                   "ones (ns a call): " + ", ".join(cost))
    return out


def check_targets(rows, kinds):
    """The issue's targets, on every syscall kind measured: (what, value,
    limit) with added ns medians."""
    def get(cfg, k):
        for r in rows:
            if r["config"] == cfg and r["kind"] == k:
                return r["added_ns"]
        return None
    out = []

    def add(name, cfg, ref, slack):
        v, r = get(cfg, k), get(ref, k)
        if v is not None and r is not None:
            out.append(("%s: %s" % (k, name), v, r + slack))

    for k in kinds:
        scl = get("syscount -L -p", k)
        full = get("scprof (full)", k)
        if full is not None and scl is not None:
            out.append(("%s: full <= syscount -L / 2" % k, full, scl / 2))
        fe, fp = "floor: empty sys_exit", "floor: empty sys_enter+exit"
        add("full <= floor-pair + 100", "scprof (full)", fp, 100)
        add("-a <= -p + 15", "scprof -a (full)", "scprof (full)", 15)
        add("-C <= floor-exit + 15", "scprof --count-only", fe, 15)
        add("-C -a <= -C -p + 10", "scprof -C -a", "scprof --count-only",
            10)
        add("-C -a <= floor-exit + 25", "scprof -C -a", fe, 25)
        # (both loops marked, when the reference ran: the daemon's first
        # closing window marks its loop midway, and a mark costs more
        # than the daemon's own work)
        if get(MARKED_C_A, k) is not None:
            add("daemon <= -C -a + 20 (both marked)",
                "scprof daemon (defaults)", MARKED_C_A, 20)
        else:
            add("daemon <= -C -a + 20", "scprof daemon (defaults)",
                "scprof -C -a", 20)
        add("non-target (full) <= floor-pair + 10",
            "scprof -p other (non-target)", fp, 10)
        add("non-target (-C) <= floor-exit + 10",
            "scprof -C -p other (non-target)", fe, 10)
    return out



# ---- the section: run, then report from its record ------------------------

def run(a, cfgs, tmp, other_pid):
    """Measure the loops: the section's record (what bench.json holds)."""
    log("bench: loops: %d configurations x %d repetitions, %gs per loop"
        % (len(cfgs), a.reps, a.seconds))
    res, added = run_matrix(a, cfgs, tmp)
    rows = summarize(a, cfgs, res, added)
    startup = true_e2e = None
    if not a.no_startup:
        log("bench: scprof startup and -- /bin/true")
        startup = scprof_startup(a, other_pid)
        true_e2e = scprof_true(a)
    pstats = None if a.no_prog_stats else prog_stats(a, cfgs, tmp)
    log("bench: daemon")
    daemon = daemon_row(a)
    foreign = max(r[k]["foreign_probes"] for v in res.values() for r in v
                  for k in a.kinds)
    targets = check_targets(rows, a.kinds)
    return {"reps": a.reps, "seconds": a.seconds,
            "long_seconds": a.long_seconds, "cpu": a.cpu,
            "kinds": a.kinds, "stat": a.stat, "rows": rows, "raw": res,
            "added": added,
            "targets": [{"target": n, "value": v, "limit": l,
                         "ok": v <= l} for n, v, l in targets],
            "startup_s": startup, "true_e2e_s": true_e2e,
            "daemon": daemon, "prog_stats": pstats,
            "foreign_probes": foreign}


def report(sec):
    """The loops' text report, from the section's record."""
    rows, kinds = sec["rows"], sec["kinds"]
    print("loops pinned to CPU %d, %gs per loop, %d repetitions, "
          "interleaved with bare runs; ns/call: %s\n" % (
              sec["cpu"], sec["seconds"], sec["reps"],
              "median over batches of 256 calls" if
              sec["stat"] == "batch_median_ns" else "mean over the run"))
    print_table(rows, kinds)
    if sec["foreign_probes"]:
        print("warning: up to %d BPF tracing programs of other processes "
              "were loaded during runs: bare is not bare\n" %
              sec["foreign_probes"])
    if sec["targets"]:
        print("Targets (added ns, median):")
        for t in sec["targets"]:
            print("  %-42s %7.0f <= %7.0f  %s" % (
                t["target"], t["value"], t["limit"],
                "ok" if t["ok"] else "MISSED"))
        for line in mark_lines(rows, kinds):
            print("  " + line)
        for k in kinds:
            f2 = [r["added_ns"] for r in rows if r["kind"] == k and
                  r["config"] == FLOORS["pair"]]
            fl = [r["added_ns"] for r in rows if r["kind"] == k and
                  r["config"] == FLOORS["enter"]]
            if f2 and fl:
                print("  %s: a second (empty) program, on sys_exit, adds "
                      "%.0f ns by itself" % (k, f2[0] - fl[0]))
        print()
    startup, true_e2e = sec["startup_s"], sec["true_e2e_s"]
    if startup:
        print("scprof startup, exec -> attached: median %.1f ms (%.1f..%.1f)"
              "  target <= 50 ms: %s" % (
                  med(startup) * 1e3, min(startup) * 1e3, max(startup) * 1e3,
                  "ok" if med(startup) <= 0.05 else "MISSED"))
        print("scprof -- /bin/true, end to end: median %.1f ms (%.1f..%.1f)"
              "  target < 200 ms: %s" % (
                  med(true_e2e) * 1e3, min(true_e2e) * 1e3,
                  max(true_e2e) * 1e3,
                  "ok" if med(true_e2e) < 0.2 else "MISSED"))
    daemon = sec["daemon"]
    if "skipped" in daemon:
        print("scprof daemon: skipped (%s)" % daemon["skipped"])
    else:
        print("scprof daemon (%s) with a loop at %.0f calls/s for %.0f s, "
              "scraped %d times: %.2f%% of a CPU, RSS %s KiB (peak %s KiB); "
              "idle: %.2f%% of a CPU, RSS %s KiB"
              % (" ".join(daemon["argv"][2:]) or "defaults",
                 daemon["calls_per_s"], daemon["seconds"], daemon["scrapes"],
                 daemon["cpu_percent"], daemon["rss_kb"],
                 daemon["peak_rss_kb"], daemon["idle_cpu_percent"],
                 daemon["idle_rss_kb"]))
    pstats = sec["prog_stats"]
    if pstats:
        empty = next(iter(pstats.values()))["empty_ns_per_run"]
        print("\nBPF programs, ns per run (bpf_stats, median of %d; getppid "
              "loop; the stats' own cost, %s ns, is what the empty program "
              "shows):" % (sec["reps"],
                           "?" if empty is None else "%.1f" % empty))
        print("  %-32s %-15s %9s %8s %12s" % ("config", "program",
                                             "runs/call", "ns/run",
                                             "above empty"))
        for name, v in pstats.items():
            for p in v["progs"]:
                print("  %-32s %-15s %9.2f %8s %12s" % (
                    name, p["prog"], p["runs_per_loop_call"],
                    "-" if p["ns_per_run"] is None else
                    "%.1f" % p["ns_per_run"],
                    "-" if p["above_empty_ns"] is None else
                    "%.1f" % p["above_empty_ns"]))
        print("  work per loop call above empty programs (syscall programs "
              "only):")
        for name, v in pstats.items():
            print("    %-32s %6.1f ns" % (name, v["work_per_call_ns"]))
    print()


FLOOR_WORDS = {"enter": "floor-enter", "exit": "floor-exit",
               "pair": "floor-pair"}


def markdown(sec):
    """The loops' results as markdown (docs/overhead.md's "A run on this
    machine"), from the section's record."""
    rows, foreign = sec["rows"], sec["foreign_probes"]
    out = ["The loops: %d repetitions of %g s loops interleaved with bare "
           "runs; added ns is the median over repetitions (min-max)%s." % (
               sec["reps"], sec["seconds"],
               "; up to %d BPF tracing programs of other processes were "
               "loaded during runs" % foreign if foreign else ""), ""]
    for k in sec["kinds"]:
        out += ["The %s loop:" % k, "",
                "| config | ns/call | added ns (min-max) | x bare | "
                "over its floor |", "| --- | ---: | ---: | ---: | ---: |"]
        for r in rows:
            if r["kind"] != k:
                continue
            of = r.get("over_floor")
            out.append("| %s | %s | %s | %.2f | %s |" % (
                r["config"], fmt_ns(r["median_ns"]),
                "" if r["config"] == "bare" else "%s (%s-%s)" % (
                    fmt_ns(r["added_ns"]), fmt_ns(r["added_min"]),
                    fmt_ns(r["added_max"])),
                r["ratio_bare"],
                "" if of is None else "%+.0f (%s)" % (
                    of[1], FLOOR_WORDS[of[0]])))
        out.append("")
    if sec["targets"]:
        out += ["| target (added ns, median) | this run | limit | |",
                "| --- | ---: | ---: | --- |"]
        for t in sec["targets"]:
            out.append("| %s | %.0f | %.0f | %s |" % (
                t["target"], t["value"], t["limit"],
                "met" if t["ok"] else "**missed**"))
        out.append("")
    marks = mark_lines(rows, sec["kinds"])
    if marks:
        out += [(m[0].upper() + m[1:] + ".") for m in marks] + [""]
    startup, true_e2e = sec["startup_s"], sec["true_e2e_s"]
    if startup:
        out.append("Startup, exec to attached: %.0f ms (target <= 50 ms: "
                   "%s); `scprof -- /bin/true` end to end: %.0f ms." % (
                       med(startup) * 1e3,
                       "met" if med(startup) <= 0.05 else "**missed**",
                       med(true_e2e) * 1e3))
    daemon = sec["daemon"]
    if daemon and "skipped" not in daemon:
        out.append("`scprof daemon` (defaults, the whole machine): idle, "
                   "%.2f%% of a CPU and %s KiB resident; with the loop at "
                   "%.1f million calls/s for %.0f s, scraped every 5 s, "
                   "%.2f%% of a CPU, %s KiB resident (peak %s KiB)." % (
                       daemon["idle_cpu_percent"], daemon["idle_rss_kb"],
                       daemon["calls_per_s"] / 1e6, daemon["seconds"],
                       daemon["cpu_percent"], daemon["rss_kb"],
                       daemon["peak_rss_kb"]))
    pstats = sec["prog_stats"]
    if pstats:
        out += ["", "Work per loop call above the empty programs "
                "(`bpf_stats`, syscall programs, same run): " +
                ", ".join("%s %.1f ns" % (n, v["work_per_call_ns"])
                          for n, v in pstats.items()
                          if not n.startswith("floor")) + "."]
    return "\n".join(out) + "\n"

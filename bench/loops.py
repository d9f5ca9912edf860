# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""loops: what a syscall costs a pinned C loop (bench/sysloop.c: getppid,
a 1-byte read of /dev/zero, a 1-byte write to /dev/null) bare and under
each probe, in ns a call, against the floors (empty programs) and the
peers; and `scprof -- /bin/true` end to end.

Each probed run sits right after a bare run, a repetition ends with one,
and the order rotates between repetitions. A run's added ns is its figure
less the faster of the bare runs on its sides (noise only slows a run
down; a bare run slowed as a whole would take its cost off both
neighbours' figures with their mean).
"""
import subprocess
import time

from probes import (FLOORS, BenchError, Running, foreign_probes, log,
                    md_table, med, spread)

SHORT = {v: "floor-" + k for k, v in FLOORS.items()}
# The targets (#21), on added ns: (config, reference, factor,
# slack): config <= reference x factor + slack.
TARGETS = [
    ("scprof -p", "syscount -L -p", 0.5, 0),
    ("scprof -p", FLOORS["pair"], 1, 100),
    ("scprof -a", "scprof -p", 1, 15),
    ("scprof -C -p", FLOORS["exit"], 1, 15),
    ("scprof -C -a", FLOORS["exit"], 1, 25),
    ("scprof -p other (non-target)", FLOORS["pair"], 1, 10),
    ("scprof -C -p other (non-target)", FLOORS["exit"], 1, 10),
]


def run_once(a, cfg, tmp, kinds=None, secs=None, hook=None):
    """One sysloop run, bare (cfg None) or under a probe: {kind: result};
    "ns" is the median over batches of 256 calls, "mean_ns" the run's
    mean. hook(when, running probe or None) is called with "go"
    as the loop starts its warm-up and "end" once it is done, the probe
    still attached."""
    kinds = kinds or a.kinds
    loop = subprocess.Popen([a.bin + "/sysloop", str(a.cpu),
                             str(secs or a.seconds), ",".join(kinds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)

    def timed(t=None):
        loop.stdin.write("go\n")
        loop.stdin.flush()
        if hook:
            hook("go", t)
        res = {}
        for _ in kinds:
            tok = loop.stdout.readline().split()
            if len(tok) != 5:
                raise BenchError("sysloop: bad result line %r" % tok)
            res[tok[0]] = {"mean_ns": float(tok[1]), "ns": float(tok[2]),
                           "timed": int(tok[3]), "total": int(tok[4])}
        if hook:
            hook("end", t)
        return res
    try:
        if loop.stdout.readline().strip() != "ready":
            raise BenchError("sysloop did not start")
        if cfg is None:
            res = timed()
            foreign = foreign_probes(())
        else:
            with Running(cfg, loop.pid, tmp) as t:
                foreign = foreign_probes((t.proc.pid,))
                res = timed(t)
                text = t.finish()
            t.check_seen(text, {k: r["total"] for k, r in res.items()},
                         "the loop's calls")
        for r in res.values():
            r["foreign_probes"] = foreign
        return res
    finally:
        loop.stdin.close()
        loop.wait()


def retried(fn, what):
    """fn(), tried again up to twice on a BenchError (a probe that did
    not attach in time on a loaded machine)."""
    for tries in range(3):
        try:
            return fn()
        except BenchError as e:
            if tries == 2:
                raise
            log("  retrying %s: %s" % (what, str(e).splitlines()[0]))


def interleaved(cfgs, run, what, reps):
    """bare, A, bare, B, ..., bare for each repetition, the order rotated:
    (the bare runs in order, {name: [(bare before, run, bare after)]})."""
    bare, runs = [], {c.name: [] for c in cfgs}
    for rep in range(reps):
        bare.append(run(None))
        for c in cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]:
            log("  %s, rep %d/%d: %s" % (what, rep + 1, reps, c.name))
            r = retried(lambda c=c: run(c), c.name)
            bare.append(run(None))
            runs[c.name].append((bare[-2], r, bare[-1]))
    return bare, runs


def summarize(kinds, cfgs, bare, runs):
    """Rows of (config, kind) against this run's figures: added ns
    (against the faster bare neighbour), x_bare (ns a call over bare),
    over_floor and x_floor (added ns less and over its floor's); and the
    targets."""
    rows = [{"config": "bare", "kind": k,
             "ns": med([r[k]["ns"] for r in bare])} for k in kinds]
    by = {("bare", r["kind"]): r for r in rows}
    for c in cfgs:
        for k in kinds:
            r = by[(c.name, k)] = {
                "config": c.name, "kind": k, "floor": c.floor,
                "ns": med([x[k]["ns"] for _, x, _ in runs[c.name]]),
                "added": spread([x[k]["ns"] - min(pre[k]["ns"], post[k]["ns"])
                                 for pre, x, post in runs[c.name]])}
            rows.append(r)
    for r in rows[len(kinds):]:
        add = r["added"]["median"]
        fl = by.get((FLOORS.get(r["floor"]), r["kind"]))
        fl = fl and fl["added"]["median"]
        r["x_bare"] = 1 + add / by[("bare", r["kind"])]["ns"]
        r["over_floor"] = None if fl is None else add - fl
        r["x_floor"] = add / fl if fl and fl > 0 else None
    targets = []
    for k in kinds:
        for cfg, ref, factor, slack in TARGETS:
            if (cfg, k) in by and (ref, k) in by:
                v = by[(cfg, k)]["added"]["median"]
                limit = by[(ref, k)]["added"]["median"] * factor + slack
                name = "%s: %s <= %s%s%s" % (
                    k, cfg, "" if factor == 1 else "%g x " % factor,
                    SHORT.get(ref, ref), " + %g" % slack if slack else "")
                targets.append({"target": name, "value": v, "limit": limit,
                                "ok": v <= limit})
    return rows, targets


def scprof_true(a):
    """`scprof -- /bin/true` end to end, seconds, a few times."""
    times = []
    for _ in range(2 * a.reps):
        t0 = time.monotonic()
        if subprocess.run([a.scprof, "--", "/bin/true"],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode:
            raise BenchError("scprof -- /bin/true failed")
        times.append(time.monotonic() - t0)
    return spread(times)


def run(a, cfgs, tmp):
    cfgs = [c for c in cfgs if "loops" in c.sections]
    log("bench: loops: %d configurations x %d repetitions, %g s a loop" % (
        len(cfgs), a.reps, a.seconds))
    bare, runs = interleaved(cfgs, lambda c: run_once(a, c, tmp), "loops",
                             a.reps)
    rows, targets = summarize(a.kinds, cfgs, bare, runs)
    return {"reps": a.reps, "seconds": a.seconds, "cpu": a.cpu,
            "kinds": a.kinds, "rows": rows, "targets": targets,
            "true_s": scprof_true(a),
            "foreign_probes": max(r[k]["foreign_probes"] for r in bare +
                                  [r for v in runs.values() for _, r, _ in v]
                                  for k in a.kinds)}


def fmt_ns(v):
    return "%.1fk" % (v / 1000) if v >= 10000 else "%.0f" % v


def table(sec, kind):
    """One loop's rows: config, ns a call, added ns (min-max), x bare, ns
    over its floor, x its floor's added ns."""
    out = []
    for r in sec["rows"]:
        if r["kind"] != kind:
            continue
        if r["config"] == "bare":
            out.append(["bare", fmt_ns(r["ns"]), "", "1.00", "", ""])
            continue
        ad, of, xf = r["added"], r["over_floor"], r["x_floor"]
        out.append([r["config"], fmt_ns(r["ns"]), "%s (%s-%s)" % (
            fmt_ns(ad["median"]), fmt_ns(ad["min"]), fmt_ns(ad["max"])),
            "%.2f" % r["x_bare"],
            "" if of is None else "%+.0f (%s)" % (of, SHORT[FLOORS[
                r["floor"]]]), "" if xf is None else "%.2f" % xf])
    return out


def markdown(sec):
    out = ["**Loops** (a pinned loop's ns a call, the median batch of 256 "
           "calls, median over %d repetitions of %g s runs on CPU %d; "
           "*added ns* over its bare neighbours (min-max); *x bare*: ns a "
           "call over bare; *over its floor*: added ns over the empty "
           "programs' (floor-enter, floor-exit, floor-pair) in this run; *x "
           "floor*: added ns over theirs%s):" % (
               sec["reps"], sec["seconds"], sec["cpu"],
               "; up to %d BPF tracing programs of other processes were "
               "attached during runs: bare is not bare" %
               sec["foreign_probes"] if sec["foreign_probes"] else ""), ""]
    for k in sec["kinds"]:
        out += ["The %s loop:" % k, ""] + md_table(
            ["config", "ns/call", "added ns (min-max)", "x bare",
             "over its floor", "x floor"], table(sec, k)) + [""]
    missed = [t for t in sec["targets"] if not t["ok"]]
    out += ["Targets (added ns, median, against this run's floors and "
            "peers): %d of %d met%s." % (
                len(sec["targets"]) - len(missed), len(sec["targets"]),
                "; missed: " + "; ".join("%s (%.0f, limit %.0f)" % (
                    t["target"], t["value"], t["limit"]) for t in missed)
                if missed else ""),
            "`scprof -- /bin/true` end to end: %.0f ms (%.0f-%.0f)." % tuple(
                sec["true_s"][k] * 1e3 for k in ("median", "min", "max")),
            ""]
    return "\n".join(out)

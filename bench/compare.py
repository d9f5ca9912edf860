# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Regressions: this run against a saved one (`--baseline FILE`).

Each section gives figures where more is dearer and which depend on the
machine's speed no more than they must: the loops' ns over each
configuration's floor (measured in the same run), the services' share of
requests/s a probe costs (1 - ratio), the split's added share, the
daemon's ns over -C -a, and its CPU and bpf() calls per process started
under churn. A figure is *dearer* when it grew by more than the threshold
(15%), by more than a figure's own minimum and by more than the two runs'
noise together; one dearer within the noise is listed apart and does not
fail the run. The loops are compared only when their floors are within a
tolerance of the baseline's (another CPU, kernel or neighbour moves them,
and every other figure with them).
"""
import datetime
import json

from probes import FLOORS, BenchError
from split import services_split

THRESHOLD = 0.15  # dearer by more than this share (and the noise)
FLOOR_TOLERANCE = 0.25  # the loops compared only with floors this close


def fig(value, noise, unit, least, floor=False):
    return {"value": value, "noise": noise, "unit": unit, "min": least,
            "floor": floor}


def half_range(s):
    return (s["max"] - s["min"]) / 2


def ours(config):
    """Figures of the floors and of scprof's configurations: the peers'
    say nothing of scprof."""
    return config in FLOORS.values() or config.startswith("scprof")


def values(doc):
    """{key: figure} of a result (bench.json) or of a baseline file."""
    if "values" in doc:
        return doc["values"]
    out = {}
    loops = doc.get("loops")
    if loops:
        by = {(r["config"], r["kind"]): r for r in loops["rows"]}
        for r in loops["rows"]:
            if not ours(r["config"]):
                continue
            key = "loops/%s/%s" % (r["kind"], r["config"])
            noise = half_range(r["added"])
            if r["config"] in FLOORS.values():
                out[key] = fig(r["added"]["median"], noise, "ns", 3, True)
            elif r.get("over_floor") is not None:
                noise += half_range(by[(FLOORS[r["floor"]], r["kind"])]
                                    ["added"])
                out[key] = fig(r["over_floor"], noise, "ns over floor", 3)
            else:
                out[key] = fig(r["added"]["median"], noise, "ns", 3)
    svc = doc.get("services")
    for wname, wl in (svc or {}).get("workloads", {}).items():
        for r in filter(lambda r: ours(r["config"]), wl["rows"]):
            out["services/%s/%s" % (wname, r["config"])] = fig(
                1 - r["ratio"]["median"], max(wl["noise"],
                                              half_range(r["ratio"])),
                "share of requests/s", 0.02,
                r["config"] in FLOORS.values())
    for wname, s in services_split(svc).items():
        out["split/%s" % wname] = fig(1 - s["ratio"]["median"], max(
            s["noise"], half_range(s["ratio"])), "share of requests/s", 0.02)
    sp = doc.get("split")
    if sp:
        out["split/sched pipe"] = fig(sp["ratio"]["median"] - 1,
                                      half_range(sp["ratio"]),
                                      "share of CPU time", 0.02)
    b = doc.get("budget")
    if b:
        out["budget/daemon over -C -a"] = fig(
            b["over_c_a_ns"], half_range(b["added"]) +
            half_range(b["c_a_added"]), "ns", 3)
    c = doc.get("churn")
    if c:
        out["churn/daemon CPU per process"] = fig(
            c["cpu_us_per_process"]["median"],
            half_range(c["cpu_us_per_process"]), "us", 1)
        out["churn/daemon bpf() per process"] = fig(
            c["bpf_per_process"]["median"], half_range(c["bpf_per_process"]),
            "calls", 0.2)
    return out


def baseline_text(doc, git_rev):
    """What --save-baseline writes: one figure a line."""
    head = {"what": "scprof `make bench` baseline (bench/compare.py): "
            "value, noise, unit, least difference that counts, floor",
            "host": doc["host"], "git": git_rev,
            "date": datetime.date.today().isoformat()}
    vals = values(doc)
    lines = ["  %s: %s" % (json.dumps(k), json.dumps(
        [round(v["value"], 4), round(v["noise"], 4), v["unit"], v["min"],
         v["floor"]])) for k, v in sorted(vals.items())]
    return json.dumps(head, indent=1)[:-2] + ',\n "values": {\n' + \
        ",\n".join(lines) + "\n }\n}\n"


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("cannot read %s: %s" % (path, e))
    if isinstance(next(iter(doc.get("values", {}).values()), None), list):
        doc["values"] = {k: fig(*v) for k, v in doc["values"].items()}
    return doc


def compare(cur_doc, base_doc):
    """{"notes", "dearer", "within_noise", "cheaper": [(key, base, cur,
    unit)], "compared"}."""
    cur, base = values(cur_doc), values(base_doc)
    res = {"notes": [], "dearer": [], "within_noise": [], "cheaper": [],
           "compared": 0}
    hc, hb = cur_doc.get("host", {}), base_doc.get("host", {})
    if hc.get("cpu") != hb.get("cpu"):
        res["notes"].append("the baseline is from %r, this run from %r" % (
            hb.get("cpu"), hc.get("cpu")))
    off = set()  # loop kinds whose floors moved
    for key, v in cur.items():
        if key.startswith("loops/") and v["floor"] and key in base:
            b = base[key]["value"]
            if b > 0 and abs(v["value"] / b - 1) > FLOOR_TOLERANCE:
                off.add(key.split("/")[1])
                res["notes"].append(
                    "%s: %.0f ns here, %.0f in the baseline: the %s loop is "
                    "not compared" % (key, v["value"], b, key.split("/")[1]))
    for key, v in sorted(cur.items()):
        if key not in base or v["floor"] or \
                (key.startswith("loops/") and key.split("/")[1] in off):
            continue
        b = base[key]
        res["compared"] += 1
        item = (key, b["value"], v["value"], v["unit"])
        diff = v["value"] - b["value"]
        big = max(THRESHOLD * abs(b["value"]), v["min"])
        if diff > big:
            res["dearer" if diff > v["noise"] + b["noise"]
                else "within_noise"].append(item)
        elif -diff > big:
            res["cheaper"].append(item)
    return res


def report(res, path):
    print("against the baseline %s (dearer: by more than %.0f%% and more "
          "than the noise; %d figures compared):" % (
              path, 100 * THRESHOLD, res["compared"]))
    for n in res["notes"]:
        print("  note: " + n)
    for title, items in (("DEARER", res["dearer"]),
                         ("dearer, within the noise", res["within_noise"]),
                         ("cheaper", res["cheaper"])):
        for key, b, c, unit in items:
            print("  %-26s %-50s %9.3g -> %9.3g %s" % (title + ":", key, b,
                                                       c, unit))
    if not (res["dearer"] or res["within_noise"] or res["cheaper"]):
        print("  no figure moved by more than %.0f%%" % (100 * THRESHOLD))
    print()

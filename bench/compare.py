# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Regressions: this run against a saved one (`--baseline FILE`).

What is compared is what does not depend on the machine's speed more than
it must: for the loops, each configuration's ns over its floor (measured
in the same run), for the services the share of requests/s a probe costs
(1 - ratio). A configuration is *dearer* when that grows by more than the
threshold (15%) and by more than the two runs' noise together; one dearer
by 15% but within the noise is listed apart and does not fail the run.
The loops are compared only when the floors are within a tolerance of the
baseline's (another CPU, kernel or neighbour moves them, and with them
every other figure).
"""
import datetime
import json
import os

from probes import FLOORS, BenchError

# Differences too small to mean anything, whatever the noise says.
MIN_NS = 3.0
MIN_SHARE = 0.02


def values(doc):
    """{key: {"value", "noise", "unit", "floor"}} of a result (bench.json)
    or a baseline file (which holds them already)."""
    if "values" in doc:
        return doc["values"]
    out = {}
    loops = doc.get("loops")
    if loops:
        added = {(r["config"], r["kind"]): r for r in loops["rows"]}
        for r in loops["rows"]:
            if r["config"] == "bare":
                continue
            noise = (r["added_max"] - r["added_min"]) / 2
            key = "loops/%s/%s" % (r["kind"], r["config"])
            if r["config"] in FLOORS.values():
                out[key] = {"value": r["added_ns"], "noise": noise,
                            "unit": "ns", "floor": True}
                continue
            of = r.get("over_floor")
            fl = added.get((FLOORS[of[0]], r["kind"])) if of else None
            if fl:
                noise += (fl["added_max"] - fl["added_min"]) / 2
            out[key] = {"value": of[1] if of else r["added_ns"],
                        "noise": noise, "unit": "ns over floor" if of else
                        "ns", "floor": False}
    svc = doc.get("services")
    if svc:
        for wname, wl in svc["workloads"].items():
            for r in wl["rows"]:
                noise = max(wl["noise"] or 0,
                            (r["ratio_max"] - r["ratio_min"]) / 2)
                out["services/%s/%s" % (wname, r["config"])] = {
                    "value": 1 - r["ratio"], "noise": noise,
                    "unit": "share of requests/s",
                    "floor": r["config"] in FLOORS.values()}
    return out


def baseline_doc(doc, git_rev):
    """What --save-baseline writes: the values, and where they come from."""
    return {"what": "scprof `make bench` baseline: loops in ns over each "
            "configuration's floor, services as the share of requests/s "
            "a probe costs (1 - traced/untraced)",
            "host": doc["host"], "git": git_rev,
            "date": datetime.date.today().isoformat(),
            "values": values(doc)}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("cannot read %s: %s" % (path, e))


def compare(cur_doc, base_doc, threshold, floor_tol):
    """{"notes": [...], "dearer": [...], "within_noise": [...],
    "cheaper": [...]}; each item (key, base, cur, unit)."""
    cur, base = values(cur_doc), values(base_doc)
    res = {"notes": [], "dearer": [], "within_noise": [], "cheaper": [],
           "compared": 0}
    hc, hb = cur_doc.get("host", {}), base_doc.get("host", {})
    if hc.get("cpu") != hb.get("cpu"):
        res["notes"].append("the baseline is from %r, this run from %r: "
                            "figures over floor compared all the same" % (
                                hb.get("cpu"), hc.get("cpu")))
    # The loops' floors gate their kind's comparison.
    off_kinds = set()
    for key, v in cur.items():
        if not (key.startswith("loops/") and v["floor"]) or key not in base:
            continue
        b = base[key]["value"]
        if b > 0 and abs(v["value"] / b - 1) > floor_tol:
            kind = key.split("/")[1]
            off_kinds.add(kind)
            res["notes"].append(
                "%s: %.0f ns here, %.0f in the baseline (over %.0f%% apart): "
                "the %s loop is not compared" % (
                    key, v["value"], b, 100 * floor_tol, kind))
    for key, v in sorted(cur.items()):
        if key not in base or v["floor"]:
            continue
        if key.startswith("loops/") and key.split("/")[1] in off_kinds:
            continue
        b, c = base[key], v["value"]
        res["compared"] += 1
        item = (key, b["value"], c, v["unit"])
        small = MIN_NS if key.startswith("loops/") else MIN_SHARE
        diff = c - b["value"]
        if diff > threshold * abs(b["value"]) and diff > small:
            if diff > v["noise"] + b["noise"]:
                res["dearer"].append(item)
            else:
                res["within_noise"].append(item)
        elif -diff > threshold * abs(b["value"]) and -diff > small:
            res["cheaper"].append(item)
    return res


def fmt(item):
    key, b, c, unit = item
    if unit.startswith("ns"):
        return "%-58s %8.0f -> %8.0f %s" % (key, b, c, unit)
    return "%-58s %8.2f -> %8.2f %s" % (key, b, c, unit)


def report(res, path, threshold):
    print("Against the baseline %s (dearer: more than %.0f%% and more "
          "than the noise; %d figures compared):" % (
              path, 100 * threshold, res["compared"]))
    for n in res["notes"]:
        print("  note: " + n)
    for title, items in (("DEARER", res["dearer"]),
                         ("dearer, within the noise", res["within_noise"]),
                         ("cheaper", res["cheaper"])):
        for it in items:
            print("  %-26s %s" % (title + ":", fmt(it)))
    if not (res["dearer"] or res["within_noise"] or res["cheaper"]):
        print("  no figure moved by more than %.0f%%" % (100 * threshold))
    print()

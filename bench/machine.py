# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The machine section: what this hardware and kernel charge for the seed
experiments' operations, from one quick `scprof calibrate` (no probe).

These are properties of the machine, not of scprof, so no test asserts
them (tests/e2e/test_calibrate.py checks only that each loop makes the
calls it names): they are reported here, as ratios within the one run,
beside the physical expectation each is read against. A ratio outside its
expectation is flagged, not an error: it says something about the machine
(an AMD EPYC VM gave mmap-copy 16 KiB / 4 KiB per byte = 1.67, an Intel
one ~1.0).
"""
import json
import os
import subprocess

from probes import BenchError, log

# (name, numerator, denominator, per: "call" or "byte", low, high, reading)
# low and high bound the physical expectation (None: unbounded).
RATIOS = [
    ("vDSO clock_gettime / getppid", "vdso-clock_gettime",
     "syscall-getppid", "call", None, 0.5,
     "the vDSO answers without crossing into the kernel"),
    ("libc getpid / getppid", "libc-getpid", "syscall-getppid", "call",
     0.5, None, "a real crossing costs about the floor"),
    ("read 1 B / read 64 KiB, per byte", "read-1B", "read-64KiB", "byte",
     100, None, "the crossing dominates a 1-byte read"),
    ("read 64 KiB / read 1 B, per call", "read-64KiB", "read-1B", "call",
     1, None, "copying 64 KiB costs something"),
    ("getrandom buffered / unbuffered", "getrandom-16B-buffered",
     "getrandom-16B", "call", None, 0.5, "buffering saves most crossings"),
    ("fopen+fread+fclose / getrandom", "fopen-fread-fclose-16B",
     "getrandom-16B", "call", 2, None, "a file per request is dear"),
    ("read-copy 16 KiB / 4 KiB, per byte", "read-copy-16KiB",
     "read-copy-4KiB", "byte", None, 1, "fewer crossings per byte"),
    ("mmap-copy 16 KiB / 4 KiB, per byte", "mmap-copy-16KiB",
     "mmap-copy-4KiB", "byte", 0.5, 1.5,
     "no crossing: the copy's cost per byte, whatever the block"),
]


def run(a, tmp):
    """One quick calibration without the probe: its loops by name."""
    out = os.path.join(tmp, "calibrate.json")
    log("bench: machine: scprof calibrate --quick --no-probe")
    p = subprocess.run([a.scprof, "calibrate", "--quick", "--no-probe",
                        "--no-save", "--format", "json", "-o", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=600, check=False)
    if p.returncode != 0:
        raise BenchError("scprof calibrate failed: %s" % p.stderr.strip())
    with open(out) as f:
        doc = json.load(f)
    return {"loops": doc["loops"], "ratios": ratios(doc["loops"])}


def ratios(loops):
    """Each ratio of RATIOS that the loops allow, with its expectation."""
    by = {l["name"]: l for l in loops}
    res = []
    for name, num, den, per, low, high, reading in RATIOS:
        if num not in by or den not in by:
            continue
        key = "ns_per_" + per
        a, b = by[num].get(key), by[den].get(key)
        if not a or not b:
            continue
        r = a / b
        res.append({"name": name, "ratio": r, "low": low, "high": high,
                    "reading": reading,
                    "expected": (low is None or r > low) and
                    (high is None or r < high)})
    return res


def expectation(low, high):
    if low is not None and high is not None:
        return "%g-%g" % (low, high)
    return "> %g" % low if low is not None else "< %g" % high


def report(m):
    print("The machine (scprof calibrate --quick, ratios in one run):")
    for r in m["ratios"]:
        print("  %-38s %9.3f  expected %-8s %s%s" % (
            r["name"], r["ratio"], expectation(r["low"], r["high"]),
            r["reading"], "" if r["expected"] else "  <- unlike most machines"))
    print()

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof calibrate, end to end.

The figures are this machine's, under whatever else runs on it: the tests
check what scprof guarantees (every loop with its figures, the calls each
loop makes, the probe effect's parts, the cache), never how fast the
machine is; the calibration's own report shows that.
"""
import json
import os
import platform
import tempfile

import pytest

from conftest import (SCPROF, TIMEOUT, counts, run_scprof, scprof_json,
                      stderr_lines)

LONG = 3 * TIMEOUT  # a quick calibration on a busy machine

LOOPS = [
    "syscall-getppid", "libc-getpid", "vdso-clock_gettime",
    "read-1B", "read-64KiB", "write-1B-devnull",
    "read-copy-4KiB", "mmap-copy-4KiB", "read-copy-8KiB", "mmap-copy-8KiB",
    "read-copy-16KiB", "mmap-copy-16KiB",
    "getrandom-16B", "getrandom-16B-buffered", "fopen-fread-fclose-16B",
]
BYTES = {
    "read-1B": 1, "read-64KiB": 65536, "write-1B-devnull": 1,
    "read-copy-4KiB": 4096, "mmap-copy-4KiB": 4096,
    "read-copy-8KiB": 8192, "mmap-copy-8KiB": 8192,
    "read-copy-16KiB": 16384, "mmap-copy-16KiB": 16384,
    "getrandom-16B": 16, "getrandom-16B-buffered": 16,
    "fopen-fread-fclose-16B": 16,
}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One quick calibration, in JSON, saved to a private cache file."""
    d = tmp_path_factory.mktemp("calibrate")
    cache, out = str(d / "cal.json"), str(d / "out.json")
    proc = run_scprof(["calibrate", "--quick", "--format", "json", "-o", out,
                       "--cache", cache], timeout=LONG)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    with open(out) as f:
        report = json.load(f)
    return {"report": report, "cache": cache, "dir": str(d),
            "loops": {l["name"]: l for l in report["loops"]}}


def test_every_loop_with_its_figures(quick):
    loops = quick["report"]["loops"]
    assert [l["name"] for l in loops] == LOOPS
    for l in loops:
        for key in ("ns_per_call", "min_ns", "median_ns", "max_ns", "calls"):
            assert key in l, f"{l['name']} has no {key}"
        assert l["calls"] > 0
        assert 0 < l["min_ns"] <= l["median_ns"] <= l["max_ns"], l
        assert l["ns_per_call"] == l["median_ns"]
        if l["name"] in BYTES:
            assert l["bytes_per_call"] == BYTES[l["name"]]
            assert l["ns_per_byte"] == pytest.approx(
                l["ns_per_call"] / BYTES[l["name"]], rel=1e-3)
        else:
            assert "ns_per_byte" not in l


# What each loop makes per call, by the syscall counts of a profile of the
# calibration (scprof -f around scprof calibrate). How fast this machine
# does them is no test's business. At least one call per timed call where the loop
# crosses; for the loops that must not cross per call, at most one per
# 100 calls (their setup: a 16 MiB file written and read in 64 KiB
# blocks, an mmap per pass over it, a 4 KiB getrandom pool per 256 calls).
CROSSES = [
    (["syscall-getppid", "libc-getpid", "write-1B-devnull", "getrandom-16B",
      "fopen-fread-fclose-16B"],
     {"getppid": ["syscall-getppid"], "getpid": ["libc-getpid"],
      "write": ["write-1B-devnull"], "getrandom": ["getrandom-16B"],
      "openat": ["fopen-fread-fclose-16B"], "read": ["fopen-fread-fclose-16B"],
      "close": ["fopen-fread-fclose-16B"]}, {}),
    (["read-1B", "read-64KiB", "read-copy-4KiB", "read-copy-16KiB"],
     {"pread64": ["read-1B", "read-64KiB", "read-copy-4KiB",
                  "read-copy-16KiB"]}, {}),
    (["mmap-copy-4KiB", "mmap-copy-16KiB", "getrandom-16B-buffered"], {},
     {"pread64": ["mmap-copy-4KiB", "mmap-copy-16KiB"],
      "mmap": ["mmap-copy-4KiB", "mmap-copy-16KiB"],
      "getrandom": ["getrandom-16B-buffered"]}),
]


@pytest.mark.parametrize("loops,at_least,rarely", CROSSES,
                         ids=["one-each", "pread", "no-crossing"])
def test_loops_make_the_calls_they_name(loops, at_least, rarely):
    with tempfile.TemporaryDirectory(prefix="scprof-cal-") as d:
        out = os.path.join(d, "cal.json")
        proc, rep = scprof_json(
            ["-f"], [SCPROF, "calibrate", "--quick", "--no-probe",
                     "--no-save", "--format", "json", "-o", out,
                     "--loops", ",".join(loops)], timeout=LONG)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        with open(out) as f:
            cal = {l["name"]: l["calls"] for l in json.load(f)["loops"]}
    assert sorted(cal) == sorted(loops)
    made = {n: c for n, (c, _) in counts(rep["syscalls"]).items()}
    for sc, names in at_least.items():
        want = sum(cal[n] for n in names)
        assert made.get(sc, 0) >= want, (sc, made.get(sc), names, cal)
    for sc, names in rarely.items():
        calls = sum(cal[n] for n in names)
        assert 0 < calls and made.get(sc, 0) <= calls / 100, \
            (sc, made.get(sc), names, cal)


def test_probe_effect(quick):
    r = quick["report"]
    assert r["probe_overhead_ns"] is not None, "probe effect not measured"
    p = r["probe"]
    # scprof's programs cost something, measured against the same loop
    assert r["probe_overhead_ns"] > 0
    assert p["probed_ns"] > p["bare_ns"]
    assert p["pairs"] >= 5
    # scprof saw the calibration's own getppid calls
    assert p["reported_ns"] > 0
    assert p["in_latency_ns"] <= r["probe_overhead_ns"] + 1e-6
    assert p["in_latency_ns"] <= p["reported_ns"] + 1e-6


def test_machine_and_mitigations(quick):
    r = quick["report"]
    m = r["machine"]
    assert m["kernel"] == platform.release()
    assert m["cpus"] == os.cpu_count()
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert m["boot_id"] == f.read().strip()
    vdir = "/sys/devices/system/cpu/vulnerabilities"
    if os.path.isdir(vdir):
        want = {}
        for name in os.listdir(vdir):
            with open(os.path.join(vdir, name)) as f:
                want[name] = f.read().strip()
        assert r["mitigations"] == want
    assert r["quick"] is True
    assert r["loop_overhead_ns"] >= 0


def test_saved_for_this_boot(quick):
    """The cache holds the same calibration, readable JSON, no temp files."""
    with open(quick["cache"]) as f:
        saved = json.load(f)
    assert saved["loops"] == quick["report"]["loops"]
    assert saved["probe_overhead_ns"] == quick["report"]["probe_overhead_ns"]
    assert sorted(os.listdir(quick["dir"])) == ["cal.json", "out.json"]


def test_table_and_subset():
    """A subset of loops, as a table; nothing saved without the probe."""
    with tempfile.TemporaryDirectory(prefix="scprof-cal-") as d:
        cache = os.path.join(d, "cal.json")
        proc = run_scprof(["calibrate", "--quick", "--no-probe", "--cache",
                           cache, "--loops",
                           "vdso-clock_gettime,syscall-getppid"])
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode()
        assert not os.path.exists(cache)
    lines = out.splitlines()
    rows = [l.split()[0] for l in lines if l.split()
            and l.split()[0] in LOOPS]
    # table order, not command-line order; only the loops asked for
    assert rows == ["syscall-getppid", "vdso-clock_gettime"]
    assert "the floor: one kernel crossing" in out
    assert "Mitigations:" in out
    assert "Probe effect: not measured" in out
    assert "One kernel crossing costs" in out


def test_list():
    proc = run_scprof(["calibrate", "--list"])
    assert proc.returncode == 0
    names = [l.split()[0] for l in proc.stdout.decode().splitlines()]
    assert names == LOOPS


def test_help():
    proc = run_scprof(["calibrate", "--help"])
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert text.startswith("Usage: scprof calibrate")
    for word in ("--quick", "--loops", "probe_overhead_ns", "mitigations"):
        assert word in text


@pytest.mark.parametrize("args,needle", [
    (["--loops", "read-2B"], "unknown loop 'read-2B'"),
    (["--loops", "read-1B,,read-64KiB"], "empty loop name"),
    (["--loops", "read-1B,read-1B"], "named twice"),
    (["--loops", ""], "empty loop name"),
    (["--format", "xml"], "unknown format 'xml'"),
    (["--bogus"], "unknown option '--bogus'"),
    (["-x"], "unknown option '-x'"),
    (["--loops"], "needs a value"),
    (["extra"], "unexpected argument 'extra'"),
    (["-o", ""], "empty output file name"),
])
def test_bad_input(args, needle):
    with tempfile.TemporaryDirectory(prefix="scprof-cal-") as d:
        cache = os.path.join(d, "cal.json")
        proc = run_scprof(["calibrate", "--cache", cache] + args, timeout=10)
        assert not os.path.exists(cache)
    assert proc.returncode == 2
    assert proc.stdout == b""
    lines = stderr_lines(proc)
    assert len(lines) == 1, lines
    assert needle in lines[0]


def test_unwritable_output():
    proc = run_scprof(["calibrate", "--quick", "--no-probe", "--no-save",
                       "--loops", "vdso-clock_gettime",
                       "-o", "/nonexistent/dir/report"], timeout=30)
    assert proc.returncode == 1
    lines = stderr_lines(proc)
    assert len(lines) == 1 and "/nonexistent/dir/report" in lines[0], lines

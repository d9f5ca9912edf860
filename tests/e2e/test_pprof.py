# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--pprof: the sampled stacks as a pprof profile, read by Debian's
`go tool pprof` (golang-go).

tests/workloads/stackmix writes to /dev/null RATIO times through stdio
(log_line <- run_logger <- main) for each write(2) it makes directly
(raw_write <- run_raw <- main): pprof must show log_line with RATIO /
(RATIO + 1) of the write calls, the syscall as every sample's leaf, the
two sample types, and values that are the JSON report's of the same run:
calls are the stacks' samples times N, nanoseconds those calls times the
syscall's mean latency.
"""
import gzip
import os
import re
import subprocess

from conftest import CLEAN_ENV, run_scprof, scprof_json, workload

ROUNDS = 100000
RATIO = 3
PERIOD = 200
# Debian's go (golang-go), not another one found first on PATH.
GO = os.environ.get("GO", "/usr/bin/go")


def go_pprof(args, path, tmp_path):
    """`go tool pprof ARGS PATH`: its standard output, as text."""
    assert os.access(GO, os.X_OK), \
        f"{GO} not found: .ci/install-deps test installs golang-go"
    env = dict(CLEAN_ENV, HOME=str(tmp_path), PPROF_TMPDIR=str(tmp_path))
    proc = subprocess.run([GO, "tool", "pprof"] + args + [str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


def parse_raw(text):
    """`go tool pprof -raw`: (sample types, samples, locations, mappings,
    the header lines). A sample is {values, locs, labels}; a location
    {addr, mapping, func} (func None: no line); mappings {id: file}."""
    section, types, header = None, None, []
    samples, locs, maps = [], {}, {}
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section is None:
            header.append(line)
        elif section == "Samples:":
            if types is None:
                types = line.split()
                continue
            m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$", line)
            if m:
                samples.append({"values": [int(v) for v in m[1].split()],
                                "locs": [int(v) for v in m[2].split()],
                                "labels": {}})
                continue
            # (go tool pprof prints a sample's labels on one line)
            m = re.findall(r"(?:^|\s)(\w+):\[([^\]]*)\]", line)
            if m and samples and line[:1].isspace():
                samples[-1]["labels"].update(m)
        elif section == "Locations":
            m = re.match(r"^\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))?"
                         r"(?: (.*?) (\S*):(\d+) s=\d+)?\s*$", line)
            if m:
                locs[int(m[1])] = {"addr": int(m[2], 16),
                                   "mapping": int(m[3]) if m[3] else None,
                                   "func": m[4]}
        elif section == "Mappings":
            m = re.match(r"^(\d+): \S+ (\S+)", line)
            if m:
                maps[int(m[1])] = m[2]
    return types, samples, locs, maps, header


def parse_top(text):
    """`go tool pprof -top`: {name: (flat, cum)} as printed, and the
    header lines."""
    rows, header = {}, []
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.+)$", line)
        if m and m[1] != "flat":
            rows[m[3]] = (m[1], m[2])
        else:
            header.append(line)
    return rows, header


def profile(tmp_path, extra=()):
    """stackmix under --stacks=PERIOD --pprof: (pprof file, JSON report)."""
    out = tmp_path / "stackmix.pb.gz"
    proc, rep = scprof_json([f"--stacks={PERIOD}", "--pprof", str(out)] +
                            list(extra),
                            [workload("stackmix"), str(ROUNDS), str(RATIO),
                             "300"])
    assert proc.returncode == 0, proc.stderr
    with open(out, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "not gzip"
    return out, rep


def test_go_pprof_reads_the_profile(tmp_path):
    path, rep = profile(tmp_path)
    syscalls = {s["name"]: s for s in rep["syscalls"] if s["abi"] == "64"}

    types, samples, locs, maps, header = parse_raw(
        go_pprof(["-raw"], path, tmp_path))
    assert types == ["calls/count",
                     "syscall-nanoseconds/nanoseconds[dflt]"], types
    assert "PeriodType: calls count" in header, header
    assert f"Period: {PERIOD}" in header, header
    assert samples, "no sample"
    # The leaf of every sample is the syscall: a location in no mapping
    # named after a syscall of the report, and only there.
    for s in samples:
        leaf = locs[s["locs"][0]]
        assert leaf["mapping"] is None and leaf["func"] in syscalls, leaf
        for i in s["locs"][1:]:
            assert locs[i]["mapping"] is not None, (s, locs[i])
        assert s["labels"] == {"comm": "stackmix"}, s["labels"]
    # calls: a sampled syscall's samples add up to its calls in the
    # report (to a rounding of half a call a sample), not to its samples
    # times N (the sleep before exit, when sampled, is one call); ns:
    # the report's calls times the syscall's mean latency (to the JSON's
    # rounding of the mean, 1 ns a call, and each sample's to the ns). Not
    # the samples' rounded calls: 3 brk calls in 2 samples are 2 + 2 calls
    # but 2 x 1.5 calls' ns (failed once: 3706 ns against 4 x 1235).
    for name, sc in syscalls.items():
        sampled = sum(st["count"] for st in rep["stacks"]
                      if st["syscall"] == name)
        mine = [s for s in samples if locs[s["locs"][0]]["func"] == name]
        calls = sum(s["values"][0] for s in mine)
        ns = sum(s["values"][1] for s in mine)
        want = sc["calls"] if sampled else 0
        assert abs(calls - want) <= len(mine) / 2, \
            (name, calls, want, sampled)
        assert abs(ns - want * sc["avg_ns"]) <= want + len(mine), \
            (name, ns, want, calls, sc["avg_ns"])
    # write's user frames: libc's wrapper, then the program's, which
    # is the first mapping (pprof's main binary)
    writes = [s for s in samples if locs[s["locs"][0]]["func"] == "write"]
    assert sum(s["values"][0] for s in writes) >= \
        0.5 * ROUNDS * (RATIO + 1), "too few write calls sampled"
    assert maps[1] == "stackmix", maps
    for s in writes:
        assert maps[locs[s["locs"][1]]["mapping"]] == "libc.so.6", s
    logged = [s for s in writes
              if "log_line" in [locs[i]["func"] for i in s["locs"]]]
    for s in logged:
        fr = [locs[i]["func"] for i in s["locs"]]
        i = fr.index("log_line")
        assert fr[i + 1:i + 3] == ["run_logger", "main"] or \
            s["values"][0] <= 0.01 * sum(w["values"][0] for w in writes), fr

    # The shares, as pprof adds them up: by calls, and by time (the
    # default sample type)
    for index in (["-sample_index=calls"], []):
        rows, header = parse_top(go_pprof(["-top", "-unit=ns"] + index,
                                          path, tmp_path))
        want = "calls" if index else "syscall-nanoseconds"
        assert f"Type: {want}" in header, header
        num = lambda v: float(v[:-2] if v.endswith("ns") else v)
        write = num(rows["write"][0])
        assert num(rows["write"][1]) == write, "write is not a leaf"
        assert abs(num(rows["log_line"][1]) / write -
                   RATIO / (RATIO + 1)) < 0.04, (rows, want)
        assert abs(num(rows["raw_write"][1]) / write -
                   1 / (RATIO + 1)) < 0.04, (rows, want)
        assert num(rows["main"][1]) >= 0.98 * write, rows["main"]


def test_comments_and_count_only(tmp_path):
    """-C: the calls are there, no time (0, and calls shown by default);
    the comments say what the values are."""
    path, rep = profile(tmp_path, ["-C"])
    rows, header = parse_top(go_pprof(["-top"], path, tmp_path))
    assert "Type: calls" in header, header
    assert abs(float(rows["log_line"][1]) / float(rows["write"][0]) -
               RATIO / (RATIO + 1)) < 0.05, rows
    types, samples, _, _, header = parse_raw(
        go_pprof(["-raw"], path, tmp_path))
    assert all(s["values"][1] == 0 for s in samples), samples[:3]
    comments = [h for h in header if h.startswith("Comment: ")]
    assert any("syscall-nanoseconds: 0, --count-only measures no time" in c
               for c in comments), comments
    assert any(f"1 call in {PERIOD} was sampled" in c for c in comments)
    assert any("labels: comm only" in c for c in comments)
    # the file is gzip of a profile.proto message: field 1 (sample_type)
    # first, a length-delimited field (tag 0x0a)
    with gzip.open(path) as f:
        assert f.read(1) == b"\x0a"


def test_unwritable_pprof_file(tmp_path):
    """One line and a non-zero exit; an existing file is left as it was,
    and nothing half-written is left beside it."""
    proc = run_scprof(["--pprof", str(tmp_path / "no" / "such" / "p.pb.gz"),
                       "--", workload("stackmix"), "10"])
    assert proc.returncode != 0
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0], err
    assert not (tmp_path / "no").exists()

    proc = run_scprof(["--pprof", "", "true"])
    assert proc.returncode == 2
    assert len(proc.stderr.decode().strip().splitlines()) == 1, proc.stderr

    # fails while writing: the error and the exit say so (and --pprof
    # alone implied --stacks: without stacks nothing would be written)
    proc = run_scprof(["--pprof", "/dev/full", "-o", "/dev/null", "--",
                       workload("stackmix"), "1000"])
    assert proc.returncode == 1
    err = proc.stderr.decode().strip().splitlines()
    assert err == ["scprof: cannot write the stacks: No space left on "
                   "device"], err

    # the run fails (no such command): the old file stays whole
    old = tmp_path / "old.pb.gz"
    old.write_bytes(b"old")
    proc = run_scprof(["--pprof", str(old), "--",
                       str(tmp_path / "no-such-command")])
    assert proc.returncode == 127, proc.stderr
    assert old.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["old.pb.gz"], \
        os.listdir(tmp_path)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Bad input: one clear line on stderr, exit 1 (runtime) or 2 (usage).

Never a crash, a hang, a report, an output file or a leftover temporary
file. Every case runs with -o pointing into an empty directory of its own
(unless it tests -o itself), so a half-written file would show.
"""
import os
import subprocess
import tempfile

import pytest

from conftest import (CLEAN_ENV, NOBODY, SCPROF, TIMEOUT, assert_not_crashed,
                      cgroup2_mount, run_scprof, stderr_lines, workload)

USAGE, RUNTIME = 2, 1


def dead_pid():
    """A pid that is not running: a child that has been reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# (id, args, exit code, a word the message must contain)
CASES = [
    ("unknown-short", ["-Y", "-a"], USAGE, "-Y"),
    ("unknown-long", ["--bogus", "-a"], USAGE, "--bogus"),
    ("unknown-long-value", ["--bogus=1", "-a"], USAGE, "--bogus"),
    ("missing-p", ["-p"], USAGE, "-p"),
    ("missing-d", ["-a", "-d"], USAGE, "-d"),
    ("missing-format", ["-a", "--format"], USAGE, "--format"),
    ("missing-S", ["-a", "-S"], USAGE, "-S"),
    ("missing-U", ["-a", "-U"], USAGE, "-U"),
    ("missing-cgroup", ["--cgroup"], USAGE, "--cgroup"),
    ("missing-max-entries", ["-a", "--max-entries"], USAGE, "--max-entries"),
    ("pid-dead", ["-p", "DEAD"], RUNTIME, "DEAD"),
    ("pid-dead-in-list", ["-p", "1,DEAD"], RUNTIME, "DEAD"),
    ("pid-zero", ["-p", "0"], USAGE, "'0'"),
    ("pid-abc", ["-p", "abc"], USAGE, "abc"),
    ("pid-negative", ["-p", "-5"], USAGE, "-5"),
    ("pid-empty-item", ["-p", "1,,2"], USAGE, "PID"),
    ("pid-trailing-comma", ["-p", "1,"], USAGE, "PID"),
    ("pid-space", ["-p", " 1"], USAGE, "PID"),
    ("pid-too-big", ["-p", "99999999999999999999"], USAGE, "PID"),
    ("duration-negative", ["-a", "-d", "-1"], USAGE, "-1"),
    ("duration-zero", ["-a", "-d", "0"], USAGE, "'0'"),
    ("duration-suffix", ["-a", "-d", "10abc"], USAGE, "10abc"),
    ("duration-nan", ["-a", "-d", "nan"], USAGE, "nan"),
    ("duration-inf", ["-a", "-d", "inf"], USAGE, "inf"),
    ("duration-empty", ["-a", "-d", ""], USAGE, "duration"),
    ("format-xml", ["-a", "--format", "xml"], USAGE, "xml"),
    ("sort-bogus", ["-a", "-S", "bogus"], USAGE, "bogus"),
    ("columns-bogus", ["-a", "-U", "bogus"], USAGE, "bogus"),
    ("columns-repeated", ["-a", "-U", "calls,calls"], USAGE, "calls"),
    ("columns-empty-item", ["-a", "-U", "calls,,name"], USAGE, "-U"),
    ("targets-p-a", ["-p", "1", "-a"], USAGE, "one target"),
    ("targets-a-cgroup", ["-a", "--cgroup", "CGROUP2"], USAGE, "one target"),
    ("targets-p-command", ["-p", "1", "--", "true"], USAGE, "one target"),
    ("targets-a-command", ["-a", "true"], USAGE, "one target"),
    ("no-target", [], USAGE, "nothing to profile"),
    ("stdout-twice", ["-o", "-", "--pprof", "-", "-a"], USAGE,
     "standard output"),
    ("no-target-options-only", ["-f", "-P"], USAGE, "nothing to profile"),
    ("follow-all", ["-f", "-a"], USAGE, "-f"),
    ("follow-cgroup", ["-f", "--cgroup", "CGROUP2"], USAGE, "-f"),
    ("max-entries-zero", ["-a", "--max-entries", "0"], USAGE, "--max-entries"),
    ("max-entries-huge", ["-a", "--max-entries", "99999999"], USAGE,
     "--max-entries"),
    ("max-procs-zero", ["-a", "--max-procs", "0"], USAGE, "--max-procs"),
    ("cgroup-not-v2", ["--cgroup", "/tmp"], RUNTIME, "cgroup v2"),
    ("cgroup-missing", ["--cgroup", "/nonexistent/cg"], RUNTIME,
     "/nonexistent/cg"),
    ("command-missing", ["--", "/nonexistent/scprof-cmd"], 127,
     "/nonexistent/scprof-cmd"),
    ("command-not-executable", ["--", "/etc/passwd"], 126, "/etc/passwd"),
]


def substitute(args, dead):
    cg = cgroup2_mount() or "/sys/fs/cgroup"
    return [a.replace("DEAD", dead).replace("CGROUP2", cg) for a in args]


def check_one_line(proc, word):
    assert_not_crashed(proc)
    lines = stderr_lines(proc)
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    assert lines[0].startswith("scprof: "), lines
    assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    assert proc.stdout == b"", f"unexpected stdout {proc.stdout!r}"


@pytest.mark.parametrize("args,code,word", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, args, code, word):
    dead = str(dead_pid())
    args = substitute(args, dead)
    word = substitute([word], dead)[0]
    out = tmp_path / "report.json"
    # -o goes first: a target given after it must still be refused.
    proc = run_scprof(["-o", str(out), "--format", "json"] + args,
                      env=CLEAN_ENV, timeout=TIMEOUT)
    assert proc.returncode == code, \
        f"exit {proc.returncode}, stderr {proc.stderr!r}"
    check_one_line(proc, word)
    assert os.listdir(tmp_path) == [], "no output or temporary file"


@pytest.mark.parametrize("case", ["missing-dir", "is-dir", "empty"])
@pytest.mark.parametrize("target", ["command", "pid"])
def test_unwritable_output(tmp_path, case, target):
    sub = tmp_path / "sub"
    sub.mkdir()
    if case == "missing-dir":
        out, code, word = str(sub / "nodir" / "report"), RUNTIME, "report"
    elif case == "is-dir":
        out, code, word = str(sub), RUNTIME, str(sub)
    else:
        out, code, word = "", USAGE, "output"
    if target == "command":
        tgt = ["--", workload("groundtruth"), "10", "1", "1", "0", "1"]
    else:
        tgt = ["-p", str(os.getpid()), "-d", "0.1"]
    proc = run_scprof(["-o", out] + tgt, env=CLEAN_ENV)
    assert proc.returncode == code, proc.stderr
    check_one_line(proc, word)
    assert sorted(os.listdir(tmp_path)) == ["sub"]
    assert os.listdir(sub) == []




@pytest.mark.parametrize("target", [["-a"], ["-p", "PID"],
                                    ["--", "true"],
                                    ["-f", "--", "true"]],
                         ids=["all", "pid", "command", "command-follow"])
def test_unprivileged(target, nobody_copy):
    # pytest's tmp_path is under a root-only directory: nobody needs its own.
    with tempfile.TemporaryDirectory(prefix="scprof-e2e-") as d:
        os.chmod(d, 0o777)
        unprivileged_run(d, target, nobody_copy.scprof)


def unprivileged_run(d, target, scprof):
    out = os.path.join(d, "report")
    target = [str(os.getpid()) if a == "PID" else a for a in target]
    proc = subprocess.run(NOBODY + [scprof, "-o", out] + target,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=CLEAN_ENV, timeout=TIMEOUT)
    assert proc.returncode == RUNTIME, proc.stderr
    check_one_line(proc, "CAP_BPF")
    assert "CAP_PERFMON" in proc.stderr.decode()
    assert os.listdir(d) == []


def test_unprivileged_leaves_no_stopped_command(nobody_copy):
    """The command was forked and held before exec: it must not linger."""
    # (the pid in it: another suite on the host runs this test too)
    marker = f"scprof-e2e-unpriv-marker-{os.getpid()}"
    proc = subprocess.run(NOBODY + [nobody_copy.scprof, "--", "sleep", "1000",
                                          marker],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=CLEAN_ENV, timeout=TIMEOUT)
    assert proc.returncode == RUNTIME
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                assert marker.encode() not in f.read(), f"pid {pid} left"
        except (FileNotFoundError, ProcessLookupError):
            pass

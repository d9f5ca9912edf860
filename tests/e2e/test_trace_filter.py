# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""-e trace=SET, -z and -Z against strace.

-e: the same calls and errors as `strace -c -f -e trace=SET` on the same
program: real programs with names, negations, regexes and classes, and the
allsys workload, which makes every syscall strace knows once, for every
class (so each class's members are strace's, as strace behaves, not as a
table says). -z/-Z: strace -c ignores them (they limit strace's printing),
so their ground truth is strace -c's own calls and errors columns.
"""
import subprocess

import pytest

from conftest import (CLEAN_ENV, counts, run_scprof, scprof_json,
                      stderr_lines, strace_summary, workload)

# strace -c never shows these; scprof counts them at entry.
NEVER_RETURN = {"exit_group", "exit", "32:exit_group"}

CLASSES = ["%file", "%desc", "%network", "%process", "%signal", "%ipc",
           "%memory", "%creds", "%clock", "%stat", "%lstat", "%fstat",
           "%statfs", "%fstatfs", "%%stat", "%%statfs", "%pure"]


def both(cmd, spec, scprof_args=(), status=0):
    st = strace_summary(cmd, env=CLEAN_ENV, status=status,
                        extra=["-e", "trace=" + spec])
    st = {k: v[:2] for k, v in st.items()}
    # the same stdout as strace's: ls asks a terminal's size by its kind
    proc, rep = scprof_json(["-f", "-e", "trace=" + spec] + list(scprof_args),
                            cmd, env=CLEAN_ENV, stdout=subprocess.DEVNULL)
    assert proc.returncode == status, proc.stderr
    return st, rep


def assert_same(st, rep, spec):
    """strace's counts (32-bit ones keyed "32:name") are scprof's."""
    sc = counts(rep["syscalls"])
    sc.update({"32:" + k: v for k, v in counts(rep["syscalls"], "32").items()})
    diff = {k: (v, sc.get(k)) for k, v in st.items() if sc.get(k) != v}
    assert not diff, f"{spec}: (strace, scprof) differ: {diff}"
    extra = set(sc) - set(st)
    assert extra <= NEVER_RETURN, f"{spec}: only in scprof: {extra}"
    return sc


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("prog", ["allsys", "allsys32"])
def test_class_members_as_strace(prog, cls):
    """Every syscall once, of the 64-bit table (allsys) or the 32-bit one
    (allsys32): a class counts exactly what strace counts."""
    everything = strace_summary([workload(prog)], env=CLEAN_ENV)
    st, rep = both([workload(prog)], cls)
    sc = assert_same(st, rep, cls)
    # the filter left things out, and kept some
    assert 0 < len(st) < len(everything) / 2, (cls, st)
    assert len(sc) >= len(st)
    if prog == "allsys32":
        assert all(k.startswith("32:") or k == "execve" for k in st), st


PROGRAMS = {
    "ls": ["ls", "-l", "/"],
    "python": ["/usr/bin/python3", "-S", "-c",
               "import os, socket\n"
               "for i in range(50): os.getppid()\n"
               "s = socket.socket(); s.close()\n"
               "try: os.stat('/nonexistent')\n"
               "except OSError: pass\n"],
    "sh": ["sh", "-c", "ls / >/dev/null; cat /etc/hostname >/dev/null; "
           "ls /nonexistent 2>/dev/null; true"],
}
SETS = ["%file", "!%file,%memory", "/^(open|close|read)", "read,write,?nosuch",
        "%%stat,%clock,getppid", "%process,%signal", "%network,%desc",
        "!all", "none", "openat@64,close", "!!%file"]


@pytest.mark.parametrize("spec", SETS)
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_same_counts_as_strace(prog, spec):
    if spec in ("!all", "none"):
        # strace prints no summary for no calls; scprof counts none
        proc, rep = scprof_json(["-f", "-e", "trace=" + spec],
                                PROGRAMS[prog], env=CLEAN_ENV)
        assert proc.returncode == 0, proc.stderr
        assert not counts(rep["syscalls"]), rep["syscalls"]
        return
    st, rep = both(PROGRAMS[prog], spec)
    assert_same(st, rep, spec)


@pytest.mark.parametrize("prog,spec", [
    ("ls", "%file"), ("ls", "!%desc"),
    ("sh", "%file"), ("sh", "!%desc"), ("sh", "%signal")])
def test_count_only_same_counts(prog, spec):
    # sh takes signals: its rt_sigreturn calls leave with no syscall number
    # in their registers, and count-only files them all the same
    st, rep = both(PROGRAMS[prog], spec, ["-C"])
    assert_same(st, rep, spec)


def test_32bit_calls_by_their_own_table():
    """raw32 makes getpid (20) and exits: %pure holds 32-bit getpid, and
    getpid@64 does not (the 64-bit number 20 is writev)."""
    cmd = [workload("raw32"), "7"]
    st = strace_summary(cmd, env=CLEAN_ENV, extra=["-e", "trace=%pure"])
    assert {k: v[:2] for k, v in st.items()} == {"32:getpid": (7, 0)}
    proc, rep = scprof_json(["-e", "trace=%pure"], cmd, env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    assert counts(rep["syscalls"], "32") == {"getpid": (7, 0)}
    assert not counts(rep["syscalls"])
    proc, rep = scprof_json(["-e", "trace=getpid@64,exit_group@64"], cmd,
                            env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    assert not counts(rep["syscalls"], "32") and not counts(rep["syscalls"])
    proc, rep = scprof_json(["-e", "trace=getpid@32"], cmd, env=CLEAN_ENV)
    assert counts(rep["syscalls"], "32") == {"getpid": (7, 0)}


@pytest.mark.parametrize("count_only", [False, True])
@pytest.mark.parametrize("opt", ["-z", "-Z", "-e status=successful",
                                 "-e status=failed"])
def test_status_filters(opt, count_only):
    cmd = PROGRAMS["ls" if count_only else "sh"]
    st = {k: v[:2] for k, v in strace_summary(cmd, env=CLEAN_ENV).items()}
    failed = "Z" in opt or "failed" in opt
    args = opt.split() + (["-C"] if count_only else []) + ["-f"]
    proc, rep = scprof_json(args, cmd, env=CLEAN_ENV,
                            stdout=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    sc = counts(rep["syscalls"])
    if failed:
        want = {k: (e, e) for k, (c, e) in st.items() if e}
    else:
        want = {k: (c - e, 0) for k, (c, e) in st.items() if c > e}
    assert len(want) >= 3 and any(e for c, e in st.values())
    got = {k: v for k, v in sc.items() if k not in NEVER_RETURN}
    assert got == want
    # exit_group never fails: counted by -z only
    assert ("exit_group" in sc) == (not failed)


@pytest.mark.parametrize("args,msg", [
    (["-e", "trace=nosuchcall"], "invalid system call 'nosuchcall'"),
    (["-e", "trace=%nosuchclass"], "invalid system call '%nosuchclass'"),
    (["-e", "trace=/re(gex"], "invalid regex 're(gex'"),
    (["-e", "trace=read@16"], "incorrect personality designator '16'"),
    (["-e", "trace="], "empty syscall set"),
    (["-e", "trace=read,,write"], "empty syscall in"),
    (["-e", "abbrev=none"], "scprof takes trace=SET"),
    (["-e", "status=unfinished"], "invalid -e status 'unfinished'"),
])
def test_bad_sets(args, msg):
    proc = run_scprof(args + ["true"])
    lines = stderr_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, lines)
    assert msg in lines[0], lines

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What does not fit is counted, never dropped silently; an incomplete
profile exits 3; a reused pid is a new process."""
import pytest

from conftest import (CLEAN_ENV, counts, nothing_dropped, run_scprof,
                      scprof_json, stderr_lines, workload)

GT = ["1000", "10", "100", "3", "50"]


def groundtruth():
    return [workload("groundtruth")] + GT


def total_calls(rep):
    return sum(s["calls"] for s in rep["syscalls"])


@pytest.fixture(scope="module")
def reference():
    proc, rep = scprof_json(["-f"], groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 0
    assert nothing_dropped(rep["dropped"])
    return rep


@pytest.mark.parametrize("entries", [1, 3, 12])
def test_full_stats_map_is_counted(reference, entries):
    proc, rep = scprof_json(["-f", "--max-entries", str(entries)],
                            groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 3  # incomplete
    cells = sum(len(p["syscalls"]) for p in rep["processes"] if p["pid"])
    assert 0 < cells <= entries
    # the calls that found no cell are in the merged entry (pid 0): the
    # totals are exact, and how many are not in their own row is counted
    assert rep["dropped"]["calls"] == 0
    assert rep["dropped"]["unattributed_calls"] > 0
    assert counts(rep["syscalls"]) == counts(reference["syscalls"])
    merged, = [p for p in rep["processes"] if p["pid"] == 0]
    assert sum(s["calls"] for s in merged["syscalls"]) == \
        rep["dropped"]["unattributed_calls"]
    lines = stderr_lines(proc)
    assert len(lines) == 1 and "--max-entries" in lines[0], lines
    assert str(rep["dropped"]["unattributed_calls"]) in lines[0]


def test_full_process_map_is_counted(reference):
    proc, rep = scprof_json(["-f", "--max-procs", "1"], groundtruth(),
                            env=CLEAN_ENV)
    assert proc.returncode == 3  # incomplete
    assert rep["dropped"]["process_info"] == 1
    assert rep["dropped"]["calls"] == 0
    # the calls are all there, only a name is missing
    assert counts(rep["syscalls"]) == counts(reference["syscalls"])
    assert sorted(p["comm"] for p in rep["processes"]) == ["", "groundtruth"]
    lines = stderr_lines(proc)
    assert len(lines) == 1 and "--max-procs" in lines[0], lines
    # why: the process map said it was full (E2BIG), and nothing else
    fails = rep["dropped"]["map_failures"]
    assert {(f["map"], f["errno"]) for f in fails} == {("procs", "E2BIG")}
    assert "process map full" in lines[0]


# Failures other than "full" are said as themselves (issue #19). No kernel
# makes a map update fail at will: SCPROF_TEST_MAP_FAIL makes one map's
# every update fail with an errno, as -EBUSY (an update nested in another on
# the same CPU) or -ENOMEM (the allocator) would.
def injected(fail):
    env = dict(CLEAN_ENV, SCPROF_TEST_MAP_FAIL=fail)
    return scprof_json(["-f"], groundtruth(), env=env)


def test_process_map_busy_is_not_full(reference):
    proc, rep = injected("procs:EBUSY")
    assert proc.returncode == 3
    assert rep["dropped"]["process_info"] == 2  # both processes
    fails = rep["dropped"]["map_failures"]
    assert [(f["map"], f["errno"]) for f in fails] == [("procs", "EBUSY")]
    assert fails[0]["count"] >= 2
    assert counts(rep["syscalls"]) == counts(reference["syscalls"])
    warn = [ln for ln in stderr_lines(proc) if "incomplete" in ln]
    assert len(warn) == 1, stderr_lines(proc)
    assert "adding to the procs map failed: EBUSY x" in warn[0], warn
    assert "full" not in warn[0] and "--max-procs" not in warn[0], warn


def test_stats_map_out_of_memory_is_not_full(reference):
    proc, rep = injected("stats:ENOMEM")
    assert proc.returncode == 3
    # every call went to the merged cells: counted, and said to be
    assert rep["dropped"]["calls"] == 0
    assert rep["dropped"]["unattributed_calls"] == total_calls(reference)
    assert counts(rep["syscalls"]) == counts(reference["syscalls"])
    fails = {(f["map"], f["errno"]) for f in rep["dropped"]["map_failures"]}
    assert fails == {("stats", "ENOMEM")}
    warn = [ln for ln in stderr_lines(proc) if "incomplete" in ln][0]
    assert "adding to the stats map failed: ENOMEM x" in warn, warn
    assert "--max-entries" not in warn, warn


def test_table_says_the_same(reference):
    env = dict(CLEAN_ENV, SCPROF_TEST_MAP_FAIL="procs:ENOMEM")
    proc = run_scprof(["-f", "-P", "-o", "/dev/stdout", "--"] +
                      groundtruth(), env=env)
    assert proc.returncode == 3
    first = proc.stdout.decode().splitlines()[0]
    assert first == ("scprof: the counts are incomplete: 2 processes have "
                     "no name (adding to the procs map failed: ENOMEM x"
                     + first.split(" x")[-1]), first


def test_reused_pid_is_a_new_process():
    n1, n2 = 100, 250
    for _ in range(10):
        proc, rep = scprof_json(["-f"], [workload("pidreuse"), str(n1),
                                         str(n2)], env=CLEAN_ENV)
        if proc.returncode != 75:   # 75: another process took the pid
            break
    assert proc.returncode == 0, proc.stderr
    parent = [p for p in rep["processes"]
              if "execve" in counts(p["syscalls"])]
    assert len(parent) == 1
    kids = [p for p in rep["processes"] if p is not parent[0]]
    assert len(kids) == 2
    assert kids[0]["pid"] == kids[1]["pid"], "the workload reused the pid"
    got = sorted(counts(k["syscalls"])["getppid"][0] for k in kids)
    assert got == [n1, n2]
    for k in kids:
        assert k["exited"] is True and k["ppid"] == parent[0]["pid"]
        assert counts(k["syscalls"]) == {
            "getppid": counts(k["syscalls"])["getppid"], "exit_group": (1, 0)}
    assert counts(rep["syscalls"])["getppid"] == (n1 + n2, 0)

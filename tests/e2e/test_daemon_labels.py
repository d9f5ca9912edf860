# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon --labels unit,container,comm with --max-series: processes
in cgroups named like systemd units (and one with quotes and backslashes)
under a slice of the cgroup v2 mount; the busiest label sets get series,
the rest one "(other)" series, counted in scprof_group_series_folded_total.
"""
import os
import subprocess

import pytest

from conftest import run_scprof, stderr_lines, unit_slice, workload
from test_daemon import Daemon, parse, quiesce, value

ID64 = "fedcba9876543210" * 4
HOSTILE = 'x"y\\z.scope'
# unit: threads N (getppid 100*N*(N+1)/2 + 7)
UNITS = {"a.service": 1, "b.scope": 2, f"docker-{ID64}.scope": 3,
         HOSTILE: 4}


def getppid_of(n):
    return 100 * n * (n + 1) // 2 + 7


@pytest.fixture
def slice_():
    yield from unit_slice("scprof-daemon", UNITS)


def test_labels_and_max_series(slice_):
    d = Daemon(["--cgroup", slice_, "--labels", "unit,container,comm",
                "--max-series", "3", "--fold-interval", "0.2"])
    try:
        for u, n in UNITS.items():
            # the shell moves itself, then becomes the workload
            subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && '
                            'exec "$1" "$2"', os.path.join(slice_, u),
                            workload("threads"), str(n)],
                           check=True, timeout=60)

        def all_in(samples):
            return value(samples, "scprof_processes_folded_total") >= 4

        samples = quiesce(d, all_in, "the 4 processes folded")
    finally:
        d.kill()
    series = {(l["unit"], l["container"], l["comm"]): v
              for n, l, v in samples if n == "scprof_group_syscalls_total"}
    # the three busiest units have a series, a.service went to other
    want = {HOSTILE: ("", 4), f"docker-{ID64}.scope": (ID64, 3),
            "b.scope": ("", 2)}
    for unit, (container, n) in want.items():
        v = series.pop((unit, container, "threads"))
        # its workload's getppid, and some more (exec, the loader, futex)
        assert getppid_of(n) <= v < getppid_of(n) + 300, (unit, v)
    other = series.pop(("(other)", "(other)", "(other processes)"))
    assert getppid_of(1) <= other < getppid_of(1) + 300
    assert not series, series
    assert value(samples, "scprof_group_series_folded_total") >= 1
    # every call is in exactly one series
    total = sum(v for n, l, v in samples if n == "scprof_syscalls_total")
    assert total == sum(v for n, l, v in samples
                        if n == "scprof_group_syscalls_total")


@pytest.mark.parametrize("args,msg", [
    (["--labels", "unit,bogus"], "invalid or repeated --labels key 'bogus'"),
    (["--labels", "comm,pid"], "--labels pid refused: a series per "
                               "process would grow without bound"),
    # --by's old spellings are the same keys, refused for the same reason
    (["--labels", "thread"], "--labels tid refused: a series per thread"),
    (["--labels", "unit,unit"], "invalid or repeated --labels key 'unit'"),
    (["--max-series", "x"], "invalid --max-series 'x'"),
    (["--max-series", "0"], "invalid --max-series '0'"),
])
def test_bad_labels(args, msg):
    proc = run_scprof(["daemon"] + args)
    lines = stderr_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert msg in lines[0]

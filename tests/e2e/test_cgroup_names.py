# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Cgroups removed before the report (issue 42, item 3; test_runc.py has a
real container): scprof keeps the path of each cgroup removed while it
runs, so the processes that were in one are grouped under its path, a
hostile one too (the renderers escape it); a path too long for the kernel
to pass on (1024 bytes) cannot be kept, and the cgroup it names is counted
in dropped.cgroup_names and shown by its id.
"""
import os
import subprocess

import pytest

from conftest import cgroup2_mount, counts, workload

HOSTILE = 'x"y\\z \x1b[31m\xe9.scope'  # (cgroupfs refuses a newline)


@pytest.fixture
def top():
    mnt = cgroup2_mount()
    assert mnt, "no cgroup2 mount in /proc/self/mounts"
    path = os.path.join(mnt, f"scprof-names-{os.getpid()}.slice")
    os.mkdir(path)
    yield path
    for d, _, _ in sorted(os.walk(path), key=lambda w: -len(w[0])):
        for _ in range(500):
            try:
                os.rmdir(d)
                break
            except OSError:
                subprocess.run(["sleep", "0.01"])


def run_then_remove(top, leaf, n):
    """A shell moves itself into leaf, runs `threads n` there, moves back
    to top and removes leaf (and its parents up to top) before it exits:
    scprof names the shell's cgroups only once it has exited, by then
    gone."""
    rel = os.path.relpath(leaf, top)
    parts = rel.split(os.sep)
    dirs = [os.path.join(top, *parts[:i]) for i in range(len(parts), 0, -1)]
    os.makedirs(leaf)
    # (a cgroup stays busy a moment after its last process is reaped)
    script = ('echo $$ > "$0/cgroup.procs" && "$1" "$2" && '
              'echo $$ > "$3/cgroup.procs" && shift 3 && for d; do n=0; '
              'until rmdir "$d" 2>/dev/null; do n=$((n + 1)); '
              '[ $n -lt 500 ] || exit 1; sleep 0.01; done; done')
    subprocess.run(["sh", "-c", script, leaf, workload("threads"), str(n),
                    top] + dirs, check=True, timeout=60)
    assert not os.path.exists(leaf)


def getppid(group):
    return counts(group["syscalls"]).get("getppid", (0, 0))[0]


def test_removed_cgroup_keeps_its_hostile_path(top, background):
    s = background(["--cgroup", top, "--by", "cgroup"])
    leaf = os.path.join(top, HOSTILE)
    run_then_remove(top, leaf, 2)
    rc, err, rep = s.stop()
    assert rc == 0, err
    rel = "/" + os.path.relpath(leaf, cgroup2_mount())
    got = {g["by"]["cgroup"]: getppid(g) for g in rep["groups"]}
    assert rel in got, got
    assert got[rel] >= 307, got  # threads 2: 100 + 200 + 7
    assert rep["dropped"]["cgroup_names"] == 0


def test_path_too_long_to_keep_is_counted(top, background):
    # 5 levels of 250 bytes: past the 1024 the kernel passes on
    leaf = os.path.join(top, *[c * 250 for c in "abcde"])
    s = background(["--cgroup", top, "--by", "cgroup"])
    run_then_remove(top, leaf, 1)
    rc, err, rep = s.stop()
    assert rc == 3, (rc, err)  # incomplete: a cgroup has no name
    assert "1 cgroups are named by their id only (removed before their " \
           "path was kept)" in err, err
    assert rep["dropped"]["cgroup_names"] == 1, rep["dropped"]
    got = {g["by"]["cgroup"]: getppid(g) for g in rep["groups"]}
    unnamed = [k for k in got if k.startswith("(cgroup id ")]
    assert len(unnamed) == 1 and got[unnamed[0]] >= 107, got

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Short-lived containers (issue 42, item 3): a real runc container,
runc's cgroupfs driver with cgroupsPath /docker/<64 hex>, whose static
program makes 7000 getppid calls and exits before the report or the scrape.
runc removes the container's cgroup as it exits, so its path can no longer
be looked up then: the container is still named by its id, in the one-shot
report (--by container, JSON and CSV) and in the daemon's --labels
container. Batch jobs, CI steps and Kubernetes Jobs are such containers.
"""
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOM, TIMEOUT, cgroup2_mount, counts, workload
from test_daemon import Daemon, parse, quiesce

RUNC = shutil.which("runc")
CALLS = 7000  # the getppid calls of ctrjob, the container's program


class Container:
    """A runc bundle whose root holds only ctrjob, run to its end."""

    def __init__(self, tmp_path, name):
        self.name = f"scprof-{os.getpid()}-{name}"
        # an id of this run's own: another suite beside this one makes
        # containers with -a watching too
        self.id = hashlib.sha256(self.name.encode()).hexdigest()
        self.bundle = tmp_path / f"bundle-{name}"
        self.state = tmp_path / "runc-state"
        rootfs = self.bundle / "rootfs"
        rootfs.mkdir(parents=True)
        shutil.copy2(workload("ctrjob"), rootfs / "ctrjob")
        p = subprocess.run([RUNC, "spec", "--bundle", str(self.bundle)],
                           capture_output=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        path = self.bundle / "config.json"
        spec = json.loads(path.read_text())
        spec["process"]["terminal"] = False
        spec["process"]["args"] = ["/ctrjob", str(CALLS)]
        spec["linux"]["cgroupsPath"] = f"/docker/{self.id}"
        path.write_text(json.dumps(spec))
        mnt = cgroup2_mount()
        self.cgroup = os.path.join(mnt, "docker", self.id) if mnt else None

    def run(self):
        """runc run: returns once the container has exited and runc has
        removed it, its cgroup too. Returns (exit code, stderr)."""
        p = subprocess.run([RUNC, "--root", str(self.state), "run",
                            "--bundle", str(self.bundle), self.name],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=TIMEOUT)
        return p.returncode, p.stderr.decode(errors="replace")

    def delete(self):
        subprocess.run([RUNC, "--root", str(self.state), "delete", "-f",
                        self.name], capture_output=True, timeout=TIMEOUT)


@pytest.fixture
def container(tmp_path):
    """A container that runc can run here (once, as a probe), or a skip
    that says why not."""
    if not RUNC:
        pytest.skip("runc is not installed (.ci/install-deps test "
                    "installs it)")
    if not cgroup2_mount():
        pytest.skip("no cgroup2 mount: a container has no cgroup v2 to "
                    "be named by")
    made = []

    def make(name):
        c = Container(tmp_path, name)
        made.append(c)
        rc, err = c.run()
        if rc != 0:
            pytest.skip(f"runc cannot run a container here: {err.strip()}")
        return c
    yield make
    for c in made:
        c.delete()


def run_exited(c):
    """Run c to its end; its cgroup is gone before anyone reports."""
    rc, err = c.run()
    assert rc == 0, err
    assert not os.path.exists(c.cgroup), \
        f"runc left the container's cgroup {c.cgroup}"


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_report_names_an_exited_container(container, background, fmt):
    c = container(f"report-{fmt}")
    s = background(["-a", *ROOM, "--by", "container"], fmt=fmt)
    run_exited(c)
    rc, err, rep = s.stop()
    assert rc == 0, err
    if fmt == "json":
        got = {g["by"]["container"]:
               counts(g["syscalls"]).get("getppid", (0, 0))[0]
               for g in rep["groups"]}
    else:
        got = {}
        for row in csv.DictReader(io.StringIO(rep)):
            if row["syscall"] == "getppid":
                got[row["container"]] = got.get(row["container"], 0) + \
                    int(row["calls"])
    unnamed = {k: v for k, v in got.items() if k.startswith("(cgroup id")}
    assert c.id in got, f"the container is not named: {unnamed}"
    # ctrjob's calls, and runc init's few before its exec
    assert CALLS <= got[c.id] < CALLS + 20, got[c.id]


def test_daemon_labels_an_exited_container(container):
    c = container("daemon")
    d = Daemon(["-a", *ROOM, "--labels", "container", "--fold-interval", "0.2",
                "--max-series", "1000"])
    try:
        run_exited(c)

        def folded(samples):
            # our container's series, or (unnamed) any series as large
            return any(n == "scprof_group_syscalls_total" and v >= CALLS and
                       (l["container"] == c.id or
                        l["container"].startswith("(cgroup id"))
                       for n, l, v in samples)

        samples = quiesce(d, folded, "the container's calls folded")
    finally:
        d.kill()
    series = {l["container"]: v for n, l, v in samples
              if n == "scprof_group_syscalls_total"}
    unnamed = {k: v for k, v in series.items() if k.startswith("(cgroup id")}
    assert c.id in series, f"the container is not named: {unnamed}"
    # ctrjob's calls, and runc init's (the Go runtime's) after its move
    assert CALLS <= series[c.id] < CALLS + 5000, series[c.id]

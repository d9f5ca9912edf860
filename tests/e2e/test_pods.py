# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Kubernetes pods (issue 20): --by pod,qos and the daemon's pod and qos
labels, from cgroup trees laid out as the kubelet lays them out, with the
systemd driver (kubepods.slice/kubepods-burstable.slice/
kubepods-burstable-pod<UID with _>.slice/cri-containerd-<ID>.scope) and
the cgroupfs one (kubepods/besteffort/pod<UID>/<ID>), for each QoS class
and each runtime's container id shape (containerd, CRI-O, docker,
podman): calls of a process in each are filed under its pod, class and
container."""
import os
import subprocess

import pytest

from conftest import cgroup2_mount, counts, workload
from test_daemon import Daemon, quiesce, value

IDS = {k: c * 64 for k, c in (("containerd", "a"), ("crio", "b"),
                              ("docker", "c"), ("libpod", "d"))}
UIDS = {k: f"{c * 8}-1111-2222-3333-{c * 12}" for k, c in
        (("burstable", "1"), ("besteffort", "2"), ("guaranteed", "3"),
         ("cgroupfs", "4"))}


def tree(top):
    """Leaf cgroup -> (pod uid, qos, container id, threads N)."""
    def sd(uid):
        return uid.replace("-", "_")
    k = os.path.join(top, "kubepods.slice")
    return {
        os.path.join(k, "kubepods-burstable.slice",
                     f"kubepods-burstable-pod{sd(UIDS['burstable'])}.slice",
                     f"cri-containerd-{IDS['containerd']}.scope"):
            (UIDS["burstable"], "burstable", IDS["containerd"], 1),
        os.path.join(k, "kubepods-besteffort.slice",
                     f"kubepods-besteffort-pod{sd(UIDS['besteffort'])}"
                     ".slice", f"crio-{IDS['crio']}.scope"):
            (UIDS["besteffort"], "besteffort", IDS["crio"], 2),
        os.path.join(k, f"kubepods-pod{sd(UIDS['guaranteed'])}.slice",
                     f"docker-{IDS['docker']}.scope"):
            (UIDS["guaranteed"], "guaranteed", IDS["docker"], 3),
        os.path.join(top, "kubepods", "burstable",
                     f"pod{UIDS['cgroupfs']}", IDS["libpod"]):
            (UIDS["cgroupfs"], "burstable", IDS["libpod"], 4),
    }


@pytest.fixture
def kube():
    mnt = cgroup2_mount()
    assert mnt, "no cgroup2 mount in /proc/self/mounts"
    top = os.path.join(mnt, f"scprof-kube-{os.getpid()}")
    leaves = tree(top)
    for leaf in leaves:
        os.makedirs(leaf)
    yield top, leaves
    for d, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        for _ in range(500):
            try:
                os.rmdir(d)
                break
            except OSError:
                subprocess.run(["sleep", "0.01"])


def getppid_of(n):
    return 100 * n * (n + 1) // 2 + 7


def run_in(leaf, n):
    """A threads workload started the runc way: the shell moves itself
    into the leaf, then execs."""
    subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && '
                    'exec "$1" "$2"', leaf, workload("threads"), str(n)],
                   check=True, timeout=60)


def test_by_pod_qos_container(kube, background):
    top, leaves = kube
    s = background(["--cgroup", top, "--by", "pod,qos,container"])
    for leaf, (_, _, _, n) in leaves.items():
        run_in(leaf, n)
    rc, err, rep = s.stop()
    assert rc == 0, err
    got = {(g["by"]["pod"], g["by"]["qos"], g["by"]["container"]):
           counts(g["syscalls"]).get("getppid", (0, 0))[0]
           for g in rep["groups"]}
    want = {(uid, qos, cid): getppid_of(n)
            for uid, qos, cid, n in leaves.values()}
    # the shell's own calls before its exec are in the same cgroup
    assert set(got) == set(want), got
    for k, v in want.items():
        assert v <= got[k] < v + 50, (k, got[k], v)


def test_daemon_pod_and_qos_labels(kube):
    top, leaves = kube
    d = Daemon(["--cgroup", top, "--labels", "pod,qos",
                "--fold-interval", "0.2"])
    try:
        for leaf, (_, _, _, n) in leaves.items():
            run_in(leaf, n)

        def all_in(samples):
            return value(samples, "scprof_processes_folded_total") >= 4

        samples = quiesce(d, all_in, "the 4 processes folded")
    finally:
        d.kill()
    series = {(l["pod"], l["qos"]): v for name, l, v in samples
              if name == "scprof_group_syscalls_total"}
    for uid, qos, _, n in leaves.values():
        v = series.pop((uid, qos))
        assert getppid_of(n) <= v < getppid_of(n) + 400, (uid, v)
    # (the "(other)" series is always there; nothing went to it)
    assert series.pop(("(other)", "(other)"), 0) == 0
    assert not series, series

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""contrib/kubernetes: the manifests parse, hang together (labels, ports,
secrets), ask for exactly the privileges the daemon needs, and the
DaemonSet's command line runs a real daemon under those privileges: root
with every capability dropped but CAP_BPF and CAP_PERFMON, no new
privileges. (No cluster and no container engine here: the image build and
the Operator are not exercised.)"""
import os
import re
import subprocess
import time

import pytest
import yaml

from deploy_util import CONTRIB, SCPROF, TIMEOUT, bcrypt, daemon_help, tool

K8S = os.path.join(CONTRIB, "kubernetes")
MANIFEST = os.path.join(K8S, "scprof.yaml")


def docs():
    with open(MANIFEST) as f:
        return {d["kind"]: d for d in yaml.safe_load_all(f)}


def container():
    pod = docs()["DaemonSet"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    return pod, c


def test_manifests_parse_and_fit_together():
    d = docs()
    assert set(d) == {"Namespace", "DaemonSet", "Service", "ServiceMonitor"}
    ns = d["Namespace"]["metadata"]["name"]
    for kind in ("DaemonSet", "Service", "ServiceMonitor"):
        assert d[kind]["metadata"]["namespace"] == ns, kind
    ds, svc, sm = d["DaemonSet"], d["Service"], d["ServiceMonitor"]
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    assert sm["spec"]["selector"]["matchLabels"].items() <= \
        svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == [ns]
    _, c = container()
    (port,) = c["ports"]
    (sport,) = svc["spec"]["ports"]
    assert sport["targetPort"] == port["name"]
    assert [e["port"] for e in sm["spec"]["endpoints"]] == [sport["name"]]
    # the listen port is the container port
    args = c["args"]
    assert args[args.index("--listen") + 1].endswith(f":{port['containerPort']}")
    # the web config comes from the secret the volume mounts
    web = args[args.index("--web-config") + 1]
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
    (wm,) = [m for m in mounts.values() if web.startswith(m["mountPath"] + "/")]
    assert "secret" in vols[wm["name"]]


def test_daemonset_asks_for_least_privilege():
    pod, c = container()
    assert pod["hostPID"] is True
    assert pod.get("hostNetwork", False) is False
    assert pod["automountServiceAccountToken"] is False
    sc = c["securityContext"]
    assert sc["privileged"] is False
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert sorted(sc["capabilities"]["add"]) == ["BPF", "PERFMON"]
    vols = {v["name"]: v for v in pod["volumes"]}
    ro = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
    for path in ("/sys/kernel/btf", "/sys/fs/cgroup"):
        assert path in ro, path
        assert ro[path]["hostPath"]["path"] == path
    for m in c["volumeMounts"]:
        assert m["readOnly"] is True, m
    # nothing else from the host
    assert {n for n, v in vols.items() if "hostPath" in v} == {"btf", "cgroup"}


def test_args_are_real_daemon_options():
    _, c = container()
    help_text = daemon_help()
    known = set(re.findall(r"(--[a-z][a-z-]*)", help_text))
    used = [a for a in c["args"] if a.startswith("-")]
    assert c["args"][0] == "daemon"
    assert used and set(used) <= known, set(used) - known


def in_container(caps):
    """setpriv as the container runtime would start the daemon: uid 0, the
    capability sets (bounding, inheritable, ambient) reduced to caps, and
    no_new_privs (allowPrivilegeEscalation: false)."""
    names = ",".join(["-all"] + [f"+{c.lower()}" for c in caps])
    return [tool("setpriv"), "--reuid=0", "--regid=0", "--clear-groups",
            f"--bounding-set={names}", f"--inh-caps={names}",
            f"--ambient-caps={names}", "--no-new-privs"]


def k8s_args(tmp_path, web):
    """The DaemonSet's args, on loopback port 0 and a test web config."""
    _, c = container()
    args = list(c["args"][1:])
    args[args.index("--listen") + 1] = "127.0.0.1:0"
    args[args.index("--web-config") + 1] = str(web)
    return args


def test_daemonset_command_runs_with_exactly_its_capabilities(tmp_path):
    _, c = container()
    caps = c["securityContext"]["capabilities"]["add"]
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users:\n  prometheus: {bcrypt('pw')}\n")
    # the DaemonSet's own args (the whole system) narrowed to this process,
    # so that its 50 failing stat calls can be told apart
    cmd = in_container(caps) + [SCPROF, "daemon"] + \
        k8s_args(tmp_path, web) + ["-p", str(os.getpid())]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = p.stderr.readline()
        m = re.search(rb"serving metrics at http://127\.0\.0\.1:(\d+)/", line)
        assert m, line + p.stderr.read()
        port = int(m.group(1))
        with open(f"/proc/{p.pid}/status") as f:
            status = f.read()
        assert re.search(r"^NoNewPrivs:\s+1$", status, re.M)
        bnd = int(re.search(r"^CapBnd:\s+(\S+)$", status, re.M).group(1), 16)
        assert bnd & ~((1 << 38) | (1 << 39)) == 0, hex(bnd)
        marker = "/nonexistent/scprof-k8s-test"
        for _ in range(50):
            try:
                os.stat(marker)
            except OSError:
                pass
        import base64
        import urllib.request
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
        req.add_header("Authorization",
                       "Basic " + base64.b64encode(b"prometheus:pw").decode())
        deadline = time.monotonic() + TIMEOUT
        while True:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                text = r.read().decode()
            m = re.search(r'^scprof_syscall_errors_total\{syscall="newfstatat",'
                          r'abi="64"\} (\d+)$', text, re.M)
            if m and int(m.group(1)) >= 50:
                break
            assert time.monotonic() < deadline, \
                "the 50 failing stat calls were not counted"
            time.sleep(0.2)
    finally:
        p.terminate()
        _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0, err
    # one capability fewer and the daemon refuses, saying which it needs
    for drop in caps:
        cmd = in_container([x for x in caps if x != drop]) + \
            [SCPROF, "daemon"] + k8s_args(tmp_path, web)
        r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
        assert r.returncode == 1, r.stderr
        assert b"CAP_BPF and CAP_PERFMON" in r.stderr, r.stderr


def test_dockerfile_builds_from_scratch_with_the_static_binary():
    with open(os.path.join(K8S, "Dockerfile")) as f:
        text = f.read()
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == "FROM scratch"
    assert "COPY scprof-static /scprof" in lines
    assert 'ENTRYPOINT ["/scprof"]' in lines
    with open(os.path.join(K8S, "Dockerfile.dockerignore")) as f:
        assert "!scprof-static" in f.read().split()
    # The image build itself needs a container engine, absent here (the
    # docker client has no daemon): it is not exercised by these tests.

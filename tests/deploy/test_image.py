# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""contrib/kubernetes/Dockerfile builds the image the DaemonSet runs: built
here with buildah (Debian's, no container daemon needed: vfs storage,
chroot isolation), then checked from its OCI configuration and its root
file system: the static binary alone, the same bytes as ./scprof-static,
running inside the image. (Running the daemon inside it needs a container
runtime that lets bpf() through; the DaemonSet's command line and
capabilities are run on the host by test_kubernetes.py.)"""
import filecmp
import os
import subprocess

import pytest

from deploy_util import CONTRIB, ROOT, TIMEOUT, tool

STATIC = os.path.join(ROOT, "scprof-static")
TAG = "localhost/scprof-test:%d" % os.getpid()


def buildah(*args, check=True):
    p = subprocess.run([tool("buildah"), "--storage-driver", "vfs"] +
                       list(args), capture_output=True, text=True,
                       timeout=TIMEOUT * 5)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def image():
    assert os.access(STATIC, os.X_OK), \
        "./scprof-static is not built (make static; make test-deploy does)"
    buildah("bud", "--isolation", "chroot", "-f",
            os.path.join(CONTRIB, "kubernetes", "Dockerfile"), "-t", TAG,
            ROOT)
    ctr = buildah("from", TAG).stdout.strip()
    try:
        yield ctr
    finally:
        buildah("rm", ctr, check=False)
        buildah("rmi", TAG, check=False)


def test_dockerfile_builds_the_static_binary_alone(image):
    fmt = ("{{.OCIv1.Config.Entrypoint}}|{{.OCIv1.Config.Cmd}}|"
           "{{.OCIv1.Config.User}}|{{.OCIv1.Config.ExposedPorts}}")
    cfg = buildah("inspect", "--format", fmt, image).stdout.strip()
    assert cfg == "[/scprof]|[daemon --listen 0.0.0.0:9733]|0:0|" \
                  "map[9733/tcp:{}]", cfg
    root = buildah("mount", image).stdout.strip()
    try:
        assert sorted(os.listdir(root)) == ["scprof"]
        assert filecmp.cmp(os.path.join(root, "scprof"), STATIC,
                           shallow=False)
    finally:
        buildah("umount", image, check=False)
    # it runs inside the image, where nothing else exists
    out = buildah("run", "--isolation", "chroot", image, "/scprof",
                  "--version").stdout
    assert out.startswith("scprof "), out
    help_ = buildah("run", "--isolation", "chroot", image, "/scprof",
                    "daemon", "--help").stdout
    assert "--web-config" in help_ and "--max-overhead" in help_

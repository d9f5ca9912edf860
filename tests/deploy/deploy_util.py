# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Helpers of the deploy tests (make test-deploy): contrib/prometheus,
contrib/grafana and contrib/kubernetes against the real tools and a real
scprof daemon."""
import base64
import ctypes
import json
import os
import re
import shlex
import select
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCPROF = os.environ.get("SCPROF", os.path.join(ROOT, "scprof"))
CONTRIB = os.path.join(ROOT, "contrib")
TIMEOUT = 60

# Queries on metrics or labels that other branches of this session add
# (issue #14: the `unit` label of the per-process series, daemon --labels
# comm,unit).
# A query that mentions one of these may return no data here: the tests
# report it and go on. The coordinator empties this set at merge; from then
# on every query must return data.
PENDING_FROM_OTHER_BRANCHES = set()


def pending(expr):
    """The pending names an expression mentions."""
    return sorted(p for p in PENDING_FROM_OTHER_BRANCHES if p in expr)


def tool(name):
    """The path of a tool the tests need. Missing, it fails the test, unless
    SCPROF_ALLOW_SKIP=1 (then it skips, saying so)."""
    path = shutil.which(name)
    if path:
        return path
    msg = f"{name} is not installed (Debian: see .ci/install-deps)"
    if os.environ.get("SCPROF_ALLOW_SKIP") == "1":
        pytest.skip(msg)
    pytest.fail(msg + "; SCPROF_ALLOW_SKIP=1 skips instead")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bcrypt(password, cost=5):
    """A bcrypt hash made by libcrypt (what htpasswd -B makes)."""
    lib = ctypes.CDLL("libcrypt.so.1")
    lib.crypt_gensalt.restype = ctypes.c_char_p
    lib.crypt.restype = ctypes.c_char_p
    h = lib.crypt(password.encode(), lib.crypt_gensalt(b"$2b$", cost, None, 0))
    assert h and h.startswith(b"$2b$"), h
    return h.decode()


def self_signed(d):
    """A self-signed certificate for localhost/127.0.0.1: (cert, key)."""
    cert, key = d / "server.crt", d / "server.key"
    p = subprocess.run(
        [tool("openssl"), "req", "-x509", "-newkey", "rsa:2048", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj",
         "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr.decode()
    return cert, key


def daemon_help():
    p = subprocess.run([SCPROF, "daemon", "--help"], capture_output=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


def unit_args(tmp_path):
    """The shipped systemd unit's daemon options (its ExecStart after
    `daemon`), on loopback port 0 (the tests' Daemon adds it) and a pid
    file under tmp_path: the rest exactly as the unit runs it."""
    with open(os.path.join(CONTRIB, "systemd", "scprof-daemon.service")) as f:
        lines = re.findall(r"^ExecStart=(.*)$", f.read(), re.M)
    assert len(lines) == 1, lines
    argv = shlex.split(lines[0])
    assert argv[1] == "daemon", argv
    args = argv[2:]
    i = args.index("--listen")
    del args[i:i + 2]
    args[args.index("--pidfile") + 1] = str(tmp_path / "scprof-daemon.pid")
    return args


class Daemon:
    """A running scprof daemon on 127.0.0.1, port from its first log line."""

    def __init__(self, args):
        self.proc = subprocess.Popen(
            [SCPROF, "daemon", "--listen", "127.0.0.1:0"] + list(args),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        r, _, _ = select.select([self.proc.stderr], [], [], TIMEOUT)
        line = self.proc.stderr.readline() if r else b""
        m = re.search(rb"serving metrics at (https?)://127\.0\.0\.1:(\d+)/", line)
        if not m:
            self.stop()
            raise AssertionError(f"daemon did not start: {line!r}")
        self.scheme, self.port = m.group(1).decode(), int(m.group(2))

    def metrics(self, auth=None):
        """The exposition over plain HTTP."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/metrics")
        if auth:
            req.add_header("Authorization", "Basic " +
                           base64.b64encode(auth.encode()).decode())
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.read().decode()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        return self.proc.returncode


def metric_names(exposition):
    """The sample names of a text exposition."""
    return {m.group(1) for m in re.finditer(
        r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )", exposition, re.M)}


class Prometheus:
    """A real Prometheus server on a free loopback port, with a temporary
    configuration and data directory."""

    def __init__(self, tmp_path, config):
        self.port = free_port()
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(config)
        self.proc = subprocess.Popen(
            [tool("prometheus"), f"--config.file={cfg}",
             f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=error"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, cwd=str(tmp_path))

    def api(self, path, **q):
        assert self.proc.poll() is None, self.proc.stderr.read().decode()
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if q:
            url += "?" + urllib.parse.urlencode(q, doseq=True)
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr):
        return self.api("query", query=expr)["result"]

    def wait_for(self, expr, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            try:
                res = self.query(expr)
                if res:
                    return res
            except OSError:
                pass
            assert time.monotonic() < deadline, f"Prometheus: {what}"
            time.sleep(0.5)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

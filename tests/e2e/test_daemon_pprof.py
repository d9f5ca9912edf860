# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon --pprof-endpoint (issue 44, item 2): the call sites of the
calls made over N seconds at /debug/pprof/syscalls?seconds=N, fetched and
read by `go tool pprof` itself (Debian's golang-go), over plain HTTP and
over the daemon's HTTPS with basic auth.

The truth is tests/workloads/stackmix's: it writes to /dev/null RATIO
times through stdio (log_line <- run_logger <- main) for each write(2) it
makes directly (raw_write <- run_raw <- main), so pprof must give log_line
RATIO / (RATIO + 1) of the write calls and raw_write the rest; and the
profile's write calls are the daemon's own count over the profile, which
two scrapes around it bracket.
"""
import http.client
import os
import ssl
import subprocess
import threading
import time
import urllib.parse

import pytest

from conftest import CLEAN_ENV, TIMEOUT, cgroup2_mount, run, unit_slice, \
    workload
from test_daemon import daemons, gates, parse, value  # noqa: F401
from test_pprof import RATIO, parse_raw, parse_top
from test_web_config import PASSWORD, bcrypt, tls_config

GO = os.environ.get("GO", "/usr/bin/go")
PATH = "/debug/pprof/syscalls"
# every call timed (so sampled: windows always open), and unwinding
# allowed half a CPU: enough samples in a few seconds on a busy machine
ARGS = ["--pprof-endpoint", "--latency-duty", "1", "--max-overhead", "50"]
WRITE = {"syscall": "write", "abi": "64"}


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A CA (ca.crt) and the server's certificate it signed (server.crt,
    server.key), as Go's x509 wants them (it refused test_web_config's
    self-signed one as its own CA)."""
    d = tmp_path_factory.mktemp("certs")
    ext = d / "ext.cnf"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for cmd in (
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
             "-keyout", str(d / "ca.key"), "-out", str(d / "ca.crt"),
             "-days", "2", "-subj", "/CN=scprof test CA"],
            ["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes",
             "-keyout", str(d / "server.key"), "-out", str(d / "server.csr"),
             "-subj", "/CN=localhost"],
            ["openssl", "x509", "-req", "-in", str(d / "server.csr"), "-CA",
             str(d / "ca.crt"), "-CAkey", str(d / "ca.key"),
             "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out",
             str(d / "server.crt")]):
        p = run(cmd)
        assert p.returncode == 0, p.stderr.decode()
    return d


def go_pprof(args, source, tmp_path, ca=None):
    """`go tool pprof ARGS SOURCE` (a URL): its standard output. ca: the
    one CA it trusts (Go reads SSL_CERT_FILE for its roots; pprof's
    -tls_ca did not take here)."""
    assert os.access(GO, os.X_OK), \
        f"{GO} not found: .ci/install-deps test installs golang-go"
    env = dict(CLEAN_ENV, HOME=str(tmp_path), PPROF_TMPDIR=str(tmp_path))
    if ca:
        env["SSL_CERT_FILE"] = str(ca)
    proc = subprocess.run([GO, "tool", "pprof"] + args + [source],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=TIMEOUT + 60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


def stackmix(daemons, gates, args=ARGS):
    """A daemon on a stackmix that runs until killed, started."""
    g = gates([workload("stackmix"), "1000000000", str(RATIO), "0"])
    d = daemons(["-p", str(g.pid), "-f"] + list(args))
    g.release()
    deadline = time.monotonic() + TIMEOUT
    while (value(parse(d.metrics())[0], "scprof_syscalls_total", **WRITE)
           or 0) < 10000:
        assert time.monotonic() < deadline, "stackmix never wrote"
        time.sleep(0.05)
    return d


def writes(d):
    return value(parse(d.metrics())[0], "scprof_syscalls_total", **WRITE)


def test_go_pprof_names_the_workloads_functions(daemons, gates, tmp_path):
    d = stackmix(daemons, gates)
    url = f"http://127.0.0.1:{d.port}{PATH}?seconds=3"
    before = writes(d)
    types, samples, locs, maps, header = parse_raw(
        go_pprof(["-raw"], url, tmp_path))
    after = writes(d)
    assert types == ["calls/count",
                     "syscall-nanoseconds/nanoseconds[dflt]"], types
    assert "PeriodType: calls count" in header, header
    assert samples, "no sample"
    mine = [s for s in samples if s["labels"].get("comm") == "stackmix"]
    assert mine, [s["labels"] for s in samples]
    for s in samples:  # the syscall is the leaf, in no mapping
        assert locs[s["locs"][0]]["mapping"] is None, s
    ws = [s for s in mine if locs[s["locs"][0]]["func"] == "write"]
    calls = sum(s["values"][0] for s in ws)
    # each syscall's calls are the daemon's exact count over the profile,
    # which the scrapes before and after it bracket (to half a call a
    # sample, the rounding of its share)
    assert calls <= after - before + len(ws), (calls, before, after)
    assert calls >= 0.5 * (after - before), (calls, before, after)
    assert all(s["values"][1] > 0 for s in ws), "writes without time"
    comments = [h for h in header if h.startswith("Comment: ")]
    assert any("sampled in the latency windows" in c for c in comments), \
        comments
    # the workload's own functions, as pprof adds them up
    rows, header = parse_top(go_pprof(
        ["-top", "-sample_index=calls", "-tagfocus=comm=stackmix"], url,
        tmp_path))
    num = float
    write = num(rows["write"][0])
    assert abs(num(rows["log_line"][1]) / write -
               RATIO / (RATIO + 1)) < 0.06, rows
    assert abs(num(rows["raw_write"][1]) / write -
               1 / (RATIO + 1)) < 0.06, rows
    assert num(rows["main"][1]) >= 0.95 * write, rows["main"]


# two units, one program: the labels tell their samples apart
UNITS = ("pp-a.service", "pp-b.scope")


@pytest.fixture
def slice_():
    yield from unit_slice("scprof-pprof", UNITS)


def test_labels_as_the_metrics_series(daemons, slice_, gates, tmp_path):
    """--labels comm,unit,cgroup: each sample carries comm, unit and
    cgroup, with the values the /metrics series of its process have; the
    same program in two units is two sets of samples. (slice_ before
    gates: the workloads are killed before their slice is removed.)"""
    mnt = cgroup2_mount()
    d = daemons(["--cgroup", slice_, "--labels", "comm,unit,cgroup"] +
                ARGS)
    for u in UNITS:
        g = gates([workload("stackmix"), "1000000000", str(RATIO), "0"])
        with open(os.path.join(slice_, u, "cgroup.procs"), "w") as f:
            f.write(str(g.pid))
        g.release()

    def series():
        return {(lb["comm"], lb["unit"], lb["cgroup"]): v
                for n, lb, v in parse(d.metrics())[0]
                if n == "scprof_group_syscalls_total"}
    deadline = time.monotonic() + TIMEOUT
    while sum(1 for k, v in series().items()
              if k[0] == "stackmix" and v >= 10000) < len(UNITS):
        assert time.monotonic() < deadline, series()
        time.sleep(0.05)
    url = f"http://127.0.0.1:{d.port}{PATH}?seconds=3"
    _, samples, _, _, header = parse_raw(go_pprof(["-raw"], url, tmp_path))
    want = {k for k in series() if k[0] == "stackmix"}
    # the truth: the units the test made, as /metrics names them
    assert want == {("stackmix", u, os.path.join(slice_, u)[len(mnt):])
                    for u in UNITS}, want
    mine = [s for s in samples if s["labels"].get("comm") == "stackmix"]
    got = {(s["labels"]["comm"], s["labels"].get("unit"),
            s["labels"].get("cgroup")) for s in mine}
    assert got == want, (got, want)
    for s in samples:
        assert set(s["labels"]) == {"comm", "unit", "cgroup"}, s["labels"]
    comments = [h for h in header if h.startswith("Comment: ")]
    assert any("labels: comm and those of the daemon's --labels" in c
               for c in comments), comments


def get(d, path, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=TIMEOUT)
    c.request(method, path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict(r.getheaders()), body


def running(d, seconds):
    """A profile of seconds requested in a thread, once another request
    was refused because of it: (the thread, its result, the refusal)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        got = {}

        def take():
            try:
                got["r"] = get(d, f"{PATH}?seconds={seconds}")
            except (http.client.HTTPException, OSError) as e:
                got["e"] = e
        t = threading.Thread(target=take)
        t.start()
        # (whichever request comes first runs: when it is the one
        # below, the thread's was refused, and it starts again)
        while t.is_alive():
            status, _, body = get(d, f"{PATH}?seconds=1")
            if status == 409 and t.is_alive():
                return t, got, body
            assert status in (200, 409), (status, body)
        t.join()
    raise AssertionError("no profile ever ran alone")


def test_one_profile_at_a_time_and_bad_seconds(daemons, gates):
    d = stackmix(daemons, gates)
    for bad in ("0", "301", "-1", "abc", "2s", "", "1e3"):
        status, _, body = get(d, f"{PATH}?seconds={urllib.parse.quote(bad)}")
        assert status == 400, (bad, status, body)
        assert body == b"bad request: seconds must be a whole number " \
            b"from 1 to 300\n", body
    assert get(d, f"{PATH}?seconds=1", "HEAD")[0] == 405
    t, first, body = running(d, 3)
    assert body.startswith(b"conflict: a profile is running, ") and \
        body.endswith(b" s left; one at a time\n"), body
    assert body.count(b"\n") == 1
    # /metrics is served meanwhile
    assert get(d, "/metrics")[0] == 200
    t.join(TIMEOUT)
    status, headers, body = first["r"]
    assert status == 200, body
    assert headers["Content-Type"] == "application/octet-stream"
    assert body[:2] == b"\x1f\x8b", "not gzip"
    # and once it is over, the next one runs
    status, _, body = get(d, f"{PATH}?seconds=1")
    assert status == 200 and body[:2] == b"\x1f\x8b", (status, body[:80])


def test_a_profile_outlasts_the_idle_timeout(daemons, gates):
    """A request waits its profile's seconds, longer than --http-timeout
    (the default profile is 30 s, the default timeout 10 s): it is not
    dropped as idle."""
    d = stackmix(daemons, gates, args=ARGS + ["--http-timeout", "1"])
    status, _, body = get(d, f"{PATH}?seconds=3")
    assert status == 200 and body[:2] == b"\x1f\x8b", (status, body[:80])


def test_no_endpoint_without_the_option(daemons, gates):
    d = stackmix(daemons, gates, args=[])
    status, _, body = get(d, f"{PATH}?seconds=1")
    assert status == 404, status
    assert b"--pprof-endpoint" in body and body.count(b"\n") == 1, body


def test_stopping_during_a_profile(daemons, gates):
    """SIGTERM while a request waits for its profile: the daemon stops at
    once and cleanly, and the client sees its connection closed."""
    d = stackmix(daemons, gates)
    t, got, _ = running(d, 60)
    rc, _, err = d.stop()
    assert rc == 0, err
    assert b"stopped: BPF programs detached" in err, err
    t.join(TIMEOUT)
    assert not t.is_alive()
    assert "e" in got or got["r"][0] == 503, got


def test_over_https_with_basic_auth(daemons, gates, certs, tmp_path):
    """The same TLS and basic auth as /metrics: go tool pprof with the
    password in the URL and the server's certificate as its CA."""
    web = tmp_path / "web.yml"
    web.write_text(tls_config(certs, {"prof": bcrypt(PASSWORD)}))
    g = gates([workload("stackmix"), "1000000000", str(RATIO), "0"])
    proc = subprocess.Popen(
        [os.environ.get("SCPROF", "./scprof"), "daemon", "--listen",
         "127.0.0.1:0", "--web-config", str(web), "-p", str(g.pid), "-f"] +
        ARGS, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline()
        port = int(line.split(b"127.0.0.1:")[1].split(b"/")[0])
        g.release()
        ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        c = http.client.HTTPSConnection("localhost", port, timeout=TIMEOUT,
                                        context=ctx)
        c.request("GET", f"{PATH}?seconds=1")
        r = c.getresponse()
        assert r.status == 401, r.status
        r.read()
        c.close()
        user = "prof:" + urllib.parse.quote(PASSWORD, safe="")
        url = f"https://{user}@localhost:{port}{PATH}?seconds=2"
        rows, _ = parse_top(go_pprof(
            ["-top", "-sample_index=calls"], url, tmp_path,
            ca=certs / "ca.crt"))
        assert "log_line" in rows and "raw_write" in rows, rows
    finally:
        proc.terminate()
        proc.communicate(timeout=TIMEOUT)

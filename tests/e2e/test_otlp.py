# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon --otlp-endpoint (issue 44, item 1): what it pushes, decoded
with protoc's Python code of the same .proto files (otlp_util.py), against
a /metrics scrape of the same daemon once its figures stand still, and
against the pacer's own counts; the resource; headers (the file's stay out
of ps); retries on 503, 429 and refused connections; the bounded queue and
its drops; TLS with a client certificate; bad options.

The receiver is a small OTLP/HTTP server of the test's own on 127.0.0.1;
the real OpenTelemetry Collector is tests/otlp/test_collector.py's (make
test-extra).
"""
import os
import subprocess
import time

import pytest

from conftest import TIMEOUT, run, run_scprof, stderr_lines, unit_slice, workload
from test_daemon import comm_link, daemons, gates, parse, quiesce, value  # noqa: F401 (fixtures)
import otlp_util as ou

@pytest.fixture
def receivers():
    made = []

    def make(**kw):
        r = ou.Receiver(**kw)
        made.append(r)
        return r
    yield make
    for r in made:
        r.close()


def exports_after(r, t_ns, what="an export"):
    """The first export whose points were taken after t_ns (unix)."""
    def taken(reqs):
        return [q for _, _, q in reqs if ou.series(q)[0] and
                any(p.time_unix_nano > t_ns for m in ou.metrics(q)
                    if m.WhichOneof("data") == "sum"
                    for p in m.sum.data_points)]
    reqs = r.wait(lambda reqs: taken(reqs), TIMEOUT, what)
    return taken(reqs)[0]


def test_export_equals_scrape_and_ground_truth(receivers, daemons, gates,
                                               tmp_path):
    # The pacer makes exactly 5 x 1000 getppid and 5 x 3 failing openat,
    # under a hostile name.
    r = receivers()
    hostile = b'ev"il\\\n\xff{x}'
    g = gates([comm_link(tmp_path, hostile), "1000", "3", "2", "5"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1", "--otlp-endpoint", r.url(),
                 "--otlp-interval", "0.2"])
    g.release()
    assert g.wait() == 0
    before = quiesce(
        d, lambda s: value(s, "scprof_processes_folded_total") == 1,
        "the pacer folded")
    req = exports_after(r, time.time_ns(), "an export after the fold")
    samples, _ = parse(d.metrics())
    path, headers, _ = r.requests[-1]
    assert path == "/v1/metrics"
    assert headers["Content-Type"] == "application/x-protobuf"
    assert headers["User-Agent"].startswith("scprof/")
    assert headers["Content-Encoding"] == "gzip"  # the default

    # the resource, by the semantic conventions
    res = ou.resource_attrs(req)
    assert res["service.name"] == "scprof"
    assert res["host.name"] == os.uname().nodename
    assert res["host.arch"] == {"x86_64": "amd64", "aarch64": "arm64"}.get(
        os.uname().machine, os.uname().machine)
    assert res["os.type"] == "linux"
    assert len(res["service.instance.id"]) == 36
    assert res["service.instance.id"] in d.proc.stderr.readline().decode()

    # cumulative monotonic sums from the daemon's start; a per-name series
    # made later (the pacer's, once it ran) from then
    starts, comm_starts = set(), set()
    for m in ou.metrics(req):
        kind = m.WhichOneof("data")
        if kind == "sum":
            assert m.sum.is_monotonic, m.name
            assert m.sum.aggregation_temporality == ou.CUMULATIVE, m.name
            (comm_starts if m.name.startswith("scprof.group.") else
             starts).update(p.start_time_unix_nano
                            for p in m.sum.data_points)
        elif kind == "histogram":
            assert m.histogram.aggregation_temporality == ou.CUMULATIVE
            starts |= {p.start_time_unix_nano
                       for p in m.histogram.data_points}
    (start,) = starts
    assert 0 < start < time.time_ns()
    assert all(start <= t < time.time_ns() for t in comm_starts)

    # every figure equals the scrape's (the pacer's are still since the
    # fold, which the scrape before the export saw)
    want = ou.prom_series(samples)
    assert want == ou.prom_series(before) | {
        k: v for k, v in want.items() if ou.volatile(k[0])}
    got, hists = ou.check_equals_scrape(req, samples)
    # the ground truth of the pacer
    assert got[("scprof_syscalls_total",
                (("abi", "64"), ("syscall", "getppid")))] == 5000
    assert got[("scprof_syscall_errors_total",
                (("abi", "64"), ("syscall", "openat")))] == 15
    comm = 'ev"il\\\n\ufffd{x}'
    assert got[("scprof_group_syscalls_total", (("comm", comm),))] >= 5015

    getppid = hists[(("abi", "64"), ("syscall", "getppid"))]
    assert getppid.count == 5000
    # finer than /metrics: the getppid calls fall in more of scprof's
    # buckets than of /metrics' powers of four
    assert sum(1 for c in getppid.bucket_counts if c) >= 2

    # the exporter's own counts, in /metrics
    assert value(samples, "scprof_otlp_exports_sent_total") >= 1
    assert value(samples, "scprof_otlp_exports_dropped_total") == 0
    assert value(samples, "scprof_otlp_exports_failed_total") == 0


ID64 = "0123456789abcdef" * 4
UNITS = {"a.service": 1, f"docker-{ID64}.scope": 2}


@pytest.fixture
def slice_():
    yield from unit_slice("scprof-otlp", UNITS)


def test_labels_become_semantic_attributes(receivers, daemons, slice_):
    """--labels unit,container,comm: each per-name series' attributes are
    systemd.unit, container.id and process.executable.name, the values
    /metrics' labels have."""
    r = receivers()
    d = daemons(["--cgroup", slice_, "--labels", "unit,container,comm",
                 "--fold-interval", "0.1", "--otlp-endpoint", r.url(),
                 "--otlp-interval", "0.2"])
    for u, n in UNITS.items():
        subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && '
                        'exec "$1" "$2"', os.path.join(slice_, u),
                        workload("threads"), str(n)], check=True,
                       timeout=TIMEOUT)
    samples = quiesce(
        d, lambda s: value(s, "scprof_processes_folded_total") >= 2,
        "the 2 processes folded")
    req = exports_after(r, time.time_ns(), "an export after the folds")
    (m,) = [m for m in ou.metrics(req) if m.name == "scprof.group.syscalls"]
    got = {}
    for p in m.sum.data_points:
        a = {x.key: x.value.string_value for x in p.attributes}
        assert set(a) == {"systemd.unit", "container.id",
                          "process.executable.name"}, a
        got[(a["systemd.unit"], a["container.id"],
             a["process.executable.name"])] = p.as_int
    want = {(l["unit"], l["container"], l["comm"]): v for n, l, v in samples
            if n == "scprof_group_syscalls_total"}
    assert got == want
    assert ("a.service", "", "threads") in got
    assert (f"docker-{ID64}.scope", ID64, "threads") in got


def test_final_export_on_sigterm(receivers, daemons):
    r = receivers()
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url(),
                 "--otlp-interval", "3600"])
    r.wait(lambda reqs: len(reqs) >= 1, TIMEOUT, "the first export")
    rc, _, err = d.stop()
    assert rc == 0, err
    assert len(r.requests) == 2, "no final export"


def test_headers_and_the_header_file_out_of_ps(receivers, daemons, tmp_path):
    r = receivers()
    hf = tmp_path / "headers"
    hf.write_text("# the collector's token\n\n"
                  "Authorization:   Bearer s3cr3t-token  \n"
                  "X-Tenant: blue\n")
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint",
                 r.url() + "/v1/metrics", "--otlp-header", "X-Scope: a b",
                 "--otlp-headers-file", str(hf)])
    reqs = r.wait(lambda reqs: len(reqs) >= 1, TIMEOUT, "an export")
    path, headers, _ = reqs[0]
    assert path == "/v1/metrics"
    assert headers["Authorization"] == "Bearer s3cr3t-token"
    assert headers["X-Tenant"] == "blue"
    assert headers["X-Scope"] == "a b"
    with open(f"/proc/{d.pid}/cmdline", "rb") as f:
        assert b"s3cr3t" not in f.read()


def test_compression_none(receivers, daemons):
    r = receivers()
    daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url(),
             "--otlp-compression", "none"])
    reqs = r.wait(lambda reqs: len(reqs) >= 1, TIMEOUT, "an export")
    _, headers, req = reqs[0]
    assert "Content-Encoding" not in headers
    assert ou.resource_attrs(req)["service.name"] == "scprof"


def test_retries_503_429_with_backoff_then_sends(receivers, daemons):
    answers = {0: (503, {}, b"busy"), 1: (429, {"Retry-After": "0"}, b""),
               2: (502, {}, b"")}
    r = receivers(answer=lambda n, req: answers.get(n, (200, {}, b"")))
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url(),
                 "--otlp-interval", "3600"])
    reqs = r.wait(lambda reqs: len(reqs) >= 4, TIMEOUT, "4 attempts")
    samples = quiesce(
        d, lambda s: value(s, "scprof_otlp_exports_sent_total") == 1,
        "the export sent")
    assert value(samples, "scprof_otlp_retries_total") == 3
    assert value(samples, "scprof_otlp_exports_failed_total") == 0
    # the same export each time: one start of the retries, no new figures
    assert len({q.SerializeToString() for _, _, q in reqs[:4]}) == 1
    rc, _, err = d.stop()
    log = err.decode()
    assert "HTTP 503: busy" in log and "retrying" in log, log
    assert "go through again (after 3 failed attempts)" in log, log
    assert rc == 0


def test_400_is_not_retried(receivers, daemons):
    r = receivers(answer=lambda n, req: (400, {}, b"bad\x1b[31m"))
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url(),
                 "--otlp-interval", "3600"])
    samples = quiesce(
        d, lambda s: value(s, "scprof_otlp_exports_failed_total") == 1,
        "the export failed")
    assert value(samples, "scprof_otlp_retries_total") == 0
    assert len(r.requests) == 1
    _, _, err = d.stop()
    # the receiver's words, escaped
    assert "HTTP 400: bad\\x1b[31m (not retried)" in err.decode(), err


def test_refused_connection_is_retried(daemons):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint",
                 f"http://127.0.0.1:{port}", "--otlp-interval", "3600"])
    samples = quiesce(d, lambda s: value(s, "scprof_otlp_retries_total") >= 2,
                      "two retries")
    assert value(samples, "scprof_otlp_exports_sent_total") == 0
    assert value(samples, "scprof_otlp_queued_exports") == 0


def test_full_queue_drops_the_oldest_counted_and_logged(receivers, daemons):
    # the receiver takes each request and never answers
    r = receivers(answer=lambda n, req: None)
    d = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url(),
                 "--otlp-interval", "0.1", "--otlp-queue", "2",
                 "--otlp-timeout", "600"])
    samples = quiesce(
        d, lambda s: value(s, "scprof_otlp_exports_dropped_total") >= 3,
        "3 exports dropped")
    assert value(samples, "scprof_otlp_queued_exports") == 2
    assert value(samples, "scprof_otlp_exports_sent_total") == 0
    assert len(r.requests) == 1  # the one under way
    d.proc.kill()
    _, err = d.proc.communicate(timeout=TIMEOUT)
    log = err.decode()
    # logged once, not once per drop
    assert log.count("queue of exports (2) is full") == 1, log


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client one."""
    d = tmp_path_factory.mktemp("pki")

    def ossl(*args):
        p = run(["openssl"] + list(args))
        assert p.returncode == 0, p.stderr.decode()
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
         str(d / "ca.key"), "-out", str(d / "ca.crt"), "-days", "2",
         "-subj", "/CN=scprof test CA")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"),
                      ("client", "extendedKeyUsage=clientAuth")):
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout",
             str(d / f"{name}.key"), "-out", str(d / f"{name}.csr"),
             "-subj", f"/CN=scprof-{name}")
        (d / f"{name}.ext").write_text(ext + "\n")
        ossl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA",
             str(d / "ca.crt"), "-CAkey", str(d / "ca.key"),
             "-CAcreateserial", "-days", "2", "-out", str(d / f"{name}.crt"),
             "-extfile", str(d / f"{name}.ext"))
    return d


def test_tls_with_a_client_certificate(receivers, daemons, pki):
    r = receivers(tls={"cert": str(pki / "server.crt"),
                       "key": str(pki / "server.key"),
                       "ca": str(pki / "ca.crt")})
    daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url("https"),
             "--otlp-ca", str(pki / "ca.crt"), "--otlp-cert",
             str(pki / "client.crt"), "--otlp-key", str(pki / "client.key")])
    r.wait(lambda reqs: len(reqs) >= 1, TIMEOUT, "an export over TLS")
    subject = dict(x[0] for x in r.peer_certs[0]["subject"])
    assert subject["commonName"] == "scprof-client"


def test_tls_without_the_ca_or_the_client_cert_fails(receivers, daemons, pki):
    r = receivers(tls={"cert": str(pki / "server.crt"),
                       "key": str(pki / "server.key"),
                       "ca": str(pki / "ca.crt")})
    # the server's CA unknown: not verified, nothing sent
    d1 = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url("https")])
    # verified, but no client certificate: the receiver refuses it
    d2 = daemons(["-p", str(os.getpid()), "--otlp-endpoint", r.url("https"),
                  "--otlp-ca", str(pki / "ca.crt")])
    for d in (d1, d2):
        samples = quiesce(
            d, lambda s: value(s, "scprof_otlp_retries_total") >= 1,
            "a failed attempt")
        assert value(samples, "scprof_otlp_exports_sent_total") == 0
    assert not r.requests


@pytest.mark.parametrize("args,msg", [
    (["--otlp-endpoint", "grpc://x:4317"], "invalid --otlp-endpoint"),
    (["--otlp-endpoint", "localhost:4318"], "invalid --otlp-endpoint"),
    (["--otlp-interval", "5"], "--otlp-interval needs --otlp-endpoint"),
    (["--otlp-endpoint", "http://x", "--otlp-interval", "0"],
     "invalid --otlp-interval '0'"),
    (["--otlp-endpoint", "http://x", "--otlp-timeout", "1x"],
     "invalid --otlp-timeout '1x'"),
    (["--otlp-endpoint", "http://x", "--otlp-compression", "zstd"],
     "invalid --otlp-compression 'zstd'"),
    (["--otlp-endpoint", "http://x", "--otlp-queue", "0"],
     "invalid --otlp-queue '0'"),
    (["--otlp-endpoint", "http://x", "--otlp-ca", "/nonexistent"],
     "--otlp-ca '/nonexistent': cannot read it"),
    (["--otlp-endpoint", "http://x", "--otlp-key", "/etc/hostname"],
     "--otlp-key needs --otlp-cert"),
    (["--otlp-endpoint", "http://x", "--otlp-header", "Bad Name: s3cr3t"],
     "invalid --otlp-header: the name is not an HTTP token"),
    (["--otlp-endpoint", "http://x", "--otlp-header", "nocolon"],
     "invalid --otlp-header: expected 'Name: value'"),
    (["--otlp-endpoint", "http://x", "--otlp-headers-file", "/nonexistent"],
     "--otlp-headers-file '/nonexistent': cannot read it"),
])
def test_bad_otlp_options(args, msg):
    proc = run_scprof(["daemon"] + args)
    lines = stderr_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert msg in lines[0], lines
    assert "s3cr3t" not in lines[0]  # a header's value is not echoed


def test_bad_header_file_line_is_named(tmp_path):
    hf = tmp_path / "h"
    hf.write_text("A: 1\nAuthorization s3cr3t\n")
    proc = run_scprof(["daemon", "--otlp-endpoint", "http://x",
                       "--otlp-headers-file", str(hf)])
    lines = stderr_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert f"'{hf}', line 2: expected 'Name: value'" in lines[0], lines
    assert "s3cr3t" not in lines[0]

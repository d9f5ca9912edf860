# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""OTLP for the tests: the vendored .proto files compiled for Python with
protoc (Debian's protobuf-compiler and python3-protobuf) at import time, a
test receiver (http.server, optionally TLS with client certificates) that
decodes what scprof daemon --otlp-endpoint sends, and the comparison of an
export with a /metrics scrape.

The comparison maps OTLP names to Prometheus names by the collector's own
translation rules (dots to underscores, the unit's word appended unless the
name has it, _total on monotonic sums, _ratio on gauges of unit 1), so it
checks scprof's choice of names as well as its figures.
"""
import gzip
import importlib
import os
import ssl
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(ROOT, "user", "render", "otlp")
PROTOS = ["opentelemetry/proto/common/v1/common.proto",
          "opentelemetry/proto/resource/v1/resource.proto",
          "opentelemetry/proto/metrics/v1/metrics.proto",
          "opentelemetry/proto/collector/metrics/v1/metrics_service.proto"]


def _load():
    out = tempfile.mkdtemp(prefix="scprof-otlp-py-")
    subprocess.run(["protoc", f"--proto_path={PROTO_DIR}",
                    f"--python_out={out}"] + PROTOS, check=True)
    sys.path.insert(0, out)
    return importlib.import_module(
        "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2")


svc = _load()
ExportRequest = svc.ExportMetricsServiceRequest
ExportResponse = svc.ExportMetricsServiceResponse
CUMULATIVE = 2  # AGGREGATION_TEMPORALITY_CUMULATIVE


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1. answer(n, request) gives the
    n-th request's (status, headers, body) or None to hang until closed;
    every request is kept in .requests as (path, headers, decoded)."""

    def __init__(self, answer=None, tls=None, port=0):
        self.requests = []
        self.cond = threading.Condition()
        self.stop_hang = threading.Event()
        self.peer_certs = []
        recv = self
        answer = answer or (lambda n, req: (200, {}, b""))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                req = ExportRequest()
                req.ParseFromString(body)
                if tls:
                    recv.peer_certs.append(self.connection.getpeercert())
                with recv.cond:
                    n = len(recv.requests)
                    recv.requests.append((self.path, dict(self.headers), req))
                    recv.cond.notify_all()
                a = answer(n, req)
                if a is None:
                    recv.stop_hang.wait(120)
                    return
                status, headers, out = a
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls["cert"], tls["key"])
            if tls.get("ca"):
                ctx.load_verify_locations(tls["ca"])
                ctx.verify_mode = ssl.CERT_REQUIRED
            self.server.socket = ctx.wrap_socket(self.server.socket,
                                                 server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def url(self, scheme="http"):
        return f"{scheme}://127.0.0.1:{self.port}"

    def wait(self, pred, timeout, what):
        with self.cond:
            ok = self.cond.wait_for(lambda: pred(self.requests), timeout)
        assert ok, f"the receiver never saw {what} ({len(self.requests)} requests)"
        return list(self.requests)

    def close(self):
        self.stop_hang.set()
        self.server.shutdown()
        self.server.server_close()


# ---- OTLP to Prometheus names ----------------------------------------------

UNIT_WORDS = {"s": "seconds", "ns": "nanoseconds", "By": "bytes", "1": ""}
# The --labels attributes (semantic conventions) and /metrics' label names.
ATTR_LABELS = {"process.executable.name": "comm", "systemd.unit": "unit",
               "process.linux.cgroup": "cgroup", "container.id": "container",
               "k8s.pod.uid": "pod", "scprof.k8s.pod.qos_class": "qos"}


def prom_name(m):
    """The collector's OTLP-to-Prometheus name of a metric."""
    name = "".join(c if c.isalnum() or c in "_:" else "_" for c in m.name)
    unit = m.unit
    word = "" if unit.startswith("{") else UNIT_WORDS.get(unit, unit)
    if word and word not in name.split("_"):
        name += "_" + word
    kind = m.WhichOneof("data")
    if kind == "gauge" and unit == "1" and "ratio" not in name.split("_"):
        name += "_ratio"
    if kind == "sum" and m.sum.is_monotonic:
        name += "_total"
    return name


def attrs(point):
    return {ATTR_LABELS.get(a.key, a.key): a.value.string_value
            for a in point.attributes}


def resource_attrs(req):
    (rm,) = req.resource_metrics
    return {a.key: a.value.string_value for a in rm.resource.attributes}


def metrics(req):
    (rm,) = req.resource_metrics
    (sm,) = rm.scope_metrics
    return sm.metrics


def series(req):
    """{(prometheus name, labels): value} of an export's sums and gauges,
    and {labels: histogram point} of its histogram."""
    out, hists = {}, {}
    for m in metrics(req):
        kind = m.WhichOneof("data")
        if kind == "histogram":
            for p in m.histogram.data_points:
                hists[tuple(sorted(attrs(p).items()))] = p
            continue
        assert kind in ("sum", "gauge"), (m.name, kind)
        pts = m.sum.data_points if kind == "sum" else m.gauge.data_points
        for p in pts:
            v = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
            key = (prom_name(m), tuple(sorted(attrs(p).items())))
            assert key not in out, f"duplicate series {key}"
            out[key] = v
    return out, hists


def prom_series(samples):
    """{(name, labels): value} of a parsed /metrics scrape, histograms left
    out (compared apart)."""
    return {(n, tuple(sorted(l.items()))): v for n, l, v in samples
            if not n.startswith("scprof_syscall_duration_seconds")}


def prom_hists(samples):
    """{labels: {"le": {bound_ns: cumulative}, "sum": s, "count": n}}."""
    out = {}
    for n, l, v in samples:
        if not n.startswith("scprof_syscall_duration_seconds"):
            continue
        key = tuple(sorted((k, x) for k, x in l.items() if k != "le"))
        h = out.setdefault(key, {"le": {}})
        if n.endswith("_bucket"):
            if l["le"] != "+Inf":
                h["le"][round(float(l["le"]) * 1e9)] = v
        else:
            h[n.rsplit("_", 1)[1]] = v
    return out


# ---- scprof's histogram buckets (include/scprof_hist.h) ---------------------

SUB_BITS, MAX_LOG2 = 2, 39
BUCKETS = (1 << SUB_BITS) * MAX_LOG2


def hist_lower_ns(i):
    """The bound below scprof's bucket i, as scprof_hist.h defines it:
    0, 1, 2, 3, then 4 equal steps per power of two."""
    sub = 1 << SUB_BITS
    if i < sub:
        return i
    lg = i // sub + SUB_BITS - 1
    return (sub + i % sub) << (lg - SUB_BITS)


def explicit_cumulative(p, bound_ns):
    """Calls of an explicit-bucket point at most bound_ns long; bound_ns
    one of its bounds."""
    bounds = [round(b * 1e9) for b in p.explicit_bounds]
    k = bounds.index(bound_ns)
    return sum(p.bucket_counts[:k + 1])


# ---- an export against a /metrics scrape -----------------------------------

# What moves on its own while the targets are gone: the daemon's own
# costs, the latency windows' bookkeeping, the exporter's counts.
VOLATILE = ("scprof_cpu_seconds_total", "scprof_resident_memory_bytes",
            "scprof_scrape_duration_seconds", "scprof_bpf_run_seconds_total",
            "scprof_bpf_cost_seconds_total", "scprof_bpf_cost_window_",
            "scprof_latency_", "scprof_otlp_", "scprof_scrapes_total")


def volatile(name):
    return name.startswith(VOLATILE)


def check_equals_scrape(req, samples):
    """Every series of the export req is one of the scrape's and the other
    way round, with the same value but for VOLATILE ones; every histogram
    has scprof's bounds, and /metrics' buckets, sum and count add up from
    it exactly. Returns (series, histograms) of the export."""
    got, hists = series(req)
    want = prom_series(samples)
    assert set(got) == set(want), set(got) ^ set(want)
    for k, v in want.items():
        if not volatile(k[0]):
            assert got[k] == v or abs(got[k] - v) <= 1e-9 * abs(v), \
                (k, got[k], v)
    ph = prom_hists(samples)
    assert set(hists) == set(ph)
    bounds = [hist_lower_ns(i + 1) for i in range(BUCKETS - 1)]
    for key, p in hists.items():
        assert [round(b * 1e9) for b in p.explicit_bounds] == bounds
        # the nearest double to each bound in seconds, as /metrics' le
        assert all(b / 1e9 == x for b, x in zip(bounds, p.explicit_bounds))
        assert len(p.bucket_counts) == BUCKETS
        assert p.count == sum(p.bucket_counts) == ph[key]["count"]
        assert abs(p.sum - ph[key]["sum"]) <= 1e-12 * ph[key]["sum"]
        for le, cum in ph[key]["le"].items():
            assert explicit_cumulative(p, le) == cum, (key, le)
    return got, hists

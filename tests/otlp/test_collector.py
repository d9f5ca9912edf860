# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon --otlp-endpoint against a real OpenTelemetry Collector
(make test-otlp, in make test-extra): the collector built from its Go
modules (tests/otelcol, OTELCOL) with its OTLP/HTTP receiver and its
file exporter. What the collector decoded and wrote (OTLP JSON, read back
with protobuf's json_format into the same messages) equals a /metrics
scrape of the same daemon once the pacer's figures stand still: every
series, the histograms' buckets at /metrics' bounds, sums and counts, and
the pacer's own counts. And the collector's own Prometheus exporter,
whose translation of OTLP names is the collector's, serves /metrics'
names, labels and values back.

Uses tests/e2e's helpers (the daemon, the gate, the decoder); SCPROF and
WORKLOADS as there.
"""
import math
import os
import socket
import urllib.request
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "e2e"))

from google.protobuf import json_format  # noqa: E402

from conftest import TIMEOUT, workload as ou_workload  # noqa: E402
import otlp_util as ou  # noqa: E402
from test_daemon import (comm_link, daemons, gates, parse,  # noqa: E402,F401
                         quiesce, value)

OTELCOL = os.environ.get("OTELCOL", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))), ".output", "otelcol", "otelcol"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    def __init__(self, d):
        self.port, self.prom_port = free_port(), free_port()
        self.out = d / "metrics.jsonl"
        config = d / "otelcol.yaml"
        config.write_text(f"""
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{self.port}
exporters:
  file:
    path: {self.out}
    flush_interval: 100ms
  prometheus:
    endpoint: 127.0.0.1:{self.prom_port}
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [file, prometheus]
""")
        self.log = open(d / "otelcol.log", "wb")
        self.proc = subprocess.Popen([OTELCOL, "--config", f"file:{config}"],
                                     stdout=self.log, stderr=self.log,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert self.proc.poll() is None, self.logged()
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, self.logged()
                time.sleep(0.1)

    def logged(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")

    def requests(self):
        """What the collector wrote: one request a line."""
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            lines = f.read().split("\n")
        return [json_format.Parse(line, ou.ExportRequest(),
                                  ignore_unknown_fields=True)
                for line in lines[:-1]]  # the last may be half written

    def wait(self, pred, what):
        deadline = time.monotonic() + TIMEOUT
        while True:
            found = [q for q in self.requests() if pred(q)]
            if found:
                return found[0]
            assert self.proc.poll() is None, self.logged()
            assert time.monotonic() < deadline, \
                f"the collector never wrote {what}: {self.logged()}"
            time.sleep(0.1)

    def scrape(self):
        """The collector's Prometheus exporter's samples, parsed."""
        url = f"http://127.0.0.1:{self.prom_port}/metrics"
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            return parse(r.read())[0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=TIMEOUT)
        self.log.close()


@pytest.fixture
def collector(tmp_path):
    if not os.access(OTELCOL, os.X_OK):
        pytest.fail(f"no collector at {OTELCOL} (make test-otlp builds it)")
    c = Collector(tmp_path)
    yield c
    c.stop()


def taken_after(t_ns):
    def pred(req):
        return any(p.time_unix_nano > t_ns for m in ou.metrics(req)
                   if m.WhichOneof("data") == "sum"
                   for p in m.sum.data_points)
    return pred


def test_collector_receives_what_metrics_serves(collector, daemons, gates,
                                                tmp_path):
    # The pacer makes exactly 5 x 1000 getppid and 5 x 3 failing openat,
    # under a hostile name.
    g = gates([comm_link(tmp_path, b'ev"il\\\n\xff{x}'), "1000", "3", "2",
               "5"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1", "--otlp-endpoint",
                 f"http://127.0.0.1:{collector.port}", "--otlp-interval",
                 "0.2"])
    g.release()
    assert g.wait() == 0
    quiesce(d, lambda s: value(s, "scprof_processes_folded_total") == 1,
            "the pacer folded")
    req = collector.wait(taken_after(time.time_ns()),
                         "an export after the fold")
    samples, _ = parse(d.metrics())

    res = ou.resource_attrs(req)
    assert res["service.name"] == "scprof"
    assert res["host.name"] == os.uname().nodename
    assert res["os.type"] == "linux"
    got, hists = ou.check_equals_scrape(req, samples)
    assert got[("scprof_syscalls_total",
                (("abi", "64"), ("syscall", "getppid")))] == 5000
    assert got[("scprof_syscall_errors_total",
                (("abi", "64"), ("syscall", "openat")))] == 15
    assert got[("scprof_group_syscalls_total",
                (("comm", 'ev"il\\\n\ufffd{x}'),))] >= 5015
    assert hists[(("abi", "64"), ("syscall", "getppid"))].count == 5000
    # the collector took every point: none refused, nothing retried
    assert value(samples, "scprof_otlp_exports_failed_total") == 0
    assert value(samples, "scprof_otlp_points_rejected_total") == 0
    assert value(samples, "scprof_otlp_exports_sent_total") >= 1


# The collector's labels for the per-name attributes and its own, added to
# every series (the resource's job and instance, the scope's).
PROM_ATTR = {"process_executable_name": "comm", "systemd_unit": "unit"}
ADDED = {"job", "instance", "otel_scope_name", "otel_scope_version",
         "otel_scope_schema_url"}


def test_collector_prometheus_exporter_serves_metrics_names(
        collector, daemons, gates):
    g = gates([ou_workload("pacer"), "1000", "3", "2", "5"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1", "--labels", "unit,comm",
                 "--otlp-endpoint", f"http://127.0.0.1:{collector.port}",
                 "--otlp-interval", "0.2"])
    g.release()
    assert g.wait() == 0
    quiesce(d, lambda s: value(s, "scprof_processes_folded_total") == 1,
            "the pacer folded")
    collector.wait(taken_after(time.time_ns()), "an export after the fold")
    time.sleep(0.3)  # the exporter has it: it answers with the newest
    theirs = collector.scrape()
    ours, _ = parse(d.metrics())

    def key(n, labels):
        labels = {PROM_ATTR.get(k, k): v for k, v in labels.items()
                  if k not in ADDED}
        if n.endswith("_bucket"):
            labels["le"] = float(labels["le"])  # "2.56e-07" or "0.000000256"
        return n, tuple(sorted(labels.items()))

    got = {key(n, l): v for n, l, v in theirs if n != "target_info"}
    want = {key(n, l): v for n, l, v in ours}
    # every series of /metrics, with its value; the collector's histograms
    # have more buckets (scprof's own), /metrics' among them
    missing = set(want) - set(got)
    assert not missing, sorted(missing)[:10]
    extra = {k for k in set(got) - set(want)
             if not k[0].endswith("_bucket")}
    assert not extra, sorted(extra)[:10]
    for k, v in want.items():
        if not ou.volatile(k[0]):
            assert math.isclose(got[k], v, rel_tol=1e-9, abs_tol=1e-12), \
                (k, got[k], v)
    assert want[key("scprof_syscalls_total",
                    {"syscall": "getppid", "abi": "64"})] == 5000

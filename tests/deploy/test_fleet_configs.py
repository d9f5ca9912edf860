# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""contrib/'s fleet examples (issue 44, item 2): Parca scraping the daemons'
pprof endpoint (contrib/parca/parca.yaml), and an OpenTelemetry Collector
scraping the daemons for a central Prometheus (contrib/otel/).

Checked with real binaries where one is here: the collector's configuration
by `otelcol validate` of a collector built from the Go modules of its
components and the OTLP test's (make test-deploy builds it: $OTELCOL,
tests/otelcol), its Prometheus scrape section and prometheus.yml by Debian's promtool, and the Parca
scrape against a real daemon: the profile it would ask for is served. No
Parca binary is built here (its server embeds a web UI built with node):
its configuration is checked against the fields Parca's documentation
gives, not by Parca.
"""
import gzip
import http.client
import os
import re
import subprocess

import pytest
import yaml

from deploy_util import CONTRIB, SCPROF, TIMEOUT, tool

PARCA = os.path.join(CONTRIB, "parca", "parca.yaml")
COLLECTOR = os.path.join(CONTRIB, "otel", "collector.yaml")
PROMETHEUS = os.path.join(CONTRIB, "otel", "prometheus.yml")
OTELCOL = os.environ.get("OTELCOL", "")
# Parca's default pprof_config: the Go runtime's profiles, which a daemon
# does not serve
PARCA_DEFAULTS = {"memory", "block", "goroutine", "mutex", "process_cpu"}


def seconds(duration):
    m = re.fullmatch(r"(\d+)([sm])", duration)
    assert m, duration
    return int(m[1]) * (60 if m[2] == "m" else 1)


@pytest.fixture
def daemon():
    proc = subprocess.Popen(
        [SCPROF, "daemon", "--listen", "127.0.0.1:0", "--pprof-endpoint",
         "--latency-duty", "1", "-p", str(os.getpid())],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = proc.stderr.readline()
    m = re.search(rb"http://127\.0\.0\.1:(\d+)/metrics", line)
    assert m, line
    yield int(m[1])
    proc.terminate()
    proc.communicate(timeout=TIMEOUT)


def test_parca_scrapes_the_endpoint(daemon):
    with open(PARCA) as f:
        cfg = yaml.safe_load(f)
    assert cfg["object_storage"]["bucket"]["type"] == "FILESYSTEM"
    (job,) = cfg["scrape_configs"]
    interval = seconds(job["scrape_interval"])
    # Parca asks a delta profile for the scrape's interval: within what a
    # daemon serves, and one at a time (the timeout no longer than it)
    assert 1 <= interval <= 300, interval
    assert seconds(job["scrape_timeout"]) <= interval
    pprof = job["profiling_config"]["pprof_config"]
    enabled = {k: v for k, v in pprof.items() if v.get("enabled")}
    assert set(enabled) == {"syscalls"}, enabled
    assert PARCA_DEFAULTS <= {k for k, v in pprof.items()
                              if v.get("enabled") is False}
    sc = enabled["syscalls"]
    assert sc["delta"] is True
    target = job["static_configs"][0]["targets"][0]
    assert target.endswith(":9733"), target
    # what Parca would ask a daemon for (the interval cut to 1 s here) is
    # a gzip'ed profile; the Go profiles it is told not to ask for are not
    c = http.client.HTTPConnection("127.0.0.1", daemon, timeout=TIMEOUT)
    c.request("GET", sc["path"] + "?seconds=1")
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, body
    assert gzip.decompress(body)[:1] == b"\x0a", "not a profile.proto"
    c.request("GET", "/debug/pprof/heap")
    r = c.getresponse()
    r.read()
    assert r.status == 404
    c.close()


def test_prometheus_config_passes_promtool(tmp_path):
    promtool = tool("promtool")
    p = subprocess.run([promtool, "check", "config", PROMETHEUS],
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    assert b"SUCCESS" in p.stdout + p.stderr
    with open(PROMETHEUS) as f:
        cfg = yaml.safe_load(f)
    rules = os.path.join(os.path.dirname(PROMETHEUS), cfg["rule_files"][0])
    assert os.path.samefile(rules, os.path.join(
        CONTRIB, "prometheus", "scprof.rules.yml"))


def test_collectors_scrape_section_passes_promtool(tmp_path):
    """The Prometheus receiver's config is a Prometheus scrape config."""
    with open(COLLECTOR) as f:
        cfg = yaml.safe_load(f)
    scrape = cfg["receivers"]["prometheus"]["config"]
    out = tmp_path / "scrape.yml"
    out.write_text(yaml.safe_dump(scrape))
    p = subprocess.run([tool("promtool"), "check", "config", str(out)],
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    (job,) = scrape["scrape_configs"]
    assert all(t.endswith(":9733")
               for t in job["static_configs"][0]["targets"])
    pipe = cfg["service"]["pipelines"]["metrics"]
    assert pipe["receivers"] == ["prometheus"]
    assert set(pipe["exporters"]) == set(cfg["exporters"])
    assert cfg["exporters"]["prometheusremotewrite"]["endpoint"].endswith(
        "/api/v1/write")


def test_collector_validates_its_config(tmp_path):
    if not OTELCOL:
        pytest.skip("OTELCOL unset: make test-deploy builds the "
                    "collector")
    assert os.access(OTELCOL, os.X_OK), OTELCOL
    p = subprocess.run([OTELCOL, "validate", "--config", COLLECTOR],
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    # and it does refuse a broken one (an exporter it does not have)
    bad = tmp_path / "bad.yaml"
    bad.write_text(open(COLLECTOR).read().replace("otlphttp:", "otlphttpx:",
                                                  1))
    p = subprocess.run([OTELCOL, "validate", "--config", str(bad)],
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode != 0, (p.stdout + p.stderr).decode()
    assert b"otlphttpx" in p.stdout + p.stderr, p.stderr

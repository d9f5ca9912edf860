#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make fleet-sim: what scprof daemon costs a fleet, measured on five
daemons and extrapolated to 1,000 and 10,000 nodes.

Five "nodes": each a network namespace with its own address on a bridge
(veth pairs), a daemon in it started with -a and --pprof-endpoint, each
with another --labels choice, pushing OTLP to ONE OpenTelemetry Collector
(tests/otlp/otelcol: the OTLP receiver, the batch processor and the
Prometheus exporter, which holds every series it re-exposes) and scraped
by ONE Prometheus (Debian's), both in the root namespace. Each node has a
light workload of its own (the pacer, in a cgroup named like a container's
scope). Only the network is namespaced: every daemon sees the whole
machine (-a), whatever else runs on it, as a node's daemon sees its node.

The run (--seconds, 75 by default): 10 s of warm-up, snapshot A of every
node, the daemons alone until snapshot B, then a pprof profile of 30 s
from each node and snapshot C. Measured:
- series per node by --labels (each daemon's /metrics, by kind), and as
  Prometheus counted them (scrape_samples_scraped);
- bytes per scrape and per push on the wire (IP packets, from iptables
  byte counters in each node's namespace: what a node sends from port
  9733 to Prometheus' address, and to port 4318), and a /metrics body's
  size as served and as gzip would make it;
- a pprof profile's size at the default sampling rate (30 s, each node);
- Prometheus' TSDB head series, heap and RSS, and the collector's CPU
  time and RSS, before the daemons started and at the end;
- the daemons' own CPU and memory (A to B, and B to C while profiling).
Bytes per scrape and per push are those of A to C (whole scrapes and
pushes of a warm daemon; the script's own fetches are counted apart).
It then extrapolates, linearly, to 1,000 and 10,000 nodes, prints a report
and writes it as JSON (--out).

Cleanup: every process is started with PR_SET_PDEATHSIG (it gets SIGTERM
if this script dies, even by SIGKILL), and stopped by its pid in a
finally block; the namespaces, links and cgroups made are deleted there
too, and those a killed earlier run left (named after its pid, which no
longer runs) at the start. Run as root.
"""
import argparse
import ctypes
import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

LABELS = ["comm", "unit", "cgroup", "container", "comm,unit"]
SCRAPE_S = 15
PPROF_S = 30
WARM_S = 10
PREFIX = "scfleet"

libc = ctypes.CDLL("libc.so.6", use_errno=True)


def die_with_parent():
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def sh(*cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def cgroup2_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            _, mnt, fs = line.split()[:3]
            if fs == "cgroup2":
                return mnt
    return None


def rmdir_tree(top):
    """Remove a cgroup directory and its children, once their processes
    are gone (waits a little for exiting ones)."""
    if not os.path.isdir(top):
        return
    for d, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        for _ in range(300):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.01)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, source=None, timeout=60, gz=False):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout,
                                   source_address=(source, 0) if source else None)
    c.request("GET", u.path + (f"?{u.query}" if u.query else ""),
              headers={"Accept-Encoding": "gzip"} if gz else {})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200:
        raise RuntimeError(f"GET {url}: {r.status} {body[:200]!r}")
    return body


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def samples(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m:
            out.append((m.group(1), m.group(2) or "", float(m.group(3))))
    return out


def value(ss, name, labels=""):
    vals = [v for n, lab, v in ss if n == name and labels in lab]
    return vals[0] if vals else None


def kind_of(name, labels):
    if 'syscall="' in labels:
        return "syscall"
    if name.startswith("scprof_group_syscall"):
        return "group"
    return "self"


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Sim:
    def __init__(self, a):
        self.a = a
        self.pid = os.getpid()
        self.procs = []  # (name, Popen), stopped in reverse order
        self.netns, self.links = [], []
        self.cgroup = None
        self.tmp = tempfile.mkdtemp(prefix=f"{PREFIX}-{self.pid}-")
        net = 20 + self.pid % 200
        self.net = f"10.213.{net}"
        self.br_addr = f"{self.net}.1"      # Prometheus and the collector
        self.probe_addr = f"{self.net}.2"   # this script's own fetches
        self.bridge = f"sfb{self.pid}"
        self.nodes = []

    # ---- setup and teardown ---------------------------------------------

    def clean_stale(self):
        """What a killed earlier run left: named after its dead pid."""
        for line in sh("ip", "netns", "list").splitlines():
            m = re.match(rf"({PREFIX}(\d+)-n\d+)", line)
            if m and not alive(int(m.group(2))):
                sh("ip", "netns", "del", m.group(1), check=False)
        for line in sh("ip", "-o", "link", "show").splitlines():
            m = re.match(r"\d+: (sf[bv](\d+)(n\d+)?)[@:]", line)
            if m and not alive(int(m.group(2))):
                sh("ip", "link", "del", m.group(1), check=False)
        tmp = tempfile.gettempdir()
        for d in os.listdir(tmp):
            m = re.match(rf"{PREFIX}-(\d+)-", d)
            if m and not alive(int(m.group(1))):
                subprocess.run(["rm", "-rf", os.path.join(tmp, d)])
        mnt = cgroup2_mount()
        if mnt:
            for d in os.listdir(mnt):
                m = re.match(rf"{PREFIX}-(\d+)\.slice$", d)
                if m and not alive(int(m.group(1))):
                    rmdir_tree(os.path.join(mnt, d))

    def start(self, name, args, log, **kw):
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT,
                             preexec_fn=die_with_parent, **kw)
        self.procs.append((name, p))
        return p

    def network(self):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        self.links.append(self.bridge)
        sh("ip", "addr", "add", f"{self.br_addr}/24", "dev", self.bridge)
        sh("ip", "addr", "add", f"{self.probe_addr}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for i in range(1, 6):
            ns = f"{PREFIX}{self.pid}-n{i}"
            host, peer = f"sfv{self.pid}n{i}", f"sfp{self.pid}n{i}"
            sh("ip", "netns", "add", ns)
            self.netns.append(ns)
            sh("ip", "link", "add", host, "type", "veth", "peer", "name", peer)
            self.links.append(host)
            sh("ip", "link", "set", peer, "netns", ns)
            sh("ip", "-n", ns, "link", "set", peer, "name", "eth0")
            addr = f"{self.net}.{10 + i}"
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "link", "set", host, "master", self.bridge)
            sh("ip", "link", "set", host, "up")
            # byte counters: scrapes (to Prometheus' address), the
            # script's own fetches, and pushes (to the collector's port)
            for rule in (["--sport", "9733", "-d", self.br_addr],
                         ["--sport", "9733", "-d", self.probe_addr],
                         ["--dport", "4318"]):
                sh("ip", "netns", "exec", ns, "iptables", "-A", "OUTPUT",
                   "-p", "tcp", *rule)
            self.nodes.append({"i": i, "ns": ns, "addr": addr,
                               "labels": LABELS[i - 1]})

    def cgroups(self):
        mnt = cgroup2_mount()
        if not mnt:
            raise RuntimeError("no cgroup2 mount")
        self.cgroup = os.path.join(mnt, f"{PREFIX}-{self.pid}.slice")
        os.mkdir(self.cgroup)
        for n in self.nodes:
            cid = f"{n['i']:x}" * 64
            n["cgroup"] = os.path.join(self.cgroup, f"docker-{cid[:64]}.scope")
            os.mkdir(n["cgroup"])

    def teardown(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for ns in self.netns:
            sh("ip", "netns", "del", ns, check=False)
        for link in self.links:
            sh("ip", "link", "del", link, check=False)
        if self.cgroup:
            rmdir_tree(self.cgroup)
        subprocess.run(["rm", "-rf", self.tmp])

    # ---- the run ------------------------------------------------------------

    def prometheus(self):
        self.prom_port = free_port()
        cfg = os.path.join(self.tmp, "prometheus.yml")
        targets = ", ".join(f"'{n['addr']}:9733'" for n in self.nodes)
        with open(cfg, "w") as f:
            f.write(f"""global:
  scrape_interval: {SCRAPE_S}s
  scrape_timeout: 10s
scrape_configs:
  - job_name: scprof
    static_configs:
      - targets: [{targets}]
""")
        log = open(os.path.join(self.tmp, "prometheus.log"), "wb")
        self.prom = self.start("prometheus", [
            "prometheus", f"--config.file={cfg}",
            f"--storage.tsdb.path={self.tmp}/tsdb",
            f"--web.listen-address=127.0.0.1:{self.prom_port}",
            "--log.level=warn"], log)
        self.wait_http(f"http://127.0.0.1:{self.prom_port}/-/ready",
                       "Prometheus")

    def collector(self):
        self.col_prom_port = free_port()
        cfg = os.path.join(self.tmp, "otelcol.yaml")
        with open(cfg, "w") as f:
            f.write(f"""receivers:
  otlp:
    protocols:
      http:
        endpoint: {self.br_addr}:4318
processors:
  batch: {{}}
exporters:
  prometheus:
    endpoint: 127.0.0.1:{self.col_prom_port}
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    metrics:
      receivers: [otlp]
      processors: [batch]
      exporters: [prometheus]
""")
        log = open(os.path.join(self.tmp, "otelcol.log"), "wb")
        self.col = self.start("otelcol", [self.a.otelcol, "--config",
                                          f"file:{cfg}"], log)
        self.wait_http(f"http://127.0.0.1:{self.col_prom_port}/metrics",
                       "the collector")

    def wait_http(self, url, what):
        deadline = time.monotonic() + 60
        while True:
            try:
                http_get(url, timeout=5)
                return
            except (OSError, RuntimeError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not start")
                time.sleep(0.2)

    def daemons(self):
        for n in self.nodes:
            log = os.path.join(self.tmp, f"daemon{n['i']}.log")
            n["log"] = log
            n["proc"] = self.start(f"daemon{n['i']}", [
                "nsenter", f"--net=/run/netns/{n['ns']}", "--",
                self.a.scprof, "daemon", "-a", "--listen",
                f"{n['addr']}:9733", "--labels", n["labels"],
                "--pprof-endpoint", "--otlp-endpoint",
                f"http://{self.br_addr}:4318"], open(log, "wb"))
        for n in self.nodes:
            deadline = time.monotonic() + 60
            while b"serving metrics at" not in open(n["log"], "rb").read():
                if n["proc"].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"daemon {n['i']} did not start: "
                                       f"{open(n['log']).read()}")
                time.sleep(0.1)

    def workloads(self):
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        pacer = os.path.join(self.a.workloads, "pacer")
        for n in self.nodes:
            app = os.path.join(bindir, f"app{n['i']}")
            os.symlink(pacer, app)
            # 500 getppid and 10 failing openat a second, until stopped
            self.start(f"app{n['i']}", [
                "nsenter", f"--net=/run/netns/{n['ns']}", "--", "/bin/sh",
                "-c", f'echo $$ > {n["cgroup"]}/cgroup.procs && exec "$0" "$@"',
                app, "50", "1", "100", "0"], subprocess.DEVNULL)

    def counters(self, n):
        out = sh("ip", "netns", "exec", n["ns"], "iptables", "-L", "OUTPUT",
                 "-v", "-n", "-x")
        got = {}
        for line in out.splitlines()[2:]:
            f = line.split()
            if "spt:9733" in line and self.br_addr in f:
                got["scrape"] = int(f[1])
            elif "spt:9733" in line:
                got["probe"] = int(f[1])
            elif "dpt:4318" in line:
                got["push"] = int(f[1])
        return got

    def profiles(self):
        def fetch(n):
            t0 = time.monotonic()
            try:
                body = http_get(f"http://{n['addr']}:9733/debug/pprof/"
                                f"syscalls?seconds={PPROF_S}",
                                source=self.probe_addr, timeout=PPROF_S + 60)
                n["pprof_bytes"] = len(body)
                n["pprof_s"] = time.monotonic() - t0
            except (OSError, RuntimeError) as e:
                n["pprof_error"] = str(e)
        threads = [threading.Thread(target=fetch, args=(n,), daemon=True)
                   for n in self.nodes]
        for t in threads:
            t.start()
        return threads

    def prom_figures(self):
        ss = samples(http_get(
            f"http://127.0.0.1:{self.prom_port}/metrics").decode())
        return {"head_series": value(ss, "prometheus_tsdb_head_series"),
                "heap_inuse": value(ss, "go_memstats_heap_inuse_bytes"),
                "rss": value(ss, "process_resident_memory_bytes"),
                "samples_appended": value(
                    ss, "prometheus_tsdb_head_samples_appended_total",
                    'type="float"')}

    def prom_query(self, q):
        body = http_get(f"http://127.0.0.1:{self.prom_port}/api/v1/query?"
                        + urllib.parse.urlencode({"query": q}))
        return json.loads(body)["data"]["result"]

    def snapshot(self, n):
        """A node's wire counters, then its /metrics (the script's own
        fetch, from probe_addr: counted apart) and what the daemon says."""
        wire = self.counters(n)
        body = http_get(f"http://{n['addr']}:9733/metrics",
                        source=self.probe_addr)
        ss = samples(body.decode())
        return {"t": time.monotonic(), "wire": wire, "body": body, "ss": ss,
                "scrapes": value(ss, "scprof_scrapes_total"),
                "pushes": value(ss, "scprof_otlp_exports_sent_total"),
                "cpu_s": value(ss, "scprof_cpu_seconds_total"),
                "rss": value(ss, "scprof_resident_memory_bytes")}

    def run(self):
        """Warm-up (WARM_S), snapshot A; steady (the first half of the
        rest), snapshot B; a pprof profile of PPROF_S from each node,
        then snapshot C. Bytes per scrape and per push are A to C, the
        daemons' own CPU and memory A to B (no profile) and B to C."""
        a = self.a
        self.clean_stale()
        self.network()
        self.cgroups()
        self.prometheus()
        self.collector()
        time.sleep(2)
        before = {"prom": self.prom_figures(),
                  "col_cpu": proc_cpu_s(self.col.pid),
                  "col_rss": proc_rss(self.col.pid)}
        t_start = time.monotonic()
        self.daemons()
        self.workloads()
        print(f"fleet-sim: 5 daemons up in {self.net}.0/24, running "
              f"{a.seconds:.0f} s (the last {PPROF_S} s a pprof profile "
              f"from each)", flush=True)

        def until(t):
            while time.monotonic() - t_start < t:
                time.sleep(0.5)
        until(WARM_S)
        for n in self.nodes:
            n["A"] = self.snapshot(n)
        until(a.seconds - PPROF_S - 2)
        for n in self.nodes:
            n["B"] = self.snapshot(n)
        threads = self.profiles()
        for t in threads:
            t.join(PPROF_S + 90)
        for n in self.nodes:
            n["C"] = self.snapshot(n)
        after_prom = self.prom_figures()
        col = {"cpu": proc_cpu_s(self.col.pid), "rss": proc_rss(self.col.pid)}
        col_body = http_get(
            f"http://127.0.0.1:{self.col_prom_port}/metrics").decode()
        col["series"] = sum(1 for n, lab, _ in samples(col_body)
                            if n.startswith("scprof_"))
        per_target = {r["metric"]["instance"].split(":")[0]:
                      float(r["value"][1]) for r in
                      self.prom_query('scrape_samples_scraped{job="scprof"}')}
        for n in self.nodes:
            A, B, C = n["A"], n["B"], n["C"]
            body, ss = C["body"], C["ss"]
            n["bytes"] = len(body)
            n["bytes_abc"] = [len(A["body"]), len(B["body"]), len(body)]
            n["gzip_bytes"] = len(gzip.compress(body))
            n["series"] = len(ss)
            n["by_kind"] = {}
            for name, lab, _ in ss:
                k = kind_of(name, lab)
                n["by_kind"][k] = n["by_kind"].get(k, 0) + 1
            n["syscall_rows"] = len({lab for name, lab, _ in ss
                                     if name == "scprof_syscalls_total"})
            n["groups"] = len({lab for name, lab, _ in ss
                               if name == "scprof_group_syscalls_total"})
            n["prom_series"] = per_target.get(n["addr"])
            # A to C: Prometheus' scrapes (those served less snapshots B's
            # and C's own; A's is in A's count) and pushes accepted
            n["scrapes"] = C["scrapes"] - A["scrapes"] - 2
            n["pushes"] = C["pushes"] - A["pushes"]
            n["wire"] = {k: C["wire"][k] - A["wire"][k] for k in C["wire"]}
            n["push_failed"] = value(ss, "scprof_otlp_exports_failed_total")
            n["pushes_total"] = C["pushes"]
            n["cpu_steady"] = (B["cpu_s"] - A["cpu_s"]) / (B["t"] - A["t"])
            n["cpu_profile"] = (C["cpu_s"] - B["cpu_s"]) / (C["t"] - B["t"])
            n["rss_steady"] = B["rss"]
            n["rss"] = C["rss"]
            n["map_bytes"] = value(ss, "scprof_bpf_map_memory_bytes")
        self.elapsed = time.monotonic() - t_start
        return self.report(before, after_prom, col)

    # ---- the report -----------------------------------------------------

    def report(self, before, prom, col):
        nodes = self.nodes
        pushes = sum(n["pushes_total"] for n in nodes)
        out = {"seconds": round(self.elapsed, 1), "scrape_interval_s": SCRAPE_S,
               "otlp_interval_s": 15, "nodes": []}
        for n in nodes:
            out["nodes"].append({
                k: n.get(k) for k in (
                    "i", "labels", "series", "by_kind", "syscall_rows",
                    "bytes_abc",
                    "groups", "prom_series", "bytes", "gzip_bytes",
                    "scrapes", "pushes", "push_failed", "wire", "pprof_bytes",
                    "pprof_error", "cpu_steady", "cpu_profile", "rss_steady",
                    "rss", "map_bytes")})
            w = n["wire"]
            out["nodes"][-1]["wire_per_scrape"] = (
                w["scrape"] / n["scrapes"] if n["scrapes"] else None)
            out["nodes"][-1]["wire_per_push"] = (
                w["push"] / n["pushes"] if n["pushes"] else None)
        dseries = prom["head_series"] - before["prom"]["head_series"]
        out["prometheus"] = {
            "head_series": prom["head_series"],
            "head_series_before": before["prom"]["head_series"],
            "heap_inuse": prom["heap_inuse"],
            "heap_inuse_before": before["prom"]["heap_inuse"],
            "rss": prom["rss"], "rss_before": before["prom"]["rss"],
            "heap_per_series": (prom["heap_inuse"] -
                                before["prom"]["heap_inuse"]) / dseries,
        }
        col_cpu = col["cpu"] - before["col_cpu"]
        out["collector"] = {
            "cpu_s": col_cpu, "pushes": pushes,
            "cpu_per_push_s": col_cpu / pushes if pushes else None,
            "rss": col["rss"], "rss_before": before["col_rss"],
            "series": col["series"],
            "rss_per_series": (col["rss"] - before["col_rss"]) / col["series"]
            if col["series"] else None,
        }
        out["extrapolated"] = self.extrapolate(out)
        return out

    @staticmethod
    def extrapolate(out):
        nodes = out["nodes"]
        default = next(n for n in nodes if n["labels"] == "comm,unit")
        series = default["series"]
        scrape = sum(n["wire_per_scrape"] for n in nodes) / len(nodes)
        push = sum(n["wire_per_push"] for n in nodes) / len(nodes)
        pprof = [n["pprof_bytes"] for n in nodes if n.get("pprof_bytes")]
        pprof = sum(pprof) / len(pprof) if pprof else 0
        col_series = out["collector"]["series"] / len(nodes)
        p, c = out["prometheus"], out["collector"]
        res = {}
        for fleet in (1000, 10000):
            res[fleet] = {
                "series": series * fleet,
                "samples_per_s": series * fleet / SCRAPE_S,
                "prom_heap": p["heap_per_series"] * series * fleet,
                "scrape_bytes_per_s": scrape * fleet / SCRAPE_S,
                "push_bytes_per_s": push * fleet / 15,
                "collector_cores": (c["cpu_per_push_s"] or 0) * fleet / 15,
                "collector_series": col_series * fleet,
                "collector_rss": (c["rss_per_series"] or 0) * col_series * fleet,
                "pprof_bytes_per_s": pprof * fleet / PPROF_S,
            }
        return res


def human(b):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(b) < 1000 or unit == "TB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1000


def print_report(r):
    print(f"\nfleet-sim: 5 nodes for {r['seconds']} s, scraped every "
          f"{r['scrape_interval_s']} s, pushing every {r['otlp_interval_s']} s\n")
    print("node  --labels    series  syscall  group  self  rows  groups  "
          "prom  /metrics  gzip    wire/scrape  wire/push  pprof   "
          "daemon cpu (profiling)  rss (profiled)")
    for n in r["nodes"]:
        k = n["by_kind"]
        print(f"{n['i']:<5} {n['labels']:<11} {n['series']:>6}  "
              f"{k.get('syscall', 0):>7}  {k.get('group', 0):>5}  "
              f"{k.get('self', 0):>4}  {n['syscall_rows']:>4}  "
              f"{n['groups']:>6}  {n['prom_series'] or 0:>5.0f}  "
              f"{human(n['bytes']):>8}  {human(n['gzip_bytes']):>7} "
              f"{human(n['wire_per_scrape'] or 0):>11}  "
              f"{human(n['wire_per_push'] or 0):>9}  "
              f"{human(n.get('pprof_bytes') or 0):>7} "
              f"{n['cpu_steady'] * 100:>7.2f}% ({n['cpu_profile'] * 100:.2f}%)"
              f"  {human(n['rss_steady'])} ({human(n['rss'])})")
    p, c = r["prometheus"], r["collector"]
    print("\nwire/scrape and wire/push: A to C, "
          + ", ".join(f"{n['scrapes']:.0f} scrapes and {n['pushes']:.0f} "
                      f"pushes of node {n['i']}" for n in r["nodes"])
          + "; /metrics bodies at A, B and C "
          + ", ".join("/".join(human(b) for b in n["bytes_abc"])
                      for n in r["nodes"])
          + "; daemons' BPF maps "
          + ", ".join(human(n["map_bytes"]) for n in r["nodes"]))
    print(f"\nPrometheus: TSDB head series {p['head_series']:.0f} "
          f"({p['head_series_before']:.0f} before the daemons), heap in use "
          f"{human(p['heap_inuse'])} ({human(p['heap_inuse_before'])} before),"
          f" RSS {human(p['rss'])} ({human(p['rss_before'])} before): "
          f"{p['heap_per_series']:.0f} B of heap per series")
    print(f"Collector: {c['cpu_s']:.2f} s CPU for {c['pushes']:.0f} pushes "
          f"({(c['cpu_per_push_s'] or 0) * 1000:.1f} ms each), RSS "
          f"{human(c['rss'])} ({human(c['rss_before'])} before), "
          f"{c['series']} series in its Prometheus exporter")
    print("\nExtrapolated (linear; default labels comm,unit):")
    for fleet, e in r["extrapolated"].items():
        print(f"  {int(fleet):>6} nodes: {e['series']:,.0f} series, "
              f"{e['samples_per_s']:,.0f} samples/s, Prometheus heap "
              f"~{human(e['prom_heap'])}, scrapes {human(e['scrape_bytes_per_s'])}/s; "
              f"collector {e['collector_cores']:.2f} cores, "
              f"{e['collector_series']:,.0f} series, RSS ~{human(e['collector_rss'])}, "
              f"pushes {human(e['push_bytes_per_s'])}/s; pprof every "
              f"{PPROF_S} s {human(e['pprof_bytes_per_s'])}/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scprof", required=True)
    ap.add_argument("--workloads", required=True)
    ap.add_argument("--otelcol", required=True)
    ap.add_argument("--seconds", type=float, default=75)
    ap.add_argument("--out", help="write the figures as JSON here")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("fleet-sim: needs root (network namespaces, BPF)")
    if a.seconds < WARM_S + PPROF_S + 20:
        sys.exit(f"fleet-sim: --seconds must be {WARM_S + PPROF_S + 20} "
                 "or more")
    sim = Sim(a)
    # SIGTERM and SIGINT end the run through the finally below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        r = sim.run()
    finally:
        sim.teardown()
    print_report(r)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(r, f, indent=1)
        print(f"\nfleet-sim: figures in {a.out}")


if __name__ == "__main__":
    main()

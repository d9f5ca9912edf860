# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof daemon (issue 4): the Prometheus endpoint checked against ground
truth, by promtool and by a real Prometheus server; the exposition details
promtool does not check; lifecycle (SIGTERM, pidfile, a second daemon),
least privilege from the systemd unit, bad input, and the footprint under
process churn.

Every daemon here targets the test's own processes (-p with -f on a gate
process that execs the workload once the daemon is attached), so other
scprof runs on the machine do not matter. Ports are chosen by the kernel
(--listen 127.0.0.1:0) and read from the daemon's log line.
"""
import http.client
import math
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import CLEAN_ENV, NOBODY, SCPROF, TIMEOUT, run, workload

UNIT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "contrib", "systemd", "scprof-daemon.service")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


# ---- helpers ---------------------------------------------------------------

class Gate:
    """A shell that execs a command once released, so a daemon can be
    attached to it (-p PID -f) before the command's first syscall."""

    def __init__(self, cmd, stdout=subprocess.DEVNULL):
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", 'read x; exec "$@"', "gate"] + list(cmd),
            stdin=subprocess.PIPE, stdout=stdout, env=CLEAN_ENV)
        self.pid = self.proc.pid

    def release(self):
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.close()

    def wait(self):
        return self.proc.wait(timeout=TIMEOUT)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)


class Daemon:
    """A running `scprof daemon`; its port comes from its first log line."""

    def __init__(self, args, preexec=None, prefix=(), binary=SCPROF):
        self.proc = subprocess.Popen(
            list(prefix) + [binary, "daemon", "--listen", "127.0.0.1:0"] +
            list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, preexec_fn=preexec)
        self.pid = self.proc.pid
        line = self._line()
        m = re.search(rb"serving metrics at http://127\.0\.0\.1:(\d+)/metrics",
                      line)
        if not m:
            err = line + self._drain()
            raise AssertionError(f"daemon did not start: {err!r}")
        self.port = int(m.group(1))

    def _line(self):
        r, _, _ = select.select([self.proc.stderr], [], [], TIMEOUT)
        assert r, "no log line from the daemon"
        return self.proc.stderr.readline()

    def _drain(self):
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.communicate(timeout=TIMEOUT)[1]

    def get(self, path="/metrics", method="GET"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        c.request(method, path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, dict(r.getheaders()), body

    def metrics(self):
        status, headers, body = self.get()
        assert status == 200, (status, body)
        assert headers["Content-Type"] == CONTENT_TYPE
        return body

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        t0 = time.monotonic()
        _, err = self.proc.communicate(timeout=TIMEOUT)
        return self.proc.returncode, time.monotonic() - t0, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=TIMEOUT)


@pytest.fixture
def daemons():
    made = []

    def make(args, **kw):
        d = Daemon(args, **kw)
        made.append(d)
        return d
    yield make
    for d in made:
        d.kill()


@pytest.fixture
def gates():
    made = []

    def make(cmd, **kw):
        g = Gate(cmd, **kw)
        made.append(g)
        return g
    yield make
    for g in made:
        g.kill()


SAMPLE = re.compile(rb'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)')
LABEL = re.compile(rb'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|\})')


def unescape(v):
    out, i = bytearray(), 0
    while i < len(v):
        if v[i:i + 1] == b"\\":
            out += {b"n": b"\n", b"\\": b"\\", b'"': b'"'}[v[i + 1:i + 2]]
            i += 2
        else:
            out += v[i:i + 1]
            i += 1
    return out.decode("utf-8")


def parse(body):
    """[(name, {label: value}, float)] of an exposition; checks its grammar:
    valid UTF-8, a TYPE before every family's samples, well-formed label
    sets, unique series."""
    body.decode("utf-8")  # strict: raises on invalid UTF-8
    assert body.endswith(b"\n")
    samples, typed, seen = [], {}, set()
    family = None
    for line in body.split(b"\n")[:-1]:
        if line.startswith(b"# TYPE "):
            name, typ = line[7:].decode().split(" ")
            assert typ in ("counter", "gauge", "histogram"), line
            assert name not in typed, f"family {name} typed twice"
            typed[name] = typ
            family = name
            continue
        if line.startswith(b"# HELP "):
            continue
        m = SAMPLE.fullmatch(line)
        assert m, f"bad line {line!r}"
        name = m.group(1).decode()
        assert family and name.startswith(family), f"{name} outside its family"
        labels = {}
        if m.group(2):
            rest = m.group(2)[1:]
            while rest:
                lm = LABEL.match(rest)
                assert lm, f"bad labels in {line!r}"
                labels[lm.group(1).decode()] = unescape(lm.group(2))
                rest = rest[lm.end():]
        key = (name, tuple(sorted(labels.items())))
        assert key not in seen, f"duplicate series {key}"
        seen.add(key)
        v = m.group(3).decode()
        samples.append((name, labels, math.inf if v == "+Inf" else float(v)))
    return samples, typed


def value(samples, name, **labels):
    found = [v for n, l, v in samples
             if n == name and all(l.get(k) == x for k, x in labels.items())]
    assert len(found) <= 1, f"{name}{labels} is ambiguous"
    return found[0] if found else None


def check_histograms(samples):
    """Cumulative, monotonic buckets in ascending le order ending with +Inf,
    and _count equal to +Inf, for every syscall; returns how many."""
    hists = {}
    for n, l, v in samples:
        if not n.startswith("scprof_syscall_duration_seconds"):
            continue
        key = (l["syscall"], l["abi"])
        h = hists.setdefault(key, {"b": [], "sum": None, "count": None})
        if n.endswith("_bucket"):
            le = math.inf if l["le"] == "+Inf" else float(l["le"])
            h["b"].append((le, v))
        elif n.endswith("_sum"):
            h["sum"] = v
        else:
            h["count"] = v
    for key, h in hists.items():
        les = [le for le, _ in h["b"]]
        counts = [c for _, c in h["b"]]
        assert les == sorted(les) and len(set(les)) == len(les), (key, les)
        assert les[-1] == math.inf, key
        assert counts == sorted(counts), f"{key} not cumulative: {counts}"
        assert counts[-1] == h["count"], f"{key}: +Inf != _count"
        assert h["sum"] is not None and h["sum"] >= 0, key
    return len(hists)


def comm_link(tmp_path, name):
    """A symlink to the pacer whose file name (so comm, after exec) is name."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    path = os.path.join(os.fsencode(str(d)), name)
    os.symlink(workload("pacer"), path)
    return path


def quiesce(d, pred, what, every=0.05):
    """Scrape until pred(samples) holds (exited processes are folded every
    --fold-interval); returns the samples."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        samples, _ = parse(d.metrics())
        if pred(samples):
            return samples
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(every)


# ---- the endpoint ----------------------------------------------------------

def test_failed_map_updates_are_said_by_map_and_errno(daemons, gates):
    """An update that fails for another reason than a full map is counted
    as itself (issue #19). SCPROF_TEST_MAP_FAIL makes every update of the
    errno map fail with EBUSY, as an update nested in another would."""
    g = gates([workload("pacer"), "100", "3", "1", "1"])
    d = daemons(["-p", str(g.pid), "--fold-interval", "0.1"],
                prefix=["env", "SCPROF_TEST_MAP_FAIL=errnos:EBUSY"])
    g.release()
    assert g.wait() == 0
    samples = quiesce(
        d, lambda s: value(s, "scprof_processes_folded_total") == 1,
        "the pacer folded")
    # every error counted (the pacer's 3 failing openat among them), its
    # errno detail lost, and why said
    errors = sum(v for n, l, v in samples
                 if n == "scprof_syscall_errors_total")
    assert value(samples, "scprof_syscall_errors_total", syscall="openat",
                 abi="64") >= 3
    assert value(samples, "scprof_dropped_total",
                 reason="errno_detail") == errors
    assert value(samples, "scprof_map_update_failures_total", map="errnos",
                 errno="EBUSY") == errors
    assert value(samples, "scprof_map_update_failures_total", map="procs",
                 errno="E2BIG") is None
    assert value(samples, "scprof_dropped_total", reason="calls") == 0


def test_metrics_match_ground_truth_and_pass_promtool(daemons, gates, tmp_path):
    # The pacer makes exactly 5 x 1000 getppid and 5 x 3 failing openat.
    hostile = b'ev"il\\\n\xff{x}'  # 11 bytes: all of it is the comm
    g = gates([comm_link(tmp_path, hostile), "1000", "3", "2", "5"])
    # every call timed: the histograms are exact too
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1",
                 "--latency-duty", "1"])
    g.release()
    assert g.wait() == 0
    samples = quiesce(
        d, lambda s: value(s, "scprof_processes_folded_total") == 1,
        "the pacer folded")
    assert value(samples, "scprof_syscalls_total", syscall="getppid",
                 abi="64") == 5000
    assert value(samples, "scprof_syscall_errors_total", syscall="getppid",
                 abi="64") == 0
    # openat: 15 failures of ours; the loader's own openat calls succeed
    assert value(samples, "scprof_syscall_errors_total", syscall="openat",
                 abi="64") == 15
    # bytes only for read/write-family calls
    assert value(samples, "scprof_syscall_bytes_total", syscall="getppid") is None
    assert value(samples, "scprof_syscall_bytes_total", syscall="read") is not None
    assert value(samples, "scprof_syscall_duration_seconds_count",
                 syscall="getppid", abi="64") == 5000
    assert check_histograms(samples) >= 5

    # Per-comm: the hostile name, escaped so that it parses back exactly;
    # the comm series sum to the syscall totals.
    want = 'ev"il\\\n\ufffd{x}'
    total = sum(v for n, l, v in samples if n == "scprof_syscalls_total")
    comm_sum = sum(v for n, l, v in samples if n == "scprof_group_syscalls_total")
    assert comm_sum == total
    assert value(samples, "scprof_group_syscalls_total", comm=want) >= 5015
    raw = d.metrics()
    assert b'comm="ev\\"il\\\\\\n\xef\xbf\xbd{x}"' in raw

    # promtool's own check (parser and lint) of the same output
    p = run(["promtool", "check", "metrics"], input=raw)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not p.stdout.strip() and not p.stderr.strip(), p.stdout + p.stderr

    # self metrics
    assert value(samples, "scprof_bpf_programs_attached") >= 4
    assert value(samples, "scprof_dropped_total", reason="calls") == 0
    assert value(samples, "scprof_scrapes_total") >= 1
    assert value(samples, "scprof_resident_memory_bytes") > 0
    assert value(samples, "scprof_bpf_map_memory_bytes") > 0
    assert value(samples, "scprof_bpf_map_entries", map="stats") == 0
    (info, one), = [(l, v) for n, l, v in samples if n == "scprof_build_info"]
    assert one == 1 and info.get("version"), info


def test_counters_never_go_backwards(daemons, gates, tmp_path):
    # A steady pacer plus short-lived children renaming by exec: scrape
    # repeatedly; no counter or bucket may ever decrease.
    g = gates(["/bin/sh", "-c",
               f'{workload("pacer")} 200 1 5 0 & '
               f'for i in $(seq 40); do {workload("pacer")} 50 1 10 3; done; '
               'kill $!'])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1"])
    g.release()
    prev, scrapes = {}, 0

    def check():
        nonlocal scrapes
        samples, typed = parse(d.metrics())
        scrapes += 1
        check_histograms(samples)
        for n, l, v in samples:
            fam = re.sub(r"_(bucket|sum|count)$", "", n)
            if typed.get(n) != "counter" and typed.get(fam) != "histogram":
                continue
            key = (n, tuple(sorted(l.items())))
            assert v >= prev.get(key, 0), f"{key} went from {prev[key]} to {v}"
            prev[key] = v
        return samples

    while g.proc.poll() is None:
        check()
        time.sleep(0.02)
    assert g.wait() == 0
    # until the 40 short pacers, the steady one and seq are folded, and
    # 10 scrapes at least (a loaded machine scrapes fewer while it runs)
    while check() and (prev[("scprof_processes_folded_total", ())] < 42 or
                       scrapes < 10):
        time.sleep(0.05)
    assert prev[("scprof_syscalls_total", (("abi", "64"), ("syscall", "getppid")))] \
        >= 40 * 150


def test_http_paths_methods_and_timeouts(daemons):
    d = daemons(["-p", str(os.getpid()), "--http-timeout", "1"])
    status, headers, body = d.get("/")
    assert status == 200 and b"/metrics" in body
    status, _, _ = d.get("/metrics/../etc/passwd")
    assert status == 404
    status, _, _ = d.get("/nothing")
    assert status == 404
    status, headers, _ = d.get("/metrics", method="POST")
    assert status == 405 and headers.get("Allow") == "GET, HEAD"
    status, _, _ = d.get("/metrics", method="DELETE")
    assert status == 405
    status, headers, body = d.get("/metrics", method="HEAD")
    assert status == 200 and body == b""
    assert headers["Content-Type"] == CONTENT_TYPE
    # A client that connects and says nothing is dropped after the timeout
    # (1 s here); meanwhile scrapes are still served.
    s = socket.create_connection(("127.0.0.1", d.port), timeout=TIMEOUT)
    s.sendall(b"GET /metr")
    assert d.metrics()
    s.settimeout(30)
    assert s.recv(100) == b"", "idle connection was not closed"
    s.close()


def test_prometheus_server_scrapes_it(daemons, gates, tmp_path):
    prometheus = shutil.which("prometheus")
    assert prometheus, "Debian's prometheus package is not installed"
    g = gates([comm_link(tmp_path, b"prom\\\"te\nst"), "100", "1", "10", "0"])
    d = daemons(["-p", str(g.pid), "-f", "--latency-duty", "1"])
    g.release()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        web = s.getsockname()[1]
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: scprof\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{d.port}']\n")
    srv = subprocess.Popen(
        [prometheus, f"--config.file={cfg}",
         f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{web}", "--log.level=error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(tmp_path))
    try:
        import json
        import urllib.parse
        import urllib.request

        def api(path, **q):
            url = f"http://127.0.0.1:{web}/api/v1/{path}"
            if q:
                url += "?" + urllib.parse.urlencode(q)
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.load(r)["data"]

        deadline = time.monotonic() + TIMEOUT
        while True:
            assert srv.poll() is None, srv.stderr.read()
            try:
                targets = api("targets")["activeTargets"]
                res = api("query", query='scprof_syscalls_total{syscall="getppid"}')
                if targets and targets[0]["health"] == "up" and res["result"]:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "Prometheus never scraped scprof"
            time.sleep(0.2)
        assert targets[0]["lastError"] == ""
        assert float(res["result"][0]["value"][1]) > 0
        assert api("query", query='up{job="scprof"}')["result"][0]["value"][1] == "1"
        # the hostile name arrived intact in Prometheus's storage
        res = api("query", query="scprof_group_syscalls_total")["result"]
        assert 'prom\\"te\nst' in {r["metric"]["comm"] for r in res}
        # a histogram Prometheus can compute a quantile from
        q = api("query", query="histogram_quantile(0.5, "
                "scprof_syscall_duration_seconds_bucket{syscall=\"getppid\"})")
        assert 0 < float(q["result"][0]["value"][1]) < 1
    finally:
        srv.terminate()
        srv.wait(timeout=TIMEOUT)


# ---- lifecycle -------------------------------------------------------------

def bpf_ids(pid, key):
    """Ids (key "link_id" or "prog_id") of the BPF links process pid holds."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf_link":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        ids.add(int(line.split()[1]))
        except FileNotFoundError:
            continue
    return ids


def bpftool_has(kind, i):
    return run(["bpftool", kind, "show", "id", str(i)]).returncode == 0


def test_sigterm_detaches_everything_and_exits_0(daemons, gates, tmp_path):
    pidfile = tmp_path / "scprof.pid"
    g = gates(["sleep", "60"])
    d = daemons(["-p", str(g.pid), "--pidfile", str(pidfile)])
    assert pidfile.read_text() == f"{d.pid}\n"
    links, progs = bpf_ids(d.pid, "link_id"), bpf_ids(d.pid, "prog_id")
    assert len(links) >= 4 and len(progs) == len(links)
    assert all(bpftool_has("link", i) for i in links)
    rc, took, err = d.stop(signal.SIGTERM)
    assert rc == 0, err
    # Hang guard, not a timing claim (docs/daemon.md states the measured time).
    assert took < 10, f"took {took:.1f} s to stop"
    assert err.decode().strip().splitlines()[-1] == \
        "scprof daemon: stopped: BPF programs detached"
    # Detached: the links are gone at once; the kernel frees the programs
    # after an RCU grace period.
    for i in links:
        assert not bpftool_has("link", i), f"BPF link {i} is still there"
    deadline = time.monotonic() + TIMEOUT
    while any(bpftool_has("prog", i) for i in progs):
        assert time.monotonic() < deadline, "BPF programs were never freed"
        time.sleep(0.1)
    assert not pidfile.exists()


def test_sigint_also_stops_cleanly(daemons):
    d = daemons(["-p", str(os.getpid())])
    rc, _, err = d.stop(signal.SIGINT)
    assert rc == 0, err


def test_sigterm_during_scrapes_detaches_everything(daemons):
    d = daemons(["-a"])
    links = bpf_ids(d.pid, "link_id")
    assert len(links) >= 4
    done = threading.Event()

    def scrape():
        while not done.is_set():
            try:
                d.get()
            except OSError:
                pass  # the daemon went away mid-request: expected

    scrapers = [threading.Thread(target=scrape) for _ in range(3)]
    for t in scrapers:
        t.start()
    try:
        time.sleep(0.5)
        rc, _, err = d.stop(signal.SIGTERM)
    finally:
        done.set()
        for t in scrapers:
            t.join()
    assert rc == 0, err
    for i in links:
        assert not bpftool_has("link", i), f"BPF link {i} is still there"


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.02, 0.06, 0.15])
def test_sigterm_while_starting_leaves_nothing_loaded(delay):
    p = subprocess.Popen([SCPROF, "daemon", "--listen", "127.0.0.1:0", "-a"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    progs = set()
    try:
        time.sleep(delay)
        try:
            progs = {int(line.split()[1])
                     for fd in os.listdir(f"/proc/{p.pid}/fdinfo")
                     for line in open(f"/proc/{p.pid}/fdinfo/{fd}")
                     if line.startswith("prog_id:")}
        except OSError:
            pass
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # killed by the signal before it could block it, or a clean stop
    assert p.returncode in (0, -signal.SIGTERM), err
    deadline = time.monotonic() + TIMEOUT
    while any(bpftool_has("prog", i) for i in progs):
        assert time.monotonic() < deadline, "BPF programs left loaded"
        time.sleep(0.1)


def test_second_daemon_on_the_same_port_fails_clearly(daemons, tmp_path):
    pidfile = tmp_path / "one.pid"
    first = daemons(["-p", str(os.getpid()), "--pidfile", str(pidfile)])
    p = run([SCPROF, "daemon", "-p", str(os.getpid()), "--listen",
             f"127.0.0.1:{first.port}"])
    assert p.returncode == 1
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "address already in use" in lines[0], lines
    # the same pidfile, another port: told who holds it
    p = run([SCPROF, "daemon", "-p", str(os.getpid()), "--listen",
             "127.0.0.1:0", "--pidfile", str(pidfile)])
    assert p.returncode == 1
    assert f"locked by a running daemon (pid {first.pid})" in p.stderr.decode()
    assert pidfile.read_text() == f"{first.pid}\n"
    assert first.metrics()


# ---- privileges: the systemd unit's capability set --------------------------

def unit_caps():
    with open(UNIT) as f:
        text = f.read()
    caps = {}
    for key in ("CapabilityBoundingSet", "AmbientCapabilities"):
        m = re.search(rf"^{key}=(.*)$", text, re.M)
        assert m, f"{key} missing from the unit"
        caps[key] = m.group(1).split()
    return text, caps


def test_systemd_unit_is_valid_and_least_privilege(tmp_path):
    text, caps = unit_caps()
    assert sorted(caps["CapabilityBoundingSet"]) == ["CAP_BPF", "CAP_PERFMON"]
    assert caps["AmbientCapabilities"] == caps["CapabilityBoundingSet"]
    assert re.search(r"^NoNewPrivileges=yes$", text, re.M)
    assert re.search(r"^ExecStart=\S+ daemon .*--pidfile ", text, re.M)
    # systemd's own verdict, on a copy that runs this build's binary
    unit = tmp_path / "scprof-daemon.service"
    unit.write_text(re.sub(r"^ExecStart=\S+", f"ExecStart={SCPROF}", text,
                           flags=re.M))
    p = run(["systemd-analyze", "verify", str(unit)])
    assert p.returncode == 0, p.stderr.decode()


def test_runs_with_exactly_the_units_capabilities(daemons, gates, nobody_copy):
    _, caps = unit_caps()
    names = ",".join("+" + c[4:].lower() for c in caps["AmbientCapabilities"])
    setpriv = NOBODY + [f"--inh-caps=-all,{names}", f"--ambient-caps=-all,{names}",
                        f"--bounding-set=-all,{names}"]
    g = gates([workload("pacer"), "100", "0", "5", "3"])
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.1"],
                prefix=setpriv, binary=nobody_copy.scprof)
    g.release()
    assert g.wait() == 0
    samples = quiesce(d, lambda s: value(
        s, "scprof_syscalls_total", syscall="getppid", abi="64") == 300,
        "the pacer's 300 getppid calls")
    with open(f"/proc/{d.pid}/status") as f:
        status = f.read()
    assert kept_caps(status) in (NO_CAPS, BPF_CAPS), status
    rc, _, err = d.stop()
    assert rc == 0, err
    # one capability less is not enough, and the user is told why
    for drop in caps["AmbientCapabilities"]:
        keep = ",".join("+" + c[4:].lower() for c in caps["AmbientCapabilities"]
                        if c != drop)
        p = run(NOBODY + [f"--inh-caps=-all,{keep}", f"--ambient-caps=-all,{keep}",
                          f"--bounding-set=-all,{keep}", nobody_copy.scprof, "daemon",
                          "--listen", "127.0.0.1:0", "-p", str(os.getpid())])
        assert p.returncode == 1
        assert "CAP_BPF and CAP_PERFMON" in p.stderr.decode()


NO_CAPS = "0000000000000000"
BPF_CAPS = "000000c000000000"  # CAP_PERFMON (38) and CAP_BPF (39)


def kept_caps(status):
    """The capabilities a daemon kept (effective = permitted), or None when
    they differ or its bounding set allows more than CAP_BPF and
    CAP_PERFMON (a process without CAP_SETPCAP cannot shrink its bounding
    set, and no_new_privs keeps an exec from using it)."""
    cap = {key: re.search(rf"^{key}:\s+(\S+)$", status, re.M).group(1)
           for key in ("CapEff", "CapPrm", "CapBnd")}
    if cap["CapEff"] != cap["CapPrm"] or cap["CapBnd"] not in (NO_CAPS, BPF_CAPS):
        return None
    return cap["CapEff"]


def test_root_daemon_keeps_at_most_bpf_and_perfmon(daemons):
    # Where the kernel lets a process use open maps without capabilities
    # (Linux 6.x), the daemon keeps none; elsewhere only CAP_BPF and
    # CAP_PERFMON. Either way it still reads and folds its maps.
    d = daemons(["-p", str(os.getpid())])
    with open(f"/proc/{d.pid}/status") as f:
        status = f.read()
    assert kept_caps(status) in (NO_CAPS, BPF_CAPS), status
    assert re.search(r"^NoNewPrivs:\s+1$", status, re.M)
    assert d.metrics()


# ---- bad input ---------------------------------------------------------------

@pytest.mark.parametrize("addr", [
    "nonsense", "127.0.0.1", "127.0.0.1:", ":9733", "127.0.0.1:65536",
    "127.0.0.1:-1", "127.0.0.1:80x", "1.2.3:80", "[::1]9733", "[::1:9733",
    "localhost.example:80", "0x7f.1:80", "127.0.0.1: 80",
])
def test_bad_listen_address_is_a_usage_error(addr):
    p = run([SCPROF, "daemon", "--listen", addr])
    assert p.returncode == 2
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "invalid listen address" in lines[0], lines


@pytest.mark.parametrize("args,code,msg", [
    (["--listen", "192.0.2.1:9733"], 1, "no such local address"),
    (["-p", "999999999"], 2, "invalid PID"),
    (["-p", "4194303", "--listen", "127.0.0.1:0"], 1, "no such process"),
    (["--cgroup", "/nonexistent", "--listen", "127.0.0.1:0"], 1, "cgroup"),
    (["--comm-series", "5000"], 2, "--comm-series"),
    (["--fold-interval", "0"], 2, "--fold-interval"),
    (["--http-timeout", "1x"], 2, "--http-timeout"),
    (["--latency-duty", "1.5"], 2, "--latency-duty"),
    (["--latency-duty", "-0.1"], 2, "--latency-duty"),
    (["--latency-duty", "0x1"], 2, "--latency-duty"),
    (["--max-overhead", "0"], 2, "--max-overhead"),
    (["--max-overhead", "101"], 2, "--max-overhead"),
    (["--latency-period", "0.01"], 2, "--latency-period"),
    (["-f"], 2, "-f applies"),
    (["-a", "-p", "1"], 2, "choose one target"),
    (["ls"], 2, "unexpected argument"),
    (["--pidfile", "/nonexistent/dir/x.pid", "--listen", "127.0.0.1:0"], 1,
     "cannot open pidfile"),
])
def test_bad_input_is_one_clear_line(args, code, msg):
    p = run([SCPROF, "daemon"] + args)
    assert p.returncode == code, p.stderr
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], lines


def test_unprivileged_user_is_refused(nobody_copy):
    p = run(NOBODY + [nobody_copy.scprof, "daemon", "--listen", "127.0.0.1:0"])
    assert p.returncode == 1
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "CAP_BPF and CAP_PERFMON" in lines[0], lines


# ---- footprint ---------------------------------------------------------------

def map_memory(pid):
    """Kernel memory of the BPF maps process pid holds (fdinfo memlock),
    measured from outside the daemon."""
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-map":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("memlock:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1)) * 1024


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def churn_rounds(gates, rounds, per_round, gap_ms):
    """A gate that runs one round of churn per line it reads and says
    "done" after each."""
    g = gates(["/bin/sh", "-c",
               f'for i in $(seq {rounds}); do read x; '
               f'{workload("churn")} procs {per_round} 3 {gap_ms}; echo done; done'],
              stdout=subprocess.PIPE)
    return g


def round_go(g):
    g.proc.stdin.write(b"go\n")
    g.proc.stdin.flush()


def sanitized(pid):
    """Whether process pid runs with AddressSanitizer (make check)."""
    with open(f"/proc/{pid}/maps") as f:
        return "/libasan.so" in f.read()


@pytest.mark.soak
def test_memory_flat_under_process_churn(daemons, gates):
    # 8 rounds of 1000 short-lived processes, folded every 0.5 s. Memory
    # (RSS + BPF maps, measured from outside) after round 2 and after round
    # 8 must agree within 256 KiB: keeping ~44 bytes per exited process
    # anywhere (per-process history, a map entry, a remembered pid) would
    # exceed that.
    # Under AddressSanitizer (make check) the RSS is its allocator's: size
    # class regions that grow with the largest fold's transient buffers and
    # are handed back to the kernel on a timer, which moved it by 1-9 MiB
    # between rounds on a loaded machine (flat to 20 KiB without ASan, the
    # same load). There only the BPF maps' memory must stay flat; the
    # uninstrumented run of this test (make e2e) holds the RSS to it.
    rounds, per_round = 8, 1000
    g = churn_rounds(gates, rounds, per_round, 0)
    d = daemons(["-p", str(g.pid), "-f", "--fold-interval", "0.5"])
    round_go(g)  # releases the gate
    mem = []
    for r in range(rounds):
        round_go(g)
        assert g.proc.stdout.readline() == b"done\n"
        want = (r + 1) * per_round
        quiesce(d, lambda s: value(s, "scprof_processes_folded_total") >= want,
                f"{want} processes folded")
        mem.append((rss(d.pid), map_memory(d.pid)))
    samples, _ = parse(d.metrics())
    # every child's getppid calls, exactly (the shell makes one of its own)
    assert value(samples, "scprof_syscalls_total", syscall="getppid",
                 abi="64") - rounds * per_round * 3 in (0, 1)
    assert value(samples, "scprof_bpf_map_entries", map="procs") <= 3
    assert value(samples, "scprof_bpf_map_entries", map="stats") <= 20
    asan = sanitized(d.pid)
    kept = [m for _, m in mem] if asan else [r + m for r, m in mem]
    growth = kept[-1] - kept[1]
    print(f"\nRSS and BPF maps after each round of {per_round} processes: "
          f"{[(r // 1024, m // 1024) for r, m in mem]} KiB; growth of "
          f"{'the maps' if asan else 'both'} over rounds 2-8: "
          f"{growth / 1024:.0f} KiB")
    assert growth < 256 << 10, f"memory grew by {growth} bytes"


def wakeups(pid):
    """How often process pid has gone to sleep and been woken."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", f.read(),
                             re.M).group(1))


@pytest.mark.soak
def test_daemon_work_does_not_follow_process_churn(daemons, gates):
    # About 100 process exits a second for ~20 s (a busy machine), the
    # default fold interval, a scrape every 5 s (3x the 15 s docs/daemon.md's
    # "under 1% of a core" is for). What it costs in CPU time is the
    # machine's business (printed here; the daemon's cost is measured in
    # make bench): what the daemon guarantees is that it wakes on its own
    # clock, not per exit. It looks at its maps every 250 ms (and at a
    # budgeted window every 50 ms) and otherwise sleeps until a fold, a
    # scrape or a signal is due (cmd_daemon.c), so at most 20 wakeups a
    # second (measured 20.3 when the maps were looked at every 50 ms),
    # whatever the churn: one per exited process would be 100 a second
    # more. The CPU bound only
    # catches a spinning loop (measured 0.4-0.7% of a core, ASan or not).
    g = churn_rounds(gates, 1, 2000, 8)
    d = daemons(["-p", str(g.pid), "-f"])
    round_go(g)
    t0, c0, w0 = time.monotonic(), cpu_seconds(d.pid), wakeups(d.pid)
    round_go(g)
    scrapes = 0
    while True:
        r, _, _ = select.select([g.proc.stdout], [], [], 5)
        d.metrics()
        scrapes += 1
        if r:
            assert g.proc.stdout.readline() == b"done\n"
            break
    # the last fold (default interval 5 s), looked for once a second
    quiesce(d, lambda s: value(s, "scprof_processes_folded_total") >= 2000,
            "2000 processes folded", every=1)
    t1, c1, w1 = time.monotonic(), cpu_seconds(d.pid), wakeups(d.pid)
    ratio = (c1 - c0) / (t1 - t0)
    rate = (w1 - w0) / (t1 - t0)
    print(f"\nCPU: {c1 - c0:.2f} s over {t1 - t0:.1f} s = {100 * ratio:.2f}% "
          f"of a core; {rate:.1f} wakeups/s ({scrapes + 1} scrapes, "
          f"2000 processes)")
    assert scrapes >= 3
    # 20/s at most from the clocks, a few per scrape and per fold
    assert w1 - w0 <= 20 * (t1 - t0) * 1.2 + 10 * (scrapes + 10), \
        f"{rate:.1f} wakeups a second"
    assert ratio < 0.1, f"daemon used {100 * ratio:.2f}% of a core"

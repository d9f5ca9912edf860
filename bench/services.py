# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""services: what a probe costs a real server, its requests/s traced over
untraced: nginx (one worker, a 612-byte static file, `ab -k -c 8`) and
redis (`redis-benchmark -t set,get -c 50`), the server pinned to one CPU
and its load generator to the other, over loopback, with configuration
files of ours. Each probed run sits between bare runs, the order rotating;
its ratio is over the mean of its two bare neighbours' requests/s, the
noise how far a bare run lands from its neighbours (median). The probe
must count a call of the server a request. The warm-up goes through a
grace period under load (probes.grace_period), as the first probe to stop
would, so that every run finds the server's thread in the same state.
"""
import os
import re
import shutil
import socket
import subprocess
import threading
import time

from loops import interleaved
from probes import (FLOORS, BenchError, Running, foreign_probes,
                    grace_period, log, md_table, med, proc_cpu_s, spread)

WORKLOADS = ("nginx", "redis")
LONG_SECONDS = 11  # the daemon's runs: a 10 s period and more


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError("%s exited at start (%d)" % (what,
                                                          proc.returncode))
        try:
            with socket.create_connection(("127.0.0.1", port), 0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise BenchError("%s is not listening on port %d" % (what, port))


class Server:
    """A server pinned to a.cpu, started from a configuration file of
    ours; load(secs) -> {"rps", "requests"}."""
    tools = ()

    def __init__(self, a, workdir):
        self.a, self.dir = a, os.path.join(workdir, self.name)
        self.proc, self.pid, self.port = None, None, free_port()
        os.makedirs(self.dir, exist_ok=True)

    def spawn(self, argv):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT, preexec_fn=pinned(self.a.cpu),
            start_new_session=True)
        wait_port(self.port, self.proc, self.name)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Nginx(Server):
    name, tools = "nginx", ("nginx", "ab")
    desc = "nginx, one worker, `ab -k -c 8` for a 612-byte file"

    def start(self):
        d = self.dir
        os.makedirs(os.path.join(d, "www"), exist_ok=True)
        with open(os.path.join(d, "www", "index.html"), "w") as f:
            f.write("<!doctype html><title>scprof bench</title>\n" +
                    "x" * 562 + "\n")
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "# Written by bench/services.py for `make bench`.",
                "worker_processes 1; daemon off; master_process on;",
                "user root; pid %s/nginx.pid; error_log %s/error.log;" % (d, d),
                "events { worker_connections 1024; }",
                "http {",
                "  access_log off; sendfile on; keepalive_requests 1000000;",
                "  client_body_temp_path %s/tmp;" % d,
                "  proxy_temp_path %s/tmp; fastcgi_temp_path %s/tmp;" % (d, d),
                "  uwsgi_temp_path %s/tmp; scgi_temp_path %s/tmp;" % (d, d),
                "  server { listen 127.0.0.1:%d; root %s/www; location / { } }"
                % (self.port, d), "}", ""]))
        self.spawn(["nginx", "-c", conf, "-p", d, "-e",
                    os.path.join(d, "error.log")])
        deadline = time.monotonic() + 10
        kids = []
        while not kids and time.monotonic() < deadline:
            time.sleep(0.05)
            with open("/proc/%d/task/%d/children" % (self.proc.pid,
                                                     self.proc.pid)) as f:
                kids = [int(x) for x in f.read().split()]
        if len(kids) != 1:
            raise BenchError("nginx: expected one worker, found %r" % kids)
        self.pid = kids[0]

    def load(self, secs):
        p = subprocess.run(
            ["ab", "-k", "-c", "8", "-t", "%g" % secs, "-n", "20000000",
             "http://127.0.0.1:%d/" % self.port], capture_output=True,
            text=True, preexec_fn=pinned(self.a.client_cpu), check=False)
        got = {k: re.search(r"^%s:\s+([\d.]+)" % k, p.stdout, re.M)
               for k in ("Requests per second", "Complete requests",
                         "Failed requests")}
        if p.returncode or not all(got.values()):
            raise BenchError("ab failed (%d): %s" % (
                p.returncode, (p.stderr or p.stdout).strip()[-300:]))
        if float(got["Failed requests"].group(1)):
            raise BenchError("ab: %s requests failed" %
                             got["Failed requests"].group(1))
        return {"rps": float(got["Requests per second"].group(1)),
                "requests": int(got["Complete requests"].group(1))}


class Redis(Server):
    name, tools = "redis", ("redis-server", "redis-benchmark")
    desc = "redis-server, `redis-benchmark -t set,get -c 50`"

    def start(self):
        conf = os.path.join(self.dir, "redis.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "# Written by bench/services.py for `make bench`.",
                "bind 127.0.0.1", "port %d" % self.port, "daemonize no",
                "save \"\"", "appendonly no", "dir %s" % self.dir,
                "logfile %s/redis.log" % self.dir, "databases 1", ""]))
        self.spawn(["redis-server", conf])
        self.pid = self.proc.pid

    def commands(self):
        """The server's total_commands_processed (our INFO adds one)."""
        with socket.create_connection(("127.0.0.1", self.port), 5) as s:
            s.sendall(b"INFO stats\r\n")
            buf = b""
            while b"total_commands_processed:" not in buf or \
                    not buf.endswith(b"\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        m = re.search(rb"total_commands_processed:(\d+)", buf)
        if not m:
            raise BenchError("redis: no total_commands_processed in INFO")
        return int(m.group(1))

    def load(self, secs):
        """redis-benchmark in a loop; requests/s by the server's count
        over the timed window, once its clients are connected."""
        gen = subprocess.Popen(
            ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port),
             "-c", "50", "-t", "set,get", "-l", "-q", "-r", "10000"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=pinned(self.a.client_cpu),
            start_new_session=True)
        try:
            c0 = self.commands()
            time.sleep(min(0.5, secs / 4))
            c1, t1 = self.commands(), time.monotonic()
            time.sleep(secs)
            c2, t2 = self.commands(), time.monotonic()
            if gen.poll() is not None:
                raise BenchError("redis-benchmark exited (%d)" %
                                 gen.returncode)
        finally:
            gen.kill()
            gen.wait()
        return {"rps": (c2 - c1 - 1) / (t2 - t1),
                "requests": self.commands() - c0}


def run_once(a, w, cfg, tmp):
    """One timed load, bare (cfg None) or under a probe."""
    if cfg is None:
        r = w.load(a.service_seconds)
        r["foreign_probes"] = foreign_probes(())
        return r
    with Running(cfg, w.pid, tmp) as t:
        r = {"foreign_probes": foreign_probes((t.proc.pid,))}
        c0, t0 = proc_cpu_s(t.proc.pid), time.monotonic()
        r.update(w.load(LONG_SECONDS if cfg.long_run else
                        a.service_seconds))
        # the probe's own CPU during the load, a share of one CPU
        r["tracer_cpu"] = (proc_cpu_s(t.proc.pid) - c0) / \
            (time.monotonic() - t0)
        text = t.finish()
    seen = t.check_seen(text, r["requests"], "%d requests" % r["requests"])
    if seen is not None and str(w.pid) in cfg.argv(w.pid, "")[1:]:
        r["calls_per_request"] = sum(seen.values()) / r["requests"]
    return r


def warm_up(a, w):
    """A load not counted, with a grace period in it."""
    w.load(1.0)
    failed = []
    t = threading.Thread(target=lambda: failed.append(w.load(2.0)))
    t.start()
    try:
        time.sleep(0.5)
        grace_period(a)
    finally:
        t.join()
    if len(failed) != 1:
        raise BenchError("%s: the warm-up load failed" % w.name)


def summarize(cfgs, bare, runs):
    """A workload's rows: each run's requests/s over the mean of its bare
    neighbours' (ratio), that over its floor's in this run (x_floor); the
    noise, how far a bare run lands from the mean of its neighbours."""
    rps = [r["rps"] for r in bare]
    noise = [abs(1 - rps[i] / ((rps[i - 1] + rps[i + 1]) / 2))
             for i in range(1, len(rps) - 1)]
    rows = []
    for c in cfgs:
        ratios = [r["rps"] / ((pre["rps"] + post["rps"]) / 2)
                  for pre, r, post in runs[c.name]]
        rs = [r for _, r, _ in runs[c.name]]
        cpr = [r["calls_per_request"] for r in rs if "calls_per_request" in r]
        rows.append({"config": c.name, "label": c.label, "floor": c.floor,
                     "ratio": spread(ratios), "ratios": ratios,
                     "rps": med([r["rps"] for r in rs]),
                     "tracer_cpu": med([r["tracer_cpu"] for r in rs]),
                     "calls_per_request": med(cpr) if cpr else None})
    by = {r["config"]: r for r in rows}
    for r in rows:
        fl = by.get(FLOORS.get(r["floor"]))
        r["x_floor"] = r["ratio"]["median"] / fl["ratio"]["median"] \
            if fl else None
    return {"rows": rows, "bare_rps": spread(rps),
            "noise": med(noise) if noise else 0.0,
            "foreign_probes": max(r["foreign_probes"] for r in bare + [
                r for v in runs.values() for _, r, _ in v])}


def run(a, cfgs, tmp):
    cfgs = [c for c in cfgs if "services" in c.sections]
    wls = []
    for cls in (Nginx, Redis):
        missing = [t for t in cls.tools if not shutil.which(t)]
        if cls.name in a.services and missing:
            log("bench: skipping %s: %s not installed (make bench installs "
                "bench/deps)" % (cls.name, ", ".join(missing)))
        elif cls.name in a.services:
            wls.append(cls(a, os.path.join(a.out, "services")))
    log("bench: services: %s; %d configurations x %d repetitions, %g s runs"
        % (", ".join(w.name for w in wls), len(cfgs), a.reps,
           a.service_seconds))
    out = {"reps": a.reps, "seconds": a.service_seconds,
           "long_seconds": LONG_SECONDS, "cpu": a.cpu,
           "client_cpu": a.client_cpu, "workloads": {}}
    for w in wls:
        try:
            w.start()
            warm_up(a, w)
            bare, runs = interleaved(cfgs, lambda c: run_once(a, w, c, tmp),
                                     w.name, a.reps)
        finally:
            w.stop()
        out["workloads"][w.name] = dict(summarize(cfgs, bare, runs),
                                        desc=w.desc)
    return out


def markdown(sec, chart=None):
    out = ["**Services** (requests/s traced ÷ untraced, the server pinned "
           "to CPU %d and its load generator to CPU %d; %d repetitions of "
           "%g s runs, the daemon's %g s, each between untraced runs; "
           "median (min-max); */ floor*: that over the ratio of its floor "
           "(the empty programs: floor-exit for one program on sys_exit, "
           "floor-pair for two) in this run; *calls/req*: the calls the "
           "probe counted a request; *tracer CPU*: the probe's own, a share "
           "of one CPU; *noise*: how far an untraced run lands from its "
           "untraced neighbours):" % (
               sec["cpu"], sec["client_cpu"], sec["reps"], sec["seconds"],
               sec["long_seconds"]), ""]
    if chart:
        out += ["![requests/s traced / untraced](%s)" % chart, ""]
    for name, wl in sec["workloads"].items():
        out += ["%s: %s; untraced %.0f requests/s, noise ±%.1f points%s:" % (
            name, wl["desc"], wl["bare_rps"]["median"], 100 * wl["noise"],
            "; up to %d BPF tracing programs of other processes were "
            "attached during runs" % wl["foreign_probes"]
            if wl["foreign_probes"] else ""), ""] + md_table(
            ["config", "ratio (min-max)", "/ floor", "requests/s",
             "calls/req", "tracer CPU"],
            [[r["label"], "%.2f (%.2f-%.2f)" % (
                r["ratio"]["median"], r["ratio"]["min"], r["ratio"]["max"]),
              "" if r["x_floor"] is None else "%.2f" % r["x_floor"],
              "%.0f" % r["rps"], "" if r["calls_per_request"] is None else
              "%.1f" % r["calls_per_request"],
              "%.1f%%" % (100 * r["tracer_cpu"])]
             for r in wl["rows"]]) + [""]
    return "\n".join(out)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The services section of `make bench`: what a probe costs a real server,
as its requests per second traced divided by untraced.

Workloads, each a server pinned to one CPU and its load generator pinned
to the other, over loopback, with configuration files of ours under the
bench output folder (never the system's):

  nginx         one worker, a small static file, `ab -k -c 8`
  redis         redis-server, `redis-benchmark -t set,get -c 50`
  redis-P16     the same, 16 requests pipelined per round trip

Method, as for the loops: a repetition runs every configuration once, each
right after an untraced (bare) run, and ends with a bare run; the order
rotates between repetitions. A probe is started on the server's pid and
detected as attached before the load starts, and stopped after it ends;
its own report must show at least one call of the server per request (per
pipeline of requests), so a probe that missed part of the window is an
error, not a figure. A run's ratio is its requests/s over the mean of the
bare runs just before and after it; the table gives the median over
repetitions and the min-max, and the bare runs' own spread (each against
its neighbours) is the noise figure. The warm-up tries to mark the server's
main thread by an RCU Tasks Trace grace period (probes.py), as the first
probe to stop would, so that every run, bare ones too, sees it alike; the
report says whether it took (not always: redis's main thread was not, in a
run where it was by the end, marked by a probe's stop).
"""
import os
import re
import shutil
import socket
import subprocess
import threading
import time

from probes import BenchError, Running, foreign_probes, log, mark_running, \
    med, parse_scprof_csv, rcu_marked

WORKLOADS = ("nginx", "redis", "redis-P16")


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


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Nginx:
    """nginx with one worker pinned to cpu; `ab -k -c 8` pinned to
    client_cpu fetches one small static file."""
    tool = ("nginx", "ab")
    desc = "nginx, one worker, `ab -k -c {conns}` for a 612-byte file"

    def __init__(self, a, workdir):
        self.a, self.dir = a, os.path.join(workdir, "nginx")
        self.conns = a.ab_conns
        self.proc, self.pid, self.port = None, None, free_port()

    def start(self):
        d = self.dir
        os.makedirs(os.path.join(d, "www"), exist_ok=True)
        os.makedirs(os.path.join(d, "tmp"), exist_ok=True)
        with open(os.path.join(d, "www", "index.html"), "w") as f:
            f.write("<!doctype html><title>scprof bench</title>\n" +
                    "x" * 562 + "\n")
        conf = os.path.join(d, "nginx.conf")
        tmp = os.path.join(d, "tmp")
        with open(conf, "w") as f:
            f.write("\n".join([
                "# Written by bench/services.py for `make bench`.",
                "worker_processes 1;",
                "daemon off;",
                "master_process on;",
                "user root;",
                "pid %s/nginx.pid;" % d,
                "error_log %s/error.log;" % d,
                "events { worker_connections 1024; }",
                "http {",
                "  access_log off;",
                "  sendfile on;",
                "  keepalive_requests 1000000;",
                "  client_body_temp_path %s/body;" % tmp,
                "  proxy_temp_path %s/proxy;" % tmp,
                "  fastcgi_temp_path %s/fastcgi;" % tmp,
                "  uwsgi_temp_path %s/uwsgi;" % tmp,
                "  scgi_temp_path %s/scgi;" % tmp,
                "  server {",
                "    listen 127.0.0.1:%d;" % self.port,
                "    root %s/www;" % d,
                "    location / { }",
                "  }",
                "}", ""]))
        # The master and so its worker pinned to the server CPU.
        self.proc = subprocess.Popen(
            ["nginx", "-c", conf, "-p", d, "-e", os.path.join(d, "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT, preexec_fn=pinned(self.a.cpu),
            start_new_session=True)
        wait_port(self.port, self.proc, "nginx")
        deadline = time.monotonic() + 10
        while not children(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        kids = children(self.proc.pid)
        if len(kids) != 1:
            raise BenchError("nginx: expected one worker, found %r" % kids)
        self.pid = kids[0]
        return self.pid

    def load(self, secs):
        """ab for secs: {"rps", "requests"}."""
        p = subprocess.run(
            ["ab", "-k", "-c", str(self.conns), "-t", "%g" % secs,
             "-n", "20000000", "http://127.0.0.1:%d/" % self.port],
            capture_output=True, text=True, preexec_fn=pinned(self.a.client_cpu),
            check=False)
        rps = re.search(r"^Requests per second:\s+([\d.]+)", p.stdout, re.M)
        done = re.search(r"^Complete requests:\s+(\d+)", p.stdout, re.M)
        failed = re.search(r"^Failed requests:\s+(\d+)", p.stdout, re.M)
        if p.returncode != 0 or not rps or not done:
            raise BenchError("ab failed (%d): %s" % (
                p.returncode, (p.stderr or p.stdout).strip()[-300:]))
        if failed and int(failed.group(1)):
            raise BenchError("ab: %s of %s requests failed" % (
                failed.group(1), done.group(1)))
        return {"rps": float(rps.group(1)), "requests": int(done.group(1)),
                "per_call": 1}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: fast shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Redis:
    """redis-server pinned to cpu, `redis-benchmark -t set,get` pinned to
    client_cpu in a loop; requests/s counted by the server
    (total_commands_processed) over the timed window."""
    tool = ("redis-server", "redis-benchmark")
    desc = "redis-server, `redis-benchmark -t set,get -c {conns} -P {pipe}`"

    def __init__(self, a, workdir, pipeline):
        self.a, self.pipeline = a, pipeline
        self.dir = os.path.join(workdir, "redis-P%d" % pipeline)
        self.conns = a.redis_conns
        self.proc, self.pid, self.port = None, None, free_port()

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        conf = os.path.join(self.dir, "redis.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "# Written by bench/services.py for `make bench`.",
                "bind 127.0.0.1",
                "port %d" % self.port,
                "daemonize no",
                "save \"\"",
                "appendonly no",
                "dir %s" % self.dir,
                "logfile %s/redis.log" % self.dir,
                "databases 1",
                "io-threads 1", ""]))
        self.proc = subprocess.Popen(
            ["redis-server", conf], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            preexec_fn=pinned(self.a.cpu), start_new_session=True)
        wait_port(self.port, self.proc, "redis-server")
        self.pid = self.proc.pid
        return self.pid

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
        gen = subprocess.Popen(
            ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port),
             "-c", str(self.conns), "-P", str(self.pipeline), "-t",
             "set,get", "-l", "-q", "-r", "10000"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=pinned(self.a.client_cpu),
            start_new_session=True)
        try:
            c0 = self.commands()
            time.sleep(min(0.5, secs / 4))  # its clients connect
            c1, t1 = self.commands(), time.monotonic()
            time.sleep(secs)
            c2, t2 = self.commands(), time.monotonic()
            if gen.poll() is not None:
                raise BenchError("redis-benchmark exited (%d)" %
                                 gen.returncode)
        finally:
            gen.kill()
            gen.wait()
        c3 = self.commands()
        return {"rps": (c2 - c1 - 1) / (t2 - t1), "requests": c3 - c0,
                "per_call": self.pipeline}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def make_workloads(a, workdir):
    out = []
    for name in a.services:
        if name == "nginx":
            w = Nginx(a, workdir)
        elif name == "redis":
            w = Redis(a, workdir, 1)
        elif name == "redis-P16":
            w = Redis(a, workdir, 16)
        else:
            raise BenchError("unknown service %r" % name)
        missing = [t for t in w.tool if not shutil.which(t)]
        if missing:
            log("bench: skipping %s: %s not installed (make bench installs "
                "bench/deps)" % (name, ", ".join(missing)))
            continue
        w.name = name
        w.desc = w.desc.format(conns=w.conns,
                               pipe=getattr(w, "pipeline", 1))
        out.append(w)
    return out


# ---- one run, and the matrix ---------------------------------------------

def cpu_seconds(pid):
    """A process's CPU time so far (user + system), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_once(a, w, cfg, tmpdir):
    """One timed load, bare (cfg None) or under a probe."""
    secs = a.long_seconds if cfg is not None and cfg.long_run else \
        a.service_seconds
    if cfg is None:
        r = w.load(secs)
        r["foreign_probes"] = foreign_probes(set())
        return r
    with Running(a, cfg, w.pid, tmpdir) as t:
        foreign = foreign_probes({t.proc.pid})
        c0, t0 = cpu_seconds(t.proc.pid), time.monotonic()
        r = w.load(secs)
        c1, t1 = cpu_seconds(t.proc.pid), time.monotonic()
        r["foreign_probes"] = foreign
        # The tracer's own CPU during the load, a share of one CPU: what
        # it takes from the machine beside what it adds to each call
        # (with 2 CPUs, from the server or its client).
        if c0 is not None and c1 is not None and t1 > t0:
            r["tracer_cpu"] = (c1 - c0) / (t1 - t0)
        text = t.finish()
    if cfg.parse is not None:
        seen = sum(cfg.parse(text, w.pid).values())
        # The server's calls alone, or every process's (-a, bpftrace).
        r["seen_target"] = cfg.parse is parse_scprof_csv or \
            str(w.pid) in cfg.argv(w.pid, t.out)
        need = r["requests"] / r["per_call"] * cfg.min_seen
        if seen < need:
            raise BenchError(
                "%s saw %d calls for %d requests: it was not attached "
                "for the whole run\n%s" % (cfg.name, seen, r["requests"],
                                           text[-2000:]))
        r["seen"] = seen
    return r


def warm_up(a, w):
    """Load the server, not counted, and try to mark its main thread, the
    one that serves (probes.py, "RCU Tasks Trace marks"), as the first
    probe that stops would. True/False: marked or not; None: a kernel
    without marks."""
    w.load(min(1.0, a.service_seconds))
    failed = []

    def load():
        try:
            w.load(4.0)
        except BenchError as e:
            failed.append(e)
    t = threading.Thread(target=load)
    t.start()
    try:
        time.sleep(0.5)  # (redis: its clients connect)
        marked = mark_running(a, w.pid, tries=3, timeout=0.8, tids={w.pid})
    finally:
        t.join()
    if failed:
        raise failed[0]
    return marked


def run_workload(a, w, cfgs, tmpdir):
    res = {"bare": []}
    ratios = {c.name: [] for c in cfgs}
    bare_ratios = []
    for c in cfgs:
        res[c.name] = []
    marks = {"warm_up": warm_up(a, w)}
    log("  %s: its main thread %s" % (w.name, {
        True: "marked in the warm-up", False: "not marked in the warm-up",
        None: "(a kernel without RCU Tasks Trace marks)"}[marks["warm_up"]]))
    for rep in range(a.reps):
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        before = run_once(a, w, None, tmpdir)
        res["bare"].append(before)
        prev_bare = None
        for c in order:
            log("  %s, rep %d/%d: %s" % (w.name, rep + 1, a.reps, c.name))
            for tries in range(3):
                try:
                    r = run_once(a, w, c, tmpdir)
                    break
                except BenchError as e:
                    if tries == 2:
                        raise
                    log("  retrying %s: %s" % (c.name,
                                               str(e).splitlines()[0]))
            after = run_once(a, w, None, tmpdir)
            base = (before["rps"] + after["rps"]) / 2
            r["ratio"] = r["rps"] / base
            ratios[c.name].append(r["ratio"])
            res[c.name].append(r)
            res["bare"].append(after)
            # The noise: a bare run against the bare runs on its sides.
            if prev_bare is not None:
                bare_ratios.append(before["rps"] /
                                   ((prev_bare["rps"] + after["rps"]) / 2))
            prev_bare, before = before, after
    # (a mark is for good: marked now if in the warm-up or by a probe's
    # stop since)
    marks["end"] = rcu_marked(a, w.pid, {w.pid})
    return res, ratios, bare_ratios, marks


def summarize(cfgs, ratios, res):
    rows = []
    for c in cfgs:
        rs = ratios[c.name]
        seen = [r["seen"] / r["requests"] for r in res[c.name]
                if r.get("seen_target") and r["requests"]]
        cpu = [r["tracer_cpu"] for r in res[c.name] if "tracer_cpu" in r]
        rows.append({"config": c.name, "label": c.label,
                     "tracer_cpu": med(cpu) if cpu else None,
                     "ratio": med(rs), "ratio_min": min(rs),
                     "ratio_max": max(rs), "ratios": rs,
                     "rps": med([r["rps"] for r in res[c.name]]),
                     "calls_per_request": med(seen) if seen else None})
    return rows


def run(a, cfgs, tmpdir):
    """Measure every workload: the section's record."""
    workdir = os.path.join(a.out, "services")
    wls = make_workloads(a, workdir)
    if not wls:
        raise BenchError("services: no workload can run")
    per_run = 0.6  # attach, settle and start-up, seconds, about
    est = len(wls) * a.reps * (
        (2 * len(cfgs) + 1) * (a.service_seconds + per_run) +
        sum(a.long_seconds - a.service_seconds for c in cfgs if c.long_run))
    log("bench: services: %s; %d configurations x %d repetitions, %g s per "
        "run: about %.0f minutes" % (", ".join(w.name for w in wls),
                                     len(cfgs), a.reps, a.service_seconds,
                                     est / 60))
    out = {"reps": a.reps, "seconds": a.service_seconds,
           "long_seconds": a.long_seconds, "cpu": a.cpu,
           "client_cpu": a.client_cpu, "workloads": {}}
    for w in wls:
        t0 = time.monotonic()
        try:
            w.start()
            res, ratios, bare_ratios, marks = run_workload(a, w, cfgs,
                                                           tmpdir)
        finally:
            w.stop()
        bare = [r["rps"] for r in res["bare"]]
        noise = [abs(1 - x) for x in bare_ratios]
        out["workloads"][w.name] = {
            "desc": w.desc, "rows": summarize(cfgs, ratios, res),
            "bare_rps": med(bare), "bare_rps_min": min(bare),
            "bare_rps_max": max(bare),
            # Half the bare-vs-neighbours range, and its median distance
            # from 1: what a ratio moves by with no probe at all.
            "noise": med(noise) if noise else None,
            "noise_max": max(noise) if noise else None,
            "foreign_probes": max(r["foreign_probes"] for v in res.values()
                                  for r in v),
            # its main thread's RCU Tasks Trace mark after the warm-up and
            # at the end (None: a kernel without marks)
            "marked": marks["warm_up"], "marked_at_end": marks["end"],
            "raw": res, "minutes": (time.monotonic() - t0) / 60}
    return out


# ---- report ------------------------------------------------------------

def report(sec):
    print("Services: requests/s traced / untraced; server on CPU %d, load "
          "on CPU %d; %d repetitions of %g s runs (the daemon: %g s), each "
          "between bare runs; median (min..max)\n" % (
              sec["cpu"], sec["client_cpu"], sec["reps"], sec["seconds"],
              sec["long_seconds"]))
    for name, wl in sec["workloads"].items():
        print("%s: %s; bare %.0f requests/s (%.0f..%.0f); noise: a bare "
              "run against its neighbours, median %.1f points, max %.1f" % (
                  name, wl["desc"], wl["bare_rps"], wl["bare_rps_min"],
                  wl["bare_rps_max"], 100 * (wl["noise"] or 0),
                  100 * (wl["noise_max"] or 0)))
        print("  %-32s %6s %15s %12s %9s %10s" % (
            "config", "ratio", "(min..max)", "requests/s", "calls/req",
            "tracer CPU"))
        # calls/req: the server's calls per request, as the probe counted
        # them (probes of one process only).
        for r in wl["rows"]:
            cpu = r.get("tracer_cpu")
            print("  %-32s %6.2f %15s %12.0f %9s %10s" % (
                r["config"], r["ratio"], "(%.2f..%.2f)" % (
                    r["ratio_min"], r["ratio_max"]), r["rps"],
                "" if r["calls_per_request"] is None else
                "%.1f" % r["calls_per_request"],
                "" if cpu is None else "%.1f%%" % (100 * cpu)))
        if wl.get("marked") is not None:  # (runs before this: no record)
            print("  the server's main thread: %s in the warm-up, %s at "
                  "the end (RCU Tasks Trace)" % (
                      "marked" if wl["marked"] else "NOT marked",
                      "marked" if wl["marked_at_end"] else "NOT marked"))
        if wl["foreign_probes"]:
            print("  warning: up to %d BPF tracing programs of other "
                  "processes were loaded during runs: bare is not bare" %
                  wl["foreign_probes"])
        print()


def markdown(sec, chart=None):
    out = ["Real services: requests/s traced ÷ untraced, the server pinned "
           "to one CPU and its load generator to the other, over loopback; "
           "%d repetitions of %g s runs (the daemon's: %g s), each between "
           "untraced runs; the median and the min-max over repetitions. "
           "*Noise* is how far an untraced run lands from the untraced runs "
           "on its sides (median)." % (sec["reps"], sec["seconds"],
                                       sec["long_seconds"]), ""]
    if chart:
        out += ["![requests/s traced / untraced](%s)" % chart, ""]
    names = list(sec["workloads"])
    out.append("| config | " + " | ".join(names) + " |")
    out.append("| --- |" + " ---: |" * len(names))
    first = sec["workloads"][names[0]]["rows"]
    for i, r0 in enumerate(first):
        cells = []
        for n in names:
            r = sec["workloads"][n]["rows"][i]
            cells.append("%.2f (%.2f-%.2f)" % (r["ratio"], r["ratio_min"],
                                               r["ratio_max"]))
        out.append("| %s | %s |" % (r0["label"], " | ".join(cells)))
    out.append("| *untraced requests/s* | " + " | ".join(
        "%.0f" % sec["workloads"][n]["bare_rps"] for n in names) + " |")
    out.append("| *noise (points)* | " + " | ".join(
        "±%.1f" % (100 * (sec["workloads"][n]["noise"] or 0))
        for n in names) + " |")
    out.append("")
    for n in names:
        out.append("- %s: %s." % (n, sec["workloads"][n]["desc"]))
    return "\n".join(out) + "\n"

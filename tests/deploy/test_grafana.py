# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""contrib/grafana: every query of the dashboard returns data from a real
Prometheus (Debian's prometheus) scraping a real scprof daemon, over HTTPS
with basic auth from --web-config, while a small workload runs (it sleeps,
so its calls block, and shares its CPU with a spinning process, so they
wait for it); the contrib/prometheus recording rules are loaded into the
same server and checked against the same data."""
import json
import os
import re
import subprocess
import sys

import pytest

from deploy_util import (CONTRIB, PENDING_FROM_OTHER_BRANCHES, TIMEOUT, Daemon,
                         Prometheus, bcrypt, daemon_help, metric_names,
                         pending, self_signed)

DASHBOARD = os.path.join(CONTRIB, "grafana", "scprof-dashboard.json")
RULES = os.path.join(CONTRIB, "prometheus", "scprof.rules.yml")
PASSWORD = "scrape-me"
RATE_INTERVAL = "10s"
# The workload: successful opens and reads, failing opens (ENOENT), writes.
WORKLOAD = """
import os, time
while True:
    try:
        os.open("/nonexistent/scprof-grafana", os.O_RDONLY)
    except OSError:
        pass
    fd = os.open("/proc/self/stat", os.O_RDONLY)
    os.read(fd, 4096)
    os.close(fd)
    os.write(devnull, b"x" * 100)
    time.sleep(0.002)
"""


def dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def targets(dash):
    """(panel title, refId, expr) of every query panel."""
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield p["title"], t["refId"], t["expr"]


def substitute(expr, variables):
    """Grafana's variables as Grafana would expand them."""
    for name, value in variables.items():
        expr = expr.replace("${" + name + "}", value).replace("$" + name, value)
    assert "$" not in expr, f"unexpanded variable in {expr}"
    return expr


def test_dashboard_is_well_formed():
    dash = dashboard()
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    names = {v["name"] for v in dash["templating"]["list"]}
    assert names == {"datasource", "instance", "syscall"}
    for p in dash["panels"]:
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24, p["title"]
        if p["type"] == "row":
            continue
        assert p["targets"], f"{p['title']}: no query"
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for t in p["targets"]:
            assert t["datasource"] == p["datasource"], p["title"]
            # every series is filtered by the instance variable
            for sel in re.findall(r"scprof_[a-z_]+\{([^}]*)\}", t["expr"]):
                assert 'instance=~"$instance"' in sel, (p["title"], t["expr"])
    titles = " ".join(p["title"] for p in dash["panels"]).lower()
    for want in ("calls/s", "errors/s", "heatmap", "quantiles", "process",
                 "unit", "cpu used by scprof", "dropped", "where the time goes",
                 "waiting for a cpu by syscall", "blocked by syscall",
                 "i/o wait by syscall", "waiting for a cpu by unit",
                 "blocked by unit"):
        assert want in titles, want


@pytest.fixture
def stack(tmp_path):
    """Workload, daemon (TLS + basic auth) and Prometheus, torn down after."""
    cert, key = self_signed(tmp_path)
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {cert}\n"
                   f"  key_file: {key}\nbasic_auth_users:\n"
                   f"  prometheus: {bcrypt(PASSWORD)}\n")
    # The workload runs in a cgroup named like a systemd service, so that
    # the units panels have a unit to show (--labels comm,unit), on one
    # CPU with a process that spins there, so that its calls wait for the
    # CPU now and then (the split's waiting panels); its sleeps block.
    unit = unit_cgroup()
    cpu = str(os.cpu_count() - 1)
    spin = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c",
                             "while True: pass"], stdin=subprocess.DEVNULL)
    work = subprocess.Popen(
        ["taskset", "-c", cpu, sys.executable, "-c",
         "import os, time; time.sleep(0.3)\n"
         "devnull = os.open('/dev/null', os.O_WRONLY)\n" + WORKLOAD],
        stdin=subprocess.DEVNULL)
    with open(os.path.join(unit, "cgroup.procs"), "w") as f:
        f.write(str(work.pid))
    args = ["--web-config", str(web), "-p", str(work.pid),
            "--fold-interval", "1", "--labels", "comm,unit"]
    made = {"work": work, "spin": spin}
    try:
        made["daemon"] = d = Daemon(args)
        assert d.scheme == "https"
        rules = tmp_path / "scprof.rules.yml"
        with open(RULES) as f:
            # evaluate every second rather than every 30 s
            rules.write_text(f.read().replace("interval: 30s", "interval: 1s"))
        made["prom"] = Prometheus(tmp_path, f"""
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['{rules}']
scrape_configs:
  - job_name: scprof
    scheme: https
    tls_config:
      ca_file: '{cert}'
      server_name: localhost
    basic_auth:
      username: prometheus
      password: '{PASSWORD}'
    static_configs:
      - targets: ['127.0.0.1:{d.port}']
""")
        yield made
    finally:
        if "prom" in made:
            made["prom"].stop()
        if "daemon" in made:
            made["daemon"].stop()
        for p in (work, spin):
            p.kill()
            p.wait(timeout=TIMEOUT)
        for d in (unit, os.path.dirname(unit)):
            try:
                os.rmdir(d)
            except OSError:
                pass


def cgroup2_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            tok = line.split()
            if len(tok) > 2 and tok[2] == "cgroup2":
                return tok[1]
    pytest.fail("no cgroup2 file system is mounted: the units panels "
                "need one")


def unit_cgroup():
    """A fresh cgroup like a systemd service: .../scprof-deploy.slice/
    work-PID.service under the cgroup2 mount."""
    path = os.path.join(cgroup2_mount(), "scprof-deploy.slice",
                        "work-%d.service" % os.getpid())
    os.makedirs(path, exist_ok=True)
    return path


def test_every_panel_query_returns_data(stack, capsys):
    prom, d = stack["prom"], stack["daemon"]
    # the scrape goes through TLS and basic auth, and succeeds
    prom.wait_for('up{job="scprof"} == 1', "the scrape never succeeded")
    tgt = prom.api("targets")["activeTargets"]
    assert [t["health"] for t in tgt] == ["up"], tgt
    assert tgt[0]["scrapeUrl"].startswith("https://"), tgt
    # enough samples for rate() over the dashboard's interval
    prom.wait_for('count_over_time(scprof_build_info[10s]) >= 8',
                  "fewer than 8 scrapes in 10 s")
    instance = f"127.0.0.1:{d.port}"

    # the variables' own queries, as Grafana's label_values() runs them
    inst = prom.api("label/instance/values", **{"match[]": "scprof_build_info"})
    assert inst == [instance], inst
    syscalls = prom.api("label/syscall/values", **{
        "match[]": f'scprof_syscalls_total{{instance=~"{instance}"}}'})
    assert {"openat", "read", "write"} <= set(syscalls), syscalls

    empty, waiting = [], []
    for variables in (
            {"instance": instance, "syscall": ".*",
             "__rate_interval": RATE_INTERVAL},
            # a multi-value choice, as Grafana expands it
            {"instance": instance, "syscall": "(openat|read)",
             "__rate_interval": RATE_INTERVAL}):
        for title, ref, expr in targets(dashboard()):
            q = substitute(expr, variables)
            if prom.query(q):
                continue
            where = f"{title} [{ref}] with syscall={variables['syscall']}: {q}"
            (waiting if pending(expr) else empty).append(where)
    with capsys.disabled():
        for w in waiting:
            print(f"\n  PENDING_FROM_OTHER_BRANCHES, no data yet: {w}")
    assert not empty, "panels without data:\n" + "\n".join(empty)

    # the workload's failing opens are there, as a ratio of its opens
    ratio = prom.query(
        f'sum(rate(scprof_syscall_errors_total{{instance="{instance}",syscall="openat"}}[{RATE_INTERVAL}]))'
        f' / sum(rate(scprof_syscalls_total{{instance="{instance}",syscall="openat"}}[{RATE_INTERVAL}]))')
    assert 0.3 < float(ratio[0]["value"][1]) < 0.7, ratio

    # the split: the sleeps' calls are blocked most of their time, and
    # some of the calls waited for the CPU the spinner shares
    def shares(metric):
        return {r["metric"]["syscall"]: float(r["value"][1]) for r in prom.query(
            f'sum by (syscall) (rate({metric}{{instance="{instance}"}}[{RATE_INTERVAL}]))'
            f' / (sum by (syscall) (rate(scprof_syscall_duration_seconds_sum{{instance="{instance}"}}[{RATE_INTERVAL}])) > 0)')}
    blocked = shares("scprof_syscall_blocked_seconds_total")
    assert max(blocked.values()) > 0.5, blocked
    waiting = shares("scprof_syscall_cpu_wait_seconds_total")
    assert max(waiting.values()) > 0, waiting

    # the recording rules give data on the same real series
    prom.wait_for("instance_syscall:scprof_syscall_duration_seconds:p99_rate5m",
                  "the recording rules never ran")
    with open(RULES) as f:
        recorded = re.findall(r"^\s*- record: (\S+)$", f.read(), re.M)
    import yaml
    with open(RULES) as f:
        exprs = {r["record"]: r["expr"] for g in yaml.safe_load(f)["groups"]
                 for r in g["rules"] if "record" in r}
    missing = []
    for name in recorded:
        if prom.query(name):
            continue
        # a rule over a pending metric, directly or through another rule
        text, seen = exprs[name], set()
        while True:
            deps = set(re.findall(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", text)) - seen
            if not deps:
                break
            seen |= deps
            text += " ".join(exprs.get(x, "") for x in deps)
        if pending(text):
            with capsys.disabled():
                print(f"\n  PENDING_FROM_OTHER_BRANCHES, no data yet: {name}")
        elif "offset 30m" not in text:  # baselines need 30 min of history
            missing.append(name)
    assert not missing, f"recording rules without data: {missing}"


def test_pending_set_names_only_what_is_missing():
    """Once a branch lands, its entry must go: a pending name the daemon
    serves is reported, so the coordinator sees what to remove."""
    d = Daemon(["-p", str(os.getpid())] +
               (["--labels", "comm,unit"] if "--labels" in daemon_help() else []))
    try:
        text = d.metrics()
    finally:
        d.stop()
    served = metric_names(text)
    landed = [p for p in PENDING_FROM_OTHER_BRANCHES
              if p in served or (p == 'unit!=""' and 'unit="' in text)]
    assert not landed, ("served now, remove from PENDING_FROM_OTHER_BRANCHES: "
                        f"{landed}")

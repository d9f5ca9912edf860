# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""contrib/prometheus: promtool accepts the rules, their unit tests pass, and
every scprof metric they use is one a real daemon serves."""
import glob
import os
import re
import subprocess

import yaml

from deploy_util import (CONTRIB, PENDING_FROM_OTHER_BRANCHES, TIMEOUT, Daemon,
                         metric_names, tool)

RULES = os.path.join(CONTRIB, "prometheus", "scprof.rules.yml")
TESTS = sorted(glob.glob(os.path.join(CONTRIB, "prometheus", "tests", "*.yml")))


def promtool(*args):
    p = subprocess.run([tool("promtool")] + list(args), capture_output=True,
                       timeout=TIMEOUT, cwd=os.path.dirname(RULES))
    return p.returncode, (p.stdout + p.stderr).decode()


def test_promtool_check_rules():
    rc, out = promtool("check", "rules", RULES)
    assert rc == 0, out
    assert "SUCCESS" in out


def test_promtool_unit_tests():
    assert TESTS, "no rule tests in contrib/prometheus/tests"
    rc, out = promtool("test", "rules", *TESTS)
    assert rc == 0, out


def rules():
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def test_every_alert_is_unit_tested():
    """Each alert has a test where it fires. promtool compares the alerts
    firing with the expected list exactly, so the neighbour series each test
    puts beside a firing one (a steady syscall, a second instance, another
    map or reason) prove the alert silent where it must be."""
    fired = set()
    for path in TESTS:
        with open(path) as f:
            doc = yaml.safe_load(f)
        for t in doc["tests"]:
            for a in t.get("alert_rule_test", []):
                if a.get("exp_alerts"):
                    fired.add(a["alertname"])
    alerts = {r["alert"] for r in rules() if "alert" in r}
    assert alerts, "no alerts in " + RULES
    assert alerts - fired == set(), "alerts never tested firing"


def test_rules_use_the_daemons_real_metric_names():
    d = Daemon(["--comm-series", "2", "-p", str(os.getpid())])
    try:
        served = metric_names(d.metrics())
    finally:
        d.stop()
    used = set()
    for r in rules():
        used |= set(re.findall(r"(?<![:\w])(scprof_[a-z0-9_]+)(?![:\w])", r["expr"]))
    unknown = used - served - PENDING_FROM_OTHER_BRANCHES
    assert not unknown, f"metrics the daemon does not serve: {sorted(unknown)}"
    for p in sorted(PENDING_FROM_OTHER_BRANCHES & used - served):
        print(f"PENDING_FROM_OTHER_BRANCHES: {p} is not served on this branch")

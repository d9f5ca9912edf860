# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Shared helpers for the packaging tests (tests/pkg).

`make test-pkg-quick` (in make test) runs the quick ones: man pages and
--help against the option tables, groff, the completions, make install
into a DESTDIR. `make test-pkg` (in make test-extra) adds the heavy ones,
marked `heavy`: the static binary in an empty root, make deb, lintian.
SCPROF is the built binary, OUTPUT the build folder.
"""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCPROF = os.environ.get("SCPROF", os.path.join(ROOT, "scprof"))
OUTPUT = os.environ.get("OUTPUT", os.path.join(ROOT, ".output"))
MAKE = os.environ.get("MAKE", "make")
COMMANDS = ["profile", "top", "daemon", "calibrate", "verdict", "diff"]
TIMEOUT = 120


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: make test-extra only")


def need(tool):
    """The path of tool; a failure when it is missing, unless
    SCPROF_ALLOW_SKIP=1 (a skipped test looks green in CI)."""
    path = shutil.which(tool)
    if path:
        return path
    msg = f"{tool} is not installed (.ci/install-deps installs it)"
    if os.environ.get("SCPROF_ALLOW_SKIP") == "1":
        pytest.skip(msg)
    pytest.fail(msg)


def run(argv, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", TIMEOUT)
    return subprocess.run(argv, check=False, **kw)


def make_env():
    """The environment for a make of another tree: without this build's
    OUTPUT (make would take it) or make's flags."""
    env = dict(os.environ)
    for k in ("OUTPUT", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SCPROF"):
        env.pop(k, None)
    return env


def scprof_argv(cmd, *args, binary=SCPROF):
    return [binary] + ([] if cmd == "profile" else [cmd]) + list(args)


def table(cmd, binary=SCPROF):
    """The option names of cmd's option table (--list-options)."""
    r = run(scprof_argv(cmd, "--list-options", binary=binary))
    assert r.returncode == 0, r.stderr
    names = set()
    for line in r.stdout.splitlines():
        short, long, _ = line.split()
        if short != "-":
            names.add(short)
        if long != "-":
            names.add("--" + long)
    return names


def page(cmd):
    return "scprof.8" if cmd == "profile" else f"scprof-{cmd}.8"

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The kernel matrix (make test-kernels): every selected kernel is booted
once, at the start of the session, and each test checks one feature's
results on each kernel. At the end a kernel x feature table is printed
and written to .output/kernels/matrix.md (the README's "Supported kernels"
table is that file).

SCPROF_STATIC and KERNELS_WORKLOADS name the binaries that go into the
initramfs (the Makefile passes them); see vm.py for the rest.
"""
import concurrent.futures
import json
import os
import re

import pytest

import vm

KERNELS = vm.selected()
SCPROF = os.environ.get("SCPROF_STATIC", os.path.join(vm.ROOT, "scprof-static"))
WORKLOADS = os.environ.get("KERNELS_WORKLOADS",
                           os.path.join(vm.OUTPUT, "workloads-static"))
JOBS = int(os.environ.get("KERNELS_JOBS", "1"))
REUSE = os.environ.get("KERNELS_REUSE") == "1"
MATRIX_MD = os.path.join(vm.CACHE, "matrix.md")

BOOTS = {}      # kernel id: vm.Boot, once booted
CELLS = {}      # (row, kernel id): "ok", "FAIL" or "n/a (...)"
ROWS = []       # the features, in the order of the tests


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "feature(label): the test's row in the kernel table")


def pytest_collection_modifyitems(items):
    for item in items:
        m = item.get_closest_marker("feature")
        if m and m.args[0] not in ROWS:
            ROWS.append(m.args[0])


class Guest:
    """What one kernel's guest printed: the files of guest/cases.sh."""

    def __init__(self, boot):
        self.boot = boot
        self.kernel = boot.kernel
        self.arch = vm.ARCHES[boot.kernel.arch]

    def name(self, syscall):
        """This arch's name of a syscall the workloads are described by."""
        return self.arch.names.get(syscall, syscall)

    def text(self, file):
        if file not in self.boot.results:
            why = "it timed out" if self.boot.timed_out else \
                "it ended early" if not self.boot.finished else "no such file"
            pytest.fail(f"the guest did not print {file} ({why}; its console: "
                        f"{os.path.join(self.kernel.dir, 'console.log')})")
        return self.boot.results[file]

    def json(self, file):
        return json.loads(self.text(file), strict=True)

    def meta(self, case):
        return dict(ln.split("=", 1) for ln in
                    self.text(f"{case}.meta").splitlines() if "=" in ln)

    def ran(self, case, status=0):
        """The case's meta, once its scprof exited with status (its stderr
        is the message otherwise)."""
        m = self.meta(case)
        err = self.boot.results.get(f"{case}.err", "")
        assert m.get("rc") == str(status), \
            f"scprof exited {m.get('rc')}, not {status}: {err.strip()}"
        return m


@pytest.fixture(scope="session")
def boots():
    """{kernel id: future vm.Boot}: every selected kernel fetched (once
    for all runs), then booted, KERNELS_JOBS at a time. KERNELS_REUSE=1:
    the last boots' consoles, checked again (while changing a check)."""
    if REUSE:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            yield {k.id: pool.submit(vm.last_boot, k) for k in KERNELS}
        return
    for path in (SCPROF, WORKLOADS):
        if not os.path.exists(path):
            pytest.exit(f"{path} is missing (make test-kernels builds it)",
                        returncode=1)
    initrd = vm.initramfs(vm.matrix_arch(), SCPROF, WORKLOADS)
    for k in KERNELS:
        vm.fetch(k)
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        yield {k.id: pool.submit(vm.boot, k, initrd) for k in KERNELS}


@pytest.fixture(params=KERNELS, ids=[k.id for k in KERNELS])
def guest(request, boots):
    b = boots[request.param.id].result()
    BOOTS[b.kernel.id] = b
    if "features.json" not in b.results:
        pytest.fail(f"{b.kernel.id} did not run the cases (timed out: "
                    f"{b.timed_out}); its console: "
                    f"{os.path.join(b.kernel.dir, 'console.log')}")
    return Guest(b)


def pytest_runtest_logreport(report):
    m = re.search(r"\[([^\]]+)\]$", report.nodeid)
    label = dict(report.user_properties).get("feature")
    if not m or not label:
        return
    key = (label, m.group(1))
    if report.failed:
        CELLS[key] = "FAIL"
    elif report.skipped and key not in CELLS:
        CELLS[key] = str(report.longrepr[2]).removeprefix("Skipped: ")
    elif report.when == "call" and report.passed:
        CELLS[key] = "ok"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    m = item.get_closest_marker("feature")
    if m:
        item.user_properties.append(("feature", m.args[0]))


def column(k):
    """A kernel's column heading: its release and Debian's, e.g.
    5.10.0-43 (bullseye)."""
    try:
        release = vm.package(k)["release"].removesuffix(
            "-" + vm.ARCHES[k.arch].flavour)
    except OSError:
        release = k.id
    return f"{release} ({k.suite})"


def build_row():
    """Which build of the BPF programs each kernel ran (scprof features)."""
    out = []
    for k in KERNELS:
        b = BOOTS.get(k.id)
        try:
            out.append(json.loads(b.results["features.json"])["build"])
        except (AttributeError, KeyError, ValueError):
            out.append("?")
    return out


def table():
    """[[cell]]: a heading row, then the BPF build, then a row per feature."""
    rows = [["feature"] + [column(k) for k in KERNELS],
            ["BPF build"] + build_row()]
    for label in ROWS:
        rows.append([label] + [CELLS.get((label, k.id), "not run")
                               for k in KERNELS])
    return rows


def pytest_terminal_summary(terminalreporter):
    if not ROWS or not BOOTS:
        return
    rows = table()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    tr = terminalreporter
    tr.write_sep("=", "kernel x feature")
    for r in rows:
        tr.write_line("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for k in KERNELS:
        b = BOOTS.get(k.id)
        if b is None:
            continue
        p = vm.package(k)
        note = f" (the newest, {p['newest']}, could not be downloaded)" \
            if p["newest"] else ""
        tr.write_line(f"{k.id}: {p['name']} {p['version']} from {k.suite}"
                      f"{note}; booted and ran in {b.seconds:.0f} s"
                      f"{', timed out' if b.timed_out else ''}")
    with open(MATRIX_MD, "w") as f:
        f.write("| " + " | ".join(rows[0]) + " |\n")
        f.write("|" + " --- |" * len(rows[0]) + "\n")
        for r in rows[1:]:
            f.write("| " + " | ".join(r) + " |\n")
    tr.write_line(f"(as Markdown: {MATRIX_MD})")

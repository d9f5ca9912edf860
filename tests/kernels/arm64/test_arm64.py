# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""arm64: scprof-static-arm64 on Debian's arm64 cloud kernels, in qemu.

Each kernel (Debian 12's 6.1, Debian 13's 6.12, fetched by fetch.sh) is
booted once under qemu-system-aarch64 with TCG (boot.sh) into an initramfs
holding busybox, scprof-static-arm64 and static arm64 workloads; init.sh
runs the scripts in cases/ one after the other and prints each one's output,
standard error, report and exit status on the console. The tests here read
that console log and check the reports against the workloads' known counts.

Names must be arm64's: each call's name is the one asm-generic's table
(the cross compiler's headers) gives its number, and calls that only x86
has (fork, open, stat, epoll_wait...) appear nowhere.

Run by `make test-kernels-arm64`, which builds everything and passes
KERNELS (fetch.sh's directory), SCPROF and WORKLOADS (the arm64 builds).
"""
import json
import os
import re
import subprocess
import time

import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import split_check  # noqa: E402 (tests/kernels: the split's checks)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
KERNELS = os.environ.get("KERNELS", os.path.join(TOP, ".output/kernels/arm64"))
SCPROF = os.environ.get("SCPROF", os.path.join(TOP, "scprof-static-arm64"))
WORKLOADS = os.environ.get("WORKLOADS",
                           os.path.join(TOP, ".output/arm64/workloads"))
# The whole VM run: boot, then every case (each killed after 120 s inside).
BOOT_LIMIT = 900

SUITES = {"bookworm": "6.1.", "trixie": "6.12."}

# groundtruth N_GETPPID N_BADOPEN N_READ1 N_SLEEP N_CHILD_GETPPID, as the
# cases run it.
N, M, K, S, C = 1000, 10, 100, 3, 50

def native_table(cc):
    """{nr: name} of the native table of the architecture cc builds for."""
    out = subprocess.run(
        ["sh", os.path.join(TOP, "user/model/gen_names.sh"), cc, "list"],
        check=True, stdout=subprocess.PIPE, text=True).stdout
    return {int(nr): name for nr, name in
            (line.split() for line in out.splitlines())}


class Case:
    def __init__(self, name, out, err, report, rc, t0, t1):
        self.name, self.out, self.err, self.rc = name, out, err, int(rc)
        self.seconds = float(t1) - float(t0)
        self.text = report
        self.report = None
        if report.strip().startswith("{"):
            self.report = json.loads(report)

    def pid(self):
        m = re.search(r"^pid (\d+)$", self.out, re.M)
        assert m, f"{self.name}: no pid line in {self.out!r}"
        return int(m.group(1))


class VM:
    def __init__(self, suite, log, seconds):
        self.suite, self.seconds = suite, seconds
        text = log.replace("\r", "")
        self.log = text
        m = re.search(r"^=== KERNEL (\S+) (\S+)$", text, re.M)
        self.kernel, self.machine = m.groups() if m else (None, None)
        m = re.search(r"^=== BTF (\w+)$", text, re.M)
        self.btf_sha256 = m.group(1) if m else None
        self.done = "\n=== DONE" in text
        self.cases = {}
        for m in re.finditer(
                r"^=== BEGIN (\S+)\n(.*?)^=== STDERR \1\n(.*?)"
                r"^=== REPORT \1\n(.*?)^=== END \1 (\d+) (\S+) (\S+)$",
                text, re.M | re.S):
            self.cases[m.group(1)] = Case(*m.groups())

    def case(self, name, rc=0):
        assert name in self.cases, \
            f"{self.suite}: case {name} did not run (done: {self.done})"
        c = self.cases[name]
        assert c.rc == rc, f"{self.suite} {name}: exit {c.rc}: {c.err}"
        return c


@pytest.fixture(scope="module")
def table():
    """arm64's table, less the names only x86_64 has (fork, open, stat,
    epoll_wait...): those must appear nowhere."""
    arm64 = native_table("aarch64-linux-gnu-gcc")
    x86_only = set(native_table("x86_64-linux-gnu-gcc").values()) - \
        set(arm64.values())
    assert {"fork", "open", "stat", "epoll_wait"} <= x86_only
    return arm64, x86_only


@pytest.fixture(scope="module", params=list(SUITES))
def vm(request, tmp_path_factory):
    suite = request.param
    kdir = os.path.join(KERNELS, suite)
    assert os.path.exists(os.path.join(kdir, "Image")), \
        f"{kdir}: no kernel (tests/kernels/arm64/fetch.sh {KERNELS} {suite})"
    log = os.path.join(KERNELS, f"{suite}-console.log")
    t0 = time.monotonic()
    subprocess.run(["sh", os.path.join(HERE, "boot.sh"), kdir, SCPROF,
                    WORKLOADS, os.path.join(HERE, "cases"), log,
                    str(BOOT_LIMIT)], check=False)
    seconds = time.monotonic() - t0
    with open(log, errors="replace") as f:
        v = VM(suite, f.read(), seconds)
    print(f"\n{suite}: {v.kernel}, {seconds:.0f} s; console in {log}")
    for c in v.cases.values():
        print(f"  {c.name:16} exit {c.rc:3}  {c.seconds:6.1f} s")
    return v


def by_name(syscalls, abi="64"):
    out = {}
    for s in syscalls:
        if s["abi"] == abi:
            key = (s["name"], s.get("fd_type"))
            assert key not in out, f"{key} listed twice"
            out[s["name"] if s.get("fd_type") is None else key] = s
    return out


def calls(syscalls):
    return {n: s["calls"] for n, s in by_name(syscalls).items()}


def check_names(rep, table):
    """Every call is named as arm64's table names its number."""
    arm64, x86_only = table
    rows = list(rep["syscalls"])
    for p in rep.get("processes") or []:
        rows += p["syscalls"]
    for s in rows:
        assert s["abi"] == "64", s
        assert arm64.get(s["nr"]) == s["name"], \
            f"{s['name']} is {s['nr']}, arm64's {arm64.get(s['nr'])}"
        assert s["name"] not in x86_only, s


def nothing_dropped(rep):
    d = rep["dropped"]
    assert all(v == 0 for k, v in d.items() if k != "map_failures"), d
    assert d["map_failures"] == [], d


def check_groundtruth(rep, follow=True, timed=True):
    sc = by_name(rep["syscalls"])
    assert sc["getppid"]["calls"] == N + (C if follow else 0)
    assert sc["getppid"]["errors"] == 0
    assert sc["nanosleep"]["calls"] == S
    assert sc["read"]["calls"] == K
    assert sc["openat"]["errors"] == M
    assert sc["openat"]["errnos"].get("ENOENT") == M, sc["openat"]
    # no fork on arm64: groundtruth forks through clone
    assert sc["clone"]["calls"] == 1
    assert sc["execve"]["calls"] == 1 and sc["execve"]["errors"] == 0
    assert sc["wait4"]["calls"] == 1
    assert sc["exit_group"]["calls"] == (2 if follow else 1)
    if timed:
        assert sc["nanosleep"]["min_ns"] >= 2_000_000
    nothing_dropped(rep)


def test_booted(vm):
    assert vm.kernel and vm.kernel.startswith(SUITES[vm.suite]), vm.kernel
    assert vm.machine == "aarch64"
    assert vm.done, f"{vm.suite}: the VM did not finish its cases"


def test_btf_is_the_image_s(vm, tmp_path):
    """vmlinux/btf_from_image.py cuts out of the image the very bytes the
    kernel serves as /sys/kernel/btf/vmlinux (how vmlinux/arm64 is made)."""
    out = tmp_path / "btf"
    subprocess.run(["python3", os.path.join(TOP, "vmlinux/btf_from_image.py"),
                    os.path.join(KERNELS, vm.suite, "Image"), str(out)],
                   check=True)
    import hashlib
    assert hashlib.sha256(out.read_bytes()).hexdigest() == vm.btf_sha256


def test_command(vm, table):
    rep = vm.case("10-command").report
    assert rep["exit_status"] == 0 and rep["targets_exited"] is True
    check_groundtruth(rep, follow=False)
    assert len(rep["processes"]) == 1
    check_names(rep, table)


def test_follow(vm, table):
    rep = vm.case("11-follow").report
    check_groundtruth(rep)
    assert len(rep["processes"]) == 2
    child = [p for p in rep["processes"] if "execve" not in calls(p["syscalls"])]
    assert len(child) == 1 and calls(child[0]["syscalls"])["getppid"] == C
    check_names(rep, table)


def test_count_only(vm, table):
    rep = vm.case("12-count-only").report
    check_groundtruth(rep, timed=False)
    assert rep["in_flight"] is None
    check_names(rep, table)


def test_without_all(vm, table):
    """The legacy build: tid-keyed hashes, registers found at an offset
    from the kernel stack (learned from arm64's pt_regs), no BTF task."""
    rep = vm.case("13-without-all").report
    check_groundtruth(rep)
    check_names(rep, table)


def test_trace_class(vm, table):
    """-e trace=%process: strace's classes, numbered by name for arm64."""
    rep = vm.case("14-trace").report
    assert calls(rep["syscalls"]) == {"getppid": N + C, "clone": 1,
                                      "execve": 1, "wait4": 1,
                                      "exit_group": 2}
    check_names(rep, table)


def test_fd_types(vm, table):
    rep = vm.case("15-fd-types").report
    sc = by_name(rep["syscalls"])
    assert sc[("read", "chr")]["calls"] == K  # /dev/zero
    assert sc[("close", "chr")]["calls"] == 1
    assert sc["getppid"]["calls"] == N + C  # not an fd call
    check_names(rep, table)


def test_stacks(vm, table):
    """--stacks=50 on stackmix: 4000 rounds of 3 stdio writes (log_line <-
    run_logger <- main) and 1 raw write (raw_write <- run_raw <- main),
    unwound with CFI from arm64's registers and stack."""
    rep = vm.case("16-stacks").report
    assert calls(rep["syscalls"])["write"] == 16000
    st = rep["stack_sampling"]
    assert 0.8 * 16000 / 50 <= st["samples"] + st["lost"] <= 1.2 * 16000 / 50
    ws = [s for s in rep["stacks"] if s["syscall"] == "write"]
    total = sum(s["count"] for s in ws)
    fr = [([f["function"] for f in s["frames"]], s["count"]) for s in ws]
    logged = sum(n for f, n in fr if "log_line" in f and "run_logger" in f)
    raw = sum(n for f, n in fr if "raw_write" in f and "run_raw" in f)
    to_main = sum(n for f, n in fr if "main" in f)
    assert to_main >= 0.9 * total, fr
    assert 0.65 <= logged / total <= 0.85, fr  # 3 in 4
    assert 0.15 <= raw / total <= 0.35, fr
    check_names(rep, table)


def test_compat(vm, table):
    """A 32-bit arm program's calls are counted under the 32-bit ABI, by
    number: scprof has no names for arm's table (20 is getpid there,
    epoll_create1 in arm64's). Its exit_group is not counted: without a
    name it is not known as a call that never returns. (With -C or the
    daemon's sampling, the execve that started it is filed under the
    32-bit ABI too, as syscall_0xdd: not known as an exec either.)"""
    rep = vm.case("17-compat").report
    assert [(s["abi"], s["nr"], s["name"], s["calls"]) for s in
            rep["syscalls"] if s["abi"] != "64"] == \
        [("32", 20, "syscall_0x14", 1000)]
    assert calls(rep["syscalls"]) == {"execve": 1}  # the 64-bit exec of it
    nothing_dropped(rep)


def test_pid(vm, table):
    """-p: gocalls' 2 threads each make 1000 getppid, 5 failed openat and
    20 pread64 after scprof attached."""
    c = vm.case("20-pid")
    sc = by_name(c.report["syscalls"])
    assert sc["getppid"]["calls"] == 2000
    assert sc["pread64"]["calls"] == 40
    assert sc["openat"]["errnos"].get("ENOENT") == 10
    assert [p["pid"] for p in c.report["processes"]] == [c.pid()]
    nothing_dropped(c.report)
    check_names(c.report, table)


def test_all(vm, table):
    c = vm.case("21-all")
    rep = c.report
    p = [x for x in rep["processes"] if x["pid"] == c.pid()]
    assert len(p) == 1
    got = calls(p[0]["syscalls"])
    assert got["getppid"] == N and got["clone"] == 1 and got["execve"] == 1
    assert calls(rep["syscalls"])["getppid"] >= N + C
    nothing_dropped(rep)
    check_names(rep, table)


def test_cgroup(vm, table):
    rep = vm.case("22-cgroup").report
    sc = by_name(rep["syscalls"])
    assert sc["getppid"]["calls"] == N + C
    assert sc["openat"]["errnos"].get("ENOENT") == M
    assert sc["clone"]["calls"] == 1 and sc["exit_group"]["calls"] == 2
    nothing_dropped(rep)
    check_names(rep, table)


def test_in_flight(vm):
    """blocked's threads were asleep in their calls before scprof started:
    arm64 has no epoll_wait, the C library's epoll_wait is epoll_pwait."""
    c = vm.case("23-in-flight")
    fl = c.report["in_flight"]
    assert sorted(f["syscall"] for f in fl) == ["epoll_pwait", "read",
                                                "wait4"], fl
    assert all(f["pid"] == c.pid() and f["before_attach"] for f in fl), fl
    assert all(f["abi"] == "64" for f in fl)


def test_calibrate(vm):
    rep = vm.case("24-calibrate").report
    assert rep["machine"]["arch"] == "aarch64"
    loops = {lp["name"]: lp for lp in rep["loops"]}
    assert set(loops) == {"syscall-getppid", "read-1B"}
    assert all(lp["ns_per_call"] > 0 for lp in loops.values())
    assert rep["probe_overhead_ns"] is not None


def test_verdict(vm):
    """highrate loops on raw getppid and clock_gettime, as many of each
    (the two rows are read one after the other while it runs: they may
    differ by the calls made in between, up to 2%). Whether it is
    syscall-bound is a matter of timing, which TCG's emulation distorts:
    not asserted here."""
    c = vm.case("25-verdict")
    rep = c.report
    assert rep["pid"] == c.pid() and rep["syscall_bound"] in (True, False)
    got = {s["name"]: s["calls"] for s in rep["syscalls"]}
    assert set(got) == {"getppid", "clock_gettime"}, got
    assert abs(got["getppid"] - got["clock_gettime"]) <= \
        0.02 * got["getppid"], got
    assert {f["syscall"] for f in rep["findings"]} <= set(got)
    assert rep["calibration"]["source"] == "saved"


def metric(text, name, **labels):
    """The value of the one series of name that has labels, or None."""
    found = []
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            found.append(float(m.group(3)))
    assert len(found) <= 1, f"{name}{labels} is ambiguous"
    return found[0] if found else None


def exit_runs(out):
    """(link id before, after, the sys_exit program's runs in between) from
    case 26's "exit link, runs: ID N, ID N" line, or None."""
    m = re.search(r"^exit link, runs: (\d+) (\d+), (\d*) (\d*)$", out, re.M)
    if not m or not m.group(4):
        return None
    return (int(m.group(1)), int(m.group(3) or -1),
            int(m.group(4)) - int(m.group(2)))


def test_daemon(vm):
    """The daemon on a cgroup, scraped over loopback inside the VM. The
    kernel's own count of its sys_exit program's runs while groundtruth
    ran (bpf_stats) is the truth beside it: at least groundtruth's getppid
    calls, through the one link attached all along. A few boots in a
    hundred or so (on both kernels, in TCG) the daemon counted none of
    groundtruth's calls but the exec and the exits, which other
    tracepoints count: when the kernel ran the attached program fewer
    times than groundtruth made calls, scprof had nothing to count, and
    the test is skipped with the kernel's figures; when it ran it, the
    counts must be exact."""
    c = vm.case("26-daemon")
    text = c.text
    # (on failure, what the daemon said of itself and how slow the VM was)
    why = "%s\n%s\nVM %.0f s, case %.1f s\n%s" % (
        c.out, c.err, vm.seconds, c.seconds, "\n".join(
            ln for ln in text.splitlines()
            if ln.startswith(("scprof_bpf", "scprof_latency",
                              "scprof_processes", "scprof_dropped",
                              "scprof_syscalls_total"))))
    ran = exit_runs(c.out)
    assert ran, f"no reading of the sys_exit program's runs\n{why}"
    link_before, link_after, runs = ran
    assert link_before == link_after, \
        f"the sys_exit program's link changed while groundtruth ran\n{why}"
    assert "scprof_processes_folded_total 2" in text, why
    got = metric(text, "scprof_syscalls_total", syscall="getppid", abi="64")
    if got != N + C and runs < N + C:
        pytest.skip(f"{vm.suite}: the kernel ran the daemon's attached "
                    f"sys_exit program {runs} times while groundtruth made "
                    f"{N + C} getppid calls and more (bpf_stats); the "
                    f"daemon counted {got}\n{why}")
    assert runs >= N + C, why
    assert got == N + C, why
    assert metric(text, "scprof_syscall_errors_total", syscall="openat",
                  abi="64") == M
    assert metric(text, "scprof_syscalls_total", syscall="clone",
                  abi="64") == 1
    assert metric(text, "scprof_syscalls_total", syscall="fork",
                  abi="64") is None


def test_features(vm):
    """Debian's arm64 kernels (6.1 and on) have every facility: the default
    build runs, and sampled mode counts with the program that tail-calls
    the timing one (arm64's JIT mixes tail calls and subprograms since
    6.0)."""
    c = vm.case("27-features")
    f = c.report
    rows = {r["name"]: r for r in f["facilities"]}
    assert all(r["present"] for r in rows.values()), rows
    assert f["build"] == "default"
    # the run-queue delay the split reads, as the kernel's schedstat says
    split_check.check_features(f, c.out)


# ---- the split of a call's time (issue 41): split_check.py ------------------

def split_run(vm, case):
    """The report of a split case and what the workload and the guest's
    sampler printed."""
    c = vm.case(case)
    version = tuple(int(x) for x in re.findall(r"\d+", vm.kernel)[:2])
    if case != "34-split-stock" and version >= (6, 12):
        # the truth taken with the delayed dequeue off (lib.sh)
        assert "sched_feature NO_DELAY_DEQUEUE" in c.out, c.out[:300]
    return c.report, split_check.Facts(c.out)


def nr_of(table, name):
    arm64, _ = table
    nr, = [nr for nr, n in arm64.items() if n == name]
    return nr


def test_split_pipe(vm, table):
    rep, facts = split_run(vm, "30-split-pipe")
    split_check.check_pipe(rep, facts, nr_of(table, "read"))
    check_names(rep, table)


def test_split_futex(vm, table):
    rep, facts = split_run(vm, "31-split-futex")
    split_check.check_futex(rep, facts, nr_of(table, "futex"))


def test_split_shared(vm):
    rep, facts = split_run(vm, "32-split-shared")
    split_check.check_shared(rep, facts)


def test_split_timed(vm, table):
    """SCPROF_WITHOUT=run_delay: the split times each wait itself, as on a
    kernel that keeps no run-queue delay (split_runq_timed): the pipe
    reads' waits after their wake-ups, from the wake-up to the switch in."""
    split_check.check_features_without(vm.case("28-features-without").report,
                                       vm.case("27-features").report)
    rep, facts = split_run(vm, "33-split-timed")
    split_check.check_pipe(rep, facts, nr_of(table, "read"))


def test_split_stock(vm, table):
    """The pipe reads with the scheduler's stock features (delayed dequeue
    on from 6.12): their time on CPU, off CPU and blocked as 30's truth
    had it, without the run-queue delay (lib.sh)."""
    rep, facts = split_run(vm, "34-split-stock")
    _, ref = split_run(vm, "30-split-pipe")
    split_check.check_pipe_stock(rep, facts, ref, nr_read=nr_of(table, "read"))

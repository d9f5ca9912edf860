# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Shared helpers for scprof's end-to-end tests.

The tests run scprof as root against the real kernel. `make e2e` passes
SCPROF (the binary) and WORKLOADS (the built tests/workloads programs);
without them the paths default to the checkout's build output.

Other scprof runs may be profiling the machine at the same time: every
assertion is about the test's own target processes.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCPROF = os.environ.get("SCPROF", os.path.join(ROOT, "scprof"))
WORKLOADS = os.environ.get("WORKLOADS", os.path.join(ROOT, ".output", "workloads"))

# Every child process gets a time limit: a hang is a failure, not a stall.
TIMEOUT = 60

# A small fixed environment, the same for scprof and strace runs: no
# LD_* variables or locale lookups that differ between machines.
CLEAN_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LC_ALL": "C",
    "HOME": "/root",
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "soak: long runs under churn or load, and further variants of a "
        "test that make test already runs once: `make test-soak` (in "
        "make test-extra) runs them, `make e2e` leaves them out")


def pytest_sessionstart(session):
    """Refuse to run as anything but root, loudly: a skipped suite looks green."""
    if os.geteuid() != 0:
        pytest.exit("scprof's end-to-end tests load BPF programs and must run "
                    "as root (try: sudo make e2e)", returncode=1)
    if not os.access(SCPROF, os.X_OK):
        pytest.exit(f"scprof binary not found at {SCPROF} (run make, or set "
                    "SCPROF)", returncode=1)
    if not os.path.isdir(WORKLOADS):
        pytest.exit(f"workloads not found in {WORKLOADS} (run make workloads, "
                    "or set WORKLOADS)", returncode=1)


def workload(name):
    """Path of a built tests/workloads program."""
    path = os.path.join(WORKLOADS, name)
    assert os.access(path, os.X_OK), f"workload {path} is not built"
    return path


# Room in the maps for whatever else the host runs beside an -a test:
# -a sees it all, and another suite's shell loops of short processes can
# fill the default 16384 cells before their exited processes are folded
# (test_churn.py saw it: calls merged, exit 3). What those tests check is
# where their own calls are filed.
ROOM = ["--max-entries", "262144", "--max-procs", "65536"]

# setpriv's arguments that run a command as nobody (uid and gid 65534)
# with no supplementary groups; add --inh-caps and friends to keep some.
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class NobodyCopy:
    """scprof and the workloads copied where nobody can run them.

    The checkout may lie where only root can go: root's `git clone` puts
    it in /root, mode 0700. A test that drops privileges runs these copies,
    in a private directory (mode 0755) under the system's temp directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="scprof-nobody-")
        os.chmod(self.dir, 0o755)
        self.scprof = os.path.join(self.dir, "scprof")
        shutil.copy2(SCPROF, self.scprof)
        wl = os.path.join(self.dir, "workloads")
        shutil.copytree(WORKLOADS, wl)
        os.chmod(wl, 0o755)
        p = run(NOBODY + ["test", "-x", self.scprof])
        assert p.returncode == 0, \
            f"nobody cannot run {self.scprof}: is {self.dir}'s parent closed?"

    def workload(self, name):
        path = os.path.join(self.dir, "workloads", name)
        assert os.access(path, os.X_OK), f"workload {path} is not built"
        return path


@pytest.fixture(scope="session")
def nobody_copy():
    c = NobodyCopy()
    yield c
    shutil.rmtree(c.dir, ignore_errors=True)


def run(args, **kw):
    """subprocess.run with captured bytes output and a time limit."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("timeout", TIMEOUT)
    return subprocess.run(args, **kw)


def run_scprof(args, **kw):
    """Run scprof with args (a list) and return the CompletedProcess."""
    return run([SCPROF] + list(args), **kw)


def stderr_lines(proc):
    return proc.stderr.decode(errors="replace").splitlines()


def assert_not_crashed(proc):
    """A negative code is a signal, >= 128 a shell-reported one."""
    assert 0 <= proc.returncode < 128, \
        f"scprof died: return code {proc.returncode}"


def scprof_report(args, cmd=None, fmt="json", **kw):
    """Run scprof with -o FILE and return (CompletedProcess, report text).

    The report goes to a file so it cannot mix with the command's output.
    """
    with tempfile.TemporaryDirectory(prefix="scprof-e2e-") as d:
        out = os.path.join(d, "report")
        full = list(args) + ["--format", fmt, "-o", out]
        if cmd is not None:
            full += ["--"] + list(cmd)
        proc = run_scprof(full, **kw)
        # (>= 128 may be a command's status, passed on: callers check)
        assert proc.returncode >= 0, f"scprof killed by signal {-proc.returncode}"
        text = None
        if os.path.exists(out):
            with open(out, "rb") as f:
                text = f.read().decode("utf-8")
        leftovers = sorted(set(os.listdir(d)) - {"report"})
        assert not leftovers, f"temporary files left behind: {leftovers}"
    return proc, text


def scprof_json(args, cmd=None, **kw):
    """Run scprof --format json and return (CompletedProcess, parsed report)."""
    proc, text = scprof_report(args, cmd, "json", **kw)
    assert text is not None, \
        f"no report (rc {proc.returncode}): {proc.stderr.decode(errors='replace')}"
    return proc, json.loads(text, strict=True)


def nothing_dropped(dropped):
    """A report's "dropped": every count 0 and no failed map update."""
    return (all(v == 0 for k, v in dropped.items() if k != "map_failures")
            and dropped.get("map_failures") == [])


def by_name(syscalls, abi="64"):
    """{name: syscall object} of a JSON syscall list, for one ABI."""
    out = {}
    for s in syscalls:
        if s["abi"] != abi:
            continue
        assert s["name"] not in out, f"syscall {s['name']} listed twice"
        out[s["name"]] = s
    return out


def counts(syscalls, abi="64"):
    """{name: (calls, errors)} of a JSON syscall list, for the syscalls
    with calls (one with none has only time in calls still in flight)."""
    return {n: (s["calls"], s["errors"])
            for n, s in by_name(syscalls, abi).items() if s["calls"]}


def process(report, pid):
    """The JSON process object of pid (exactly one), or None."""
    found = [p for p in report["processes"] if p["pid"] == pid]
    assert len(found) <= 1, f"pid {pid} listed {len(found)} times"
    return found[0] if found else None


# ---- strace ---------------------------------------------------------------

STRACE = ["strace", "-c", "-f", "-w", "-U", "name,calls,total-time,errors"]


def strace_summary(cmd, env=None, cwd=None, stdout=subprocess.DEVNULL,
                   status=0, extra=()):
    """Run cmd under `strace -c -f -w` (and extra options, such as -e);
    return {name: (calls, errors, seconds)}.

    strace exits with the command's status, which must be status.
    32-bit mode tables, if any, are keyed "32:name".
    """
    with tempfile.TemporaryDirectory(prefix="scprof-e2e-strace-") as d:
        out = os.path.join(d, "summary")
        proc = run(STRACE + list(extra) + ["-o", out, "--"] + list(cmd),
                   env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
        assert proc.returncode == status, \
            f"strace {cmd}: exit {proc.returncode}: " \
            f"{proc.stderr.decode(errors='replace')}"
        with open(out) as f:
            text = f.read()
    return parse_strace_summary(text)


def parse_strace_summary(text):
    res = {}
    prefix = ""
    for line in text.splitlines():
        if line.startswith("System call usage summary for 32 bit mode"):
            prefix = "32:"
            continue
        if line.startswith("System call usage summary for"):
            prefix = line.split("for", 1)[1].strip().rstrip(":") + ":"
            continue
        f = line.split()
        if not f or f[0].startswith("-") or f[0] in ("syscall", "total"):
            continue
        assert len(f) in (3, 4), f"unexpected strace line {line!r}"
        res[prefix + f[0]] = (int(f[1]), int(f[3]) if len(f) == 4 else 0,
                              float(f[2]))
    assert res, f"no rows in strace's summary:\n{text}"
    return res


def children(pid):
    """Pids of the children of process pid (its main thread's)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().rstrip("\n")
    except FileNotFoundError:
        return None


def wait_child(pid, comm, timeout=TIMEOUT):
    """Wait for a child of pid named comm (after its exec); return its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in children(pid):
            if comm_of(c) == comm:
                return c
        time.sleep(0.005)
    raise AssertionError(f"no child {comm} of {pid} appeared")


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


# ---- strace -c style tables -------------------------------------------------

def parse_tables(text):
    """The strace -c style tables in text: a list of (title, header, rows,
    total). title is the line above the header ("" if none); rows and total
    are dicts keyed by the header's column names, cells as stripped strings.
    Column spans come from the dashed rule, so blank cells are kept.
    """
    lines = text.splitlines()
    tables = []
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-+( -+)*", lines[i + 1]) \
                and not re.fullmatch(r"-+( -+)*", lines[i]):
            spans = [m.span() for m in re.finditer(r"-+", lines[i + 1])]

            def cells(line):
                return [line[a:b].strip() if k < len(spans) - 1 else
                        line[a:].strip() for k, (a, b) in enumerate(spans)]
            header = cells(lines[i])
            title = lines[i - 1] if i > 0 else ""
            rows = []
            j = i + 2
            while j < len(lines) and not re.fullmatch(r"-+( -+)*", lines[j]):
                rows.append(dict(zip(header, cells(lines[j]))))
                j += 1
            assert j + 1 < len(lines), f"table without a total:\n{text}"
            total = dict(zip(header, cells(lines[j + 1])))
            tables.append((title, header, rows, total))
            i = j + 2
        else:
            i += 1
    return tables


# ---- cgroups --------------------------------------------------------------

def cgroup2_mounts():
    """Every mount point of a cgroup v2 hierarchy, in mount order (a machine
    may have more than one: a chroot's, a container's)."""
    found = []
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                # /proc/mounts escapes spaces and such as \ooo
                found.append(re.sub(r"\\([0-7]{3})",
                                    lambda m: chr(int(m.group(1), 8)), mnt))
    return found


def cgroup2_mount():
    """Mount point of the cgroup v2 hierarchy (unified or hybrid), or None."""
    mounts = cgroup2_mounts()
    return mounts[0] if mounts else None


# ---- waiting for scprof and for targets -------------------------------------

def unit_slice(prefix, units):
    """For a fixture: a slice under the cgroup2 mount (PREFIX-PID.slice)
    with a child cgroup per name in units (a name may be a path under an
    earlier one); yields its path, removes it after (waiting for the
    processes moved there to be gone)."""
    mnt = cgroup2_mount()
    assert mnt, "no cgroup2 mount in /proc/self/mounts"
    top = os.path.join(mnt, f"{prefix}-{os.getpid()}.slice")
    os.mkdir(top)
    for u in units:
        os.mkdir(os.path.join(top, u))
    yield top
    for u in list(reversed(list(units))) + [""]:
        path = os.path.join(top, u) if u else top
        for _ in range(500):
            try:
                os.rmdir(path)
                break
            except OSError as e:
                err = e
                time.sleep(0.01)
        else:
            # a fixture torn down while its processes live (a test asking
            # for it after the fixture that kills them) leaks the slice
            procs = open(os.path.join(path, "cgroup.procs")).read().split()
            raise AssertionError(f"{path} not removed after 5 s ({err}); "
                                 f"processes left in it: {procs}")


def bpf_links(pid):
    """Tracepoint names of the BPF links process pid holds open."""
    names = set()
    fdinfo = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(fdinfo)
    except FileNotFoundError:
        return names
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf_link":
                continue
            with open(f"{fdinfo}/{fd}") as f:
                for line in f:
                    if line.startswith("tp_name:"):
                        names.add(line.split(":", 1)[1].strip())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return names


ATTACHED = {"sys_enter", "sys_exit", "sched_process_exit"}


def wait_attached(proc, need=ATTACHED, timeout=TIMEOUT):
    """Wait until scprof (a Popen) holds BPF links on the need tracepoints.

    A link fd exists once bpf_link_create has attached the program, so from
    then on every syscall of the targets is seen. This does not depend on
    anything scprof prints.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"scprof exited ({proc.returncode}) before "
                                 f"attaching: {err!r}")
        if need <= bpf_links(proc.pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"scprof did not attach within {timeout} s")


def wait_blocked_in(pid, nr, timeout=TIMEOUT):
    """Wait until pid's main thread sleeps inside syscall nr.

    /proc/PID/syscall names the syscall a blocked task is in; a call is
    counted when it returns, so one still sleeping is not in any count yet.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/syscall") as f:
                first = f.read().split()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            raise AssertionError(f"process {pid} is gone")
        if first and first[0] == str(nr) and state == "S":
            return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} did not block in syscall {nr}")


SYS_READ = 0


def thread_calls(threads, calls):
    """{syscall: calls} of the trigger workload's calls (all threads)."""
    if not threads:
        return {"getppid": calls}
    names = ["getppid", "getuid", "getgid", "geteuid", "getegid"]
    return {names[i]: (i + 1) * calls for i in range(threads)}


class Trigger:
    """The trigger workload: blocks on a FIFO until told to make its calls."""

    def __init__(self, tmpdir, threads=0, calls=1000, preexec=None):
        self.fifo = os.path.join(str(tmpdir), "trigger.fifo")
        os.mkfifo(self.fifo)
        self.threads, self.calls = threads, calls
        self.proc = subprocess.Popen(
            [workload("trigger"), self.fifo, str(threads), str(calls)],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env=CLEAN_ENV, preexec_fn=preexec)
        self.pid = self.proc.pid
        line = self.proc.stdout.readline()
        assert line == b"ready\n", f"trigger said {line!r}"
        self.wait_idle()
        self.fd = os.open(self.fifo, os.O_WRONLY)

    def wait_idle(self):
        wait_blocked_in(self.pid, SYS_READ)

    def send(self, cmd):
        os.write(self.fd, cmd)

    def calls_and_ack(self):
        """Make the calls; return once they all returned and it sleeps again."""
        self.send(b"c")
        ack = self.proc.stdout.read(1)
        assert ack == b"k", f"trigger acknowledged {ack!r}"
        self.wait_idle()

    def fork_and_ack(self):
        """A child makes the calls; return once it was reaped."""
        self.send(b"f")
        ack = self.proc.stdout.read(1)
        assert ack == b"k", f"trigger acknowledged {ack!r}"
        self.wait_idle()

    def calls_and_exit(self):
        self.send(b"x")
        assert self.proc.wait(timeout=TIMEOUT) == 0

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        self.proc.stdout.close()
        os.close(self.fd)


@pytest.fixture
def trigger(tmp_path):
    """Factory for Trigger workloads, all killed at the end of the test."""
    made = []

    def make(**kw):
        d = tmp_path / f"t{len(made)}"
        d.mkdir()
        t = Trigger(d, **kw)
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()


class Scprof:
    """A background scprof run (for -p, --cgroup, -a), report to a file."""

    def __init__(self, args, tmpdir, fmt="json", need=ATTACHED):
        self.out = os.path.join(str(tmpdir), "report")
        self.fmt = fmt
        self.proc = subprocess.Popen(
            [SCPROF] + list(args) + ["--format", fmt, "-o", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL)
        wait_attached(self.proc, need)

    def stop(self, sig=signal.SIGINT):
        """Signal scprof (unless sig is None), wait, return (rc, stderr, report)."""
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=TIMEOUT)
        report = None
        if os.path.exists(self.out):
            with open(self.out, "rb") as f:
                report = f.read().decode("utf-8")
            if self.fmt == "json":
                report = json.loads(report, strict=True)
        return self.proc.returncode, err.decode(errors="replace"), report

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=TIMEOUT)


@pytest.fixture
def background(tmp_path):
    """Factory for background scprof runs, killed if a test leaves one."""
    made = []

    def make(args, **kw):
        d = tmp_path / f"s{len(made)}"
        d.mkdir()
        s = Scprof(args, d, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.kill()

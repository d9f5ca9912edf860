# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Targets, run endings and output options, against exact ground truth.

For -p, --cgroup and -a the trigger workload sleeps in read(2) on a FIFO
while scprof attaches; the test waits until scprof holds its BPF links
(conftest.wait_attached), then tells the workload to make its calls. The
read in flight at attach time is not counted (a call counts when it
returns, and its enter was not seen), so the counts are exact.
"""
import csv
import io
import json
import os
import select
import signal
import stat
import subprocess
import time

import pytest

from conftest import (ATTACHED, CLEAN_ENV, SCPROF, TIMEOUT, wait_attached,
                      wait_blocked_in, wait_child, by_name, cgroup2_mount,
                      counts, parse_tables, process, run_scprof, scprof_json,
                      scprof_report, stderr_lines, strace_summary,
                      thread_calls, workload, nothing_dropped)

N = 1000
SYS_CLOCK_NANOSLEEP = 230
GT = dict(n=2000, m=7, k=30, s=2, c=40)


def groundtruth(p=GT):
    return [workload("groundtruth")] + [str(p[k]) for k in "nmksc"]


def table_rows(table):
    return {r["syscall"]: r for r in table[2]}


# ---- -- CMD: exit status and where the report goes --------------------------

@pytest.mark.parametrize("script,status", [
    ("exit 0", 0),
    ("exit 3", 3),
    ("exit 255", 255),
    ("kill -KILL $$", 128 + signal.SIGKILL),
    ("kill -TERM $$", 128 + signal.SIGTERM),
    ("kill -SEGV $$", 128 + signal.SIGSEGV),
])
def test_command_exit_status(script, status):
    proc, rep = scprof_json([], ["sh", "-c", script], env=CLEAN_ENV)
    assert proc.returncode == status
    assert rep["exit_status"] == status
    assert rep["targets_exited"] is True
    assert rep["mode"] == "command"
    assert rep["target"] == f"sh -c {script}"


@pytest.mark.parametrize("cmd,status", [
    (["/nonexistent/scprof-e2e"], 127),
    (["scprof-e2e-no-such-command"], 127),
    (["/etc/passwd"], 126),
    (["/tmp"], 126),
])
def test_command_cannot_run(cmd, status):
    proc = run_scprof(["--"] + cmd, env=CLEAN_ENV)
    assert proc.returncode == status
    assert len(stderr_lines(proc)) == 1, proc.stderr
    assert proc.stdout == b""


def test_command_report_on_stderr():
    proc = run_scprof(["--", "sh", "-c", "echo out; echo err >&2"],
                      env=CLEAN_ENV)
    assert proc.returncode == 0
    assert proc.stdout == b"out\n", "the command's stdout stays clean"
    err = proc.stderr.decode()
    assert err.startswith("err\n"), err
    assert "% time     seconds  usecs/call     calls    errors syscall" in err
    tables = parse_tables(err)
    assert len(tables) == 1
    assert table_rows(tables[0])["write"]["calls"] == "2"


def test_output_file_wins(tmp_path):
    out = tmp_path / "r.txt"
    proc = run_scprof(["-o", str(out), "--", "sh", "-c",
                       "echo out; echo err >&2"], env=CLEAN_ENV)
    assert proc.returncode == 0
    assert proc.stdout == b"out\n" and proc.stderr == b"err\n"
    tables = parse_tables(out.read_text())
    assert table_rows(tables[0])["write"]["calls"] == "2"
    assert os.listdir(tmp_path) == ["r.txt"]


def test_output_file_replaces_atomically(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    os.chmod(out, 0o600)
    proc = run_scprof(["-o", str(out), "--format", "json", "--", "true"])
    assert proc.returncode == 0
    json.loads(out.read_text())
    assert os.listdir(tmp_path) == ["r.json"]


def test_output_device_is_written_not_replaced(tmp_path):
    """-o /dev/null must not turn /dev/null into a file (a private node
    here, so a failure harms nothing)."""
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    proc = run_scprof(["-o", str(null), "--", "true"])
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode), "the device was replaced"
    assert os.listdir(tmp_path) == ["null"]


def test_output_fifo_and_stdout_link(tmp_path):
    """A FIFO, or a link to /proc/self/fd/1 (what /dev/stdout is), is
    written through, not renamed over."""
    link = tmp_path / "stdout"
    os.symlink("/proc/self/fd/1", link)
    proc = run_scprof(["-o", str(link), "--format", "json", "--", "true"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["exit_status"] == 0
    assert os.readlink(link) == "/proc/self/fd/1"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # read-write: neither side's open blocks, and a broken scprof that
    # never writes here cannot hang the test
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    chunks = []
    try:
        proc = subprocess.Popen([SCPROF, "-o", str(fifo), "--format", "json",
                                 "--", "true"], stderr=subprocess.PIPE)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            done = proc.poll() is not None
            if select.select([fd], [], [], 0.05)[0]:
                chunks.append(os.read(fd, 65536))
            elif done:
                break
        proc.communicate(timeout=TIMEOUT)
    finally:
        os.close(fd)
    text = b"".join(chunks)
    assert proc.returncode == 0
    assert json.loads(text)["exit_status"] == 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "stdout"]


MARKER = "scprof-e2e-stdout-marker"
# prints MARKER, which its command line (in the reports) does not hold
SAY_MARKER = "printf '%s-%s\\n' scprof-e2e stdout-marker"


def dash_run(tmp_path, args, cmd=("sh", "-c", SAY_MARKER)):
    """scprof ARGS -- CMD in an empty directory: a file named - would show.
    The command's own stdout goes to stderr, not into the output."""
    proc = run_scprof(list(args) + ["--"] + list(cmd), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(tmp_path) == [], "a file was written"
    assert MARKER.encode() not in proc.stdout
    assert MARKER.encode() in proc.stderr, "the command's output was lost"
    return proc.stdout.decode()


def test_output_dash_is_stdout(tmp_path):
    """-o - is standard output, as for curl, tar and perf: the report
    alone, in every format, one report or intervals."""
    report = json.loads(dash_run(tmp_path, ["-o", "-", "--format", "json"]))
    assert report["exit_status"] == 0
    assert by_name(report["syscalls"])["execve"]["calls"] == 1
    rows = list(csv.DictReader(io.StringIO(
        dash_run(tmp_path, ["-o", "-", "--format", "csv"]))))
    assert any(r["syscall"] == "execve" and r["calls"] == "1" for r in rows)
    lines = dash_run(tmp_path, ["-o", "-", "--format", "json", "-i", "0.05"],
                     ("sh", "-c", f"{SAY_MARKER}; sleep 0.2")).splitlines()
    assert len(lines) >= 2
    assert all("interval" in json.loads(line) for line in lines)
    assert "execve" in dash_run(tmp_path, ["-o", "-"])


def test_other_outputs_dash_is_stdout(tmp_path):
    """--folded, --slow-out and --trace-out take - too; the report goes to
    a file then."""
    out = tmp_path.parent / f"{tmp_path.name}-report"
    folded = dash_run(tmp_path, ["--stacks=1", "--folded", "-", "-o",
                                 str(out)])
    assert folded and all(line.rsplit(" ", 1)[1].isdigit()
                          for line in folded.splitlines())
    assert any(line.startswith("sh;") for line in folded.splitlines())
    slow = dash_run(tmp_path, ["--slow", "1ns", "--slow-out", "-",
                               "--format", "json", "-o", str(out)])
    assert any(json.loads(line)["syscall"] == "execve"
               for line in slow.splitlines())
    trace = json.loads(dash_run(tmp_path, ["--slow", "1ns", "--trace-out",
                                           "-", "-o", str(out)]))
    assert trace["traceEvents"]
    out.unlink()


def test_output_dash_once(tmp_path):
    """Two outputs on stdout would mix: refused before anything runs."""
    for args in (["-o", "-", "--folded", "-"], ["--pprof", "-", "-a"],
                 ["--slow", "1s", "--slow-out", "-", "-o", "-"]):
        proc = run_scprof(args + (["--", "true"] if "-a" not in args else []),
                          cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        lines = stderr_lines(proc)
        assert len(lines) == 1 and "standard output" in lines[0], lines
        assert proc.stdout == b""
    assert os.listdir(tmp_path) == []


def test_output_through_symlink(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    os.symlink("real.json", link)
    proc = run_scprof(["-o", str(link), "--format", "json", "--", "true"])
    assert proc.returncode == 0, proc.stderr
    assert os.readlink(link) == "real.json", "the link was replaced"
    assert json.loads(real.read_text())["exit_status"] == 0
    assert sorted(os.listdir(tmp_path)) == ["link.json", "real.json"]


def test_output_directory_fails_before_running(tmp_path):
    marker = tmp_path / "ran"
    proc = run_scprof(["-o", str(tmp_path), "--", "sh", "-c",
                       f"touch {marker}"])
    assert proc.returncode == 1
    lines = stderr_lines(proc)
    assert len(lines) == 1 and "Is a directory" in lines[0], lines
    assert not marker.exists(), "the command ran though the report cannot " \
        "be written"
    assert os.listdir(tmp_path) == []


# ---- -f ------------------------------------------------------------------------

@pytest.mark.parametrize("follow", [False, True], ids=["no-f", "f"])
def test_follow_command(follow):
    proc, rep = scprof_json(["-f"] if follow else [], groundtruth(),
                            env=CLEAN_ENV)
    assert proc.returncode == 0
    procs = rep["processes"]
    assert len(procs) == (2 if follow else 1)
    parent = [p for p in procs if "execve" in counts(p["syscalls"])]
    assert len(parent) == 1
    assert counts(parent[0]["syscalls"])["getppid"] == (GT["n"], 0)
    want = GT["n"] + (GT["c"] if follow else 0)
    assert counts(rep["syscalls"])["getppid"] == (want, 0)
    assert counts(rep["syscalls"])["exit_group"] == (2 if follow else 1, 0)
    if follow:
        child = [p for p in procs if p is not parent[0]][0]
        assert child["ppid"] == parent[0]["pid"]
        assert counts(child["syscalls"]) == {"getppid": (GT["c"], 0),
                                             "exit_group": (1, 0)}


@pytest.mark.parametrize("follow", [False, True], ids=["no-f", "f"])
def test_follow_pid(trigger, background, follow):
    t = trigger(calls=N)
    need = ATTACHED | ({"sched_process_fork"} if follow else set())
    s = background((["-f"] if follow else []) + ["-p", str(t.pid)], need=need)
    t.fork_and_ack()
    rc, err, rep = s.stop()
    assert rc == 0, err
    p = process(rep, t.pid)
    assert counts(p["syscalls"]) == {"fork": (1, 0), "wait4": (1, 0),
                                     "write": (1, 0)}
    others = [x for x in rep["processes"] if x["pid"] != t.pid]
    if not follow:
        assert others == []
        return
    assert len(others) == 1 and others[0]["ppid"] == t.pid
    assert others[0]["exited"] is True
    assert counts(others[0]["syscalls"]) == {"getppid": (N, 0),
                                             "exit_group": (1, 0)}


# ---- -p ------------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM],
                         ids=["SIGINT", "SIGTERM"])
def test_pid_exact_and_stop_signal(trigger, background, sig):
    t = trigger(calls=N)
    s = background(["-p", str(t.pid)])
    t.calls_and_ack()
    t.calls_and_ack()
    rc, err, rep = s.stop(sig)
    assert rc == 0, err
    assert err == "", "nothing to say when stopped by a signal, off a tty"
    assert rep["mode"] == "pid" and rep["target"] == f"pid {t.pid}"
    assert rep["targets_exited"] is False and "exit_status" not in rep
    assert [p["pid"] for p in rep["processes"]] == [t.pid]
    p = rep["processes"][0]
    assert p["exited"] is False and p["comm"] == "trigger"
    # The read in flight at attach and the one in flight at the stop are
    # not counted; the read between the two rounds is.
    assert counts(p["syscalls"]) == {"getppid": (2 * N, 0), "write": (2, 0),
                                     "read": (1, 0)}
    assert by_name(p["syscalls"])["read"]["bytes"] == 1
    assert by_name(p["syscalls"])["write"]["bytes"] == 2


def test_pid_report_on_stdout(trigger):
    t = trigger(calls=N)
    proc = subprocess.Popen([SCPROF, "-p", str(t.pid)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_attached(proc)
        t.calls_and_ack()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and err == b""
    rows = table_rows(parse_tables(out.decode())[0])
    assert rows["getppid"]["calls"] == str(N)
    assert rows["write"]["calls"] == "1"


def test_pid_target_exits(trigger, background):
    t = trigger(calls=N)
    s = background(["-p", str(t.pid)])
    t.calls_and_exit()
    rc, err, rep = s.stop(sig=None)     # scprof must end by itself
    assert rc == 0, err
    assert len(err.splitlines()) == 1 and "exited" in err, err
    assert rep["targets_exited"] is True
    p = process(rep, t.pid)
    assert p["exited"] is True
    assert counts(p["syscalls"]) == {"getppid": (N, 0), "exit_group": (1, 0)}


def test_pid_list_all_exit(trigger, background):
    ts = [trigger(calls=N + i) for i in range(3)]
    s = background(["-p", ",".join(str(t.pid) for t in ts)])
    for t in ts:
        t.calls_and_exit()
    rc, err, rep = s.stop(sig=None)
    assert rc == 0, err
    assert rep["targets_exited"] is True
    assert sorted(p["pid"] for p in rep["processes"]) == \
        sorted(t.pid for t in ts)
    for t in ts:
        assert counts(process(rep, t.pid)["syscalls"]) == \
            {"getppid": (t.calls, 0), "exit_group": (1, 0)}
    assert counts(rep["syscalls"])["getppid"] == (sum(t.calls for t in ts), 0)


def test_pid_repeated_is_one_target(trigger, background):
    t = trigger(calls=N)
    s = background(["-p", f"{t.pid},{t.pid}"])
    t.calls_and_exit()
    rc, err, rep = s.stop(sig=None)
    assert rc == 0, err
    assert rep["target"] == f"pid {t.pid}"
    assert counts(process(rep, t.pid)["syscalls"]) == \
        {"getppid": (N, 0), "exit_group": (1, 0)}


THREADED = """
import os, sys, threading
t = threading.Thread(target=lambda: print(threading.get_native_id(),
                                          flush=True) or sys.stdin.read())
t.daemon = True
t.start()
sys.stdin.read()
"""


def test_pid_of_a_thread_profiles_that_thread(background):
    """As strace -p: the thread only (exact counts in test_attribution)."""
    py = subprocess.Popen(["/usr/bin/python3", "-c", THREADED],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        tid = int(py.stdout.readline())
        assert tid != py.pid
        s = background(["-p", str(tid), "-d", "0.2"])
        rc, err, rep = s.stop(sig=None)
    finally:
        py.kill()
        py.communicate()
    assert rc == 0, err
    assert rep["target"] == f"thread {tid} of pid {py.pid}"
    assert "profiling that thread only" in err


def test_pid_duration_ends_run(trigger, background):
    t = trigger(calls=N)
    s = background(["-d", "0.3", "-p", str(t.pid)])
    rc, err, rep = s.stop(sig=None)
    assert rc == 0, err
    assert rep["duration_ns"] >= 300_000_000
    assert rep["targets_exited"] is False
    p = process(rep, t.pid)
    assert p is None or all(s["calls"] == 0 for s in p["syscalls"]), \
        "an idle target makes no calls"
    # it sat in its read for the whole run: in flight, with that time
    assert [(f["pid"], f["syscall"], f["before_attach"])
            for f in rep["in_flight"]] == [(t.pid, "read", True)]
    # (timed from the attach, a little before the run's start: a few
    # microseconds, more on a loaded machine)
    assert rep["in_flight"][0]["seconds"] * 1e9 <= rep["duration_ns"] + 1e8
    assert t.proc.poll() is None, "the target keeps running"


# ---- threads -------------------------------------------------------------------

def check_threads(p, threads, calls):
    c = counts(p["syscalls"])
    for name, n in thread_calls(threads, calls).items():
        assert c[name] == (n, 0), name
    assert c["clone3"] == (threads, 0)
    # every thread's exit is counted at entry; join returns after it
    assert c["exit"] == (threads, 0)


def test_threads_pid(trigger, background):
    t = trigger(threads=3, calls=N)
    s = background(["-p", str(t.pid)])
    t.calls_and_ack()
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert [p["pid"] for p in rep["processes"]] == [t.pid]
    check_threads(rep["processes"][0], t.threads, t.calls)


def test_threads_command():
    proc, rep = scprof_json([], [workload("trigger"), "-", "5", str(N)],
                            env=CLEAN_ENV)
    assert proc.returncode == 0
    assert len(rep["processes"]) == 1, "threads are not processes"
    check_threads(rep["processes"][0], 5, N)
    assert counts(rep["syscalls"])["exit_group"] == (1, 0)


# ---- --cgroup --------------------------------------------------------------------

@pytest.fixture
def cgroup():
    mnt = cgroup2_mount()
    assert mnt, "no cgroup2 mount in /proc/self/mounts"
    path = os.path.join(mnt, f"scprof-e2e-{os.getpid()}-{time.monotonic_ns()}")
    os.mkdir(path)
    yield path
    # move anything left back to the root, then remove the group
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            left = f.read().split()
        for pid in left:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in range(500):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.01)
    except FileNotFoundError:
        pass


def test_cgroup_exact(trigger, background, cgroup):
    t = trigger(calls=N)
    t2 = trigger(calls=N)   # outside the cgroup: must not show
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(t.pid))
    s = background(["--cgroup", cgroup])
    t2.calls_and_ack()
    t.calls_and_exit()
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert rep["mode"] == "cgroup" and rep["target"] == f"cgroup {cgroup}"
    assert [p["pid"] for p in rep["processes"]] == [t.pid]
    assert counts(rep["processes"][0]["syscalls"]) == \
        {"getppid": (N, 0), "exit_group": (1, 0)}


def test_cgroup_includes_children(background, cgroup, tmp_path):
    """A command started inside the cgroup, with its children (no -f)."""
    s = background(["--cgroup", cgroup])
    # the shell moves itself into the cgroup, then runs the workload
    script = f'echo $$ > {cgroup}/cgroup.procs && exec "$@"'
    proc = subprocess.run(["sh", "-c", script, "sh"] + groundtruth(),
                          env=CLEAN_ENV, timeout=TIMEOUT)
    assert proc.returncode == 0
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert counts(rep["syscalls"])["getppid"] == (GT["n"] + GT["c"], 0)
    assert counts(rep["syscalls"])["nanosleep"] == (GT["s"], 0)
    assert len(rep["processes"]) == 2


def test_cgroup_v1_refused():
    with open("/proc/self/mounts") as f:
        v1 = [ln.split()[1] for ln in f if ln.split()[2] == "cgroup"]
    path = v1[0] if v1 else "/proc"
    proc = run_scprof(["--cgroup", path])
    assert proc.returncode == 1
    lines = stderr_lines(proc)
    assert len(lines) == 1 and "not a cgroup v2 directory" in lines[0], lines


# ---- -a ------------------------------------------------------------------------

def test_all_sees_marker_not_itself(trigger, background):
    t = trigger(calls=N)
    # room for a busy machine: exactness needs every call of the marker
    s = background(["-a", "--max-entries", "131072"])
    t.calls_and_exit()
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert rep["mode"] == "all"
    assert rep["dropped"]["calls"] == 0, "the machine filled the stats map"
    p = process(rep, t.pid)
    assert counts(p["syscalls"]) == {"getppid": (N, 0), "exit_group": (1, 0)}
    assert process(rep, s.proc.pid) is None, "scprof profiled itself"


def test_all_duration_ends_run(background):
    s = background(["-a", "-d", "0.2"])
    rc, err, rep = s.stop(sig=None)
    assert rc == 0, err
    assert rep["duration_ns"] >= 200_000_000
    assert process(rep, s.proc.pid) is None


# ---- a command and signals to scprof ---------------------------------------------

def test_command_sigterm_is_passed_on(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.Popen([SCPROF, "--format", "json", "-o", str(out), "--",
                             "sleep", "60"], stderr=subprocess.PIPE)
    try:
        # the command was released: it runs as sleep, in its nanosleep
        wait_blocked_in(wait_child(proc.pid, "sleep"), SYS_CLOCK_NANOSLEEP)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err
    rep = json.loads(out.read_text())
    assert rep["exit_status"] == 128 + signal.SIGTERM
    assert counts(rep["syscalls"])["execve"] == (1, 0)


# ---- report contents ---------------------------------------------------------------

SYSCALL_FIELDS = {"name": str, "nr": int, "abi": str, "calls": int,
                  "errors": int, "interrupted": int, "total_ns": int,
                  "min_ns": int, "max_ns": int, "avg_ns": int, "p50_ns": int,
                  "p90_ns": int, "p99_ns": int,
                  # the split of the time (test_split.py)
                  "on_cpu_ns": int, "cpu_wait_ns": int, "blocked_ns": int,
                  "io_wait_ns": int, "blocked_in": list, "woken_by": list,
                  "ran_instead": list}
TOP_FIELDS = {"version": str, "mode": str, "target": str, "duration_ns": int,
              "targets_exited": bool, "exit_status": int, "dropped": dict,
              "syscalls": list, "processes": list, "in_flight": list,
              "cpu_throttling": (dict, type(None))}
DROPPED_FIELDS = {"calls", "untimed_calls", "process_info", "errno_detail",
                  "cgroup_moves", "unattributed_calls", "cgroup_names",
                  "map_failures"}
PROC_FIELDS = {"pid": int, "ppid": int, "comm": str, "exited": bool,
               "syscalls": list}


def check_syscall_obj(s, aggregate):
    want = set(SYSCALL_FIELDS) | {"bytes"} | ({"errnos"} if aggregate else set())
    assert set(s) == want, s
    for k, typ in SYSCALL_FIELDS.items():
        assert type(s[k]) is typ, (k, s)
    assert s["bytes"] is None or type(s["bytes"]) is int
    assert s["abi"] in ("64", "32", "x32")
    assert s["errors"] <= s["calls"] and s["interrupted"] <= s["errors"]
    if s["name"] not in ("exit", "exit_group"):
        assert s["avg_ns"] == s["total_ns"] // s["calls"], s
        assert 0 < s["min_ns"] <= s["p50_ns"] <= s["p90_ns"] <= s["p99_ns"] \
            <= s["max_ns"], s
    if aggregate:
        assert all(type(v) is int for v in s["errnos"].values())
        assert sum(s["errnos"].values()) == s["errors"]


def test_json_fields():
    proc, rep = scprof_json(["-f"], groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 0
    assert set(rep) == set(TOP_FIELDS)
    for k, typ in TOP_FIELDS.items():
        assert type(rep[k]) in (typ if isinstance(typ, tuple) else (typ,)), k
    assert set(rep["dropped"]) == DROPPED_FIELDS
    assert nothing_dropped(rep["dropped"])
    for s in rep["syscalls"]:
        check_syscall_obj(s, True)
    for p in rep["processes"]:
        assert set(p) == set(PROC_FIELDS)
        for k, typ in PROC_FIELDS.items():
            assert type(p[k]) is typ, k
        for s in p["syscalls"]:
            check_syscall_obj(s, False)
    sc = by_name(rep["syscalls"])
    assert sc["read"]["bytes"] >= GT["k"]
    assert sc["getppid"]["bytes"] is None
    assert sc["openat"]["errnos"] == {"ENOENT": GT["m"]}
    assert rep["duration_ns"] >= GT["s"] * 2_000_000


def test_csv_one_row_per_process_and_syscall():
    _, rep = scprof_json(["-f"], groundtruth(), env=CLEAN_ENV)
    proc, text = scprof_report(["-f"], groundtruth(), "csv", env=CLEAN_ENV)
    assert proc.returncode == 0
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    pids = {r["pid"] for r in rows}
    assert len(pids) == 2
    keys = [(r["pid"], r["abi"], r["syscall"]) for r in rows]
    assert len(keys) == len(set(keys)), "one row per (pid, syscall)"

    def role(pid_rows):
        return "parent" if any(r["syscall"] == "execve" for r in pid_rows) \
            else "child"
    got = {}
    for pid in pids:
        pr = [r for r in rows if r["pid"] == pid]
        got[role(pr)] = {r["syscall"]: (int(r["calls"]), int(r["errors"]))
                         for r in pr}
        for r in pr:
            assert r["comm"] == "groundtruth"
            calls, total = int(r["calls"]), int(r["total_ns"])
            if r["syscall"] not in ("exit", "exit_group"):
                assert int(r["avg_ns"]) == total // calls
    want = {}
    for p in rep["processes"]:
        want["parent" if "execve" in counts(p["syscalls"]) else "child"] = \
            counts(p["syscalls"])
    # Same program, same parameters: the same cells, exactly.
    assert got == want
    assert got["child"] == {"getppid": (GT["c"], 0), "exit_group": (1, 0)}


def test_per_process_tables():
    proc = run_scprof(["-f", "-P", "--"] + groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 0
    tables = parse_tables(proc.stderr.decode())
    assert len(tables) == 3
    assert tables[0][0] == ""
    titles = [t[0] for t in tables[1:]]
    assert all(t.startswith("Process ") and t.endswith("(groundtruth), exited:")
               for t in titles), titles
    parent, child = sorted(tables[1:], key=lambda t: len(t[2]), reverse=True)
    assert table_rows(parent)["getppid"]["calls"] == str(GT["n"])
    assert {r["syscall"]: r["calls"] for r in child[2]} == \
        {"getppid": str(GT["c"]), "exit_group": "1"}
    assert int(tables[0][3]["calls"]) == int(parent[3]["calls"]) + \
        int(child[3]["calls"])
    # the child's pid in its title is a child of the parent's
    cpid = int(child[0].split()[1])
    ppid = int(parent[0].split()[1])
    assert cpid != ppid


def test_histograms():
    proc = run_scprof(["-f", "-H", "--"] + groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 0
    text = proc.stderr.decode()
    blocks = {}
    for block in text.split("\n\n")[1:]:
        head = block.strip().splitlines()
        if head and ": " in head[0] and "calls" in head[0]:
            blocks[head[0].split(":")[0]] = head
    assert "openat" in blocks and "getppid" in blocks and "nanosleep" in blocks
    op = blocks["openat"]
    assert op[0].startswith("openat: ") and f"{GT['m']} errors" in op[0], op
    assert any(ln.split() == ["ENOENT", ":", str(GT["m"])] for ln in op), op

    def bar_total(lines):
        return sum(int(ln.split(":", 1)[1].split("|")[0]) for ln in lines
                   if "->" in ln)
    assert bar_total(blocks["getppid"]) == GT["n"] + GT["c"]
    assert bar_total(blocks["nanosleep"]) == GT["s"]
    assert bar_total(op) == int(op[0].split()[1])


SORTS = {
    "calls": ("calls", int, True),
    "errors": ("errors", lambda v: int(v or 0), True),
    "name": ("syscall", str, False),
    "time": ("seconds", float, True),
    "avg-time": ("usecs/call", int, True),
    "min-time": ("shortest", float, True),
    "max-time": ("longest", float, True),
    "p50": ("p50-usecs", float, True),
    "p99": ("p99-usecs", float, True),
    "bytes": ("bytes", lambda v: int(v or 0), True),
}


@pytest.mark.parametrize("key", sorted(SORTS))
def test_sort(key):
    col, conv, desc = SORTS[key]
    cols = "calls,errors,total-time,avg-time,min-time,max-time,p50,p99,bytes,name"
    proc = run_scprof(["-f", "-S", key, "-U", cols, "--"] + groundtruth(),
                      env=CLEAN_ENV)
    assert proc.returncode == 0
    (title, header, rows, total), = parse_tables(proc.stderr.decode())
    assert header == ["calls", "errors", "seconds", "usecs/call", "shortest",
                      "longest", "p50-usecs", "p99-usecs", "bytes", "syscall"]
    vals = [conv(r[col]) for r in rows]
    assert vals == sorted(vals, reverse=desc), vals
    assert len(rows) >= 15


@pytest.mark.parametrize("cols,header", [
    ("calls,errors,name", ["calls", "errors", "syscall"]),
    ("name,calls", ["syscall", "calls"]),
    ("calls", ["calls", "syscall"]),
    ("count,error,syscall", ["calls", "errors", "syscall"]),
    ("bytes,p50,p90,p99", ["bytes", "p50-usecs", "p90-usecs", "p99-usecs",
                           "syscall"]),
])
def test_columns(cols, header):
    proc = run_scprof(["-f", "-U", cols, "--"] + groundtruth(), env=CLEAN_ENV)
    assert proc.returncode == 0
    (title, hdr, rows, total), = parse_tables(proc.stderr.decode())
    assert hdr == header
    rows = table_rows((title, hdr, rows, total))
    if "calls" in hdr:
        assert rows["getppid"]["calls"] == str(GT["n"] + GT["c"])
    if "errors" in hdr:
        assert rows["openat"]["errors"] == str(GT["m"])
        assert rows["getppid"]["errors"] == ""
    if "bytes" in hdr:
        assert rows["getppid"]["bytes"] == ""
        assert int(rows["read"]["bytes"]) >= GT["k"]


def test_default_table_matches_json():
    """The default table's calls and errors are the JSON's (same program)."""
    _, rep = scprof_json(["-f"], groundtruth(), env=CLEAN_ENV)
    proc = run_scprof(["-f", "--"] + groundtruth(), env=CLEAN_ENV)
    (title, hdr, rows, total), = parse_tables(proc.stderr.decode())
    assert hdr == ["% time", "seconds", "usecs/call", "calls", "errors",
                   "syscall"]
    got = {r["syscall"]: (int(r["calls"]), int(r["errors"] or 0)) for r in rows}
    assert got == counts(rep["syscalls"])
    assert int(total["calls"]) == sum(c for c, _ in got.values())
    assert int(total["errors"]) == sum(e for _, e in got.values())
    assert total["% time"] == "100.00" and total["syscall"] == "total"
    secs = [float(r["seconds"]) for r in rows]
    assert secs == sorted(secs, reverse=True)


# ---- 32-bit compat -----------------------------------------------------------------

@pytest.mark.parametrize("mode", [[], ["-C"]], ids=["full", "count-only"])
def test_compat_int80(mode):
    """int $0x80 from 64-bit code: the one compat call made with the
    64-bit code segment, which the registers alone do not tell from a
    native one (syscall.bpf.h's regs_native())."""
    n = 123
    proc, rep = scprof_json(mode, [workload("int80"), str(n)],
                            env=CLEAN_ENV)
    if proc.returncode == 77:
        pytest.fail("int80 only runs on x86_64")
    assert proc.returncode == 0, "int $0x80 getpid did not return the pid"
    compat = [s for s in rep["syscalls"] if s["abi"] == "32"]
    assert [(s["name"], s["nr"], s["calls"], s["errors"]) for s in compat] == \
        [("getpid", 20, n, 0)]
    # 20 in the 64-bit table is writev: it must not be counted there
    assert "writev" not in by_name(rep["syscalls"])
    table = run_scprof(mode + ["--", workload("int80"), str(n)],
                       env=CLEAN_ENV)
    text = table.stderr.decode()
    tables = parse_tables(text)
    assert len(tables) == 2
    assert tables[1][0] == "System call usage summary for 32 bit mode:"
    assert [(r["syscall"], r["calls"]) for r in tables[1][2]] == \
        [("getpid", str(n))]


# ---- an exec is filed under the ABI it was made in -------------------------

def abi_calls(rep, name):
    """{abi: calls} of one syscall in a JSON report."""
    return {s["abi"]: s["calls"] for s in rep["syscalls"] if s["name"] == name}


def strace_abi_calls(st, name):
    """The same from strace -c -f (32-bit rows are keyed "32:name")."""
    out = {}
    if name in st:
        out["64"] = st[name][0]
    if "32:" + name in st:
        out["32"] = st["32:" + name][0]
    return out


def exec_cases():
    raw32, int80 = workload("raw32"), workload("int80")
    return [
        # scprof's launcher, a 64-bit process, execs the 32-bit raw32
        ("64-to-32", [raw32, "3"], {"64": 1}),
        # a 64-bit shell execs it in a child
        ("shell", ["sh", "-c", f"{raw32} 2; exit 0"], {"64": 2}),
        # the 32-bit raw32 execs the 64-bit int80 (with int $0x80 calls
        # from a 64-bit program): that execve is a 32-bit call
        ("32-to-64", [raw32, "2", int80, "4"], {"64": 1, "32": 1}),
    ]


@pytest.mark.parametrize("mode", [[], ["-C"]], ids=["full", "count-only"])
def test_exec_is_filed_under_the_abi_it_was_made_in(mode):
    """A successful exec returns into the new program's ABI (the kernel
    rewrites the call's number and compat status); the exec itself was made
    in the old one. Both modes agree with strace -c -f, per ABI."""
    for what, cmd, want_execve in exec_cases():
        proc, rep = scprof_json(["-f"] + mode, cmd, env=CLEAN_ENV)
        assert proc.returncode == 0, (what, stderr_lines(proc))
        st = strace_summary(cmd, env=CLEAN_ENV)
        assert abi_calls(rep, "execve") == want_execve, (what, rep["syscalls"])
        assert strace_abi_calls(st, "execve") == want_execve, (what, st)
        assert abi_calls(rep, "getpid") == strace_abi_calls(st, "getpid"), \
            (what, rep["syscalls"], st)
        # no 32-bit call was filed in the 64-bit table under its number
        # (11 is munmap there, 20 writev, 252 is not exit_group)
        assert "writev" not in by_name(rep["syscalls"]), what


@pytest.mark.parametrize("mode", [[], ["-C"]], ids=["full", "count-only"])
def test_execveat_is_not_counted_as_execve(mode):
    """fexecve is an execveat, which the kernel turns into an execve on
    success: -C still counts it as made, like the full mode and strace."""
    cmd = ["python3", "-c", "import os; "
           "os.execve(os.open('/bin/true', os.O_RDONLY), ['true'], {})"]
    proc, rep = scprof_json(["-f"] + mode, cmd, env=CLEAN_ENV)
    assert proc.returncode == 0, stderr_lines(proc)
    st = strace_summary(cmd, env=CLEAN_ENV)
    assert abi_calls(rep, "execveat") == {"64": 1}, rep["syscalls"]
    assert strace_abi_calls(st, "execveat") == {"64": 1}, st
    assert abi_calls(rep, "execve") == strace_abi_calls(st, "execve"), \
        (rep["syscalls"], st)


# ---- -a never records scprof itself ------------------------------------------

@pytest.mark.parametrize("mode", [[], ["-C"]], ids=["full", "count-only"])
def test_whole_system_leaves_scprof_out(mode, tmp_path):
    """-a records every process but scprof: its own calls (reading maps,
    sleeping, writing the report) are never a row, also now that the BPF
    side caches targets by their stack (filter.bpf.h's verdict cache), and
    a busy process beside it is."""
    # (busy until killed: a loaded machine may take longer to attach
    # than a fixed count of calls lasts)
    busy = subprocess.Popen([workload("stackmix"), "1000000000", "1"],
                            stdout=subprocess.DEVNULL)
    out = tmp_path / "r.json"
    try:
        proc = subprocess.Popen([SCPROF, "-a", "-d", "1.5", "--format", "json",
                                 "-o", str(out)] + mode,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        busy.kill()
        busy.wait()
    assert proc.returncode == 0, err
    rep = json.loads(out.read_text())
    pids = {p["pid"]: p for p in rep["processes"]}
    assert proc.pid not in pids, pids[proc.pid]
    assert busy.pid in pids, sorted(pids)
    assert sum(s["calls"] for s in pids[busy.pid]["syscalls"]) > 1000

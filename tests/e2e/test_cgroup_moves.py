# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Processes that change cgroup while scprof runs (issue #20, item 1).

runc, containerd and systemd start every program alike: fork, move the
child into its new cgroup, exec. A call is filed under the cgroup its
thread was in when it made it (full mode: at entry; --count-only and the
daemon: at its return), so none of the program's calls may land under the
runtime's cgroup, and a process moved mid-run has its calls before the move
under the old cgroup and after under the new one, exactly. The cgroups are
made under a slice of the cgroup v2 mount (unit_slice); systemd is not PID
1 everywhere, so its starts are done as it does them, with cgroup.procs.
"""
import os
import subprocess

import pytest

from conftest import (ROOM, SCPROF, counts, unit_slice, wait_attached,
                      workload)
from test_daemon import Daemon, parse, quiesce, value

# Names of this run's own: another test suite running beside this one (as
# CI-like loaded runs do) makes units and containers with the same names
# in its own slice, and -a sees them too.
ID64 = f"{os.getpid():016x}" * 4
CONTAINER = f"docker-{ID64}.scope"
A_SERVICE = f"a-{os.getpid()}.service"
B_SERVICE = f"b-{os.getpid()}.service"
UNITS = (A_SERVICE, B_SERVICE, CONTAINER, "target.scope",
         "target.scope/x.scope", "target.scope/y.scope", "outside.scope",
         "threaded", "threaded/t1", "threaded/t2")


@pytest.fixture
def slice_():
    yield from unit_slice("scprof-moves", UNITS)


def move(pid, cgroup, threads=False):
    """Write pid to cgroup's cgroup.procs (its whole process), or with
    threads a tid to cgroup.threads."""
    name = "cgroup.threads" if threads else "cgroup.procs"
    with open(os.path.join(cgroup, name), "w") as f:
        f.write(str(pid))


def start_like_runc(cgroup, argv):
    """Fork; the child says it runs, then waits on a pipe while the parent
    moves it into cgroup (as runc's init and runc do, over their sync
    pipe); then it execs argv. Returns its pid."""
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.close(ready_r)
            os.write(ready_w, b"r")
            os.read(r, 1)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(r)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"r"
    os.close(ready_r)
    move(pid, cgroup)
    os.write(w, b"x")
    os.close(w)
    return pid


def run_like_runc(cgroup, argv):
    pid = start_like_runc(cgroup, argv)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def getppid(group):
    return counts(group["syscalls"]).get("getppid", (0, 0))[0]


def by_cgroup(rep, slice_, pid=None):
    """{cgroup path under the slice: getppid calls} of the report's
    groups (those of pid only, when given)."""
    base = "/" + os.path.basename(slice_)
    got = {}
    for g in rep["groups"]:
        if pid is not None and g["pid"] != pid:
            continue
        path = g["by"]["cgroup"]
        key = path[len(base) + 1:] if path.startswith(base + "/") else path
        got[key] = got.get(key, 0) + getppid(g)
    return {k: v for k, v in got.items() if v}


# ---- a start like runc's --------------------------------------------------

def test_start_like_runc(slice_, background):
    """Every call of the program is the container's: by cgroup, unit and
    container, and by pid and cgroup."""
    wl = workload("trigger")
    s = background(["-a", *ROOM, "--by", "cgroup,unit,container"])
    run_like_runc(os.path.join(slice_, CONTAINER), [wl, "-", "0", "6000"])
    rc, err, rep = s.stop()
    assert rc == 0, err
    mine = [g for g in rep["groups"] if g["by"]["container"] == ID64]
    assert [g["by"]["unit"] for g in mine] == [CONTAINER]
    assert getppid(mine[0]) == 6000
    assert mine[0]["members"] == 1


def test_start_like_runc_by_pid(slice_, background):
    wl = workload("trigger")
    s = background(["-a", *ROOM, "--by", "pid,cgroup"])
    pid = start_like_runc(os.path.join(slice_, CONTAINER),
                          [wl, "-", "0", "6000"])
    os.waitpid(pid, 0)
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert by_cgroup(rep, slice_, pid) == {CONTAINER: 6000}
    # the child's calls before the move (under the test's own cgroup, its
    # name still the test's) and after are two rows of one process
    rows = {g["by"]["cgroup"]: g for g in rep["groups"]
            if g["by"]["pid"] == str(pid)}
    assert len(rows) == 2, rows
    mine = rows.pop("/" + os.path.basename(slice_) + "/" + CONTAINER)
    assert mine["comm"] == "trigger"
    [before] = rows.values()
    assert before["comm"] != "trigger" and getppid(before) == 0


def test_start_like_runc_count_only(slice_, background):
    wl = workload("trigger")
    s = background(["-a", *ROOM, "-C", "--by", "container"],
                   need={"sys_exit", "sched_process_exit"})
    run_like_runc(os.path.join(slice_, CONTAINER), [wl, "-", "0", "6000"])
    rc, err, rep = s.stop()
    assert rc == 0, err
    got = {g["by"]["container"]: getppid(g) for g in rep["groups"]}
    assert got[ID64] == 6000


def test_born_in_the_cgroup_clone_into_cgroup(slice_, background):
    """clone3's CLONE_INTO_CGROUP: no move is traced for the child, born
    in the container's cgroup, which its first call finds."""
    s = background(["-a", *ROOM, "--by", "pid,cgroup"])
    out = subprocess.run([workload("cgclone"),
                          os.path.join(slice_, CONTAINER),
                          workload("trigger"), "-", "0", "6000"],
                         stdout=subprocess.PIPE, check=True, timeout=60)
    pid = int(out.stdout)
    rc, err, rep = s.stop()
    assert rc == 0, err
    rows = [g for g in rep["groups"] if g["pid"] == pid]
    assert [g["by"]["cgroup"] for g in rows] == [
        "/" + os.path.basename(slice_) + "/" + CONTAINER]
    assert getppid(rows[0]) == 6000


def test_daemon_labels_start_like_runc(slice_):
    d = Daemon(["-a", *ROOM, "--labels", "unit,container,comm",
                "--fold-interval", "0.2", "--max-series", "1000"])
    try:
        run_like_runc(os.path.join(slice_, CONTAINER),
                      [workload("trigger"), "-", "0", "6000"])
        key = dict(unit=CONTAINER, container=ID64, comm="trigger")

        def folded(samples):
            v = value(samples, "scprof_group_syscalls_total", **key)
            return v is not None and v >= 6000

        samples = quiesce(d, folded, "the container's calls")
    finally:
        d.kill()
    # its getppid, and its exec, the loader's calls, exit_group
    v = value(samples, "scprof_group_syscalls_total", **key)
    assert 6000 <= v < 6000 + 300, v


# ---- a move mid-run -------------------------------------------------------

@pytest.mark.parametrize("by", ["pid,unit", "tid,unit"])
@pytest.mark.parametrize("args", [[], ["-C"]], ids=["full", "count-only"])
def test_move_mid_run_exact_on_each_side(slice_, background, trigger, args,
                                         by):
    """1000 calls where it started, 4000 in a.service, 7000 in b.service
    (per process, or per thread: its one thread)."""
    t = trigger(calls=1000)
    need = {"sys_exit", "sched_process_exit"} if args else None
    kw = {"need": need} if need else {}
    s = background(["-a", *ROOM, "--by", by] + args, **kw)
    t.calls_and_ack()
    move(t.pid, os.path.join(slice_, A_SERVICE))
    for _ in range(4):
        t.calls_and_ack()
    move(t.pid, os.path.join(slice_, B_SERVICE))
    for _ in range(6):
        t.calls_and_ack()
    t.calls_and_exit()  # 1000 more in b.service
    rc, err, rep = s.stop()
    assert rc == 0, err
    got = {g["by"]["unit"]: getppid(g) for g in rep["groups"]
           if g["pid"] == t.pid and getppid(g)}
    start = {u: n for u, n in got.items()
             if u not in (A_SERVICE, B_SERVICE)}
    assert got[A_SERVICE] == 4000 and got[B_SERVICE] == 7000, got
    assert list(start.values()) == [1000], got


def test_moved_back_is_one_row(slice_, background, trigger):
    """Moved away and back: its calls in a.service are one row, one
    member."""
    t = trigger(calls=1000)
    move(t.pid, os.path.join(slice_, A_SERVICE))
    s = background(["-a", *ROOM, "--by", "unit"])
    t.calls_and_ack()
    move(t.pid, os.path.join(slice_, B_SERVICE))
    t.calls_and_ack()
    move(t.pid, os.path.join(slice_, A_SERVICE))
    t.calls_and_ack()
    rc, err, rep = s.stop()
    assert rc == 0, err
    got = {g["by"]["unit"]: g for g in rep["groups"]}
    assert getppid(got[A_SERVICE]) == 2000
    assert getppid(got[B_SERVICE]) == 1000
    assert got[A_SERVICE]["members"] == 1


# ---- top -g ----------------------------------------------------------------

def top_frames(p):
    """Frames of a top --batch (a Popen), as they come: {unit: calls/s}."""
    frame = None
    for line in p.stdout:
        if line.startswith("scprof top - "):
            frame = {}
        elif line.strip() and frame is not None and \
                not line.startswith(("UNIT ", " ")) and \
                "processes active" not in line:
            unit, rate = line.split()[:2]
            frame[unit] = float(rate)
        elif not line.strip() and frame is not None:
            yield frame
            frame = None
    if frame is not None:
        yield frame


def test_top_per_unit_follows_a_move(slice_, trigger):
    """top -g unit: the calls before the move in a.service's row, those
    after in b.service's. The calls take milliseconds, a frame 0.5 s: the
    calls made before a frame is read are in it or the next one."""
    t = trigger(calls=20000)
    move(t.pid, os.path.join(slice_, A_SERVICE))
    p = subprocess.Popen([SCPROF, "top", "--batch", "-n", "6", "-i", "0.5",
                          "-g", "unit", "--cgroup", slice_],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        wait_attached(p)
        frames = top_frames(p)
        t.calls_and_ack()
        before = [next(frames), next(frames)]
        move(t.pid, os.path.join(slice_, B_SERVICE))
        t.calls_and_ack()
        after = list(frames)
        assert p.wait(timeout=60) == 0, p.stderr.read()
    finally:
        p.kill()
        p.wait()

    def rate(frames, unit):  # calls/s, summed over frames
        return sum(f.get(unit, 0) for f in frames)

    # 20000 calls in one or two frames of 0.5 s (longer on a busy machine)
    assert rate(before, A_SERVICE) > 10000, before
    assert not rate(before, B_SERVICE), before
    assert rate(after, B_SERVICE) > 10000, after
    # in a.service after the move: at most the read it was blocked in
    assert rate(after, A_SERVICE) < rate(after, B_SERVICE) / 1000, after


# ---- threads in a threaded cgroup -----------------------------------------

def start_threaded(slice_, n):
    """threads N wait, in the slice's threaded domain with its children
    t1, t2 threaded: (Popen, {k: tid}, domain path)."""
    dom = os.path.join(slice_, "threaded")
    for t in ("t1", "t2"):
        with open(os.path.join(dom, t, "cgroup.type"), "w") as f:
            f.write("threaded")
    p = subprocess.Popen([workload("threads"), str(n), "wait"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    tids = {}
    for _ in range(n):
        k, tid = p.stdout.readline().split()
        tids[int(k)] = int(tid)
    move(p.pid, dom)
    return p, tids, dom


@pytest.mark.parametrize("by", ["pid,cgroup", "tid,cgroup"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_threads_in_threaded_cgroups(slice_, background, when, by):
    """worker-1 in t1, worker-2 in t2 (cgroup.threads), worker-3 and the
    main thread left in the domain: each thread's calls under its own
    cgroup, moved before scprof started or while it runs, per process or
    per thread."""
    p, tids, dom = start_threaded(slice_, 3)
    try:
        def split():
            move(tids[1], os.path.join(dom, "t1"), threads=True)
            move(tids[2], os.path.join(dom, "t2"), threads=True)
        if when == "before":
            split()
        s = background(["-a", *ROOM, "--by", by])
        if when == "after":
            split()
        p.stdin.write(b"go\n")
        p.stdin.flush()
        assert p.wait(timeout=60) == 0
        rc, err, rep = s.stop()
    finally:
        p.kill()
        p.wait()
    assert rc == 0, err
    assert by_cgroup(rep, slice_, p.pid) == {
        "threaded/t1": 100, "threaded/t2": 200, "threaded": 300 + 7}


# ---- the daemon over a service restarted into its unit ----------------------

def test_daemon_service_restarted_into_its_unit(slice_):
    """A service started, stopped and started again into a.service (as
    systemd does: fork, move, exec) while the daemon runs: its label
    set has both runs' calls."""
    d = Daemon(["-a", *ROOM, "--labels", "unit,comm", "--fold-interval", "0.2",
                "--max-series", "1000"])
    unit = os.path.join(slice_, A_SERVICE)
    wl = workload("trigger")
    try:
        run_like_runc(unit, [wl, "-", "0", "3000"])
        run_like_runc(unit, [wl, "-", "0", "5000"])
        key = dict(unit=A_SERVICE, comm="trigger")

        def both(samples):
            v = value(samples, "scprof_group_syscalls_total", **key)
            return v is not None and v >= 8000

        samples = quiesce(d, both, "both runs of the service")
    finally:
        d.kill()
    v = value(samples, "scprof_group_syscalls_total", **key)
    assert 8000 <= v < 8000 + 2 * 300, v


# ---- --cgroup with processes moved in and out ------------------------------

@pytest.mark.parametrize("args", [[], ["-C"]], ids=["full", "count-only"])
def test_cgroup_target_moves_in_and_out(slice_, background, trigger, args):
    """--cgroup target.scope: A, moved in after scprof started, is
    profiled from the move on; B, moved out, no longer; C, moved between
    two cgroups under the target, is filed under each."""
    target = os.path.join(slice_, "target.scope")
    a, b, c = (trigger(calls=1000) for _ in range(3))
    move(b.pid, target)
    move(c.pid, os.path.join(target, "x.scope"))
    need = {"sys_exit", "sched_process_exit"} if args else None
    kw = {"need": need} if need else {}
    s = background(["--cgroup", target, "--by", "pid,cgroup"] + args, **kw)
    a.calls_and_ack()  # outside: not profiled
    move(a.pid, target)
    for _ in range(2):
        a.calls_and_ack()
    for _ in range(3):
        b.calls_and_ack()
    move(b.pid, os.path.join(slice_, "outside.scope"))
    for _ in range(4):
        b.calls_and_ack()  # not profiled
    for _ in range(2):
        c.calls_and_ack()
    move(c.pid, os.path.join(target, "y.scope"))
    for _ in range(5):
        c.calls_and_ack()
    rc, err, rep = s.stop()
    assert rc == 0, err
    assert by_cgroup(rep, slice_, a.pid) == {"target.scope": 2000}
    assert by_cgroup(rep, slice_, b.pid) == {"target.scope": 3000}
    assert by_cgroup(rep, slice_, c.pid) == {"target.scope/x.scope": 2000,
                                            "target.scope/y.scope": 5000}
    # nothing of theirs outside the target, in any call
    base = "/" + os.path.basename(slice_) + "/target.scope"
    for g in rep["groups"]:
        assert g["by"]["cgroup"].startswith(base), g["by"]


def test_cgroup_target_without_cgroup_keys(slice_, background, trigger):
    """The filter alone (no cgroup read): the same A and B, per pid."""
    target = os.path.join(slice_, "target.scope")
    a, b = trigger(calls=1000), trigger(calls=1000)
    move(b.pid, target)
    s = background(["--cgroup", target, "--by", "pid"])
    a.calls_and_ack()
    move(a.pid, target)
    a.calls_and_ack()
    b.calls_and_ack()
    move(b.pid, os.path.join(slice_, "outside.scope"))
    b.calls_and_ack()
    rc, err, rep = s.stop()
    assert rc == 0, err
    got = {int(g["by"]["pid"]): getppid(g) for g in rep["groups"]}
    assert got == {a.pid: 1000, b.pid: 1000}, got

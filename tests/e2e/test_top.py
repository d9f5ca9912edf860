# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof top (issue 4): frames checked against pacers of known rates, in
--batch mode and through a real terminal (tmux: keys, Ctrl-C, resize);
hostile names escaped; bad input."""
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from conftest import CLEAN_ENV, SCPROF, TIMEOUT, cgroup2_mount, run, workload

ROW = re.compile(r"\s*(\d+) (.{16,}?) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) "
                 r"+([\d.]+) +([\d.]+|-) +([\d.]+|-)  (.*)")
HEADER = ["PID", "COMM", "CALLS/s", "ERRORS/s", "ERR%", "P99-us", "IN-SYS%",
          "WAIT%", "BLK%", "TOP", "SYSCALLS", "(calls/s)"]
TITLE = re.compile(r"scprof top - \d\d:\d\d:\d\d, every ([\d.]+) s, by (\S+)")


def pacer(tmp_path, name, *args):
    """A pacer running under the comm name (bytes, <= 15)."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    path = os.path.join(os.fsencode(str(d)), name)
    if not os.path.exists(path):
        os.symlink(workload("pacer"), path)
    return subprocess.Popen([path] + [str(a) for a in args], env=CLEAN_ENV)


@pytest.fixture
def pacers(tmp_path):
    made = []

    def make(name, *args):
        p = pacer(tmp_path, name, *args)
        made.append(p)
        return p
    yield make
    for p in made:
        if p.poll() is None:
            p.kill()
        p.wait()


def pct(field):
    return None if field == "-" else float(field)


def frames(text, timed=None, by="PID"):
    """[(title match, [row dicts])] of batch output; timed: the share of
    time calls are timed in (--latency-duty), None: every call; by: the
    first column's title (PID, TID)."""
    out = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        t = TITLE.match(lines[0])
        assert t, f"bad title {lines[0]!r}"
        m = re.match(r"\d+ processes active, [\d.]+ calls/s, [\d.]+ "
                     r"errors/s, \d+ calls dropped, \d+ threads in a "
                     r"syscall now(?:; P99, IN-SYS%, WAIT% and BLK% from "
                     r"the ([\d.]+)% of the time timed)?$", lines[1])
        assert m, lines[1]
        if timed is None:
            assert m.group(1) is None, lines[1]
        else:
            assert abs(float(m.group(1)) - 100 * timed) < 10, lines[1]
        assert lines[2].split() == [by] + HEADER[1:], lines[2]
        rows = []
        for line in lines[3:]:
            m = ROW.fullmatch(line)
            assert m, f"bad row {line!r}"
            rows.append({"pid": int(m.group(1)), "comm": m.group(2).rstrip(),
                         "calls": float(m.group(3)),
                         "errors": float(m.group(4)),
                         "err_pct": float(m.group(5)),
                         "p99": float(m.group(6)),
                         "in_sys": float(m.group(7)),
                         "wait": pct(m.group(8)), "blk": pct(m.group(9)),
                         "top": m.group(10)})
        out.append((t, rows))
    return out


def test_batch_frames_against_known_rates(pacers):
    # busy: 100 getppid every 10 ms; calm: 16 getppid and 4 failing openat
    # every 20 ms (one clock_nanosleep per tick each): 5x fewer calls.
    busy = pacers(b"topbusy", 100, 0, 10, 0)
    calm = pacers(b"topcalm", 16, 4, 20, 0)
    p = run([SCPROF, "top", "--batch", "-n", "3", "-i", "0.5", "-p",
             f"{busy.pid},{calm.pid}"])
    assert p.returncode == 0, p.stderr
    fs = frames(p.stdout.decode())
    assert len(fs) == 3
    for title, rows in fs:
        assert title.group(2) == "calls/s"
        assert [r["comm"] for r in rows] == ["topbusy", "topcalm"]
        b, c = rows
        assert b["pid"] == busy.pid and c["pid"] == calm.pid
        ratio = b["calls"] / c["calls"]
        assert 101 / 10 / (21 / 20) * 0.7 < ratio < 101 / 10 / (21 / 20) * 1.3, ratio
        assert b["errors"] == 0 and b["err_pct"] == 0
        assert 4 / 21 * 100 - 1.5 < c["err_pct"] < 4 / 21 * 100 + 1.5
        assert b["top"].startswith("getppid ")
        assert "openat" in c["top"]
        assert b["p99"] > 0
    # sorted by errors: calm first
    p = run([SCPROF, "top", "--batch", "-n", "1", "-i", "0.3", "-s", "errors",
             "-p", f"{busy.pid},{calm.pid}"])
    (title, rows), = frames(p.stdout.decode())
    assert title.group(2) == "errors/s"
    assert [r["comm"] for r in rows] == ["topcalm", "topbusy"]


def test_batch_stops_when_the_targets_exit(pacers):
    """The pacer is killed once top has shown a frame of it (not after a
    fixed time, which a loaded machine's slow start could use up): the
    next frame says the targets have exited, and top stops there."""
    pa = pacers(b"shortlived", 10, 0, 10, 0)
    top = subprocess.Popen([SCPROF, "top", "--batch", "-i", "0.2", "-p",
                            str(pa.pid)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=CLEAN_ENV)
    try:
        first = b""
        while b"shortlived" not in first:
            line = top.stdout.readline()
            assert line, top.stderr.read()
            first += line
        pa.kill()
        # (through the buffered pipes: communicate() reads the descriptors,
        # past what readline had already buffered)
        watchdog = threading.Timer(TIMEOUT, top.kill)
        watchdog.start()
        rest, err = top.stdout.read(), top.stderr.read()
        top.wait()
        watchdog.cancel()
    finally:
        if top.poll() is None:
            top.kill()
            top.wait()
    assert top.returncode == 0, err
    text = (first + rest).decode()
    assert "the targets have exited" in text.strip().split("\n\n")[-1]
    assert len(frames(text)) >= 2


def test_hostile_names_are_escaped(pacers):
    pa = pacers(b"\x1b[31mred\x07\n\xff", 10, 0, 10, 0)
    p = run([SCPROF, "top", "--batch", "-n", "1", "-i", "0.3", "-p",
             str(pa.pid)])
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert b"\x1b" not in out and b"\x07" not in out and b"\xff" not in out
    assert b"\\x1b[31mred\\x07\\x0a\\xff" in out
    (_, rows), = frames(out.decode())
    assert len(rows) == 1


# ---- a real terminal ----------------------------------------------------------

class Tmux:
    """A terminal: a tmux server of its own (-L: its own socket), so that
    no other session's server, exiting as its last session goes, is the
    one a new session asks ("server exited unexpectedly", seen in a full
    suite)."""

    def __init__(self, tmp_path, cmd, width=150, height=30):
        assert shutil.which("tmux"), "tmux is not installed"
        self.name = f"scprof-top-{os.getpid()}-{time.monotonic_ns()}"
        self.status = tmp_path / "status"
        shell = f"{cmd}; echo $? > {self.status}; sleep 60"
        subprocess.run(self.tmux("new-session", "-d", "-s", self.name, "-x",
                                 str(width), "-y", str(height), shell),
                       check=True,
                       env={**CLEAN_ENV, "TERM": "xterm-256color"})

    def tmux(self, *args):
        return ["tmux", "-L", self.name] + list(args)

    def screen(self):
        return subprocess.run(self.tmux("capture-pane", "-p", "-t",
                                        self.name),
                              capture_output=True, text=True).stdout

    def wait_screen(self, pred, what):
        deadline = time.monotonic() + TIMEOUT
        while True:
            s = self.screen()
            if pred(s):
                return s
            assert time.monotonic() < deadline, f"never saw {what}:\n{s}"
            time.sleep(0.1)

    def keys(self, *k):
        subprocess.run(self.tmux("send-keys", "-t", self.name, *k),
                       check=True)

    def exit_status(self):
        deadline = time.monotonic() + TIMEOUT
        while not self.status.exists() or not self.status.read_text():
            assert time.monotonic() < deadline, "top did not exit"
            time.sleep(0.05)
        return int(self.status.read_text())

    def kill(self):
        subprocess.run(self.tmux("kill-server"), capture_output=True)


@pytest.fixture
def tmux(tmp_path):
    made = []

    def make(cmd, **kw):
        t = Tmux(tmp_path, cmd, **kw)
        made.append(t)
        return t
    yield make
    for t in made:
        t.kill()


def order(screen, names):
    """Names in the order they appear on screen."""
    pos = {n: screen.find(n) for n in names}
    assert all(p >= 0 for p in pos.values()), screen
    return sorted(names, key=pos.get)


def test_live_view_in_a_terminal(tmux, pacers):
    busy = pacers(b"topbusy", 100, 0, 10, 0)
    calm = pacers(b"topcalm", 16, 4, 20, 0)
    t = tmux(f"{SCPROF} top -i 0.5 -p {busy.pid},{calm.pid}")
    s = t.wait_screen(lambda s: "topcalm" in s and "topbusy" in s,
                      "both pacers on screen")
    assert "keys: c e p t sort, g group, q quit" in s
    assert re.search(r"by calls/s", s)
    assert order(s, ["topbusy", "topcalm"]) == ["topbusy", "topcalm"]
    # full screen: the header is on the first line
    assert s.splitlines()[0].startswith("scprof top - ")
    t.keys("e")
    s = t.wait_screen(lambda s: "by errors/s" in s, "the errors sort")
    assert order(s, ["topbusy", "topcalm"]) == ["topcalm", "topbusy"]
    t.keys("c")
    t.wait_screen(lambda s: "by calls/s" in s, "the calls sort again")
    t.keys("q")
    assert t.exit_status() == 0


def test_live_view_ctrl_c_and_resize(tmux, pacers):
    busy = pacers(b"topbusy", 100, 0, 10, 0)
    t = tmux(f"{SCPROF} top -i 0.3 -p {busy.pid}", width=150, height=30)
    t.wait_screen(lambda s: "topbusy" in s, "the pacer on screen")
    subprocess.run(t.tmux("resize-window", "-t", t.name, "-x", "60", "-y",
                          "10"), check=True)
    s = t.wait_screen(lambda s: "topbusy" in s and
                      max(len(line) for line in s.splitlines()) <= 60,
                      "a redraw in 60 columns")
    t.keys("C-c")
    assert t.exit_status() == 0


def test_unknown_terminal_is_one_clear_line(tmux, tmp_path):
    # A terminal, but a TERM that terminfo does not know: scprof's own
    # one-line error and exit 1 (curses' initscr would print its own
    # message and exit by itself).
    err = tmp_path / "stderr"
    t = tmux(f"TERM=bogusterm {SCPROF} top -i 0.3 -p {os.getpid()} 2>{err}")
    assert t.exit_status() == 1
    lines = err.read_text().strip().splitlines()
    assert lines == ["scprof top: cannot use the terminal: is TERM right? "
                     "(--batch needs none)"], lines


def test_latency_duty_keeps_rates_exact_and_times_a_share(pacers):
    # 100 getppid every 10 ms: calls/s is exact whatever the duty; with a
    # duty of 0 nothing is timed (P99 and IN-SYS% 0); with 0.5 about half
    # of each interval is, and P99 is there.
    busy = pacers(b"topduty", 100, 0, 10, 0)
    for duty in ("0", "0.5"):
        p = run([SCPROF, "top", "--batch", "-n", "3", "-i", "0.5",
                 "--latency-duty", duty, "-p", str(busy.pid)])
        assert p.returncode == 0, p.stderr
        fs = frames(p.stdout.decode(), timed=float(duty))
        assert len(fs) == 3
        for _, (row,) in fs[1:]:
            assert 101 * 100 * 0.7 < row["calls"] < 101 * 100 * 1.3, row
            if duty == "0":
                assert row["p99"] == 0 and row["in_sys"] == 0, row
                # no call timed: nothing to split
                assert row["wait"] is None and row["blk"] is None, row
            else:
                assert row["p99"] > 0 and row["in_sys"] > 0, row
                # the timed calls' split: their sleeps (what is left of
                # 10 ms a tick), asleep and then waiting for a CPU on a
                # busy machine, dwarf the getppid calls
                assert row["blk"] > 0 and row["wait"] + row["blk"] > 30, row


# ---- the split: WAIT% and BLK% ------------------------------------------------

def split_workload(mode, *args):
    """split MODE ARGS, running until killed: (process, pid, worker tid)."""
    p = subprocess.Popen([workload("split"), mode] + [str(a) for a in args],
                         stdout=subprocess.PIPE, bufsize=0, env=CLEAN_ENV)
    pid = tid = None
    while tid is None:
        line = p.stdout.readline().split()
        assert line, f"split {mode} ended"
        if line[0] == b"pid":
            pid = int(line[1])
        elif line[:2] == [b"thread", b"work"]:
            tid = int(line[2])
    return p, pid, tid


def schedstat(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        cpu, runq, _ = (int(x) for x in f.read().split())
    return cpu, runq, time.monotonic_ns()


def one_shot_split(report, tid):
    """(WAIT%, BLK%) of a thread's calls in a --by tid JSON report."""
    g, = [g for g in report["groups"] if g["tid"] == tid]
    rows = g["syscalls"]
    parts = [sum(r[k] for r in rows)
             for k in ("on_cpu_ns", "cpu_wait_ns", "blocked_ns")]
    return 100 * parts[1] / sum(parts), 100 * parts[2] / sum(parts)


def test_split_columns(tmp_path):
    """WAIT% and BLK% of two worker threads (top -g tid): one blocked in
    pipe reads fed every 10 ms (split pipe), one reading /dev/zero on a
    CPU a spinner shares (split shared). Each within 15 points of what a
    one-shot profile of the same threads over the same seconds says
    (--by tid, JSON: cpu_wait_ns and blocked_ns of the calls' time), and
    within the thread's own books (schedstat over the run): the pipe
    reader asleep 85% or more of its time and BLK% so, the spinner's
    neighbour waiting no more than schedstat's run-queue wait and hardly
    asleep. Before the split, top had no such columns."""
    blocks, pb, tb = split_workload("pipe", 10 ** 9, 10)
    waits, pw, tw = split_workload("shared", 10 ** 9)
    try:
        s0 = {t: schedstat(p, t) for p, t in ((pb, tb), (pw, tw))}
        out = str(tmp_path / "one.json")
        one = subprocess.Popen([SCPROF, "--by", "tid", "-d", "4", "-p",
                                f"{pb},{pw}", "--format", "json", "-o",
                                out], env=CLEAN_ENV, stderr=subprocess.PIPE)
        p = run([SCPROF, "top", "--batch", "-g", "tid", "-n", "4", "-i", "1",
                 "--rows", "0", "-p", f"{pb},{pw}"])
        _, err = one.communicate(timeout=TIMEOUT)
        s1 = {t: schedstat(p_, t) for p_, t in ((pb, tb), (pw, tw))}
    finally:
        for w in (blocks, waits):
            w.kill()
            w.wait()
            w.stdout.close()
    assert p.returncode == 0, p.stderr
    assert one.returncode == 0, err
    with open(out) as f:
        report = json.load(f)
    fs = frames(p.stdout.decode(), by="TID")
    assert len(fs) == 4
    truth = {}
    for t in (tb, tw):
        cpu, runq, wall = (b - a for a, b in zip(s0[t], s1[t]))
        truth[t] = {"runq": 100 * runq / wall,
                    "asleep": 100 * (1 - (cpu + runq) / wall)}
    for tid in (tb, tw):
        rows = [r for _, rs in fs[1:] for r in rs if r["pid"] == tid]
        assert len(rows) == 3, fs
        assert all(r["wait"] is not None for r in rows), rows
        top = (sum(r["wait"] for r in rows) / 3,
               sum(r["blk"] for r in rows) / 3)
        want = one_shot_split(report, tid)
        assert abs(top[0] - want[0]) <= 15 and abs(top[1] - want[1]) <= 15, \
            (tid, top, want, rows)
    blk_reader = [r for _, rs in fs[1:] for r in rs if r["pid"] == tb]
    assert truth[tb]["asleep"] >= 85, truth
    assert all(r["blk"] >= 80 for r in blk_reader), blk_reader
    waiting = [r for _, rs in fs[1:] for r in rs if r["pid"] == tw]
    for r in waiting:
        assert r["blk"] <= 5, waiting
        assert r["wait"] <= truth[tw]["runq"] + 15, (waiting, truth)
    assert sum(r["wait"] for r in waiting) / 3 >= 15, (waiting, truth)


# ---- bad input -----------------------------------------------------------------

@pytest.mark.parametrize("args,code,msg", [
    (["-s", "bogus"], 2, "invalid sort key"),
    (["-i", "0"], 2, "invalid interval"),
    (["-i", "0.01"], 2, "invalid interval"),
    (["-n", "0"], 2, "invalid frame count"),
    (["-n", "2x"], 2, "invalid frame count"),
    (["--rows", "-1"], 2, "invalid --rows"),
    (["--latency-duty", "2"], 2, "invalid --latency-duty"),
    (["--latency-duty", "half"], 2, "invalid --latency-duty"),
    (["-p", "999999999"], 2, "invalid PID"),
    (["-p", "4194303"], 1, "no such process"),
    (["-f"], 2, "-f applies"),
    (["ls"], 2, "unexpected argument"),
    (["--cgroup", "/nonexistent"], 1, "cgroup"),
    (["-g", "bogus"], 2, "invalid group 'bogus'"),
])
def test_bad_input(args, code, msg):
    p = run([SCPROF, "top", "--batch", "-n", "1"] + args)
    assert p.returncode == code, p.stderr
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], lines
    assert p.stdout == b""


def test_no_terminal_without_batch():
    p = run([SCPROF, "top", "-n", "1"], stdin=subprocess.DEVNULL)
    assert p.returncode == 2
    assert "needs a terminal; use --batch" in p.stderr.decode()


def test_live_view_group_key(tmux, pacers):
    """g: pids, tids, comms, cgroups, units, containers, pods, QoS
    classes, and pids again (the --by keys, in their order)."""
    busy = pacers(b"topbusy", 100, 0, 10, 0)
    t = tmux(f"{SCPROF} top -i 0.3 -p {busy.pid}")
    s = t.wait_screen(lambda s: "topbusy" in s, "the pacer on screen")
    assert re.search(r"^\s+PID COMM", s, re.M)
    t.keys("g")
    s = t.wait_screen(lambda s: "per tid" in s and "topbusy" in s,
                      "the thread view")
    assert re.search(rf"^\s+TID COMM.*\n\s+{busy.pid} topbusy", s, re.M)
    for key, row in (("comm", r"^COMM\s+CALLS/s.*\n(.*\n)?topbusy\s"),
                     ("cgroup", r"^CGROUP\s+CALLS/s.*\n/"),
                     ("unit", r"^UNIT\s+CALLS/s"),
                     ("container", r"^CONTAINER\s+CALLS/s"),
                     ("pod", r"^POD\s+CALLS/s"),
                     ("qos", r"^QOS\s+CALLS/s")):
        t.keys("g")
        s = t.wait_screen(lambda s, k=key: f"per {k}" in s and
                          "getppid" in s, f"the {key} view")
        assert re.search(row, s, re.M), s
    t.keys("g")
    s = t.wait_screen(lambda s: "per " not in s.splitlines()[0] and
                      "topbusy" in s, "the process view again")
    t.keys("q")
    assert t.exit_status() == 0


def batch_rows(args):
    p = run([SCPROF, "top", "--batch", "-n", "1", "-i", "0.5"] + args)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.decode().strip("\n").split("\n")
    return lines[0], lines[2].split()[0], [ln.split() for ln in lines[3:]]


def test_group_names_are_the_by_keys(pacers):
    """-g takes --by's keys; process and thread stay as their aliases."""
    a = pacers(b"topsame", 50, 0, 10, 0)
    b = pacers(b"topsame", 50, 0, 10, 0)
    pids = f"{a.pid},{b.pid}"
    for key, alias, title in (("pid", "process", "PID"),
                              ("tid", "thread", "TID")):
        for name in (key, alias):
            head, col, rows = batch_rows(["-g", name, "-p", pids])
            assert col == title, (name, head)
            assert sorted(int(r[0]) for r in rows) == sorted(
                [a.pid, b.pid]), rows
    # comm: both pacers in one row, at twice one pacer's rate
    head, col, rows = batch_rows(["-g", "comm", "-p", pids])
    assert "per comm" in head and col == "COMM", head
    assert [r[0] for r in rows] == ["topsame"], rows
    assert 2 * 51 / 0.01 * 0.6 < float(rows[0][1]), rows


@pytest.fixture
def units():
    mnt = cgroup2_mount()
    assert mnt, "no cgroup2 mount"
    top = os.path.join(mnt, f"scprof-top-{os.getpid()}.slice")
    made = [top, os.path.join(top, "busy.service"),
            os.path.join(top, "calm.scope")]
    for d in made:
        os.mkdir(d)
    yield made
    for d in reversed(made):
        for _ in range(500):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.01)


def test_batch_per_unit_against_known_rates(pacers, units):
    top, busy_unit, calm_unit = units
    busy = pacers(b"topbusy", 100, 0, 10, 0)
    calm = pacers(b"topcalm", 16, 4, 20, 0)
    for unit, p in ((busy_unit, busy), (calm_unit, calm)):
        with open(os.path.join(unit, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))
    p = run([SCPROF, "top", "--batch", "-n", "2", "-i", "0.5", "-g", "unit",
             "--cgroup", top])
    assert p.returncode == 0, p.stderr
    for block in p.stdout.decode().strip("\n").split("\n\n"):
        lines = block.split("\n")
        assert "per unit" in lines[0]
        assert lines[2].split()[:2] == ["UNIT", "CALLS/s"]
        rows = [l.split() for l in lines[3:]]
        assert [r[0] for r in rows] == ["busy.service", "calm.scope"], rows
        ratio = float(rows[0][1]) / float(rows[1][1])
        assert 101 / 10 / (21 / 20) * 0.7 < ratio < \
            101 / 10 / (21 / 20) * 1.3, ratio
    # the same processes per cgroup: the units' paths
    head, col, rows = batch_rows(["-g", "cgroup", "--cgroup", top])
    assert col == "CGROUP", head
    assert sorted(r[0] for r in rows) == sorted(
        u[len(cgroup2_mount()):] for u in (busy_unit, calm_unit)), rows
    # killed pacers leave their cgroups empty for the fixture
    busy.kill()
    calm.kill()
    busy.wait()
    calm.wait()


def test_lost_records_are_said_with_their_cause(pacers):
    """A frame whose interval lost something says what and why (issue #19):
    here every update of the process map fails with EBUSY (injected), so
    the processes have no name, which the status line says, not "process
    map full". (Their cells can fill the stats map on a host with process
    churn meanwhile: those processes' exits are never seen, which the line
    says too.)"""
    pacers(b"lost-pacer", 20, 0, 10, 0)
    env = dict(CLEAN_ENV, SCPROF_TEST_MAP_FAIL="procs:EBUSY")
    p = run([SCPROF, "top", "--batch", "-i", "0.3", "-n", "3"], env=env)
    assert p.returncode == 0, p.stderr
    status = [ln for ln in p.stdout.decode().splitlines()
              if "processes active" in ln]
    assert status, p.stdout
    said = [ln for ln in status if "; incomplete: " in ln]
    assert said, status
    assert "have no name (adding to the procs map failed: EBUSY x" in said[0]
    assert "process map full" not in said[0]

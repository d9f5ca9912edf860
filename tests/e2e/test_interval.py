# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Interval reports, scprof -i SECS (issue 4): one strace -c table per
interval, each after a timestamp line and with a calls/s column; the
intervals add up to the ground truth of the run."""
import csv
import io
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import (CLEAN_ENV, SCPROF, TIMEOUT, parse_tables, run_scprof,
                      strace_summary, wait_attached, workload)

STAMP = re.compile(r"--- (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}), "
                   r"interval (\d+\.\d{3}) s ---")


def intervals(text):
    """[(timestamp, seconds, tables)] of -i output: every table belongs to
    the timestamp line above it."""
    out = []
    parts = re.split(r"^(--- .* ---)$", text, flags=re.M)
    assert not parts[0].strip(), f"output before the first timestamp: {parts[0]!r}"
    for i in range(1, len(parts), 2):
        m = STAMP.fullmatch(parts[i])
        assert m, f"bad timestamp line {parts[i]!r}"
        if parts[i + 1].strip() == "no calls":
            out.append((m.group(1), float(m.group(2)), []))
            continue
        tables = parse_tables(parts[i + 1])
        assert tables, f"no table under {parts[i]!r}"
        out.append((m.group(1), float(m.group(2)), tables))
    return out


def rows(tables):
    return {r["syscall"]: r for _, _, rs, _ in tables for r in rs}


def test_intervals_add_up_to_ground_truth():
    # 15 ticks of 100 ms: 1000 getppid and 2 failing openat each.
    p = run_scprof(["-i", "0.3", "--", workload("pacer"), "1000", "2", "100",
                    "15"], env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    ivs = intervals(p.stderr.decode())
    assert len(ivs) >= 4, f"{len(ivs)} intervals in a 1.4 s run at -i 0.3"
    getppid = errors = 0
    stamps = []
    for stamp, secs, tables in ivs:
        stamps.append(stamp)
        title, header, rs, total = tables[0]
        assert header == ["% time", "seconds", "usecs/call", "calls",
                          "calls/s", "errors", "syscall"]
        # no bound on the length: a busy machine may wake scprof late
        assert secs > 0, secs
        for r in rs + [total]:
            calls, rate = int(r["calls"]), float(r["calls/s"])
            # calls/s is the interval's calls over its length, which is
            # printed rounded to the millisecond
            assert abs(rate - calls / secs) <= rate * 0.0005 / secs + 0.1, \
                (r, secs)
        by = rows(tables)
        if "getppid" in by:
            getppid += int(by["getppid"]["calls"])
        if "openat" in by and by["openat"]["errors"]:
            errors += int(by["openat"]["errors"])
    assert getppid == 15000
    assert errors == 30
    assert stamps == sorted(stamps)
    # the middle intervals are whole ticks of a steady 10000 getppid/s
    for _, secs, tables in ivs[1:-1]:
        assert int(rows(tables)["getppid"]["calls"]) % 1000 == 0


def test_silent_intervals_say_no_calls():
    """compute 2 makes its start-up calls, then none for 2 s (a loop in
    user space, not a call in flight), then rt_sigreturn and exit_group:
    the intervals in between are a timestamp line and "no calls", and the
    intervals still add up to strace's count of the run."""
    cmd = [workload("compute"), "2"]
    p = run_scprof(["-i", "0.3", "--"] + cmd, env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    text = p.stderr.decode()
    ivs = intervals(text)
    empty = [i for i, (_, _, t) in enumerate(ivs) if not t]
    # 2 s of silence at -i 0.3: at least 4 whole silent intervals, even if
    # a busy machine wakes scprof late now and then
    assert len(empty) >= 4, text
    assert empty[0] > 0 and empty[-1] < len(ivs) - 1, text
    assert empty == list(range(empty[0], empty[-1] + 1)), text
    for block in re.split(r"^--- .* ---$", text, flags=re.M)[1:]:
        if "no calls" in block:
            assert block.strip() == "no calls", block
            assert " total" not in block
    total = sum(int(t[0][3]["calls"]) for _, _, t in ivs if t)
    st = strace_summary(cmd, env=CLEAN_ENV)
    assert total == sum(v[0] for v in st.values()), (total, st)


def test_interval_with_duration_on_a_running_process(tmp_path):
    pacer = subprocess.Popen([workload("pacer"), "100", "0", "10", "0"],
                             env=CLEAN_ENV)
    try:
        out = tmp_path / "report"
        p = run_scprof(["-i", "1", "-d", "2.5", "-p", str(pacer.pid),
                        "-o", str(out)])
        assert p.returncode == 0, p.stderr
        assert pacer.poll() is None  # -d stops scprof, not the target
        ivs = intervals(out.read_text())
    finally:
        pacer.kill()
        pacer.wait()
    # two whole intervals, then the last half one when -d is up
    assert len(ivs) == 3, [(s, secs) for s, secs, _ in ivs]
    assert ivs[2][1] < ivs[0][1]
    for _, secs, tables in ivs:
        rate = float(rows(tables)["getppid"]["calls/s"])
        assert 5000 <= rate <= 15000, rate  # ~10000/s (steady, ratio-free)


def test_interval_per_process_tables():
    # groundtruth forks a child making 50 getppid; the parent makes 3000.
    p = run_scprof(["-i", "0.2", "-f", "-P", "--", workload("groundtruth"),
                    "3000", "0", "0", "3", "50"], env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    ivs = intervals(p.stderr.decode())
    per_proc = {}
    for _, _, tables in ivs:
        for title, _, rs, _ in tables:
            m = re.fullmatch(r"Process (\d+) \((\S+)\)(, exited)?:", title)
            if not m:
                continue
            r = {x["syscall"]: x for x in rs}.get("getppid")
            if r:
                per_proc[m.group(1)] = per_proc.get(m.group(1), 0) + int(r["calls"])
    assert sorted(per_proc.values()) == [50, 3000]


def test_interval_tables_add_up_with_merged_processes():
    # Three pacers of 1.2 s one after the other, -i 2, --max-exited 1;
    # exited processes are folded about every second. The first is kept
    # on its own (folded at ~2 s); the second, still running at the first
    # report (2 s), is merged into the aggregate at ~3 s; the third runs to
    # the end (3.6 s). The last report's aggregate must show what the
    # second did after 2 s, not its whole history again: in every report
    # the per-process tables add up to the total.
    script = "; ".join([f"{workload('pacer')} 100 0 10 120"] * 3)
    p = run_scprof(["-i", "2", "-f", "-P", "--max-exited", "1", "-U",
                    "calls,name", "--", "/bin/sh", "-c", script],
                   env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    merged = getppid = 0
    for _, _, tables in intervals(p.stderr.decode()):
        total = int(rows(tables[:1]).get("getppid", {"calls": 0})["calls"])
        by_proc = 0
        for title, _, rs, _ in tables[1:]:
            m = re.fullmatch(r"(\d+) more exited processes, merged:", title)
            if m:
                merged += int(m.group(1))
            r = {x["syscall"]: x for x in rs}.get("getppid")
            by_proc += int(r["calls"]) if r else 0
        assert by_proc == total, p.stderr.decode()
        getppid += total
    assert merged == 1, p.stderr.decode()
    assert getppid - 3 * 12000 in (0, 1)  # the shell may make one


def test_stop_signal_prints_the_last_interval(tmp_path):
    pacer = subprocess.Popen([workload("pacer"), "100", "0", "10", "0"],
                             env=CLEAN_ENV)
    try:
        s = subprocess.Popen([SCPROF, "-i", "60", "-p", str(pacer.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_attached(s)
        time.sleep(0.5)
        s.send_signal(signal.SIGINT)
        out, err = s.communicate(timeout=TIMEOUT)
    finally:
        pacer.kill()
        pacer.wait()
    assert s.returncode == 0, err
    ivs = intervals(out.decode())
    assert len(ivs) == 1 and ivs[0][1] < 60
    assert int(rows(ivs[0][2])["getppid"]["calls"]) > 0


def test_one_shot_report_is_unchanged():
    p = run_scprof(["--", workload("pacer"), "10", "0", "1", "1"], env=CLEAN_ENV)
    text = p.stderr.decode()
    assert "---" not in text.splitlines()[0]
    (title, header, rs, total), = parse_tables(text)
    assert header == ["% time", "seconds", "usecs/call", "calls", "errors",
                      "syscall"]
    # -U rate works in a one-shot report too
    p = run_scprof(["-U", "calls,rate,name", "--", workload("pacer"), "10",
                    "0", "1", "1"], env=CLEAN_ENV)
    (_, header, rs, total), = parse_tables(p.stderr.decode())
    assert header == ["calls", "calls/s", "syscall"]
    assert float(total["calls/s"]) > 0


@pytest.mark.parametrize("args,msg", [
    (["-i", "0"], "invalid interval"),
    (["-i", "-1"], "invalid interval"),
    (["-i", "abc"], "invalid interval"),
    (["-i", "1s"], "invalid interval"),
    (["-i", "0.001"], "invalid interval"),
    (["-i", "nan"], "invalid interval"),
    (["-i"], "needs a value"),
])
def test_bad_interval_is_a_usage_error(args, msg):
    p = run_scprof(args + (["--", "true"] if len(args) > 1 else []))
    assert p.returncode == 2
    lines = p.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], lines


def test_json_lines_intervals_add_up_to_ground_truth(tmp_path):
    """-i with --format json: one JSON object per line and interval,
    numbered from 1, each with its own end time and length; their calls
    sum to what the workload made."""
    out = tmp_path / "iv.jsonl"
    p = run_scprof(["-i", "0.3", "--format", "json", "-o", str(out), "--",
                    workload("pacer"), "1000", "2", "100", "12"],
                   env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    assert len(lines) >= 3, lines
    reps = [json.loads(ln) for ln in lines]
    assert [r["interval"] for r in reps] == list(range(1, len(reps) + 1))
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4}",
                            r["interval_end"]) for r in reps)
    assert all(r["duration_ns"] > 0 for r in reps)
    assert sorted(r["interval_end"] for r in reps) == \
        [r["interval_end"] for r in reps]

    def calls(r, name):
        return sum(s["calls"] for s in r["syscalls"] if s["name"] == name)
    assert sum(calls(r, "getppid") for r in reps) == 12 * 1000
    assert sum(calls(r, "openat") for r in reps) >= 12 * 2
    # only the last knows the command's exit status
    assert [("exit_status" in r) for r in reps] == \
        [False] * (len(reps) - 1) + [True]
    assert reps[-1]["exit_status"] == 0


def test_csv_intervals_one_header(tmp_path):
    """-i with --format csv: one header; every row leads with its
    interval's number and end time."""
    out = tmp_path / "iv.csv"
    p = run_scprof(["-i", "0.3", "--format", "csv", "-o", str(out), "--",
                    workload("pacer"), "1000", "0", "100", "12"],
                   env=CLEAN_ENV)
    assert p.returncode == 0, p.stderr
    rows_ = list(csv.DictReader(io.StringIO(out.read_text())))
    assert out.read_text().count("interval,interval_end,") == 1
    got = {int(r["interval"]) for r in rows_}
    assert got == set(range(1, max(got) + 1)) and len(got) >= 3, got
    assert sum(int(r["calls"]) for r in rows_
               if r["syscall"] == "getppid") == 12 * 1000

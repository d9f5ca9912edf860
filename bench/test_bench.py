# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The benchmark's own logic, without measuring anything: report parsers,
the baseline comparison, the chart (`make bench-test`)."""
import argparse
import copy
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chart  # noqa: E402
import compare  # noqa: E402
import loops  # noqa: E402
import probes  # noqa: E402

STRACE = """% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.45    1.264424         129      6207           epoll_wait
  1.96    0.040358           1     40200         8 recvfrom
------ ----------- ----------- --------- --------- ----------------
100.00    2.057499           5     46407         8 total
in flight at stop: epoll_wait x1 (pid 6308 tid 6308, 0.46 s so far)
"""


def test_parse_strace_table_every_syscall_not_the_total():
    got = probes.parse_strace_table(STRACE)
    assert got == {"epoll_wait": 6207, "recvfrom": 40200}, got


def test_parse_syscount_skips_banner():
    text = ("Tracing syscalls, printing top 10... Ctrl+C to quit.\n"
            "[16:03:44]\nSYSCALL                   COUNT\n"
            "getppid                 1234567\nread 12\n")
    assert probes.parse_syscount(text) == {"getppid": 1234567, "read": 12}


def test_parse_scprof_csv_only_the_target():
    text = "pid,comm,syscall,calls\n7,a,read,5\n8,b,read,9\n7,a,write,2\n"
    assert probes.parse_scprof_csv(text, 7) == {"read": 5, "write": 2}


def test_parse_bpftrace_by_number():
    text = "@ns[0]:\n[1] 3 |@@\n[2, 4) 5 |@\n@ns[39]:\n[1] 2 |@\n"
    got = probes.parse_bpftrace_hist(text)
    if probes.platform.machine() == "x86_64":
        assert got == {"read": 8, "nr39": 2}, got


def loops_doc(exit_ns, cfg_ns, cpu="CPU A"):
    def row(cfg, added, lo=None, hi=None, of=None):
        return {"config": cfg, "kind": "getppid", "added_ns": added,
                "added_min": added - 1 if lo is None else lo,
                "added_max": added + 1 if hi is None else hi,
                "over_floor": of}
    fe = probes.FLOORS["exit"]
    return {"host": {"cpu": cpu}, "loops": {"rows": [
        row("bare", 0), row(fe, exit_ns),
        row("scprof -C -a", exit_ns + cfg_ns, of=("exit", cfg_ns))]}}


def test_compare_names_a_dearer_config():
    res = compare.compare(loops_doc(100, 40), loops_doc(100, 20), 0.15,
                          0.25)
    assert [k for k, *_ in res["dearer"]] == ["loops/getppid/scprof -C -a"]


def test_compare_within_noise_is_apart():
    cur = loops_doc(100, 30)
    cur["loops"]["rows"][2].update(added_min=110, added_max=150)
    res = compare.compare(cur, loops_doc(100, 20), 0.15, 0.25)
    assert not res["dearer"] and res["within_noise"], res


def test_compare_skips_loops_when_floors_moved():
    res = compare.compare(loops_doc(200, 80), loops_doc(100, 20), 0.15,
                          0.25)
    assert res["compared"] == 0 and not res["dearer"], res
    assert any("not compared" in n for n in res["notes"])


def test_compare_small_differences_are_not_regressions():
    res = compare.compare(loops_doc(100, 4), loops_doc(100, 2), 0.15, 0.25)
    assert not res["dearer"] and not res["within_noise"], res


def services_doc(ratio, noise=0.01):
    return {"host": {"cpu": "CPU A"}, "services": {"workloads": {"nginx": {
        "noise": noise, "rows": [{"config": "scprof (full)",
                                  "ratio": ratio, "ratio_min": ratio - 0.01,
                                  "ratio_max": ratio + 0.01}]}}}}


def test_compare_services_by_share_lost():
    res = compare.compare(services_doc(0.70), services_doc(0.80), 0.15, 0.25)
    assert [k for k, *_ in res["dearer"]] == ["services/nginx/scprof (full)"]
    res = compare.compare(services_doc(0.79), services_doc(0.80), 0.15, 0.25)
    assert not res["dearer"], res


def test_baseline_file_compares_like_a_run():
    base = compare.baseline_doc(loops_doc(100, 20), "abc")
    res = compare.compare(loops_doc(100, 40), copy.deepcopy(base), 0.15,
                          0.25)
    assert res["dearer"], res


def test_chart_is_svg_with_escaped_labels():
    svg = chart.bars_svg("t <&>", [("nginx", 0.05), ("redis", None)],
                         [("a <b>", [(0.9, 0.8, 0.95), None]),
                          ("c & d", [(0.5, 0.4, 0.6), (1.1, 1.0, 1.2)])])
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "a <b>" in texts and "c & d" in texts, texts


def test_machine_ratios_read_against_their_expectation():
    import machine
    loops = [
        {"name": "syscall-getppid", "ns_per_call": 100.0},
        {"name": "vdso-clock_gettime", "ns_per_call": 20.0},
        {"name": "mmap-copy-4KiB", "ns_per_call": 400.0, "ns_per_byte": 0.1},
        {"name": "mmap-copy-16KiB", "ns_per_call": 2560.0,
         "ns_per_byte": 0.16},
    ]
    got = {r["name"]: r for r in machine.ratios(loops)}
    # only the ratios whose two loops ran
    assert sorted(got) == ["mmap-copy 16 KiB / 4 KiB, per byte",
                           "vDSO clock_gettime / getppid"]
    v = got["vDSO clock_gettime / getppid"]
    assert v["ratio"] == 0.2 and v["expected"]
    m = got["mmap-copy 16 KiB / 4 KiB, per byte"]
    assert abs(m["ratio"] - 1.6) < 1e-9 and not m["expected"]
    assert machine.expectation(0.5, 1.5) == "0.5-1.5"
    assert machine.expectation(None, 0.5) == "< 0.5"


def test_readme_writes_the_overhead_page_by_default(monkeypatch):
    """--readme alone names docs/overhead.md, whose markers it fills."""
    import bench
    monkeypatch.setattr(sys, "argv", ["bench.py", "--from-json", "x.json",
                                      "--readme"])
    a = bench.parse_args()
    assert a.readme == bench.OVERHEAD_DOC
    assert a.readme.endswith(os.path.join("docs", "overhead.md"))
    with open(a.readme) as f:
        doc = f.read()
    assert doc.count(bench.RESULTS_BEGIN) == 1, bench.RESULTS_BEGIN
    assert doc.count(bench.RESULTS_END) == 1, bench.RESULTS_END
    assert doc.index(bench.RESULTS_BEGIN) < doc.index(bench.RESULTS_END)
    monkeypatch.setattr(sys, "argv", ["bench.py", "--from-json", "x.json",
                                      "--readme", "other.md"])
    assert bench.parse_args().readme == "other.md"
    monkeypatch.setattr(sys, "argv", ["bench.py", "--from-json", "x.json"])
    assert bench.parse_args().readme is None


def test_update_results_keeps_the_hand_written_text(tmp_path):
    import bench
    page = tmp_path / "overhead.md"
    page.write_text("# Overhead\n\nBy hand.\n\n%s\nold run\n%s\n\nAfter.\n" %
                    (bench.RESULTS_BEGIN, bench.RESULTS_END))
    bench.update_results(str(page), "new run\n")
    bench.update_results(str(page), "newer run\n")
    assert page.read_text() == (
        "# Overhead\n\nBy hand.\n\n%s\nnewer run\n%s\n\nAfter.\n" %
        (bench.RESULTS_BEGIN, bench.RESULTS_END))


def test_update_results_needs_the_markers(tmp_path):
    import bench
    page = tmp_path / "overhead.md"
    page.write_text("# Overhead\n")
    try:
        bench.update_results(str(page), "run\n")
    except probes.BenchError as e:
        assert "markers" in str(e)
    else:
        raise AssertionError("no error for a page without markers")
    assert page.read_text() == "# Overhead\n"


def test_cost_metrics_keep_what_the_budget_summary_reads():
    """The budget section reads the window cost with the dispatch and the
    dispatch measured; the scrape kept neither once (both read as 0)."""
    import cost
    text = "\n".join([
        "# HELP scprof_latency_cost_seconds_total ...",
        'scprof_bpf_cost_seconds_total{part="count"} 0.0053',
        'scprof_bpf_cost_seconds_total{part="latency"} 0.00027',
        "scprof_latency_cost_seconds_total 0.000285",
        "scprof_latency_dispatch_seconds 8.06804e-08",
        "scprof_latency_duty_ratio 0.2",
        "scprof_syscalls_total 12",
    ])
    m = cost.cost_metrics(text)
    assert m["scprof_latency_cost_seconds_total"] == 0.000285
    assert m["scprof_latency_dispatch_seconds"] == 8.06804e-08
    assert m['scprof_bpf_cost_seconds_total{part="latency"}'] == 0.00027
    assert "scprof_syscalls_total" not in m


def test_budget_is_compared_a_window_at_a_time():
    """A budgeted daemon's figures are per window: 20 s loops hold two
    periods, so what the windows really cost over the loop is halved, and
    the metrics' cost is divided by the windows they counted; the budget
    is the share of one period."""
    import cost

    def row(added, metrics=None, gauges=None):
        r = {"added_ns": added, "calls": 100e6, "ns": 300 + added,
             "bare_ns": 300}
        if metrics is not None:
            r.update(metrics_seconds=20.5, metrics=metrics,
                     gauges=gauges or {})
        return r

    ca = probes.Config("scprof -C -a", None, "bpf", None)
    d0 = probes.Config("scprof daemon (--latency-duty 0)", None, "bpf", None)
    dd = probes.Config("scprof daemon (defaults)", None, "bpf", None)
    runs = {ca.name: [row(100)],
            d0.name: [row(104, {}, {})],
            dd.name: [row(106, {"scprof_latency_cost_seconds_total": 0.19,
                                "scprof_latency_windows_total": 2},
                          {"scprof_latency_sample_ratio": 0.02})]}
    out = cost.summarize_budget([ca, d0, dd], runs, [{"mean_ns": 300}], 20)
    a = [r for r in out["rows"] if r["config"] == dd.name][0]["analysis"]
    assert abs(a["window_real_s"] - 0.1) < 1e-9      # 2 ns x 100M / 2
    assert abs(a["window_claimed_s"] - 0.095) < 1e-9
    assert abs(a["window_budget_s"] - 0.1) < 1e-9
    assert abs(a["budget_s"] - 0.2) < 1e-9
    assert abs(a["limit_ns"] - 108) < 1e-9           # 100 + 3 + 5
    assert cost.budgeted(dd) and not cost.budgeted(d0)
    # --max-overhead 5 against its own budget: 5% of bare
    d5 = probes.Config("scprof daemon (--max-overhead 5)", None, "bpf",
                       None)
    runs[d5.name] = runs.pop(dd.name)
    out = cost.summarize_budget([ca, d0, d5], runs, [{"mean_ns": 300}], 20)
    a = [r for r in out["rows"] if r["config"] == d5.name][0]["analysis"]
    assert abs(a["limit_ns"] - 120) < 1e-9           # 100 + 15 + 5


def test_in_run_figures_leave_out_slow_spells_outside_windows_only():
    """A loop's steady cost is its median batch outside the daemon's
    windows: a slow spell outside them does not move it; a window is
    charged what its batches (a spell in there too) cost over the calm
    batches around it, not over the run's median, which drifts; the
    window lines come from the daemon's -vv output."""
    import cost

    text = "\n".join([
        "scprof daemon: latency window opens at 99.000000 s "
        "(CLOCK_MONOTONIC)",
        "scprof daemon: latency window closes at 99.500000 s "
        "(CLOCK_MONOTONIC)",
        "scprof daemon: latency window opens at 100.000000 s "
        "(CLOCK_MONOTONIC)",
        "scprof daemon: cost window opens at 100.500000 s (CLOCK_MONOTONIC)",
        "scprof daemon: latency window closes at 101.000000 s "
        "(CLOCK_MONOTONIC)",
        "scprof daemon: cost window closes at 101.250000 s "
        "(CLOCK_MONOTONIC)",
        "scprof daemon: latency window opens at 109.000000 s "
        "(CLOCK_MONOTONIC)"])
    w = cost.window_intervals(text)
    assert w["latency"] == [(99.0, 99.5), (100.0, 101.0),
                            (109.0, float("inf"))]
    assert w["cost"] == [(100.5, 101.25)]
    # A batch ending every ms from t=100 to t=110: in the window
    # [100, 101) at 250 ns a call, in a cost window's tail [101, 101.25)
    # at 150, in a slow spell [102, 103) at 300, the rest at 100 until
    # 104, when the machine steps to 90.
    batches = []
    for i in range(10000):
        end = 100.0 + (i + 1) / 1000.0 - 1e-6
        ns = 250 if end < 101 else 150 if end < 101.25 else \
            300 if 102 <= end < 103 else 100 if end < 104 else 90
        batches.append((end, ns))
    r = cost.in_run_cost(batches, w)
    assert r["steady_ns"] == 90                        # not the spell's 300
    # outside the windows (101.25 to 109) the spell adds this to a batch
    spell = (750 * 100 + 1000 * 300 + 1000 * 100 + 5000 * 90) / 7750 - \
        (750 * 100 + 1000 * 100 + 5000 * 90) / 6750
    assert abs(r["spell_ns"] - spell) < 0.5, r
    # against the calm batches around it (100), not the run's median
    # (90), plus the spells' share; the open window from 109 on runs at
    # the calm 90 around it
    assert abs(r["latency_s"] - (1000 * (150 - spell) - 1000 * spell) *
               256 / 1e9) < 1e-3, r
    assert abs(r["cost_s"] - 250 * (50 - spell) * 256 / 1e9) < 2e-4, r
    assert abs(r["ns"] - (90 + (1000 * (150 - spell) - 1000 * spell +
                                250 * (50 - spell)) / 10000)) < 0.5
    # without windows (a bare run, -C -a): the median
    assert cost.in_run_cost([b for b in batches if b[0] > 104.5])["ns"] == 90
    assert cost.in_run_cost([], w) is None


def test_dispatch_measures_are_read_from_the_daemon_log():
    """Each dispatch measurement the daemon logs (-vv), kept with its
    rounds' spread."""
    import cost

    text = ("scprof daemon: latency windows: 33.1 ns a call of dispatch "
            "(rounds 32.9 to 40.2)\nscprof daemon: latency window opens "
            "at 1.000000 s (CLOCK_MONOTONIC)\nscprof daemon: latency "
            "windows: 0.0 ns a call of dispatch (rounds -63.6 to 163.0)\n")
    assert cost.dispatch_measures(text) == [(33.1, 32.9, 40.2),
                                            (0.0, -63.6, 163.0)]
    assert cost.dispatch_measures("") == []


def test_a_window_where_none_was_costs_nothing():
    """The placebo: windows set in a bare run with slow spells at random
    read zero on average, although the spells that fall in them are
    theirs (a window's base leaving the spells out would read them as
    the window's cost)."""
    import random
    import cost

    rnd = random.Random(7)
    batches, t, spell_left = [], 100.0, 0
    for _ in range(60000):                  # 60 s of 1 ms batches
        t += 0.001
        if not spell_left and rnd.random() < 0.004:
            spell_left = rnd.randint(5, 15)
        ns = 100 + rnd.gauss(0, 3)
        if spell_left:
            spell_left -= 1
            ns *= 2
        batches.append((t, ns))
    xs = cost.placebo(batches)
    assert len(xs) >= 20
    mean = sum(xs) / len(xs)
    sd = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5
    # what the spells add to a placebo window's batches on average
    spells = (sum(ns for _, ns in batches) / len(batches) - 100) * \
        cost.PLACEBO_S / 0.001 * cost.BATCH_CALLS / 1e9
    assert spells > 4 * sd / len(xs) ** 0.5, (spells, sd)
    assert abs(mean) < spells / 4, (mean, spells)
    p = cost.pool_placebo([{"in_run": {"placebo_each_s": xs}}])
    assert p["placebo_n"] == len(xs)
    assert abs(p["placebo_mean_s"] - mean) < 1e-12
    assert cost.pool_placebo([{"in_run": None}]) == {}


def test_budget_is_checked_without_the_slow_spells_too(capsys):
    """The budget's limit is also checked on the in-run figures, and a
    latency window's cost in the loop's batches is set against what the
    metrics counted of it."""
    import cost

    ca = probes.Config("scprof -C -a", None, "bpf", None)
    dd = probes.Config("scprof daemon (defaults)", None, "bpf", None)

    def row(added, steady, lat=None, metrics=None):
        r = {"added_ns": added, "calls": 100e6, "ns": 300 + added,
             "bare_ns": 300, "steady_added_ns": steady,
             "in_run": {"ns": 200 + steady, "steady_ns": 200}}
        if lat is not None:
            r["in_run"].update(latency_s=lat, cost_s=0.01)
        if metrics is not None:
            r.update(metrics_seconds=20.5, metrics=metrics, gauges={})
        return r
    m = {"scprof_latency_cost_seconds_total": 0.2,
         "scprof_latency_windows_total": 2}
    runs = {ca.name: [row(100, 90)], dd.name: [row(110, 96, 0.3, m)]}
    # its two windows: 0.14 and 0.16 s; the bare run's placebo windows
    runs[dd.name][0]["in_run"]["latency_each_s"] = [0.14, 0.16]
    bare = [{"mean_ns": 300, "in_run": {"ns": 200, "placebo_each_s": [
        0.001, -0.001, 0.003, -0.003]}}]
    out = cost.summarize_budget([ca, dd], runs, bare, 20)
    assert out["placebo_n"] == 4 and abs(out["placebo_mean_s"]) < 1e-12
    d = [r for r in out["rows"] if r["config"] == dd.name][0]
    a = d["analysis"]
    assert abs(a["steady_limit_ns"] - 97) < 1e-9     # 90 + 2 + 5
    assert abs(a["steady_vs_C_a_ns"] - 6) < 1e-9
    assert abs(d["in_run_window_s"] - 0.15) < 1e-9
    assert abs(d["in_run_window_claimed_s"] - 0.1) < 1e-9
    cost.report_budget(out)
    text = capsys.readouterr().out
    assert "over -C -a +6.0 ns/call (limit 97.0, met)" in text, text
    assert "MISSED" in text, text                     # by the means: 110 > 108
    assert "0.150 s in the loop's batches" in text, text
    # pooled: 0.150 +- 0.020 against a budget of 0.100 and a limit of
    # (1% + 5 / 300) x 10 s = 0.267 s
    assert abs(d["window_limit_s"] - 0.1 - 50 / 300) < 1e-9
    assert "its 2 windows pooled: 0.150 s a window in-run +- 0.020" in \
        text, text
    assert "0.100 s in its metrics (0.67x)" in text, text
    assert text.count(": within the limit") == 1, text
    assert "placebo: 4 windows of 1 s set where none was" in text, text
    assert "+0.0000 s +- 0.0026" in text, text


def test_budget_compares_marked_loops_and_prices_the_mark(capsys):
    """Every budget loop is marked but -C -a's copy (probes.py, "RCU Tasks
    Trace marks"): the mark's cost is -C -a marked less not, and the
    report counts the marked runs apart from that copy's."""
    import cost

    ca = probes.Config("scprof -C -a", None, "bpf", None)
    cfgs = cost.budget_configs(argparse.Namespace(scprof="scprof"), [ca])
    un = [c for c in cfgs if c.name == cost.UNMARKED]
    assert len(un) == 1 and un[0] is not ca and ca.name == "scprof -C -a"

    def row(added, marked):
        return {"added_ns": added, "calls": 100e6, "ns": 300 + added,
                "bare_ns": 300, "rcu_marked": marked}
    runs = {ca.name: [row(100, True), row(102, True)],
            cost.UNMARKED: [row(88, False), row(90, True)]}
    out = cost.summarize_budget(
        [ca, un[0]], runs,
        [{"mean_ns": 300, "rcu_marked": True}] * 3, 20)
    assert abs(out["mark_ns"] - 12) < 1e-9           # 101 - 89
    cost.report_budget(out)
    text = capsys.readouterr().out
    assert "warm-up: 5 of 5;" in text, text          # 3 bare + 2 -C -a
    assert "1 of 2 marked all the same" in text, text
    assert "+12.0 ns a call" in text, text


def test_added_cost_is_against_the_faster_bare_neighbour(monkeypatch):
    """A bare run slowed as a whole (noise only slows) must not lower the
    added cost of the probes beside it: bare 165, probe 250, bare 215
    (slowed), probe 250, bare 165 is +85 for both probes, not +60."""
    figures = iter([165.0, 250.0, 215.0, 250.0, 165.0])

    def run_once(a, cfg, tmpdir, long_run=False, mark=None):
        v = next(figures)
        return {"getppid": {"ns": v, "mean_ns": v}}

    monkeypatch.setattr(loops, "run_once", run_once)
    monkeypatch.setattr(loops, "log", lambda *_: None)
    a = type("A", (), {"reps": 1, "kinds": ["getppid"]})()
    cfgs = [probes.Config("P", None, None), probes.Config("Q", None, None)]
    res, added = loops.run_matrix(a, cfgs, "/nonexistent")
    assert added == {"P": {"getppid": [85.0]}, "Q": {"getppid": [85.0]}}
    assert [r["getppid"]["ns"] for r in res["bare"]] == [165.0, 215.0, 165.0]


def test_the_daemon_is_compared_with_c_a_marked_alike(monkeypatch):
    """The daemon's first closing window marks its loop midway (RCU Tasks
    Trace), a cost of its own: its loops are marked from their warm-up,
    and so are those of its reference, -C -a in long loops. The target
    compares the two, not the daemon with the unmarked short -C -a."""
    seen = []

    def run_once(a, cfg, tmpdir, long_run=False, mark=None):
        if cfg is not None:
            seen.append((cfg.name, long_run, mark))
        return {"getppid": {"ns": 100.0, "mean_ns": 100.0}}

    monkeypatch.setattr(loops, "run_once", run_once)
    monkeypatch.setattr(loops, "log", lambda *_: None)
    a = type("A", (), {"reps": 1, "kinds": ["getppid"], "scprof": "scprof",
                       "bin": "/b", "daemon_any": True, "probe": None,
                       "only": ["scprof -C -a", "scprof daemon"]})()
    monkeypatch.setattr(probes, "scprof_has", lambda *_: True)
    monkeypatch.setattr(probes.shutil, "which", lambda _: "/bin/x")
    cfgs = probes.make_configs(a, 1)
    loops.run_matrix(a, cfgs, "/nonexistent")
    assert sorted(seen) == [("scprof -C -a", False, None),
                            (probes.MARKED_C_A, True, True),
                            ("scprof daemon (defaults)", True, True)]
    rows = [{"config": c, "kind": "getppid", "added_ns": v}
            for c, v in (("scprof -C -a", 90.0), (probes.MARKED_C_A, 112.0),
                         ("scprof daemon (defaults)", 125.0))]
    assert loops.check_targets(rows, ["getppid"]) == [
        ("getppid: daemon <= -C -a + 20 (both marked)", 125.0, 132.0)]
    # a run without the reference (an older record): -C -a it is
    assert loops.check_targets(rows[::2], ["getppid"]) == [
        ("getppid: daemon <= -C -a + 20", 125.0, 110.0)]
    rows = [dict(r, rcu_marked=None if r["config"] == "scprof -C -a" else 1,
                 runs=1) for r in rows]
    lines = loops.mark_lines(rows, ["getppid"])
    assert "scprof daemon (defaults) 1/1" in lines[0]
    assert lines[1].endswith("getppid +22")



def test_services_mark_the_servers_main_thread_under_load(monkeypatch):
    """The services warm-up marks the server's main thread alone (a
    server's sleeping threads are never marked) while it serves: the
    marking runs during a load, not after it."""
    import services

    import threading

    events, marked = [], threading.Event()

    class W:
        pid = 4242

        def load(self, secs):
            events.append(("load", secs))
            if secs > 1:  # the marking load: marked while it runs
                events.append(("load done", marked.wait(5)))
            return {"rps": 1.0, "requests": 1, "per_call": 1}

    def mark_running(a, pid, tries=3, timeout=2.0, tids=None):
        events.append(("mark", pid, tids))
        marked.set()
        return True

    monkeypatch.setattr(services, "mark_running", mark_running)
    monkeypatch.setattr(services.time, "sleep", lambda s: None)
    a = argparse.Namespace(service_seconds=5)
    assert services.warm_up(a, W()) is True
    assert events[0] == ("load", 1.0)
    assert ("mark", 4242, {4242}) in events
    assert events[-1] == ("load done", True)


def test_budget_on_nginx_is_per_request_and_checked(capsys):
    """On nginx the budget's figures are per request: the windows' share of
    the load's time from its batches, a window's cost against its
    metrics, and the limit -C -a + 1% of bare + 5 ns for each call -C -a
    counted a request."""
    import cost

    ca = probes.Config("scprof -C -a", None, "bpf", None)
    dd = probes.Config("scprof daemon (defaults)", None, "bpf", None)

    def run(ns, bare_ns, lat=None):
        r = {"rps": 1e9 / ns, "requests": 1000000, "ratio": bare_ns / ns,
             "bare_ns": bare_ns, "in_run": {"ns": ns, "steady_ns": ns}}
        if lat is None:
            r["calls"] = 10 * r["requests"]        # 10 calls a request
        else:
            r["in_run"]["latency_s"] = lat
            r.update(metrics_seconds=20.0, metrics={
                "scprof_latency_cost_seconds_total": 0.25,
                "scprof_latency_windows_total": 2})
        return r
    bare = [{"rps": 50000, "in_run": {"ns": ns}}
            for ns in (20000, 20100, 20000, 20000)]
    runs = {ca.name: [run(20500, 20000)],
            dd.name: [run(20700, 20000, lat=0.16)]}
    out = cost.summarize_budget_nginx([ca, dd], runs, bare, 20)
    d = out["rows"][1]
    assert abs(d["window_share"] - 0.008) < 1e-9     # 0.16 s of 20
    assert abs(d["window_s"] - 0.08) < 1e-9
    assert abs(d["window_claimed_s"] - 0.125) < 1e-9
    assert abs(d["limit_ns"] - (500 + 0.01 * 20000 + 50)) < 1e-9
    assert abs(out["noise_max"] - 0.005) < 1e-9      # 20100 against 20000
    cost.report_budget_nginx(out)
    text = capsys.readouterr().out
    assert "over -C -a +200 ns a request (limit -C -a + 1% of bare + 5 ns " \
        "a call: 750, met)" in text, text
    assert "windows cost 0.80% of the load's time" in text, text
    assert "the budget of a period is 0.100 s: met" in text, text
    assert "placebo" not in text, text              # no placebo windows
    bare[0]["in_run"]["placebo_each_s"] = [0.002, 0.004]
    cost.report_budget_nginx(cost.summarize_budget_nginx([ca, dd], runs,
                                                         bare, 20))
    assert "  placebo: 2 windows of 1 s set where none was, in the bare " \
        "runs' batches, cost +0.0030 s +- 0.0020" in \
        capsys.readouterr().out
    del bare[0]["in_run"]["placebo_each_s"]
    runs[dd.name] = [run(21000, 20000, lat=0.30)]
    cost.report_budget_nginx(cost.summarize_budget_nginx([ca, dd], runs,
                                                         bare, 20))
    text = capsys.readouterr().out
    assert "over -C -a +500 ns a request (limit -C -a + 1% of bare + 5 " \
        "ns a call: 750, MISSED)" in text, text
    assert "the budget of a period is 0.100 s: OVER" in text, text
    # over the budget by less than the limit's 5 ns a call (0.25%)
    runs[dd.name] = [run(20700, 20000, lat=0.24)]
    cost.report_budget_nginx(cost.summarize_budget_nginx([ca, dd], runs,
                                                         bare, 20))
    assert "0.100 s: within the limit's 5 ns a call (0.125 s)" in \
        capsys.readouterr().out
    # runs noisier than the limit's allowance (200 + 50 ns): no verdict
    bare[1]["in_run"]["ns"] = 21000
    cost.report_budget_nginx(cost.summarize_budget_nginx([ca, dd], runs,
                                                         bare, 20))
    text = capsys.readouterr().out
    assert "(limit -C -a + 1% of bare + 5 ns a call: 750, not resolved: " \
        "the runs' noise, 744 ns a request, is more than the limit " \
        "allows)" in text, text


def _httpload(tmp_path):
    exe = str(tmp_path / "httpload")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "httpload.c")
    subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", src, "-o", exe],
                   check=True)
    return exe


def _server(status):
    """A keep-alive HTTP/1.1 server on loopback answering every GET with
    status and a 612-byte body, counting the requests."""
    import http.server
    import threading

    body = b"x" * 612

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # (or 40 ms a response)
        served = 0

        def do_GET(self):
            H.served += 1
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, H


def test_httpload_counts_what_the_server_served_and_times_batches(tmp_path):
    """bench/httpload.c, the budget's load on nginx: every response it
    counts was served (at most one a connection still in flight at the
    end), a batch line every 256 of them with CLOCK_MONOTONIC ends."""
    import cost

    exe = _httpload(tmp_path)
    srv, H = _server(200)
    try:
        out = str(tmp_path / "batches")
        t0 = time.monotonic()
        p = subprocess.run([exe, str(srv.server_address[1]), "2", "1"],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, HTTPLOAD_BATCHES=out))
        t1 = time.monotonic()
    finally:
        srv.shutdown()
    assert p.returncode == 0, p.stderr
    tok = p.stdout.split()
    assert tok[0] == "requests" and tok[2] == "seconds", p.stdout
    n = int(tok[1])
    assert n >= 256 and n <= H.served <= n + 2, (n, H.served)
    b = cost.read_batches(out, "http")
    assert len(b) == n // 256
    assert all(t0 <= end <= t1 and ns > 0 for end, ns in b), b[:3]


def test_httpload_fails_on_a_response_other_than_200(tmp_path):
    exe = _httpload(tmp_path)
    srv, _ = _server(404)
    try:
        p = subprocess.run([exe, str(srv.server_address[1]), "1", "1"],
                           capture_output=True, text=True, timeout=30)
    finally:
        srv.shutdown()
    assert p.returncode == 1
    assert p.stderr == "httpload: a response other than 200\n"
    p = subprocess.run([exe, "0", "1", "1"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.startswith("httpload: usage")


def test_sys_enter_dispatch_on_nginx_is_per_call_of_C_a(capsys):
    """The toggled empty sys_enter program's cost a request is divided by
    the calls -C -a counted a request, and set beside the dispatch the
    daemon measured in its own loop."""
    import cost

    out = {"seconds": 20, "conns": 8, "bare_rps": 50000, "bare_ns": 20000,
           "noise": 0.01, "noise_max": 0.02, "rows": [
               {"config": "scprof -C -a", "calls_per_request": 10.0},
               {"config": "scprof daemon (defaults)",
                "runs": [{"dispatch_ns": 32.0}, {"dispatch_ns": 34.0}]}],
           "enter_runs": [{"ns_per_request": 700, "windows": 4},
                          {"ns_per_request": 1100, "windows": 4,
                           "sampled": {"ns_per_request": 400, "out": 1000,
                                       "funcs": {"a": 300, "b": 100}}},
                          {"ns_per_request": 900, "windows": 4,
                           "sampled": {"ns_per_request": 500, "out": 1200,
                                       "funcs": {"a": 320, "b": 180}}}]}
    cost.summarize_enter(out)
    assert out["enter_ns_per_request"] == 900
    assert out["enter_ns_per_call"] == [70, 110, 90]
    assert out["daemon_dispatch_ns"] == 33
    assert out["enter_sampled_ns_per_call"] == [40, 50]
    assert out["enter_sampled_funcs_ns_per_call"] == {"a": 31, "b": 14}
    out["rows"] = []  # (the table's rows need more than this test has)
    cost.report_budget_nginx(out)
    text = capsys.readouterr().out
    assert "900 ns a request, 90 ns a call (70..110); the daemon priced " \
        "it at 33.0 ns a call" in text
    assert "45.0 ns a call (40.0..50.0; those functions 110.0 ns a call " \
        "without it)" in text
    assert "by function (median of runs): a 31.0, b 14.0" in text


def test_sampled_dispatch_is_per_request_inside_less_outside():
    """dsample's slices inside the windows (settled) against those away
    from them, each per request served in it; slices at a window's ends
    are left out, whatever they hold."""
    import cost

    # 10 s of requests at 20 us each (batches of 256: 5.12 ms)
    batches, t = [], 100.0
    while t < 110.0:
        t += 256 * 20e-6
        batches.append((t, 20000.0))
    windows = [(102.0, 103.5), (106.0, 107.5)]
    text, t = ["attached"], 100.0
    while t < 110.0 - 1e-9:
        t += 0.1
        a = t - 0.1
        inside = any(a >= w0 + 0.1 - 1e-9 and t <= w1 + 1e-9
                     for w0, w1 in windows)
        near = any(a < w1 + 0.1 - 1e-6 and t > w0 - 0.1 + 1e-6
                   for w0, w1 in windows)
        n = 30 if inside else 900 if near else 20
        # two functions: one holding 10 of the in-window samples more
        text.append("slice %.6f %d 200 %d %d" % (
            t, n, n - 10 if inside else n, 10 if inside else 0))
    slices = cost.read_slices("\n".join(text))
    assert len(slices) == 99 and slices[0][0] == pytest.approx(100.1)
    names = cost.dsample_names(
        "dsample: f_one 0xffffffff81000000 48\n"
        "dsample: nope: not in /proc/kallsyms\n"
        "dsample: f_two 0xffffffff81000100 480\n")
    assert names == ["f_one", "f_two"]
    r = cost.sampled_dispatch(slices, windows, batches, 1000, names)
    # 30 and 20 ms of samples a slice, 5000 requests a slice
    assert r["in"] == pytest.approx(6000, rel=0.01)
    assert r["out"] == pytest.approx(4000, rel=0.01)
    assert r["ns_per_request"] == pytest.approx(2000, rel=0.02)
    assert r["funcs"]["f_one"] == pytest.approx(0, abs=20)
    assert r["funcs"]["f_two"] == pytest.approx(2000, rel=0.02)
    assert cost.sampled_dispatch(slices, [], batches, 1000) is None


def test_budget_on_nginx_is_judged_by_every_window_pooled(capsys):
    """A window's cost is the mean over every window of every run, with
    two standard errors against the budget and the limit."""
    import cost

    def run(each, claimed):
        return {"in_run": {"latency_each_s": each},
                "metrics": {"scprof_latency_windows_total": len(each),
                            "scprof_latency_cost_seconds_total": claimed}}

    ws = [run([0.09, 0.11], 0.2), run([0.10, 0.12, 0.08], 0.3)]
    p = cost.pool_windows(ws)
    assert p["window_n"] == 5
    assert p["window_mean_s"] == pytest.approx(0.1)
    assert p["window_se_s"] == pytest.approx((0.001 / 4) ** 0.5 / 5 ** 0.5)
    assert p["window_claimed_mean_s"] == pytest.approx(0.1)
    r = dict(p, window_budget_s=0.1, window_limit_s=0.126)
    assert cost.window_verdict(r) == "within the limit"  # 0.1 + 0.014
    assert cost.window_verdict(dict(r, window_mean_s=0.08)) == "met"
    assert cost.window_verdict(dict(r, window_mean_s=0.15)) == "OVER"
    assert cost.window_verdict(dict(r, window_mean_s=0.12)) == \
        "not resolved"
    r.update(config="scprof daemon (defaults)", window_verdict="met",
             window_share=0.01, window_s=0.1, window_claimed_s=0.1,
             budget_share=0.01)
    cost.report_budget_nginx({
        "seconds": 20, "bare_rps": 50000, "bare_ns": 20000, "noise": 0.01,
        "noise_max": 0.02, "rows": [dict(r, ratio=0.9, ratio_min=0.9,
                                          ratio_max=0.9, added_ns=100,
                                          steady_ns=20000)]})
    out = capsys.readouterr().out
    assert "its 5 windows pooled: 0.100 s a window in-run +- 0.014 (two " \
        "standard errors), 0.100 s in its metrics (1.00x); the budget of " \
        "a period is 0.100 s, the limit's 5 ns a call 0.126 s: met" in out
    # the one-run verdict gives way to the pooled one
    assert "the budget of a period is 0.100 s: " not in out


def _bench_bin(name):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run(["make", "-s", "--no-print-directory",
                    ".output/bench/" + name], cwd=root, check=True)
    return os.path.join(root, ".output", "bench", name)


def test_dsample_counts_the_samples_in_the_functions_named():
    """Sampled while a getppid loop runs, the getppid functions hold a
    share of the samples that they do not hold when it does not; a
    function not in kallsyms is said and skipped."""
    exe = _bench_bin("dsample")
    p = subprocess.run([exe, "1000", "x"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("usage: dsample HZ")
    if os.geteuid() != 0:
        pytest.skip("dsample needs root (BPF, perf events)")
    loop = _bench_bin("sysloop")
    # (the one of another architecture is skipped)
    funcs = ["__x64_sys_getppid", "__arm64_sys_getppid", "__task_pid_nr_ns"]
    ds = subprocess.Popen([exe, "1000", "100"] + funcs + ["no_such_fn"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    assert ds.stdout.readline() == "attached\n"
    time.sleep(0.6)
    t0 = time.monotonic()
    subprocess.run([loop, "0", "1", "getppid"], input="go\n",
                   capture_output=True, text=True, check=True)
    t1 = time.monotonic()
    time.sleep(0.3)
    ds.terminate()
    out, err = ds.communicate(timeout=10)
    assert ds.returncode == 0, err
    assert "dsample: no_such_fn: not in /proc/kallsyms" in err
    import cost

    sl = cost.read_slices(out)
    busy = [s for s in sl if s[0] >= t0 + 0.2 and s[1] <= t1]
    idle = [s for s in sl if s[1] <= t0]
    assert busy and idle, sl
    found = cost.dsample_names(err)
    assert "__task_pid_nr_ns" in found and len(found) == 2, err
    cpus = os.cpu_count()
    # a CPU is sampled 1000 times a second while it is busy: at least
    # the loop's, at most all of them; IN is the functions' sum
    for a, b, n_in, n, per in sl:
        assert n < 1.4 * 1000 * cpus * (b - a), (a, b, n)
        assert len(per) == 2 and sum(per) == n_in
    for a, b, _, n, _ in busy:
        assert n > 0.6 * 1000 * (b - a), (a, b, n)
    share = sum(s[2] for s in busy) / sum(s[3] for s in busy)
    assert share > 0.02, busy
    assert sum(s[2] for s in idle) / sum(s[3] for s in idle) < share / 4

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The benchmark's own logic, measuring nothing (`make bench-test`): the
parsers of what the probes and tools print, the figures each section
makes of its runs, the baseline comparison, the chart and --readme."""
import copy
import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import chart  # noqa: E402
import compare  # noqa: E402
import daemon  # noqa: E402
import loops  # noqa: E402
import probes  # noqa: E402
import services  # noqa: E402
import split  # noqa: E402


# ---- parsers ---------------------------------------------------------------

STRACE = """% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.45    1.264424         129      6207           epoll_wait
  1.96    0.040358           1     40200         8 recvfrom
------ ----------- ----------- --------- --------- ----------------
100.00    2.057499           5     46407         8 total
in flight at stop: epoll_wait x1 (pid 6308 tid 6308, 0.46 s so far)
"""


COUNT = ("    calls    errors syscall\n--------- --------- ----\n"
         "    23195         6 bpf\n      348           brk\n"
         "--------- --------- ----\n    23543         6 total\n")
SYSCOUNT = ("Tracing syscalls, printing top 10... Ctrl+C to quit.\n"
            "[16:03:44]\nSYSCALL                   COUNT\n"
            "getppid                 1234567\nread 12\n")


@pytest.mark.parametrize("parse, text, counts", [
    (probes.parse_strace_table, STRACE, {"epoll_wait": 6207,
                                         "recvfrom": 40200}),
    (probes.parse_count_table, COUNT, {"bpf": 23195, "brk": 348}),
    (probes.parse_syscount, SYSCOUNT, {"getppid": 1234567, "read": 12})])
def test_parse_tables_every_syscall_not_the_total_nor_banners(parse, text,
                                                              counts):
    assert parse(text) == counts


def test_parse_scprof_csv_only_the_target():
    text = "pid,comm,syscall,calls\n7,a,read,5\n8,b,read,9\n7,a,write,2\n"
    assert probes.parse_scprof_csv(text, 7) == {"read": 5, "write": 2}


@pytest.mark.skipif(probes.platform.machine() != "x86_64",
                    reason="syscall numbers of x86-64")
def test_parse_bpftrace_by_number():
    hist = "@ns[0]:\n[1] 3 |@@\n[2, 4) 5 |@\n@ns[39]:\n[1] 2 |@\n"
    assert probes.parse_bpftrace_hist(hist) == {"read": 8, "nr39": 2}
    assert probes.parse_bpftrace_count("@[110]: 7\n@[1]: 3\n") == {
        "getppid": 7, "write": 3}


def test_parse_perf_stat():
    stat = ("# started on Sun Nov 29 02:13:52 2026\n\n"
            "697.15,msec,task-clock,697151250,100.00,0.269,CPUs utilized\n")
    assert split.parse_task_clock(stat) == 697.15
    assert split.parse_task_clock("<not counted>,,task-clock,0\n") is None


def test_daemon_metric_by_name_or_label_sums_its_samples():
    text = ("# HELP scprof_latency_cost_seconds_total ...\n"
            "scprof_latency_cost_seconds_total 0.000285\n"
            'scprof_syscalls_total{syscall="execve",abi="64"} 1200\n'
            'scprof_syscalls_total{syscall="execve",abi="32"} 3\n'
            'scprof_syscalls_total{syscall="execveat",abi="64"} 7\n'
            'scprof_syscall_errors_total{syscall="execve",abi="64"} 5\n')
    assert daemon.metric(text, "scprof_syscalls_total",
                         daemon.EXECVE) == 1203
    assert daemon.metric(text, "scprof_latency_cost_seconds_total") == \
        0.000285
    assert daemon.metric(text, "scprof_syscalls_total") == 0


# ---- what the sections make of their runs ----------------------------------

def test_runs_interleave_with_bare_and_rotate(monkeypatch):
    monkeypatch.setattr(loops, "log", lambda *_: None)
    seen = []

    def run(c):
        seen.append(c.name if c else "bare")
        return len(seen)
    cfgs = [probes.Config("P", None), probes.Config("Q", None)]
    bare, runs = loops.interleaved(cfgs, run, "t", 2)
    assert seen == ["bare", "P", "bare", "Q", "bare",
                    "bare", "Q", "bare", "P", "bare"]
    assert runs == {"P": [(1, 2, 3), (8, 9, 10)], "Q": [(3, 4, 5), (6, 7, 8)]}
    assert bare == [1, 3, 5, 6, 8, 10]


def test_added_cost_is_against_the_faster_bare_neighbour():
    """A bare run slowed as a whole (noise only slows) must not lower the
    added cost of the probes beside it: bare 165, probe 250, bare 215
    (slowed), probe 250, bare 165 is +85 for both."""
    def r(v):
        return {"getppid": {"ns": v}}
    fe = probes.Config(probes.FLOORS["exit"], None)
    ca = probes.Config("scprof -C -a", None, floor="exit")
    bare = [r(165.0), r(215.0), r(165.0)]
    runs = {fe.name: [(bare[0], r(250.0), bare[1])],
            ca.name: [(bare[1], r(258.0), bare[2])]}
    rows, targets = loops.summarize(["getppid"], [fe, ca], bare, runs)
    by = {x["config"]: x for x in rows}
    assert by[fe.name]["added"]["median"] == 85.0
    assert by[ca.name]["added"]["median"] == 93.0
    assert by[ca.name]["over_floor"] == 8.0
    assert targets == [{"target": "getppid: scprof -C -a <= floor-exit + 25",
                        "value": 93.0, "limit": 110.0, "ok": True}]
    # the ratios are of this run's figures: to bare, to the floor's added
    assert loops.table({"rows": rows}, "getppid")[2] == [
        "scprof -C -a", "258", "93 (93-93)", "1.56", "+8 (floor-exit)",
        "1.09"]


def test_services_ratio_against_the_bare_neighbours_and_the_floor():
    fp = probes.FLOORS["pair"]
    cfgs = [probes.Config(fp, None), probes.Config("scprof -p", None,
                                                   floor="pair"),
            probes.Config("strace -c -f", None)]

    def r(rps, **kw):
        return dict(rps=rps, tracer_cpu=0.01, foreign_probes=0, **kw)
    bare = [r(1000), r(1200), r(1000), r(1000)]
    runs = {fp: [(bare[0], r(990), bare[1])],
            "scprof -p": [(bare[1], r(880, calls_per_request=7), bare[2])],
            "strace -c -f": [(bare[2], r(100), bare[3])]}
    wl = services.summarize(cfgs, bare, runs)
    assert [x["ratio"]["median"] for x in wl["rows"]] == [0.9, 0.8, 0.1]
    assert [x["x_floor"] for x in wl["rows"]] == [None, 0.8 / 0.9, None]
    assert wl["rows"][1]["calls_per_request"] == 7
    assert wl["rows"][2]["calls_per_request"] is None
    # bare 1200 against its neighbours' 1000; 1000 against 1100
    assert wl["noise"] == pytest.approx((0.2 + 1 / 11) / 2)


def test_split_verdict_by_the_whole_spread_or_the_median():
    s = {"median": 1.06, "min": 1.02, "max": 1.09}
    assert split.verdict(s, 1.10) == "met"
    assert split.verdict(dict(s, max=1.2), 1.10).startswith(
        "met by the median, not resolved")
    assert split.verdict({"median": 1.2, "min": 1.15, "max": 1.3},
                         1.10) == "missed"
    # requests/s: lower is worse, the goal 1 - noise
    assert split.verdict({"median": 0.99, "min": 0.97, "max": 1.0}, 0.96,
                         False) == "met"
    assert split.verdict({"median": 0.9, "min": 0.88, "max": 0.92}, 0.96,
                         False) == "missed"


def test_services_split_pairs_each_repetition():
    wl = {"noise": 0.03, "rows": [
        {"config": "scprof -p", "ratios": [0.90, 0.80]},
        {"config": "scprof -p --no-split", "ratios": [0.90, 1.00]}]}
    got = split.services_split({"workloads": {"nginx": wl}})["nginx"]
    assert got["ratio"] == {"median": 0.9, "min": 0.8, "max": 1.0}
    assert got["verdict"].startswith("missed by the median")


# ---- the baseline ----------------------------------------------------------

def spread(m, lo=None, hi=None):
    return {"median": m, "min": m - 1 if lo is None else lo,
            "max": m + 1 if hi is None else hi}


def loops_doc(exit_ns, over, lo=None, hi=None):
    fe = probes.FLOORS["exit"]
    return {"host": {"cpu": "CPU A"}, "loops": {
        "reps": 1, "seconds": 0.3, "cpu": 1, "kinds": ["getppid"],
        "targets": [], "foreign_probes": 0, "true_s": spread(0.06),
        "rows": [
        {"config": "bare", "kind": "getppid", "ns": 165},
        {"config": fe, "kind": "getppid", "added": spread(exit_ns),
         "ns": 165 + exit_ns, "x_bare": 1 + exit_ns / 165,
         "over_floor": None, "x_floor": None},
        {"config": "scprof -C -a", "kind": "getppid", "floor": "exit",
         "added": spread(exit_ns + over, lo, hi), "over_floor": over,
         "ns": 165 + exit_ns + over, "x_bare": 1 + (exit_ns + over) / 165,
         "x_floor": (exit_ns + over) / exit_ns}]}}


@pytest.mark.parametrize("cur, base, dearer, within_noise, compared", [
    (loops_doc(100, 40), loops_doc(100, 20), 1, 0, 1),
    (loops_doc(100, 30, 110, 150), loops_doc(100, 20), 0, 1, 1),
    # the floors moved: the loop is not compared
    (loops_doc(200, 80), loops_doc(100, 20), 0, 0, 0),
    # twice as dear, but by less than 3 ns
    (loops_doc(100, 4), loops_doc(100, 2), 0, 0, 1)])
def test_compare(cur, base, dearer, within_noise, compared):
    res = compare.compare(cur, base)
    assert (len(res["dearer"]), len(res["within_noise"]),
            res["compared"]) == (dearer, within_noise, compared), res
    assert all(k == "loops/getppid/scprof -C -a"
               for k, *_ in res["dearer"] + res["within_noise"])
    assert any("not compared" in n for n in res["notes"]) == (not compared)


def full_doc(ratio=0.8, pipe=1.05, over=3.0, bpf=5.0):
    """A run with every section, as bench.json holds it."""
    doc = loops_doc(100, 20)
    doc.update(git="abc", date="2026-11-29 03:37 UTC", host={
        "cpu": "CPU A", "cpus": 2, "kernel": "6.18", "virt": "kvm"})
    rows = [{"config": c, "label": c, "ratio": spread(r, r - .01, r + .01),
             "ratios": [r], "rps": 1000.0, "tracer_cpu": 0.01,
             "calls_per_request": 7.0, "floor": None, "x_floor": None}
            for c, r in (("scprof -p", ratio), ("scprof -p --no-split", 0.9),
                         ("strace -c -f <&>", 0.1))]
    doc["services"] = {"reps": 1, "seconds": 2, "long_seconds": 11, "cpu": 1,
                       "client_cpu": 0, "workloads": {"nginx": {
                           "desc": "nginx", "rows": rows,
                           "bare_rps": spread(1000), "noise": 0.03,
                           "foreign_probes": 0}}}
    doc["split"] = {"reps": 1, "loops": 1000, "cpu": 1, "bare_cpu_ns": 12e3,
                    "no_split_cpu_ns": 13e3, "split_cpu_ns": 14e3,
                    "ratio": spread(pipe, pipe - .01, pipe + .01)}
    doc["budget"] = {"reps": 1, "seconds": 20, "bare_ns": 170,
                     "c_a_added": spread(110.0), "added": spread(110 + over),
                     "over_c_a_ns": over, "budget_share": 0.01,
                     "limit_ns": 6.7, "calls": 1e8, "lost_s": 0.3,
                     "metrics_cost_s": 0.2, "budget_s": 0.2, "windows": 2,
                     "daemon_cpu": 0.004, "rss_bytes": 12 << 20}
    rows = [{"loops": n, "churn_per_s": 750 * n, "execve_per_s": 750 * n,
             "cpu_percent": 0.1 + 1.5e-3 * n, "bpf_per_s": 750 * n * bpf,
             "cpu_us_per_process": 16.0, "cpu_us_per_execve": 16.0,
             "bpf_per_process": bpf, "bpf_per_execve": bpf} for n in (1, 2)]
    doc["churn"] = {"slices": rows,
                    "stages": [{"loops": r["loops"],
                                **{k: spread(v, v, v) for k, v in r.items()
                                   if k != "loops"}} for r in rows],
                    **{k: spread(v, v, v) for k, v in rows[1].items()
                       if k != "loops"},
                    "fit": daemon.churn_fit(rows)}
    doc["churn"]["cpu_percent_at_goal"], doc["churn"]["goal_verdict"] = \
        daemon.churn_goal(doc["churn"])
    return doc


def test_every_section_has_figures_compared():
    res = compare.compare(full_doc(ratio=0.6, pipe=1.3, over=9.0, bpf=9.0),
                          full_doc())
    assert sorted(k for k, *_ in res["dearer"]) == [
        "budget/daemon over -C -a", "churn/daemon bpf() per process",
        "services/nginx/scprof -p", "split/nginx", "split/sched pipe"]
    res = compare.compare(full_doc(), full_doc())
    assert res["compared"] == 8 and not res["dearer"], res


def test_baseline_file_is_a_figure_a_line_and_compares_like_a_run(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(compare.baseline_text(full_doc(), "abc"))
    text = path.read_text()
    assert len(text.splitlines()) < 30 + len(compare.values(full_doc()))
    base = compare.load(str(path))
    assert base["git"] == "abc"
    assert compare.values(base)["budget/daemon over -C -a"]["value"] == 3.0
    res = compare.compare(full_doc(over=9.0), copy.deepcopy(base))
    assert [k for k, *_ in res["dearer"]] == ["budget/daemon over -C -a"]


# ---- the outputs -------------------------------------------------------------

def test_chart_is_svg_with_escaped_labels():
    svg = chart.services_chart(full_doc()["services"], full_doc()["host"])
    texts = [t.text for t in ET.fromstring(svg).iter(
        "{http://www.w3.org/2000/svg}text")]
    assert "strace -c -f <&>" in texts and "scprof -p" in texts, texts


def cells(md, first):
    """The cells of the Markdown table row whose first cell is first."""
    for line in md.splitlines():
        c = [x.strip() for x in line.strip("|").split("|")]
        if line.startswith("|") and c[0] == first:
            return c
    return None


def test_report_prints_the_markdown_and_writes_the_chart(tmp_path, capsys):
    doc = full_doc()
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(dict(doc, version=3)))
    page = tmp_path / "docs" / "overhead.md"
    page.parent.mkdir()
    page.write_text("%s\n%s\n" % (bench.RESULTS_BEGIN, bench.RESULTS_END))
    a = bench.parse_args(["--from-json", str(path), "--out", str(tmp_path),
                          "--baseline", "none", "--readme", str(page)])
    assert bench.report(a, compare.load(str(path))) == 0
    out = capsys.readouterr().out
    assert out == bench.markdown(doc, str(tmp_path / "services.svg")) + "\n"
    assert page.read_text() == "%s\n%s%s\n" % (
        bench.RESULTS_BEGIN, bench.markdown(doc, bench.README_CHART),
        bench.RESULTS_END)
    assert (tmp_path / "services.svg").read_text() == \
        (page.parent / bench.README_CHART).read_text()
    for word in ("split / no-split 1.050", "within the noise (3.0 points)",
                 "the daemon over -C -a: +3.0 ns a call, limit 6.7",
                 "the daemon at 0.10 (0.10-0.10)% of a CPU, 16.00 "
                 "(16.00-16.00) us an execve",
                 "goal, <= 0.5% of a CPU at ~1000 execve/s: 0.10%, met, "
                 "measured at 1500 execve/s (2 loops); and <= 0.62 bpf() "
                 "calls an execve (617 a second): missed", "![requests/s traced / untraced]("):
        assert word in out, word
    assert cells(out, "scprof -C -a") == [
        "scprof -C -a", "285", "120 (119-121)", "1.73", "+20 (floor-exit)",
        "1.20"]
    assert cells(out, "scprof -p") == [
        "scprof -p", "0.80 (0.79-0.81)", "", "1000", "7.0", "1.0%"]


def test_markdown_says_when_and_under_what_load():
    doc = dict(full_doc(), loadavg={"loops": 8.04, "services": 11.5})
    md = bench.markdown(doc, None).splitlines()
    head = md[0]
    assert md[1] == "" and md[2].startswith("**Loops**"), md[:3]
    assert "CPU A, 2 CPUs (kvm)" in head and "2026-11-29 03:37 UTC" in head
    assert "load average (1 min) as each section ended: loops 8.0, " \
        "services 11.5, on 2 CPUs" in head, head


def test_budget_is_resolved_only_beyond_the_spreads():
    b = full_doc()["budget"]  # spreads of 0: +3.0 against 6.7
    assert daemon.budget_verdict(b) == "met"
    b = dict(b, added=spread(113.0, 100.0, 126.0))  # +-13 ns, -C -a +-1
    assert daemon.budget_verdict(b) == \
        "met by the medians, not resolved by the spreads (+-14.0 ns)"
    b = dict(b, over_c_a_ns=30.0)
    assert daemon.budget_verdict(b) == "MISSED"


def test_a_dearer_run_exits_3(tmp_path):
    base = tmp_path / "baseline.json"
    base.write_text(compare.baseline_text(full_doc(), "abc"))
    run = tmp_path / "bench.json"
    run.write_text(json.dumps(dict(full_doc(over=9.0), version=3)))
    a = bench.parse_args(["--from-json", str(run), "--out", str(tmp_path),
                          "--baseline", str(base)])
    assert bench.report(a, compare.load(str(run))) == bench.EXIT_DEARER


def test_readme_writes_the_overhead_page_by_default():
    assert bench.parse_args(["--from-json", "x"]).readme is None
    a = bench.parse_args(["--from-json", "x.json", "--readme"])
    with open(a.readme) as f:  # docs/overhead.md, its markers once each
        doc = f.read().split(bench.RESULTS_BEGIN)
    assert len(doc) == 2 and doc[1].count(bench.RESULTS_END) == 1 and \
        bench.RESULTS_END not in doc[0]


def test_update_results_keeps_the_hand_written_text(tmp_path):
    page = tmp_path / "overhead.md"
    page.write_text("# Overhead\n\nBy hand.\n\n%s\nold run\n%s\n\nAfter.\n" %
                    (bench.RESULTS_BEGIN, bench.RESULTS_END))
    bench.update_results(str(page), "new run\n")
    bench.update_results(str(page), "newer run\n")
    assert page.read_text() == (
        "# Overhead\n\nBy hand.\n\n%s\nnewer run\n%s\n\nAfter.\n" %
        (bench.RESULTS_BEGIN, bench.RESULTS_END))
    bare = tmp_path / "bare.md"
    bare.write_text("# Overhead\n")
    with pytest.raises(probes.BenchError, match="markers"):
        bench.update_results(str(bare), "run\n")
    assert bare.read_text() == "# Overhead\n"


def churn_rows(points):
    return [{"loops": n, "execve_per_s": x, "cpu_percent": y}
            for n, x, y in points]


def test_churn_fit_separates_the_fixed_cost_from_the_cost_an_execve():
    # 0.12% of a CPU with no churn, 2 us an execve (0.02% per 100/s)
    rows = churn_rows([(1, x, 0.12 + 2e-4 * x) for x in (580, 600, 620)] +
                      [(2, x, 0.12 + 2e-4 * x) for x in (1100, 1150)])
    f = daemon.churn_fit(rows)
    assert f["fixed_percent"] == pytest.approx(0.12)
    assert f["us_per_execve"] == pytest.approx(2.0)
    assert f["percent_at_goal"] == pytest.approx(0.32)
    assert f["rates"] == [580, 1150]
    # one rate only: no line, whatever the CPU figures
    assert daemon.churn_fit(churn_rows([(1, 600, 0.3), (1, 601, 0.4)])) \
        is None
    # more churn for less CPU (a busy machine's other load): no line
    assert daemon.churn_fit(churn_rows([(1, 800, 0.2), (2, 600, 0.5)])) \
        is None


def churn_doc(stages):
    rows = churn_rows([(n, x, y) for n, x, y in stages])
    doc = {"stages": [{"loops": n, "execve_per_s": spread(x, x, x),
                       "cpu_percent": spread(y, y, y)}
                      for n, x, y in stages],
           "cpu_us_per_execve": spread(*(3 * [1e4 * stages[-1][2] /
                                             stages[-1][1]])),
           "execve_per_s": spread(*(3 * [stages[-1][1]])),
           "fit": daemon.churn_fit(rows)}
    return doc


def test_churn_goal_measured_where_a_stage_reaches_the_rate():
    v, how = daemon.churn_goal(churn_doc([(1, 600, 0.30), (2, 1100, 0.40)]))
    assert v == 0.40 and how == "met, measured at 1100 execve/s (2 loops)"
    v, how = daemon.churn_goal(churn_doc([(1, 600, 0.30), (2, 1100, 0.55)]))
    assert v == 0.55 and how.startswith("missed, measured at 1100")


def test_churn_goal_by_the_line_below_the_rate_and_by_scaling_alone():
    # 0.11% fixed and 3.75 us an execve: 0.485% at 1,000/s, met
    v, how = daemon.churn_goal(churn_doc([(1, 400, 0.26), (2, 800, 0.41)]))
    assert v == pytest.approx(0.485)
    assert how == "met, extrapolated from 400-800 execve/s"
    v, how = daemon.churn_goal(churn_doc([(1, 400, 0.30), (2, 800, 0.50)]))
    assert v == pytest.approx(0.60) and how.startswith("missed, extra")
    # one stage: the cost an execve scaled, the fixed cost in it
    v, how = daemon.churn_goal(churn_doc([(1, 600, 0.33)]))
    assert v == pytest.approx(0.55)
    assert how == "missed, scaled from 600 execve/s, fixed cost included"


def test_churn_loops_are_checked():
    assert bench.parse_args(["--from-json", "x", "--churn-loops", "1,2"]) \
        .churn_loops == [1, 2]
    for bad in ("", "0", "1,x", "65"):
        with pytest.raises(SystemExit):
            bench.parse_args(["--from-json", "x", "--churn-loops", bad])


def test_churn_markdown_has_each_stage_the_line_and_the_verdict():
    doc = full_doc()
    md = daemon.markdown(doc)
    assert "of each stage's 1 slices" in md
    assert "- 1 loop: 750 (750-750) execve calls a second" in md
    assert "- 2 loops: 1500 (1500-1500) execve calls" in md
    assert "a fixed 0.10% of a CPU and 0.02 us an execve" in md
    assert "0.10%, met, measured at 1500 execve/s (2 loops)" in md


def test_quick_is_one_repetition_and_short_runs():
    a = bench.parse_args(["--from-json", "x", "--quick"])
    assert (a.reps, a.budget_seconds, a.churn_seconds, a.pipe_loops) == (
        1, 10, 5, 30000)

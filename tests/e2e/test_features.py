"""scprof features, and the legacy build of the BPF programs (issue #19).

The legacy build is what kernels without a facility run (Linux 5.10
lacks them all); SCPROF_WITHOUT makes it run here, so its counts can be
checked against the default build's on the same workload. The kernel
matrix (make test-kernels) runs both on the real kernels.
"""
import json
import os

import pytest

from conftest import (SCPROF, by_name, run, run_scprof, scprof_json,
                      workload, nothing_dropped)

FACILITIES = ["task_btf", "task_storage", "cmpxchg", "task_regs",
              "tail_calls", "run_delay"]
# without these the default build runs still (a cheaper path is not taken)
OPTIONAL = ["tail_calls", "run_delay"]


def features(env_without=None):
    env = dict(os.environ)
    env.pop("SCPROF_WITHOUT", None)
    if env_without is not None:
        env["SCPROF_WITHOUT"] = env_without
    proc = run([SCPROF, "features", "--format", "json"], env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_lists_every_facility_with_its_probe():
    f = features()
    assert [r["name"] for r in f["facilities"]] == FACILITIES
    for r in f["facilities"]:
        assert r["since"] and r["probe"] and r["without"] and r["what"]
        assert r["forced_off"] is False
        assert r["optional"] is (r["name"] in OPTIONAL)
    assert f["kernel"] == os.uname().release


@pytest.mark.parametrize("name", FACILITIES + ["all"])
def test_without_marks_it_missing_and_picks_the_build(name):
    f = features(name)
    rows = {r["name"]: r for r in f["facilities"]}
    off = FACILITIES if name == "all" else [name]
    for n in off:
        assert rows[n]["present"] is False and rows[n]["forced_off"] is True
    assert f["build"] == ("default" if name in OPTIONAL else "legacy")


def test_default_build_where_the_kernel_has_everything():
    f = features()
    if not all(r["present"] for r in f["facilities"] if not r["optional"]):
        pytest.skip("this kernel lacks a facility: the legacy build runs "
                    "anyway (see make test-kernels)")
    assert f["build"] == "default"


def test_table_and_errors():
    proc = run_scprof(["features"])
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert "build of the BPF programs runs" in text
    for n in FACILITIES:
        assert n in text
    for bad in (["features", "x"], ["features", "--format", "csv"],
                ["features", "--nope"]):
        proc = run_scprof(bad)
        assert proc.returncode == 2, bad
        assert len(proc.stderr.decode().strip().splitlines()) == 1, bad


def test_output_dash_is_stdout(tmp_path):
    """-o - is standard output, not a file named -."""
    proc = run_scprof(["features", "--format", "json", "-o", "-"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
    assert os.listdir(tmp_path) == []


GT = ["500", "20", "30", "2", "40"]  # groundtruth's arguments


def gt_counts(args, without):
    env = dict(os.environ)
    env.pop("SCPROF_WITHOUT", None)
    if without:
        env["SCPROF_WITHOUT"] = without
    proc, rep = scprof_json(args, [workload("groundtruth")] + GT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert nothing_dropped(rep["dropped"]), rep["dropped"]
    return {n: (s["calls"], s["errors"])
            for n, s in by_name(rep["syscalls"]).items()}


@pytest.mark.parametrize("args", [["-f"], ["-f", "-C"]], ids=["full", "count"])
@pytest.mark.parametrize("without", ["all", "task_btf", "task_storage",
                                     "task_regs,cmpxchg"])
def test_legacy_build_counts_as_the_default(args, without):
    """Every syscall's calls and errors: the same in both builds."""
    default = gt_counts(args, None)
    legacy = gt_counts(args, without)
    assert default["getppid"] == (540, 0)
    assert default["openat"][1] >= 20
    assert legacy == default

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scprof -f and strace -c -f must agree on deterministic real programs.

Every syscall `strace -c -f -w` lists must have exactly the same calls and
errors in `scprof -f`. The one documented difference: scprof also counts
exit_group (strace -c counts a call when it returns, and exit_group never
does), once per process. scprof must list nothing else strace does not.

Both runs get the same environment, working directory, stdin and a fresh
stdout file of the same name, so the programs take the same paths.
"""
import os
import random
import subprocess

import pytest

from conftest import CLEAN_ENV, counts, scprof_json, strace_summary

# strace -c never shows these; scprof counts them at entry.
NEVER_RETURN = {"exit_group", "exit"}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A fixed tree: directories, files of a few sizes, a symlink, a text file."""
    base = tmp_path_factory.mktemp("strace-compare")
    top = base / "tree"
    rng = random.Random(42)
    for d in ("a", "a/b", "a/b/c", "d", "empty"):
        (top / d).mkdir(parents=True)
    sizes = {"a/one": 1, "a/b/page": 4096, "a/b/c/big": 70000,
             "d/zero": 0, "d/text.txt": 300, "top.txt": 12345}
    for name, size in sizes.items():
        (top / name).write_bytes(bytes(rng.randrange(256) for _ in range(size)))
    os.symlink("a/one", top / "link")
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randrange(1, 8)))
             for _ in range(2000)]
    data = base / "data.txt"
    data.write_text("\n".join(lines) + "\n")
    return base


PROGRAMS = {
    "dd-zero": ["dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=1000"],
    "dd-file": ["dd", "if=data.txt", "of=/dev/null", "bs=1k"],
    "tar-devnull": ["tar", "cf", "-", "tree"],   # stdout /dev/null: tar skips
    "tar": ["tar", "cf", "-", "tree"],           # the reads; to a file it reads
    "find": ["find", "tree"],
    "find-size": ["find", "tree", "-type", "f", "-size", "+1k"],
    "python-S": ["/usr/bin/python3", "-S", "-c", "pass"],
    "python-I": ["/usr/bin/python3", "-I", "-c", "pass"],
    "ls": ["ls", "-la", "tree"],
    "ls-recursive": ["ls", "-lR", "tree"],
    "cat": ["cat", "data.txt"],
    "sort": ["sort", "data.txt"],
    "gzip": ["gzip", "-c", "data.txt"],
    "sh": ["sh", "-c", "echo a; ls tree; cat data.txt; ls /nonexistent; "
           "cat tree/link; true"],
}
DEVNULL_STDOUT = {"tar-devnull", "dd-zero", "dd-file"}


def run_both(tree, name):
    cmd = PROGRAMS[name]
    results = []
    for tool in ("strace", "scprof"):
        path = tree / "out"
        with open(os.devnull if name in DEVNULL_STDOUT else path, "wb") as out:
            if tool == "strace":
                st = strace_summary(cmd, env=CLEAN_ENV, cwd=tree, stdout=out)
                results.append({k: v[:2] for k, v in st.items()})
            else:
                proc, rep = scprof_json(["-f"], cmd, env=CLEAN_ENV, cwd=tree,
                                        stdout=out)
                assert proc.returncode == 0, proc.stderr
                results.append(rep)
        if os.path.exists(path):
            os.unlink(path)
    return results


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_counts_as_strace(tree, name):
    st, rep = run_both(tree, name)
    sc = counts(rep["syscalls"])
    assert not counts(rep["syscalls"], "32") and \
        not any(k.startswith("32:") for k in st)
    # Every syscall strace lists, with the same calls and errors.
    diff = {k: (v, sc.get(k)) for k, v in st.items() if sc.get(k) != v}
    assert not diff, f"{name}: (strace, scprof) differ: {diff}"
    # Nothing more but the calls that never return.
    extra = set(sc) - set(st)
    assert extra <= NEVER_RETURN, f"{name}: only in scprof: {extra}"
    # exit_group: exactly one per process that did not die of a signal.
    nprocs = len(rep["processes"])
    assert sc.get("exit_group", (0, 0)) == (nprocs, 0)
    execs = st.get("execve", (0, 0))
    assert nprocs == execs[0] - execs[1], \
        "one process per successful execve: no other forks in these programs"
    assert len(st) >= 10, f"suspiciously few syscalls from strace: {st}"

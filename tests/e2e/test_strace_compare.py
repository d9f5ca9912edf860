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
import shutil

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


# name: (command, exit status); run in the tree's parent directory
PROGRAMS = {
    "dd-zero": (["dd", "if=/dev/zero", "of=/dev/null", "bs=4k",
                 "count=1000"], 0),
    "dd-file": (["dd", "if=data.txt", "of=/dev/null", "bs=1k"], 0),
    "tar-devnull": (["tar", "cf", "-", "tree"], 0),
    "tar": (["tar", "cf", "-", "tree"], 0),
    "find": (["find", "tree"], 0),
    "find-size": (["find", "tree", "-type", "f", "-size", "+1k"], 0),
    "python-S": (["/usr/bin/python3", "-S", "-c", "pass"], 0),
    "python-I": (["/usr/bin/python3", "-I", "-c", "pass"], 0),
    "ls": (["ls", "-la", "tree"], 0),
    "ls-recursive": (["ls", "-lR", "tree"], 0),
    "ls-missing": (["ls", "/nonexistent/scprof"], 2),
    "cat": (["cat", "data.txt"], 0),
    "sort": (["sort", "data.txt"], 0),
    "gzip": (["gzip", "-c", "data.txt"], 0),
    "sha256sum": (["sha256sum", "data.txt"], 0),
    "wc": (["wc", "data.txt"], 0),
    "head": (["head", "-c", "100", "data.txt"], 0),
    "du": (["du", "-s", "tree"], 0),
    "stat": (["stat", "tree", "data.txt"], 0),
    "id": (["id"], 0),
    "cp-r": (["cp", "-r", "tree", "copy"], 0),
    "mkdir-p": (["mkdir", "-p", "newdir/a/b"], 0),
    "ln-s": (["ln", "-s", "data.txt", "lnk"], 0),
    # execvp walks PATH: every miss is a failed execve
    "env-missing": (["env", "scprof-e2e-no-such-command"], 127),
    "sh-exec": (["sh", "-c", "exec ls tree"], 0),
    "sh": (["sh", "-c", "echo a; ls tree; cat data.txt; ls /nonexistent; "
            "cat tree/link; true"], 0),
}
DEVNULL_STDOUT = {"tar-devnull", "dd-zero", "dd-file"}
# What the programs create, removed before each run.
CREATED = ("copy", "newdir", "lnk")


def clean(base):
    for name in CREATED:
        path = base / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def run_both(tree, name):
    cmd, status = PROGRAMS[name]
    results = []
    for tool in ("strace", "scprof"):
        clean(tree)
        path = tree / "out"
        with open(os.devnull if name in DEVNULL_STDOUT else path, "wb") as out:
            if tool == "strace":
                st = strace_summary(cmd, env=CLEAN_ENV, cwd=tree, stdout=out,
                                    status=status)
                results.append({k: v[:2] for k, v in st.items()})
            else:
                proc, rep = scprof_json(["-f"], cmd, env=CLEAN_ENV, cwd=tree,
                                        stdout=out)
                assert proc.returncode == status, proc.stderr
                results.append(rep)
        if os.path.exists(path):
            os.unlink(path)
    clean(tree)
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
    assert len(st) >= 10, f"suspiciously few syscalls from strace: {st}"

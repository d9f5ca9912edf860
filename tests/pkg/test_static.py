# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make static: one statically linked scprof that profiles a program in an
empty root holding nothing but the two of them (with /proc and /sys
mounted), and whose top runs there with no terminfo database."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import ROOT, need, run

pytestmark = pytest.mark.heavy

STATIC = os.environ.get("SCPROF_STATIC", os.path.join(ROOT, "scprof-static"))

# A static workload with known counts: N getppid, M failing openat, and a
# child that makes K getppid before it exits.
WORKLOAD = r'''
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
int main(int argc, char **argv)
{
	long n = atol(argv[1]), m = atol(argv[2]), k = atol(argv[3]);
	int status;
	pid_t pid;

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	for (long i = 0; i < m; i++)
		syscall(SYS_openat, AT_FDCWD, "/nonexistent", O_RDONLY);
	pid = (pid_t)syscall(SYS_fork);
	if (pid == 0) {
		for (long i = 0; i < k; i++)
			syscall(SYS_getppid);
		syscall(SYS_exit_group, 0);
	}
	syscall(SYS_wait4, pid, &status, 0, NULL);
	return 0;
}
'''


@pytest.fixture(scope="module")
def empty_root():
    """A directory with the static scprof and the static workload only."""
    assert os.path.exists(STATIC), "run make static first"
    d = tempfile.mkdtemp(prefix="scprof-root-")
    try:
        shutil.copy(STATIC, os.path.join(d, "scprof"))
        src = os.path.join(d, "w.c")
        with open(src, "w") as f:
            f.write(WORKLOAD)
        r = run(["cc", "-static", "-O2", src, "-o", os.path.join(d, "w")])
        assert r.returncode == 0, r.stderr
        os.unlink(src)
        os.mkdir(os.path.join(d, "proc"))
        os.mkdir(os.path.join(d, "sys"))
        assert sorted(os.listdir(d)) == ["proc", "scprof", "sys", "w"]
        yield d
    finally:
        shutil.rmtree(d)


def in_root(root, argv, ro=False, tty=False, env=None):
    """Run argv in a mount namespace chrooted to root, /proc and /sys
    mounted (and root read-only when ro)."""
    need("unshare")
    cmd = (f"mount --bind {root} {root} && "
           f"mount -t proc proc {root}/proc && "
           f"mount --rbind /sys {root}/sys && "
           + (f"mount -o remount,bind,ro {root} && " if ro else "")
           + f"exec chroot {root} " + " ".join(argv))
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", cmd]
    if tty:
        # A real pseudo-terminal for top: script(1) gives one.
        need("script")
        argv = ["script", "-qec", " ".join(
            "'" + a.replace("'", "'\\''") + "'" for a in argv), "/dev/null"]
    e = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
    e.update(env or {})
    return run(argv, env=e, timeout=120)


def test_static_binary_has_no_interpreter_or_libraries():
    r = run(["readelf", "-l", "-d", STATIC])
    assert r.returncode == 0, r.stderr
    assert "INTERP" not in r.stdout
    assert "NEEDED" not in r.stdout
    assert re.match(r"scprof \S+ \(git \S+\)\n$",
                    run([STATIC, "--version"]).stdout)


def test_profiles_a_static_program_in_an_empty_root(empty_root):
    r = in_root(empty_root, ["/scprof", "-f", "--format", "json", "-o",
                             "/out.json", "--", "/w", "3000", "200", "700"])
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        with open(os.path.join(empty_root, "out.json")) as f:
            rep = json.load(f)
    finally:
        if os.path.exists(os.path.join(empty_root, "out.json")):
            os.unlink(os.path.join(empty_root, "out.json"))
    calls = {s["name"]: s for s in rep["syscalls"]}
    # Ground truth: the workload's own counts (3000 + 700 in the child).
    assert calls["getppid"]["calls"] == 3700
    assert calls["openat"]["calls"] == 200
    assert calls["openat"]["errors"] == 200
    assert sum(calls[n]["calls"] for n in ("fork", "clone", "clone3")
               if n in calls) == 1
    assert calls["exit_group"]["calls"] == 2


def test_top_runs_with_no_terminfo_database(empty_root):
    """TERM=xterm and no terminfo anywhere: the built-in entry is used."""
    r = in_root(empty_root, ["/scprof", "top", "-n", "2", "-i", "0.3"],
                tty=True, env={"TERM": "xterm"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PID COMM" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", " ", r.stdout) \
        or "COMM" in r.stdout, r.stdout[-2000:]
    assert "\x1b[" in r.stdout  # a full screen, not text
    # The private terminfo directory is gone again.
    assert sorted(os.listdir(empty_root)) == ["proc", "scprof", "sys", "w"]


def test_top_says_why_when_it_cannot_unpack_the_builtin_entry(empty_root):
    r = in_root(empty_root, ["/scprof", "top", "-n", "1"], ro=True,
                tty=True, env={"TERM": "xterm"})
    assert r.returncode == 1
    assert "cannot use the terminal: no terminfo entry for TERM=xterm and " \
        "the built-in xterm one: no writable directory" in r.stdout
    assert "--batch needs none" in r.stdout


def test_daemon_in_the_static_binary_has_no_tls(empty_root):
    """The daemon serves plain HTTP; TLS is what the static binary lacks
    (GnuTLS cannot be linked statically from Debian's packages)."""
    r = run(["strings", STATIC])
    assert "TLS is not available in the static scprof" in r.stdout

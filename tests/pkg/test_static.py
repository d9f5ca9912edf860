# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make static: one statically linked scprof that profiles a program in an
empty root holding nothing but the two of them (with /proc and /sys
mounted), and whose top runs there with no terminfo database."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.request

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


def test_daemon_serves_metrics_from_the_empty_root(empty_root):
    """The static daemon (libmicrohttpd linked in) serves plain HTTP."""
    cmd = (f"mount --bind {empty_root} {empty_root} && "
           f"mount -t proc proc {empty_root}/proc && "
           f"mount --rbind /sys {empty_root}/sys && "
           f"exec chroot {empty_root} /scprof daemon -l 127.0.0.1:0")
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh",
                          "-c", cmd], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"serving metrics at (http://\S+/metrics)", line)
        assert m, line
        with urllib.request.urlopen(m.group(1), timeout=30) as resp:
            body = resp.read().decode()
        assert re.search(r"^scprof_build_info\{", body, re.M), body[:500]
        assert "scprof_syscalls_total" in body
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0, p.stderr.read()


# A program on the static binary's own libmicrohttpd.a and stand-ins that
# asks for HTTPS: it must fail, and say why.
TLS_PROBE = r'''
#include <stdio.h>
#include <microhttpd.h>
static enum MHD_Result answer(void *c, struct MHD_Connection *conn,
		const char *url, const char *method, const char *version,
		const char *data, size_t *size, void **ptr)
{
	return MHD_NO;
}
int main(void)
{
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_TLS | MHD_USE_ERROR_LOG | MHD_USE_INTERNAL_POLLING_THREAD,
		0, NULL, NULL, answer, NULL,
		MHD_OPTION_HTTPS_MEM_KEY, "key", MHD_OPTION_HTTPS_MEM_CERT, "cert",
		MHD_OPTION_END);
	printf("%s\n", d ? "started" : "refused");
	return d != NULL;
}
'''


def test_tls_is_refused_in_the_static_build_and_says_why():
    """GnuTLS cannot be linked statically from Debian's packages (p11-kit
    has no static library): pkg/no_gnutls.c stands in, TLS fails."""
    r = run(["readelf", "-s", STATIC])
    assert " gnutls_global_init" in r.stdout  # the stand-ins are in
    assert "p11_kit" not in r.stdout
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "probe.c")
        with open(src, "w") as f:
            f.write(TLS_PROBE)
        stub = os.path.join(ROOT, "pkg", "no_gnutls.c")
        exe = os.path.join(d, "probe")
        r = run(["cc", "-static", "-w", src, stub, "-o", exe,
                 "-lmicrohttpd"])
        assert r.returncode == 0, r.stderr
        r = run([exe])
    assert r.stdout == "refused\n"
    assert "TLS is not available in the static scprof" in r.stderr, r.stderr


def test_otlp_push_is_refused_in_the_static_build_and_says_why():
    """libcurl cannot be linked statically from Debian's packages:
    pkg/no_curl.c stands in, and daemon --otlp-endpoint exits saying
    so."""
    r = run(["readelf", "-s", STATIC])
    assert " curl_global_init" in r.stdout  # the stand-ins are in
    assert "Curl_" not in r.stdout  # and no libcurl.a
    r = run([STATIC, "daemon", "-l", "127.0.0.1:0", "-p", str(os.getpid()),
             "--otlp-endpoint", "http://127.0.0.1:9"])
    assert r.returncode == 1, r.stderr
    assert "OTLP push is not available in the static scprof" in r.stderr, \
        r.stderr

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make install into a DESTDIR with a PREFIX, use what was installed, and
make uninstall."""
import os
import re
import tempfile

from conftest import ROOT, SCPROF, MAKE, make_env, need, run

PREFIX = "/opt/scprof-test"


def make(*args):
    r = run([MAKE, "-s", "-C", ROOT, "--no-print-directory"] + list(args),
            env=make_env(), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def installed_files(root):
    found = []
    for d, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return sorted(found)


def test_install_into_destdir_and_uninstall():
    with tempfile.TemporaryDirectory() as destdir:
        make("install", f"DESTDIR={destdir}", f"PREFIX={PREFIX}")
        p = PREFIX.lstrip("/")
        assert installed_files(destdir) == sorted([
            f"{p}/sbin/scprof",
            f"{p}/share/man/man8/scprof.8",
            f"{p}/share/man/man8/scprof-top.8",
            f"{p}/share/man/man8/scprof-daemon.8",
            f"{p}/share/man/man8/scprof-calibrate.8",
            f"{p}/share/man/man8/scprof-verdict.8",
            f"{p}/share/man/man8/scprof-features.8",
            f"{p}/share/man/man8/scprof-diff.8",
            f"{p}/share/bash-completion/completions/scprof",
            f"{p}/share/zsh/site-functions/_scprof",
            f"{p}/lib/systemd/system/scprof-daemon.service",
        ])
        root = os.path.join(destdir, p)

        # The installed binary is this build's, and runs.
        sbin = os.path.join(root, "sbin", "scprof")
        assert os.stat(sbin).st_mode & 0o777 == 0o755
        r = run([sbin, "--version"])
        assert r.returncode == 0 and r.stdout == run([SCPROF, "-V"]).stdout

        # man -l reads the installed page.
        need("man")
        r = run(["man", "-l", "-Tutf8", os.path.join(
            root, "share", "man", "man8", "scprof-daemon.8")],
            env=dict(os.environ, MANWIDTH="80"))
        assert r.returncode == 0, r.stderr
        text = re.sub(".\b", "", r.stdout)
        assert "scprof-daemon - serve system call metrics" in text
        assert "--listen" in text and "EXAMPLES" in text

        # The unit runs the binary where PREFIX put it.
        with open(os.path.join(root, "lib", "systemd", "system",
                               "scprof-daemon.service")) as f:
            unit = f.read()
        execs = re.findall(r"^ExecStart=(\S+)", unit, re.M)
        assert execs == [f"{PREFIX}/sbin/scprof"], execs
        assert "/usr/local" not in unit

        # The installed bash completion works from where it is.
        r = run(["bash", "--norc", "-c",
                 "source /usr/share/bash-completion/bash_completion; "
                 f"source {root}/share/bash-completion/completions/scprof; "
                 "COMP_WORDS=(scprof daemon --pidf); COMP_CWORD=2; "
                 "COMP_LINE='scprof daemon --pidf'; COMP_POINT=20; "
                 "_scprof; echo \"${COMPREPLY[*]}\""])
        assert r.stdout.strip() == "--pidfile", r.stdout + r.stderr

        make("uninstall", f"DESTDIR={destdir}", f"PREFIX={PREFIX}")
        assert installed_files(destdir) == []

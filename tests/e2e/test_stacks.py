# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--stacks: sampled user stacks, unwound with CFI, against known call sites.

tests/workloads/stackmix, built with -O2 -fomit-frame-pointer, writes to
/dev/null RATIO times through stdio (fprintf + fflush, from log_line <-
run_logger <- main) for each write(2) it makes directly (raw_write <-
run_raw <- main). The sampled write stacks must give that ratio within a
few points, almost all must unwind to main, and the number of samples must
be the calls over N. stackmix-stripped is the same program stripped: its
own frames are module+offset, the C library's still named.

A process's mappings are copied when its first sample comes (and read
again when it is unwound, if it still runs): the workloads run (or sleep)
a few hundred ms all the same, and still exit before the report;
test_gone_before_unwinding has them exit before they are unwound.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import xml.dom.minidom

import pytest

from conftest import (CLEAN_ENV, run_scprof, scprof_json, workload)

ROUNDS = 100000
RATIO = 3
PERIOD = 200


def frames_of(stack):
    return [f["function"] for f in stack["frames"]]


def write_stacks(report, comm="stackmix"):
    return [s for s in report["stacks"]
            if s["syscall"] == "write" and s["comm"].startswith(comm[:15])]


def share(stacks, pred):
    total = sum(s["count"] for s in stacks)
    assert total > 0, "no write stack sampled"
    return sum(s["count"] for s in stacks if pred(s)) / total


def check_sampling(report, calls, period):
    """Samples (and lost ones) are about calls / period."""
    st = report["stack_sampling"]
    assert st["period"] == period
    got = st["samples"] + st["lost"]
    want = calls / period
    assert 0.8 * want <= got <= 1.2 * want, \
        f"{got} samples of {calls} calls, 1 in {period}: expected ~{want:.0f}"
    assert st["samples"] == sum(s["count"] for s in report["stacks"])
    # (the ring buffer holds ~1000 samples and is drained every 5 ms: a
    # loaded machine may lose some, which are counted, not hidden)
    assert st["lost"] <= 0.2 * got, f"too many samples lost: {st}"


def test_call_site_ratio_and_unwinding():
    proc, rep = scprof_json([f"--stacks={PERIOD}"],
                            [workload("stackmix"), str(ROUNDS), str(RATIO),
                             "300"])
    assert proc.returncode == 0, proc.stderr
    calls = sum(s["calls"] for s in rep["syscalls"])
    check_sampling(rep, calls, PERIOD)
    ws = write_stacks(rep)
    n = sum(s["count"] for s in ws)
    assert n >= 0.5 * ROUNDS * (RATIO + 1) / PERIOD
    stdio = share(ws, lambda s: "log_line" in frames_of(s))
    raw = share(ws, lambda s: "raw_write" in frames_of(s))
    assert abs(stdio - RATIO / (RATIO + 1)) < 0.04, (stdio, raw)
    assert abs(stdio + raw - 1) < 0.01, "a write stack from neither site"
    # the unwinder went through libc's stdio and write, and up to main
    to_main = share(ws, lambda s: "main" in frames_of(s))
    assert to_main >= 0.9, f"only {to_main:.0%} of the stacks reach main"
    # Every stdio stack goes through fflush to log_line <- run_logger <-
    # main. Seen once in a run of the whole suite beside other scprof
    # runs (and not in 5 runs of 3000 samples under a CPU hog): one stack
    # whose frame above log_line was an unnamed libc address. So: at most
    # 1% of the stdio samples may be off, and those are shown.
    off, stdio_n = [], 0
    for s in ws:
        f = frames_of(s)
        if "log_line" in f:
            i = f.index("log_line")
            stdio_n += s["count"]
            if f[i + 1:i + 3] != ["run_logger", "main"]:
                off.append((s["count"], f))
                continue
            assert "_IO_fflush" in f[:i] or "fflush" in f[:i], f
            line = s["frames"][i]
            assert line["file"].endswith("stackmix.c") and line["line"] > 0
            assert line["module"] == "stackmix"
    assert sum(n for n, _ in off) <= 0.01 * stdio_n, off


def test_stripped_binary():
    proc, rep = scprof_json([f"--stacks={PERIOD}"],
                            [workload("stackmix-stripped"), str(ROUNDS),
                             str(RATIO), "300"])
    assert proc.returncode == 0, proc.stderr
    ws = write_stacks(rep, "stackmix-stripped")
    # the program's own frames have no name, only an offset in it; the
    # C library's have names; the unwinder goes through both
    own = lambda s: tuple(f["offset"] for f in s["frames"]
                          if f["module"] == "stackmix-stripped")
    for s in ws:
        for f in s["frames"]:
            if f["module"] == "stackmix-stripped":
                assert f["function"] is None or f["function"] == "_start"
    sites = {}
    for s in ws:
        sites[own(s)] = sites.get(own(s), 0) + s["count"]
    top = sorted(sites.values(), reverse=True)
    total = sum(top)
    assert abs(top[0] / total - RATIO / (RATIO + 1)) < 0.04, sites
    # From the C library's write, named, through the program's unnamed
    # frames, back into the C library's start-up code: __libc_start_main,
    # which libc's own symbol table names. (The static
    # __libc_start_call_main between it and main has a name only where
    # libc's detached debug symbols are installed, libc6-dbg: not needed.)
    def through(s):
        fr = s["frames"]
        mods = [f["module"] for f in fr]
        if "stackmix-stripped" not in mods or fr[0]["function"] is None:
            return False
        first = mods.index("stackmix-stripped")
        return (mods[0] != "stackmix-stripped" and
                "__libc_start_main" in frames_of(s)[first:])
    assert share(ws, through) >= 0.9
    text = subprocess.run(
        [os.environ.get("SCPROF", "./scprof"), f"--stacks={PERIOD}", "--",
         workload("stackmix-stripped"), "2000", "3", "300"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, timeout=60,
        env=CLEAN_ENV).stderr.decode()
    assert "stackmix-stripped+0x" in text, text


def test_exited_process_all_and_follow(background, tmp_path):
    """-a: stackmix exits long before the report and is still named; -f:
    the same for a child of the command."""
    # (by a name of this run's own: another suite beside this one runs
    # stackmix too, at other ratios, and -a sees it)
    mine = tmp_path / f"sm-{os.getpid()}"
    mine.symlink_to(workload("stackmix"))
    s = background(["-a", "--stacks=1000"])
    subprocess.run([str(mine), "200000", str(RATIO)], timeout=60)
    time.sleep(0.3)
    rc, err, rep = s.stop()
    assert rc in (0, 3), err
    ws = write_stacks(rep, mine.name)
    assert sum(s["count"] for s in ws) > 100
    # (other processes' samples may fill the ring buffer for a while: the
    # ratio is only checked where nothing else runs)
    assert share(ws, lambda s: "log_line" in frames_of(s)) > 0.6

    proc, rep = scprof_json(["-f", f"--stacks={PERIOD}"],
                            ["sh", "-c", workload("stackmix") +
                             " 100000 3; sleep 0.3"])
    assert proc.returncode == 0, proc.stderr
    ws = write_stacks(rep)
    assert abs(share(ws, lambda s: "log_line" in frames_of(s)) - 0.75) < 0.06


def test_sample_after_an_idle_exited_process_is_reaped():
    """A process sampled, idle over 2 s (the unwinder's reap age) and then
    sampled again as it exits: its state was reaped while it was being
    looked up, and used once freed (a use after free under ASan, a double
    free or a crash at exit without it, in 1 of 3 to 4 runs of
    `--stacks-by time -- sleep 3`; this test, of 4 such runs, failed 1 of 3
    times under ASan before the fix)."""
    for _ in range(4):
        proc = run_scprof(["--stacks", "--stacks-by", "time", "-o",
                           os.devnull, "--", "sleep", "2.5"], timeout=60)
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 0 and "Sanitizer" not in err, \
            f"exit {proc.returncode}: {err[-2000:]}"


def test_gone_before_unwinding():
    """Processes that exit before their samples are unwound (a busy
    unwinder: reading a binary's debug info for the first time takes a
    while on a cold machine) are named from the copy of their mappings
    taken as the notice of their new mappings came (on a ring of its own,
    drained however full the samples' queue is): ten short ones under -f, each
    exec'd by a shell, and the unwinder held back 300 ms a batch. (Seen
    in CI before the copy: every frame of such a process an address.)"""
    env = dict(CLEAN_ENV, SCPROF_TEST_UNWIND_DELAY_MS="300")
    loop = ("for i in 1 2 3 4 5 6 7 8 9 10; do "
            f"{workload('stackmix')} 5000 {RATIO}; done")
    proc, rep = scprof_json(["-f", "-v", "--stacks=100"],
                            ["sh", "-c", loop], env=env)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "testing: the unwinder waits 300 ms" in err, err
    ws = write_stacks(rep)
    n = sum(s["count"] for s in ws)
    assert n >= 0.5 * 10 * 5000 * (RATIO + 1) / 100, n
    to_main = share(ws, lambda s: "main" in frames_of(s))
    assert to_main >= 0.95, [frames_of(s) for s in ws]
    assert abs(share(ws, lambda s: "log_line" in frames_of(s)) -
               RATIO / (RATIO + 1)) < 0.06
    m = re.search(r"stacks: (\d+) samples unwound \(\d+ frames; (\d+) of "
                  r"processes gone with no copy of their mappings: "
                  r"(\d+) notices lost", err)
    assert m and int(m.group(1)) > 0, err
    assert m.group(3) == "0", err  # no notice lost
    # (a sample of the shell's child before its exec may find its copy
    # taken after the exec, another image: never named, counted here)
    assert int(m.group(2)) <= 0.01 * int(m.group(1)), err


def test_pid_target_and_count_only(background):
    child = subprocess.Popen([workload("stackmix"), "100000000", str(RATIO)])
    try:
        s = background(["-p", str(child.pid), "-C", f"--stacks={PERIOD}"],
                       need={"sys_exit", "sched_process_exit"})
        time.sleep(0.5)
        rc, err, rep = s.stop()
    finally:
        child.kill()
        child.wait()
    assert rc in (0, 3), err
    ws = write_stacks(rep)
    assert sum(s["count"] for s in ws) > 50
    assert abs(share(ws, lambda s: "log_line" in frames_of(s)) - 0.75) < 0.08


def test_table_folded_flamegraph_and_hostile_names(tmp_path):
    folded = tmp_path / "f.folded"
    svg = tmp_path / "f.svg"
    name = b"a;b\nc<&>\"'"
    proc = run_scprof(["--stacks=1000", "--folded", str(folded),
                       "--flamegraph", str(svg), "--", workload("setcomm"),
                       name.hex(), "1000000"], env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    table = proc.stderr.decode()
    assert "call sites (the user stack of 1 call in 1000:" in table
    assert "getppid" in table.split("call sites")[1]
    lines = folded.read_text().splitlines()
    for line in lines:
        path, count = line.rsplit(" ", 1)
        assert int(count) > 0
        assert len(path.split(";")) >= 3, line
    getppid = [ln for ln in lines if ln.split(" ")[0].endswith(";getppid")]
    n = sum(int(ln.rsplit(" ", 1)[1]) for ln in getppid)
    assert 700 <= n <= 1300, f"{n} getppid samples of 1e6 calls, 1 in 1000"
    for ln in getppid:
        # one line per stack: the name's ; and newline escaped
        assert ln.startswith("a\\x3bb\\x0ac<&>\"'"), ln
    with_main = sum(int(ln.rsplit(" ", 1)[1]) for ln in getppid
                    if ";main;" in ln)
    assert with_main >= 0.9 * n, getppid
    doc = xml.dom.minidom.parse(str(svg))  # well-formed despite the name
    names = [g.getAttribute("data-n") for g in doc.getElementsByTagName("g")]
    assert "a;b\nc<&>\"'"[:15] in names or "a;b\ufffdc<&>\"'" in names \
        or any(n.startswith("a;b") for n in names), names[:5]
    assert "getppid" in names and "main" in names


def test_bad_stacks_options():
    for args in (["--stacks=0"], ["--stacks=abc"], ["--stacks=10x"],
                 ["--stacks", "-i", "1"], ["--folded", ""]):
        proc = run_scprof(args + ["true"])
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.decode().strip().splitlines()) == 1, \
            proc.stderr


def test_perf_map_names_jit_code():
    """Code in anonymous memory is named from /tmp/perf-PID.map."""
    proc, rep = scprof_json(["--stacks=100"],
                            [workload("jitmap"), "100000", "300"])
    pids = [p["pid"] for p in rep["processes"] if p["pid"]]
    for pid in pids:
        try:
            os.unlink(f"/tmp/perf-{pid}.map")
        except FileNotFoundError:
            pass
    assert proc.returncode == 0, proc.stderr
    st = [s for s in rep["stacks"] if s["syscall"] == "getppid"]
    n = sum(s["count"] for s in st)
    assert n >= 500, rep["stack_sampling"]
    named = sum(s["count"] for s in st
                if s["frames"][0]["function"] == "jit_getppid" and
                s["frames"][0]["module"].startswith("perf-") and
                s["frames"][0]["offset"] == 7)
    assert named == n, st[:3]


def test_cpp_names_demangled(tmp_path):
    """A C++ method's frames are named as the source names them, in JSON,
    the table and the folded stacks; --no-demangle keeps the symbol."""
    method = "shop::Ledger<long>::post_entry"
    mangled = "_ZN4shop6LedgerIlE10post_entryEl"
    folded = tmp_path / "ledger.folded"
    proc, rep = scprof_json(["--stacks=50", "--folded", str(folded)],
                            [workload("ledger"), "20000"])
    assert proc.returncode == 0, proc.stderr
    ws = write_stacks(rep, "ledger")
    assert share(ws, lambda s: method in frames_of(s)) > 0.95, ws[:3]
    assert not any(mangled in f for s in rep["stacks"]
                   for f in frames_of(s) if f)
    lines = folded.read_text().splitlines()
    assert any(f";{method};" in ln for ln in lines), lines[:3]
    table = run_scprof(["--stacks=50", "--", workload("ledger"), "20000"])
    assert re.search(rf"^  write \(via libc\) +\d+%  {re.escape(method)} <- main",
                     table.stderr.decode(), re.M), table.stderr
    proc, rep = scprof_json(["--stacks=50", "--no-demangle"],
                            [workload("ledger"), "20000"])
    assert proc.returncode == 0, proc.stderr
    ws = write_stacks(rep, "ledger")
    assert share(ws, lambda s: mangled in frames_of(s)) > 0.95, ws[:3]


# V8's name of the JS function, by code kind: "JS:*hotWriterJs /path:9:21"
# (node 20), "LazyCompile:*hotWriterJs /path:9" or "Function:^..." (node 18,
# Debian 12's)
V8_NAME = re.compile(r"[A-Za-z]+:[*~^]?hotWriterJs ")


@pytest.mark.parametrize("flags", [[], ["--interpreted-frames-native-stack"]],
                         ids=["jit", "interpreted-too"])
def test_node_jit_frames_named(flags, tmp_path):
    """A real node with --perf-basic-prof: the JS function that makes the
    writes is named in their stacks, though V8 writes its map buffered
    (the map is read again as it grows, and at report time)."""
    node = shutil.which("node")
    assert node, "node is not installed (.ci/install-deps installs nodejs)"
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "workloads", "js", "hotwriter.js")
    proc, rep = scprof_json(["--stacks=20"],
                            [node, "--perf-basic-prof"] + flags +
                            [script, "60000"], cwd=tmp_path)
    for p in rep["processes"]:
        try:
            os.unlink(f"/tmp/perf-{p['pid']}.map")
        except FileNotFoundError:
            pass
    assert proc.returncode == 0, proc.stderr
    ws = [s for s in rep["stacks"] if s["syscall"] == "write"]
    # V8's own writes (of the map) are the rest
    named = share(ws, lambda s: any(
        V8_NAME.match(f) for f in frames_of(s) if f))
    assert named > 0.6, [frames_of(s)[:8] for s in ws[:3]]
    # the call site starts at the JS function: node's own JavaScript
    # (fs.writeSync), V8's builtins, libuv and libc fold into "via"
    top = max(ws, key=lambda s: s["count"])
    assert V8_NAME.match(top["site"]), top["site"]
    assert "node" in top["via"] and "libc" in top["via"], top["via"]


def test_call_site_lines_start_at_the_program():
    """The C library's frames fold into "write (via libc)": the label
    starts at the program's own function, on a binary with symbols and on
    a stripped one; the JSON keeps every frame."""
    text = run_scprof([f"--stacks={PERIOD}", "--", workload("stackmix"),
                       "4000", "3", "300"], env=CLEAN_ENV).stderr.decode()
    assert re.search(r"^  write \(via libc\) +\d+%  log_line <- run_logger "
                     r"<- main \(stackmix\.c:\d+\)$", text, re.M), text
    assert re.search(r"^ +\d+%  raw_write <- run_raw <- main ", text,
                     re.M), text
    text = run_scprof([f"--stacks={PERIOD}", "--",
                       workload("stackmix-stripped"), "4000", "3", "300"],
                      env=CLEAN_ENV).stderr.decode()
    assert re.search(r"^  write \(via libc\) +\d+%  stackmix-stripped\+0x",
                     text, re.M), text
    proc, rep = scprof_json([f"--stacks={PERIOD}"],
                            [workload("stackmix"), "4000", "3", "300"])
    ws = write_stacks(rep)
    for s in ws:
        assert s["via"] == "libc", s
        assert s["site"].split(" <- ")[0] in ("log_line", "raw_write"), s
        assert frames_of(s)[0] in ("__write", "write", "__GI___libc_write",
                                   "__libc_write"), frames_of(s)


def test_go_call_site_starts_at_the_program(tmp_path):
    """A real Go program: the runtime and the standard library (syscall,
    internal/poll, os) fold into "write (via Go)", and the line starts at
    the function that made the call, main.coldWrite."""
    # Debian's (golang-go), unless GO names another
    go = os.environ.get("GO", "/usr/bin/go")
    assert shutil.which(go), \
        f"{go} is not installed (.ci/install-deps installs golang-go)"
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "workloads", "go", "coldwrite.go")
    exe = tmp_path / "coldwrite"
    env = dict(os.environ, GOCACHE=str(tmp_path / "cache"),
               GOPATH=str(tmp_path / "gopath"), GOFLAGS="-mod=mod",
               GOTOOLCHAIN="local", CGO_ENABLED="0")
    subprocess.run([go, "build", "-o", str(exe), src], check=True, env=env,
                   cwd=tmp_path, timeout=600)
    text = run_scprof([f"--stacks={PERIOD}", "--", str(exe), "20000"],
                      env=CLEAN_ENV).stderr.decode()
    m = re.search(r"^  write \(via Go\) +(\d+)%  main\.coldWrite <- "
                  r"main\.main$", text, re.M)
    assert m and int(m.group(1)) >= 95, text
    proc, rep = scprof_json([f"--stacks={PERIOD}"], [str(exe), "20000"])
    ws = write_stacks(rep, "coldwrite")
    full = [frames_of(s) for s in ws]
    # the full stacks keep the standard library's frames
    assert all(any(f and f.startswith("syscall.") for f in fr)
               for fr in full), full[:2]


@pytest.mark.parametrize("run", range(3))
def test_phase_change_sampling_stays_unbiased(run):
    """30000 stdio writes, then 10000 direct ones, sampled 1 in 20: more
    samples than the ring buffer holds while userspace unwinds. The rate
    adapts as the ring fills and each sample counts for the calls it
    stands for, so the shares stay within 5 points of the truth (75/25)
    and nothing is lost; the report says the rate was lowered."""
    proc, rep = scprof_json(["--stacks=20"],
                            [workload("stackmix"), "10000", "3", "0",
                             "phased"])
    assert proc.returncode == 0, proc.stderr
    calls = sum(s["calls"] for s in rep["syscalls"])
    check_sampling(rep, calls, 20)
    st = rep["stack_sampling"]
    assert st["shares_trusted"] is True, st
    ws = write_stacks(rep)
    stdio = share(ws, lambda s: "log_line" in frames_of(s))
    raw = share(ws, lambda s: "raw_write" in frames_of(s))
    assert abs(stdio - 0.75) <= 0.05 and abs(raw - 0.25) <= 0.05, \
        (stdio, raw, st)


def test_node_jitdump_frames_named(tmp_path):
    """node --perf-prof writes no perf map but a jitdump, jit-PID.dump in
    its working directory, and maps it: found through the process's
    mappings, its code loads name the JS function that makes the writes,
    and the call site starts there."""
    node = shutil.which("node")
    assert node, "node is not installed (.ci/install-deps installs nodejs)"
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "workloads", "js", "hotwriter.js")
    proc, rep = scprof_json(["--stacks=20"],
                            [node, "--perf-prof", script, "60000"],
                            cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    pids = {p["pid"] for p in rep["processes"]}
    assert not any(os.path.exists(f"/tmp/perf-{p}.map") for p in pids)
    assert list(tmp_path.glob("jit-*.dump")), "node wrote no jitdump"
    ws = [s for s in rep["stacks"] if s["syscall"] == "write"]
    named = share(ws, lambda s: any(
        f["function"] and "hotWriterJs" in f["function"] and
        f["module"].startswith("jit-") and f["module"].endswith(".dump")
        for f in s["frames"]))
    assert named > 0.6, [frames_of(s)[:8] for s in ws[:3]]
    top = max(ws, key=lambda s: s["count"])
    assert V8_NAME.match(top["site"]), top["site"]


def test_java_perf_map_written_at_exit(tmp_path):
    """A JVM with -XX:+DumpPerfMapAtExit writes /tmp/perf-PID.map as it
    exits, after every sample was unwound: the samples with frames in its
    code cache (anonymous memory, reserved before it is made executable)
    wait for report time, and its JIT frames are named from the map then.
    (Before: every such frame an address, and no frame of the method that
    makes the writes.)"""
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, \
        "no JDK (.ci/install-deps installs openjdk-17-jdk-headless)"
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "workloads", "java", "HotWriter.java")
    subprocess.run([javac, "-d", str(tmp_path), src], check=True,
                   timeout=120)
    proc, rep = scprof_json(
        ["--stacks"],
        [java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
         "-XX:+PreserveFramePointer", "-cp", str(tmp_path), "HotWriter",
         "2000000"], cwd=tmp_path)
    for p in rep["processes"]:
        try:
            os.unlink(f"/tmp/perf-{p['pid']}.map")
        except FileNotFoundError:
            pass
    assert proc.returncode in (0, 3), proc.stderr
    ws = [s for s in rep["stacks"] if s["syscall"] == "write" and
          s["comm"] == "java"]
    assert sum(s["count"] for s in ws) > 500, ws[:3]
    named = share(ws, lambda s: any(
        f["function"] and "HotWriter.hotWriterJava" in f["function"] and
        f["module"].startswith("perf-") for f in s["frames"]))
    assert named > 0.6, [frames_of(s)[:8] for s in ws[:3]]

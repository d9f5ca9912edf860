# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The kernel matrix's machinery: Debian's stock kernels fetched with a
private apt, an initramfs with scprof and static workloads, a qemu boot,
and the guest's results read back from its console.

Everything that depends on the architecture is in ARCHES, and the kernels
are in KERNELS: adding an architecture is one row in each (its qemu
command, its kernel package's flavour, the syscall numbers the guest
waits on and the names the checks look for), plus its static binaries
(scprof, the workloads, busybox).
The guest (guest/init, guest/cases.sh) and the checks
(test_kernels.py) are the same for every architecture.

    python3 tests/kernels/vm.py fetch [ID...]   fetch and unpack kernels
    python3 tests/kernels/vm.py boot ID         boot one, print its console

Environment: OUTPUT (the build folder, default .output), KERNELS_ARCH
(default: this machine's), KERNELS (ids, suites or series to run,
comma-separated, default all of the arch), KERNELS_MIRROR and
KERNELS_SECURITY_MIRROR (the Debian archive, default deb.debian.org),
SCPROF_STATIC and KERNELS_WORKLOADS (the binaries for the initramfs),
KERNELS_CASES (some of guest/cases.sh's cases only, for debugging),
KERNELS_BOOT_TIMEOUT (seconds, default 300); conftest.py adds
KERNELS_JOBS (guests booted at once, default 1) and KERNELS_REUSE.
"""
import functools
import glob
import gzip
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.abspath(os.environ.get("OUTPUT", os.path.join(ROOT, ".output")))
CACHE = os.path.join(OUTPUT, "kernels")
MIRROR = os.environ.get("KERNELS_MIRROR", "http://deb.debian.org/debian")
SECURITY_MIRROR = os.environ.get("KERNELS_SECURITY_MIRROR",
                                 "http://deb.debian.org/debian-security")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# A guest that has not powered off by then has hung: its qemu is killed
# and whatever it printed until then is judged.
BOOT_TIMEOUT = int(os.environ.get("KERNELS_BOOT_TIMEOUT", "300"))

MARK = "@@scprof-kernels"
# Only these cases of guest/cases.sh (comma-separated; default all).
CASES = os.environ.get("KERNELS_CASES", "")


@dataclass(frozen=True)
class Arch:
    deb_arch: str           # dpkg's name
    flavour: str            # linux-image-VERSION-FLAVOUR-unsigned
    qemu: list              # the machine, without -kernel/-initrd/-append
    console: str            # the kernel's console device
    # /proc/PID/syscall numbers of the calls the guest waits for a
    # workload to block in (guest/cases.sh reads them as SYS_<name>), and
    # the split checks find the worker asleep in (split_check.py)
    syscalls: dict
    # the syscall names the checks use, where this arch's differ from
    # the x86_64 names the workloads are described with (arm64 has no
    # fork or epoll_wait: clone, epoll_pwait)
    names: dict = field(default_factory=dict)
    abi: str = "64"         # the JSON "abi" of its native calls
    busybox: str = "/bin/busybox"   # a static busybox of the arch


ARCHES = {
    "x86_64": Arch(
        deb_arch="amd64",
        flavour="cloud-amd64",
        # KVM is there, but a nested KVM guest hangs at boot: TCG only.
        qemu=["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max",
              "-m", "1G", "-smp", "1"],
        console="ttyS0",
        syscalls={"read": 0, "epoll_wait": 232, "wait4": 61, "futex": 202},
    ),
}


@dataclass(frozen=True)
class Kernel:
    arch: str
    suite: str              # the Debian release it comes from
    series: str             # its upstream series: 5.10, 6.1, 6.12

    @property
    def id(self):
        return f"{self.arch}-{self.series}"

    @property
    def dir(self):
        return os.path.join(CACHE, self.id)


# The newest cloud kernel of each series, from the Debian release that
# ships it (a release's security suite may also carry a backport of a
# newer series: only the release's own series is taken).
KERNELS = [
    Kernel("x86_64", "bullseye", "5.10"),
    Kernel("x86_64", "bookworm", "6.1"),
    Kernel("x86_64", "trixie", "6.12"),
]


def matrix_arch():
    """The architecture whose kernels run: KERNELS_ARCH, or this machine's."""
    return os.environ.get("KERNELS_ARCH", platform.machine())


def selected():
    """The kernels of KERNELS_ARCH, narrowed by KERNELS (ids or suites)."""
    arch = matrix_arch()
    if arch not in ARCHES:
        raise SystemExit(f"no kernel matrix for {arch} (tests/kernels/vm.py "
                         f"ARCHES has {', '.join(ARCHES)})")
    ks = [k for k in KERNELS if k.arch == arch]
    want = [w for w in os.environ.get("KERNELS", "").split(",") if w]
    if want:
        ks = [k for k in ks if k.id in want or k.suite in want or
              k.series in want]
    return ks


# ---- fetching: apt with a private configuration ----------------------------

def log(msg):
    print(f"kernels: {msg}", file=sys.stderr, flush=True)


def apt_env(arch, suite):
    """An APT_CONFIG of its own for (arch, suite): sources, lists, cache
    and state in .output/kernels/apt/SUITE-ARCH. Read first, it also
    points Dir::Etc::Parts at an empty folder, so nothing of the
    machine's apt configuration (sources, preferences, hooks) applies,
    and nothing of it changes."""
    a = ARCHES[arch]
    d = os.path.join(CACHE, "apt", f"{suite}-{a.deb_arch}")
    for sub in ("etc/parts", "lists/partial", "cache/archives/partial",
                "state"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    status = os.path.join(d, "state", "status")
    if not os.path.exists(status):
        open(status, "w").close()
    opt = f"[arch={a.deb_arch} signed-by={KEYRING}]"
    with open(os.path.join(d, "etc", "sources.list"), "w") as f:
        f.write(f"deb {opt} {MIRROR} {suite} main\n"
                f"deb {opt} {MIRROR} {suite}-updates main\n"
                f"deb {opt} {SECURITY_MIRROR} {suite}-security main\n")
    conf = os.path.join(d, "etc", "apt.conf")
    with open(conf, "w") as f:
        f.write(f'Dir::Etc::Parts "{d}/etc/parts";\n'
                f'Dir::Etc::Main "/dev/null";\n'
                f'Dir::Etc::SourceList "{d}/etc/sources.list";\n'
                f'Dir::Etc::SourceParts "{d}/etc/parts";\n'
                f'Dir::Etc::Preferences "/dev/null";\n'
                f'Dir::Etc::PreferencesParts "{d}/etc/parts";\n'
                f'Dir::State "{d}/state";\n'
                f'Dir::State::Lists "{d}/lists";\n'
                f'Dir::State::status "{status}";\n'
                f'Dir::Cache "{d}/cache";\n'
                f'APT::Architecture "{a.deb_arch}";\n'
                f'APT::Architectures {{ "{a.deb_arch}"; }};\n'
                'Acquire::Languages "none";\n'
                # root downloads into the cache (the _apt user may not
                # be able to reach it)
                'APT::Sandbox::User "root";\n')
    env = dict(os.environ, APT_CONFIG=conf, LC_ALL="C")
    return env


def apt(env, *args, cwd=None):
    p = subprocess.run(list(args), env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: "
                           f"{p.stderr.strip()}")
    return p.stdout


def packages(k, env):
    """[(name, version)] of the linux-image-SERIES.*-FLAVOUR-unsigned
    packages of the suite (with its -updates and -security), newest
    first."""
    a = ARCHES[k.arch]
    pat = re.compile(rf"linux-image-{re.escape(k.series)}\.\d+[-+.][^ ]*-"
                     rf"{re.escape(a.flavour)}-unsigned")
    names = [ln.split(" ", 1)[0] for ln in apt(
        env, "apt-cache", "search", "--names-only",
        f"^linux-image-.*-{a.flavour}-unsigned$").splitlines()]
    names = [n for n in names if pat.fullmatch(n)]
    if not names:
        raise RuntimeError(f"no linux-image-{k.series}*-{a.flavour}-unsigned "
                           f"in {k.suite}")
    found = []
    for stanza in apt(env, "apt-cache", "show", *names).split("\n\n"):
        f = dict(re.findall(r"^(Package|Version): (\S+)$", stanza, re.M))
        if f:
            found.append((f["Package"], f["Version"]))

    def cmp(x, y):
        if x[1] == y[1]:
            return 0
        lt = subprocess.run(["dpkg", "--compare-versions", x[1], "lt", y[1]])
        return -1 if lt.returncode == 0 else 1
    return sorted(found, key=functools.cmp_to_key(cmp), reverse=True)


def fetch(k):
    """The kernel image of k, fetched and unpacked once: later runs use
    .output/kernels/ID/vmlinuz and do not touch the network."""
    vmlinuz = os.path.join(k.dir, "vmlinuz")
    if os.path.exists(vmlinuz):
        return vmlinuz
    os.makedirs(k.dir, exist_ok=True)
    env = apt_env(k.arch, k.suite)
    log(f"{k.id}: apt-get update ({k.suite})")
    apt(env, "apt-get", "-q", "update")
    # The newest; if the mirror cannot serve it (a partial mirror has
    # been seen to answer 404), the newest it can, said on stderr and in
    # .output/kernels/ID/package (the matrix prints it).
    candidates = packages(k, env)
    for name, version in candidates:
        log(f"{k.id}: downloading {name} {version}")
        try:
            apt(env, "apt-get", "-q", "download", f"{name}={version}",
                cwd=k.dir)
            break
        except RuntimeError as e:
            log(f"{k.id}: {name} {version} cannot be downloaded: "
                f"{str(e).splitlines()[-1]}")
    else:
        raise RuntimeError(f"{k.id}: no {k.series} kernel of {k.suite} "
                           "could be downloaded")
    newest = candidates[0]
    deb, = glob.glob(os.path.join(k.dir, f"{name}_*.deb"))
    tree = os.path.join(k.dir, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
    image, = glob.glob(os.path.join(tree, "boot", "vmlinuz-*"))
    release = os.path.basename(image)[len("vmlinuz-"):]
    with open(os.path.join(k.dir, "package"), "w") as f:
        f.write(f"{name} {version} {release}\n")
        if (name, version) != newest:
            f.write(f"{newest[0]} {newest[1]} newest\n")
    shutil.copy(image, vmlinuz + ".tmp")
    os.rename(vmlinuz + ".tmp", vmlinuz)
    shutil.rmtree(tree)     # the modules: the initramfs needs none
    os.remove(deb)
    # apt's lists (over 100 MB a suite) are only needed to fetch again
    shutil.rmtree(os.path.dirname(os.path.dirname(env["APT_CONFIG"])))
    return vmlinuz


def package(k):
    """{name, version, release, newest} of k's fetched package; newest is
    the version of the suite's newest when that one could not be
    downloaded, else None."""
    with open(os.path.join(k.dir, "package")) as f:
        lines = [ln.split() for ln in f.read().splitlines()]
    name, version, release = lines[0]
    newest = lines[1][1] if len(lines) > 1 else None
    return {"name": name, "version": version, "release": release,
            "newest": newest}


# ---- the initramfs ---------------------------------------------------------

def initramfs(arch, scprof, workloads):
    """initramfs-ARCH.cpio.gz: busybox, scprof, the static workloads, the
    guest's scripts and the arch's syscall numbers. Rebuilt every run (it
    takes well under a second), so it always holds the current build."""
    a = ARCHES[arch]
    root = os.path.join(CACHE, f"initramfs-{arch}")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "etc", "wl", "proc",
              "sys", "dev", "tmp", "run", "out"):
        os.makedirs(os.path.join(root, d))
    shutil.copy(a.busybox, os.path.join(root, "bin", "busybox"))
    os.symlink("busybox", os.path.join(root, "bin", "sh"))
    shutil.copy(scprof, os.path.join(root, "usr", "sbin", "scprof"))
    for w in os.listdir(workloads):  # the Makefile's KERNEL_WORKLOADS
        shutil.copy(os.path.join(workloads, w), os.path.join(root, "wl", w))
    for s in ("init", "cases.sh", "split_sample.sh"):
        dst = os.path.join(root, s)
        shutil.copy(os.path.join(HERE, "guest", s), dst)
        os.chmod(dst, 0o755)
    with open(os.path.join(root, "etc", "arch.env"), "w") as f:
        for name, nr in sorted(a.syscalls.items()):
            f.write(f"SYS_{name}={nr}\n")
        f.write(f"MARK={MARK}\n")
    files = subprocess.run("find . -mindepth 1 | LC_ALL=C sort", shell=True,
                           cwd=root, check=True, stdout=subprocess.PIPE).stdout
    cpio = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "-R",
                           "0:0"], cwd=root, input=files, check=True,
                          stdout=subprocess.PIPE).stdout
    out = os.path.join(CACHE, f"initramfs-{arch}.cpio.gz")
    with gzip.open(out + ".tmp", "wb", compresslevel=6) as f:
        f.write(cpio)
    os.rename(out + ".tmp", out)
    return out


# ---- booting and reading the console -----------------------------------------

@dataclass
class Boot:
    kernel: Kernel
    console: str            # everything the guest printed
    seconds: float          # qemu's wall time
    timed_out: bool
    finished: bool          # the guest reached its last line
    results: dict           # {name: text} of the guest's blocks


def qemu_command(k, vmlinuz, initrd):
    a = ARCHES[k.arch]
    return a.qemu + [
        "-nographic", "-no-reboot", "-kernel", vmlinuz, "-initrd", initrd,
        # quiet: only errors and worse reach the console, between the
        # results; panic=-1 and -no-reboot: a panic ends qemu at once
        "-append", f"console={a.console} quiet panic=-1 rdinit=/init"
        + (f" cases={CASES}" if CASES else "")]


def boot(k, initrd, timeout=BOOT_TIMEOUT):
    """Boot k into initrd; its console is kept in .output/kernels/ID/
    console.log, how long it took in boot.json."""
    vmlinuz = fetch(k)
    cmd = qemu_command(k, vmlinuz, initrd)
    log_path = os.path.join(k.dir, "console.log")
    t0 = time.monotonic()
    timed_out = False
    with open(log_path, "wb") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            p.kill()
            p.wait()
    seconds = time.monotonic() - t0
    with open(os.path.join(k.dir, "boot.json"), "w") as f:
        json.dump({"seconds": seconds, "timed_out": timed_out}, f)
    return last_boot(k)


def last_boot(k):
    """The Boot of k's last run, from its console log (KERNELS_REUSE=1
    checks that again without booting)."""
    with open(os.path.join(k.dir, "console.log"), "rb") as f:
        console = f.read().decode("utf-8", errors="replace")
    with open(os.path.join(k.dir, "boot.json")) as f:
        b = json.load(f)
    results, finished = parse_console(console)
    return Boot(k, console, b["seconds"], b["timed_out"], finished, results)


KMSG = re.compile(r"\[ *\d+\.\d+\] ")


def parse_console(console):
    """({name: text}, finished) from the guest's console: each result is
    printed between `MARK begin NAME` and `MARK end NAME` lines; kernel
    messages that landed inside are dropped. finished: the guest printed
    `MARK done`, its last line."""
    results = {}
    name, lines = None, []
    finished = False
    for line in console.replace("\r", "").split("\n"):
        if line.startswith(MARK + " "):
            word, _, arg = line[len(MARK) + 1:].partition(" ")
            if word == "begin":
                name, lines = arg, []
            elif word == "end" and name == arg:
                results[name] = "\n".join(lines)
                name = None
            elif word == "done":
                finished = True
        elif name is not None and not KMSG.match(line):
            lines.append(line)
    return results, finished


def main(argv):
    if len(argv) >= 2 and argv[1] == "fetch":
        for k in selected():
            if len(argv) == 2 or {k.id, k.suite, k.series} & set(argv[2:]):
                fetch(k)
                print(k.id, package(k))
        return 0
    if len(argv) == 3 and argv[1] == "boot":
        k, = [k for k in selected() if argv[2] in (k.id, k.suite, k.series)]
        arch = matrix_arch()
        initrd = initramfs(arch, os.environ.get(
            "SCPROF_STATIC", os.path.join(ROOT, "scprof-static")),
            os.environ.get("KERNELS_WORKLOADS",
                           os.path.join(OUTPUT, "workloads-static")))
        b = boot(k, initrd)
        sys.stdout.write(b.console)
        print(f"\n{k.id}: {b.seconds:.1f} s, finished {b.finished}, "
              f"timed out {b.timed_out}, results {sorted(b.results)}")
        return 0 if b.finished else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

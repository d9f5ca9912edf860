# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Process names are attacker-chosen bytes: no output format may break.

tests/workloads/setcomm sets its comm with prctl(PR_SET_NAME) to bytes
given in hex (the kernel keeps 15), then makes a known number of getppid.
The rules docs/usage.md states, checked here against an independent Python
model:
 - tables: printable ASCII and valid UTF-8 pass; control bytes, C1
   controls, DEL, bidi controls and invalid UTF-8 become \\xNN per byte,
   and a backslash becomes \\\\;
 - JSON: valid UTF-8, each byte of an invalid sequence becomes U+FFFD;
 - CSV: the table's escaped text as one RFC 4180 field.
"""
import csv
import io
import json
import re

import pytest

from conftest import CLEAN_ENV, counts, run_scprof, scprof_report, workload

N = 77
COMM_LEN = 15

CASES = [
    ("quotes", b"a\"b'c\"\""),
    ("backslash", b"a\\b\\x41\\"),
    ("newline", b"evil\nProcess 1"),
    ("cr", b"ab\rcd\r"),
    ("tab-bell-del", b"a\tb\x07c\x7f"),
    ("esc-csi", b"\x1b[31mred\x1b[0m"),
    ("esc-clear", b"\x1b[2J\x1b[H"),
    ("osc-title", b"\x1b]0;pwned\x07"),
    ("c1-utf8", b"a\xc2\x9b31mb\xc2\x85"),
    ("c1-raw", b"a\x9bb\x85c"),
    ("invalid-utf8", b"\xff\xfeab\xc0\xaf"),
    ("surrogate", b"x\xed\xa0\x80y"),
    ("truncated-utf8", b"a" * 14 + "\u00e9".encode()),     # kernel cuts at 15
    ("truncated-3byte", b"b" * 13 + "\u20ac".encode()),
    ("comma-space", b"a,b c,"),
    ("bidi", b"x\xe2\x80\xaeyz"),
    ("utf8-ok", "h\u00e9llo \u4e16\u754c".encode()),
    ("percent-json", b'{"a":1}%s%n'),
    ("empty", b""),
]


def utf8_runs(b):
    """Split bytes like scprof's decoder: (bytes, code point or None)."""
    i = 0
    while i < len(b):
        lead = b[i]
        n = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else \
            3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 0
        if n and i + n <= len(b):
            try:
                # strict decoding refuses overlong forms, surrogates and
                # values above U+10FFFF, as scprof does
                yield b[i:i + n], ord(b[i:i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        yield b[i:i + 1], None
        i += 1


def unsafe(cp):
    return cp < 0x20 or cp == 0x7f or 0x80 <= cp <= 0x9f or \
        cp in (0x200e, 0x200f) or 0x202a <= cp <= 0x202e or \
        0x2066 <= cp <= 0x2069


def esc_text(b):
    out = []
    for seq, cp in utf8_runs(b):
        if cp is None or unsafe(cp):
            out.append("".join(f"\\x{c:02x}" for c in seq))
        elif cp == 0x5c:
            out.append("\\\\")
        else:
            out.append(chr(cp))
    return "".join(out)


def esc_json(b):
    return "".join("\ufffd" if cp is None else chr(cp)
                   for _, cp in utf8_runs(b))


def setcomm(name):
    return [workload("setcomm"), name.hex(), str(N)]


def assert_clean_text(text, c0_only=False):
    """Valid UTF-8 with no control characters but newlines.

    c0_only: only C0 controls count (JSON: DEL, C1 and bidi controls are
    legal raw in a JSON string, and a faithful copy of the name).
    """
    s = text.decode("utf-8")    # strict: raises on invalid bytes
    bad = [c for c in s if c != "\n" and
           (ord(c) < 0x20 if c0_only else unsafe(ord(c)))]
    assert not bad, f"raw control characters in the output: {bad!r}"
    return s


def test_model_examples():
    """The Python model of the escaping rules, on a few hand-checked cases."""
    assert esc_text(b"a\\b") == "a\\\\b"
    assert esc_text(b"\x1b[0m") == "\\x1b[0m"
    assert esc_text(b"\xe2\x82") == "\\xe2\\x82"
    assert esc_text("\u00e9".encode()) == "\u00e9"
    assert esc_text(b"\xc2\x85") == "\\xc2\\x85"
    assert esc_json(b"a\xe2\x82b") == "a\ufffd\ufffdb"


@pytest.mark.parametrize("name", [c[1] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_per_process_table(name):
    proc = run_scprof(["-P", "--"] + setcomm(name), env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    text = assert_clean_text(proc.stderr)
    headers = [ln for ln in text.splitlines() if ln.startswith("Process ")]
    assert len(headers) == 1, headers
    m = re.fullmatch(r"Process (\d+) \((.*)\), exited:", headers[0])
    assert m, headers[0]
    assert m.group(2) == esc_text(name[:COMM_LEN])
    # The getppid row of the per-process table is intact.
    rows = [ln for ln in text.splitlines() if ln.endswith(" getppid")]
    assert len(rows) == 2 and all(f" {N} " in r for r in rows), rows


@pytest.mark.parametrize("name", [c[1] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_json(name):
    # A hostile command line too: it is the report's "target".
    cmd = setcomm(name) + [b"\xff\n\x1b[2J\"\\"]
    proc, text = scprof_report([], cmd, "json", env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    assert_clean_text(text.encode(), c0_only=True)
    rep = json.loads(text, strict=True)
    assert len(rep["processes"]) == 1
    p = rep["processes"][0]
    assert p["comm"] == esc_json(name[:COMM_LEN])
    assert counts(p["syscalls"])["getppid"] == (N, 0)
    assert rep["target"].endswith("\ufffd\n\x1b[2J\"\\"), rep["target"]


@pytest.mark.parametrize("name", [c[1] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_csv(name):
    proc, text = scprof_report([], setcomm(name), "csv", env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr
    assert_clean_text(text.encode())
    lines = text.splitlines()
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert len(rows) == len(lines), "a field spans lines"
    header, rows = rows[0], rows[1:]
    assert header == ["pid", "comm", "abi", "syscall", "nr", "calls", "errors",
                      "total_ns", "min_ns", "max_ns", "avg_ns", "p50_ns",
                      "p90_ns", "p99_ns", "bytes", "on_cpu_ns", "cpu_wait_ns",
                      "blocked_ns", "io_wait_ns"]
    assert rows and all(len(r) == len(header) for r in rows)
    want = esc_text(name[:COMM_LEN])
    assert {r[1] for r in rows} == {want}
    assert len({r[0] for r in rows}) == 1
    getppid = [r for r in rows if r[3] == "getppid"]
    assert len(getppid) == 1 and getppid[0][5] == str(N)
    # One row per syscall of the process.
    assert len({r[3] for r in rows}) == len(rows)

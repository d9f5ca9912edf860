# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--flamegraph in a real browser (headless Chromium), as a person uses it.

`make test-stacks-extra` (part of `make test-extra`): scprof draws the flame
graph of tests/workloads/stackmix (3 writes through stdio for 1 direct);
Chromium opens the SVG file directly and runs its script: the frames get
their labels, a click on run_raw zooms it to the full width and hides the
other branch, a search for log_line highlights it and says "Matched: ~75%".
Screenshots of the plain and the zoomed graph must be real pictures (many
colours) and differ. Without Chromium this fails, unless SCPROF_ALLOW_SKIP=1.
"""
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCPROF = os.environ.get("SCPROF", os.path.join(ROOT, "scprof"))
WORKLOADS = os.environ.get("WORKLOADS",
                           os.path.join(ROOT, ".output", "workloads"))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("SCPROF_ALLOW_SKIP") == "1":
        pytest.skip("no chromium (SCPROF_ALLOW_SKIP=1)")
    pytest.fail("chromium is needed for the flame graph test (apt-get "
                "install chromium, or SCPROF_ALLOW_SKIP=1 to skip)")


def browse(browser, url, *args):
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", *args, url],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120,
        check=True).stdout.decode()


def png_pixels(path):
    """(width, height, raw scanlines) of an 8-bit RGB(A) PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    return w, h, zlib.decompress(idat)


@pytest.fixture
def graph(tmp_path):
    svg = tmp_path / "stackmix.svg"
    proc = subprocess.run(
        [SCPROF, "--stacks=100", "--flamegraph", str(svg), "--",
         os.path.join(WORKLOADS, "stackmix"), "100000", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return svg


def test_flamegraph_in_chromium(graph, tmp_path):
    browser = chromium()
    dom = browse(browser, "file://" + str(graph), "--dump-dom")
    # the script ran: labels are drawn into the frames that fit
    assert re.search(r'data-n="log_line"[^>]*>.*?<text[^>]*>log_line</text>',
                     dom), "the frames have no labels: the script did not run"

    act = tmp_path / "acted.svg"
    act.write_text(graph.read_text().replace(
        "</svg>", "<script>window.scprofZoom('run_raw');"
        "window.scprofSearch('log_line');</script></svg>"))
    dom = browse(browser, "file://" + str(act), "--dump-dom")
    raw = re.search(r'<g class="f"[^>]*data-n="run_raw"[^>]*>.*?'
                    r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)"', dom)
    assert raw and float(raw.group(1)) == 10 and float(raw.group(2)) > 1170, \
        "a click on run_raw does not zoom it to the full width"
    logg = re.search(r'<g class="f"[^>]*data-n="log_line"[^>]*style="([^"]*)"'
                     r'.*?fill="([^"]+)"', dom)
    assert logg and "display: none" in logg.group(1), \
        "the other branch is still shown when zoomed"
    assert logg.group(2) == "rgb(230,0,230)", "search did not highlight"
    m = re.search(r"Matched: ([\d.]+)%", dom)
    assert m and abs(float(m.group(1)) - 75) < 5, m and m.group(0)

    shots = []
    for name, src in (("plain", graph), ("zoomed", act)):
        png = tmp_path / (name + ".png")
        browse(browser, "file://" + str(src), "--screenshot=" + str(png),
               "--window-size=1200,360")
        w, h, pix = png_pixels(png)
        assert (w, h) == (1200, 360)
        assert len(set(pix)) > 50, f"the {name} screenshot is blank"
        shots.append(pix)
        if os.environ.get("SCPROF_SCREENSHOTS"):
            shutil.copy(png, os.path.join(os.environ["SCPROF_SCREENSHOTS"],
                                          name + ".png"))
    assert shots[0] != shots[1], "zooming changed nothing on screen"

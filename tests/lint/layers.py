#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that user/ keeps its layers: includes only run down, and no two
modules (a .c file with its header) call each other, directly or round a
longer circle.

  layers.py [OBJECT...]

Without objects only the includes are checked; with the build's objects
of user/ (.output/user/LAYER/NAME.o), the calls too, from their symbol
tables (nm).
Prints each violation on a line of its own and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
USER = os.path.join(ROOT, "user")
# What each layer may include besides itself: the arrows of the picture in
# docs/HACKING.md. cmd -> analyze -> collect -> model -> util; render -> model.
MAY_USE = {
    "cmd": {"analyze", "collect", "render", "model", "util"},
    "analyze": {"collect", "model", "util"},
    "collect": {"model", "util"},
    "render": {"model", "util"},
    "model": {"util"},
    "util": set(),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    for layer in sorted(MAY_USE):
        d = os.path.join(USER, layer)
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                yield layer, f, os.path.join(d, f)


def check_includes(errors):
    for layer in os.listdir(USER):
        if os.path.isdir(os.path.join(USER, layer)) and layer not in MAY_USE:
            errors.append(f"user/{layer}/: not a known layer")
    for f in os.listdir(USER):
        if os.path.isfile(os.path.join(USER, f)):
            errors.append(f"user/{f}: outside the layer folders")
    for layer, name, path in sources():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            if "/" not in inc or inc.endswith(".pb-c.h"):
                # include/ (shared with BPF), or generated (protoc-c's
                # OTLP headers keep their packages' folders)
                continue
            to = inc.split("/", 1)[0]
            if not os.path.exists(os.path.join(USER, inc)):
                errors.append(f"user/{layer}/{name}: includes missing {inc}")
            elif to != layer and to not in MAY_USE[layer]:
                errors.append(f"user/{layer}/{name}: {layer} may not "
                              f"include {inc} ({to} is not below it)")


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def check_calls(objects, errors):
    mods = {}
    for obj in objects:
        layer = os.path.basename(os.path.dirname(obj))
        name = os.path.basename(obj)[:-2]
        if layer not in MAY_USE:
            errors.append(f"{obj}: not in a layer folder")
            continue
        mods[f"{layer}/{name}"] = symbols(obj)
    owner = {s: m for m, (defs, _) in mods.items() for s in defs}
    edges = {m: sorted({owner[s] for s in und if s in owner} - {m})
             for m, (_, und) in mods.items()}
    for m, tos in edges.items():
        for to in tos:
            lm, lt = m.split("/")[0], to.split("/")[0]
            if lm != lt and lt not in MAY_USE[lm]:
                errors.append(f"{m} calls into {to}: {lm} may not use {lt}")
    # Circles: depth-first search, each reported once.
    state, stack, seen = {}, [], set()

    def visit(m):
        state[m] = 1
        stack.append(m)
        for to in edges[m]:
            if state.get(to) == 1:
                cyc = stack[stack.index(to):]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    errors.append("call circle: " + " -> ".join(cyc + [to]))
            elif to not in state:
                visit(to)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def main():
    errors = []
    check_includes(errors)
    if len(sys.argv) > 1:
        check_calls(sys.argv[1:], errors)
    for e in errors:
        print(f"layers: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that the BPF objects keep their scalar settings together.

  rodata.py OBJECT...

The settings are `const volatile` globals in .rodata. The verifier knows
their values and prunes the branches on them, but their loads stay in the
program, so every call reads the cache lines they are in. Scalars (8 bytes
or less) must all lie in the section's first LINES lines, before any
table (scprof.bpf.c defines its tables after the includes for this).
Prints each setting out of place and exits 1 if there is any.
"""
import subprocess
import sys

LINE = 64
LINES = 2
SCALAR = 8


def readelf(*args):
    try:
        return subprocess.run(["readelf", "-W"] + list(args), check=True,
                              capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("rodata.py: readelf not found (binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit("rodata.py: readelf %s: %s" % (" ".join(args),
                                               e.stderr.strip()))


def section_index(obj, name):
    out = readelf("-S", obj)
    for line in out.splitlines():
        line = line.replace("[ ", "[")
        parts = line.split()
        if len(parts) > 1 and parts[0].startswith("[") and parts[1] == name:
            return parts[0].strip("[]")
    sys.exit("rodata.py: %s has no %s section" % (obj, name))


def symbols(obj, ndx):
    """(offset, size, name) of the global data objects in section ndx."""
    out = readelf("-s", obj)
    for line in out.splitlines():
        parts = line.split()
        # (settings are global; the file's static constants, read on
        # rare paths only, are local)
        if (len(parts) == 8 and parts[3] == "OBJECT" and
                parts[4] == "GLOBAL" and parts[6] == ndx):
            yield int(parts[1], 16), int(parts[2]), parts[7]


def main(objs):
    if not objs:
        sys.exit(__doc__.strip())
    bad = 0
    for obj in objs:
        ndx = section_index(obj, ".rodata")
        syms = sorted(symbols(obj, ndx))
        if not syms:
            sys.exit("rodata.py: %s: no settings in .rodata" % obj)
        for off, size, name in syms:
            if size <= SCALAR and off + size > LINE * LINES:
                print("%s: setting %s at .rodata+%d, past the first %d "
                      "bytes (define tables after the scalar settings)"
                      % (obj, name, off, LINE * LINES))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

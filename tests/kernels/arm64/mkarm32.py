#!/usr/bin/env python3
"""Write a 32-bit arm (EABI) program for arm64's compat ABI: mkarm32.py OUT N

The program makes N getpid calls (20 in arm's table: in arm64's own table
20 is epoll_create1) and leaves through exit_group (248), all with `svc 0`.
No arm toolchain is needed: its eight instructions are written here, in an
ELF file with one loadable segment. arm64 runs it when the kernel has
CONFIG_COMPAT and the CPU runs AArch32 at EL0 (qemu's -cpu max does).
"""
import struct
import sys

BASE = 0x10000
EHDR, PHDR = 52, 32


def program(n):
    assert 0 < n < 0x10000
    words = [
        0xE3004000 | (n >> 12) << 16 | (n & 0xFFF),  # movw r4, #n
        0xE3A07014,  # loop: mov r7, #20 (getpid)
        0xEF000000,  # svc #0
        0xE2544001,  # subs r4, r4, #1
        0x1AFFFFFB,  # bne loop
        0xE3A00000,  # mov r0, #0
        0xE3A070F8,  # mov r7, #248 (exit_group)
        0xEF000000,  # svc #0
    ]
    return struct.pack("<%dI" % len(words), *words)


def elf(code):
    entry = BASE + EHDR + PHDR
    size = EHDR + PHDR + len(code)
    ident = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)  # 32-bit, LE
    ehdr = ident + struct.pack(
        "<HHIIIIIHHHHHH", 2, 40, 1, entry, EHDR, 0,  # EXEC, EM_ARM
        0x05000000 | 0x400,  # EABI version 5, hard-float
        EHDR, PHDR, 1, 40, 0, 0)
    phdr = struct.pack("<IIIIIIII", 1, 0, BASE, BASE, size, size,
                       5, 0x1000)  # PT_LOAD, R+X
    return ehdr + phdr + code


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mkarm32.py OUT N")
    with open(sys.argv[1], "wb") as f:
        f.write(elf(program(int(sys.argv[2]))))


if __name__ == "__main__":
    main()

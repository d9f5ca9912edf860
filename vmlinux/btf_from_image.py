#!/usr/bin/env python3
"""Cut a kernel's BTF out of its boot image: btf_from_image.py IMAGE OUT

The kernel's .BTF section is what /sys/kernel/btf/vmlinux serves, byte for
byte, and an uncompressed image (arm64's Image) holds it as it is: a
header (magic 0xeb9f, version 1, header length 24, then the type and string
sections' offsets and lengths) and the two sections after it. Exactly one
place in the image must carry a header whose fields agree; its bytes are
written to OUT, for `bpftool btf dump file OUT format c`.
"""
import struct
import sys


def find_btf(image):
    found = []
    at = image.find(b"\x9f\xeb\x01\x00")
    while at >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from(
            "<5I", image, at + 4)
        end = at + hdr_len + str_off + str_len
        if (hdr_len == 24 and type_off == 0 and str_off == type_len and
                type_len and str_len and end <= len(image) and
                image[end - 1] == 0):
            found.append(image[at:end])
        at = image.find(b"\x9f\xeb\x01\x00", at + 1)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: btf_from_image.py IMAGE OUT")
    with open(sys.argv[1], "rb") as f:
        found = find_btf(f.read())
    if len(found) != 1:
        sys.exit(f"btf_from_image.py: {len(found)} BTF headers in "
                 f"{sys.argv[1]}, expected 1")
    with open(sys.argv[2], "wb") as f:
        f.write(found[0])


if __name__ == "__main__":
    main()

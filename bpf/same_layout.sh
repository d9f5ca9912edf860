#!/bin/sh
# same_layout.sh MODERN.skel.h LEGACY.skel.h: do the two builds of
# scprof.bpf.c (default, and -DSCPROF_LEGACY) have the same maps, programs
# and global data, laid out alike? The legacy object is opened through the
# default build's skeleton (user/collect/collector.c), so they must.
# Compares the skeletons without their ELF bytes; names made alike.
set -eu
strip() {
	sed -e 's/scprof_legacy_bpf/scprof_bpf/g' -e 's/SCPROF_LEGACY_BPF/SCPROF_BPF/g' -e 's/"scprof_l\./"scprof_b./g' "$1" |
		awk '/__elf_bytes\(size_t \*sz\)$/ { skip = 1 } !skip { print } /^}$/ { skip = 0 }'
}
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
strip "$1" > "$a"
strip "$2" > "$b"
if ! cmp -s "$a" "$b"; then
	echo "same_layout.sh: the legacy BPF build's maps, programs or global data differ from the default build's:" >&2
	diff "$a" "$b" | head -20 >&2
	exit 1
fi

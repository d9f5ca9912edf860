#!/bin/sh
# Boot an arm64 kernel under qemu-system-aarch64 (TCG) into an initramfs
# holding busybox, scprof, the workloads and the case scripts, and write its
# console to LOG:
#
#   boot.sh KDIR SCPROF WORKLOADS CASES LOG [SECONDS]
#
# KDIR is what fetch.sh left (Image, busybox); WORKLOADS' files go to /w,
# CASES' *.sh to /cases (init.sh runs them; lib.sh is their /lib.sh, and
# ../guest/split_sample.sh their /split_sample.sh). qemu is killed after SECONDS
# (default 600).
set -eu
kdir=$1 scprof=$2 workloads=$3 cases=$4 log=$5 limit=${6:-600}
here=$(dirname "$0")
root=$(mktemp -d "${TMPDIR:-/tmp}/scprof-arm64.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/w" "$root/cases" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp"
cp "$kdir/busybox" "$root/bin/busybox"
cp "$scprof" "$root/bin/scprof"
cp "$workloads"/* "$root/w/"
cp "$cases"/*.sh "$root/cases/"
cp "$here/init.sh" "$root/init"
cp "$here/lib.sh" "$root/lib.sh"
cp "$here/../guest/split_sample.sh" "$root/split_sample.sh"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$root.cpio.gz"
trap 'rm -rf "$root" "$root.cpio.gz"' EXIT
# -cpu max with the implementation-defined pointer authentication: the
# architected one (QARMA) costs TCG a boot of 10 s instead of 3.
timeout "$limit" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on \
	-accel tcg -smp 2 -m 1024 -nographic -no-reboot \
	-kernel "$kdir/Image" -initrd "$root.cpio.gz" \
	-append "console=ttyAMA0 panic=-1 quiet loglevel=1" > "$log" 2>&1

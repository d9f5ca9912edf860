#!/bin/sh
# Fetch what an arm64 Debian release boots scprof with, through apt with a
# private sources list, lists directory, cache and status (the machine's
# apt configuration is not read or changed):
#
#   fetch.sh DIR SUITE [FLAVOUR]
#
# SUITE is bookworm (6.1) or trixie (6.12); FLAVOUR is cloud-arm64 (the
# default) or arm64. Leaves in DIR/SUITE/: Image (the kernel, vmlinuz
# uncompressed), config, version and busybox (static, arm64). Done once: a DIR
# that has them is left alone.
set -eu
mkdir -p "$1"
dir=$(cd "$1" && pwd) # apt reads relative paths from its own directories
suite=$2
flavour=${3:-cloud-arm64}
out=$dir/$suite
[ -s "$out/Image" ] && [ -s "$out/busybox" ] && exit 0

apt=$dir/apt/$suite
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/etc" "$out"
: > "$apt/status"
case $suite in
trixie) updates=trixie-updates security=trixie-security ;;
bookworm) updates=bookworm-updates security=bookworm-security ;;
*) echo "fetch.sh: unknown suite $suite" >&2; exit 2 ;;
esac
cat > "$apt/etc/sources.list" <<EOS
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $updates main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security $security main
EOS
APT="apt-get -q -o Dir::Etc::SourceList=$apt/etc/sources.list
	-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null
	-o Dir::Etc::PreferencesParts=/dev/null
	-o Dir::State::Lists=$apt/lists -o Dir::State::status=$apt/status
	-o Dir::Cache=$apt -o Dir::Cache::archives=$apt/archives
	-o APT::Architecture=arm64 -o APT::Architectures::=arm64
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
$APT update >&2 || exit 1
# linux-image-FLAVOUR depends on the current versioned image package
# (linux-image-VERSION-FLAVOUR); its -unsigned build has the same files.
# shellcheck disable=SC2086
img=$($APT -s install linux-image-$flavour 2>/dev/null |
	sed -n "s/^Inst \(linux-image-[0-9][^ ]*-$flavour\) .*/\1/p" | head -n 1)
[ -n "$img" ] || { echo "fetch.sh: no linux-image-$flavour in $suite" >&2; exit 1; }
cd "$apt/archives"
# shellcheck disable=SC2086
$APT download "$img-unsigned" busybox-static >&2
cd - > /dev/null
rm -rf "$apt/x"
for deb in "$apt/archives/$img"-unsigned_*.deb "$apt/archives"/busybox-static_*.deb; do
	dpkg-deb -x "$deb" "$apt/x"
done
version=${img#linux-image-}
# arm64's vmlinuz was a gzip'd Image (qemu -kernel does not unpack it);
# Debian now ships the Image itself.
vmlinuz=$apt/x/boot/vmlinuz-$version
if gzip -t "$vmlinuz" 2>/dev/null; then
	gzip -dc "$vmlinuz" > "$out/Image"
else
	cp "$vmlinuz" "$out/Image"
fi
cp "$apt/x/boot/config-$version" "$out/config"
cp "$(ls "$apt/x/bin/busybox" "$apt/x/usr/bin/busybox" 2>/dev/null | head -n 1)" "$out/busybox"
echo "$version" > "$out/version"
rm -rf "$apt/x"

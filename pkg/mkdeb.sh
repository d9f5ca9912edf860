#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# mkdeb.sh DIR VERSION ARCH DEB: turn DIR/root (a `make install
# PREFIX=/usr DESTDIR=DIR/root`) into the Debian package DEB with
# dpkg-deb. Depends come from dpkg-shlibdeps (the libraries the binary
# links); the copyright and changelog from pkg/debian/.
set -eu
dir=$1 version=$2 arch=$3 deb=$4
root=$(cd "$dir" && pwd)/root
here=$(dirname "$0")
die() { echo "mkdeb: $*" >&2; exit 1; }

# The changelog's newest entry must be this version: a new VERSION needs
# a new entry.
top=$(sed -n '1s/^scprof (\([^)]*\)).*/\1/p' "$here/debian/changelog")
[ "$top" = "$version-1" ] ||
	die "pkg/debian/changelog's newest entry is '$top', not '$version-1': add one"

# Debian's layout: stripped binary, gzipped man pages and changelog, the
# copyright in /usr/share/doc/scprof.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/sbin/scprof"
gzip -9nf "$root"/usr/share/man/man8/*.8
doc=$root/usr/share/doc/scprof
install -d "$doc"
install -m 644 "$here/debian/copyright" "$doc/copyright"
gzip -9nc "$here/debian/changelog" > "$doc/changelog.Debian.gz"
chmod 644 "$doc/changelog.Debian.gz"

# dpkg-shlibdeps wants a debian/control to read; give it a minimal one.
src=$dir/src
rm -rf "$src"
mkdir -p "$src/debian"
printf 'Source: scprof\n\nPackage: scprof\nArchitecture: any\n' > "$src/debian/control"
deps=$(cd "$src" && dpkg-shlibdeps -O "$root/usr/sbin/scprof" 2>"$root.shlibdeps.log") ||
	{ cat "$root.shlibdeps.log" >&2; false; } ||
	die "dpkg-shlibdeps failed"
deps=${deps#shlibs:Depends=}
[ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies"

install -d "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version-1/" -e "s/@ARCH@/$arch/" \
	-e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$deps/" \
	"$here/debian/control.in" > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print |
	sed 's|^\./||' | sort | xargs md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
# Directories 755 and files 644 whatever the umask (lintian checks).
find "$root" -type d -exec chmod 755 {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "mkdeb: $deb"

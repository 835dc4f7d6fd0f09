#!/bin/bash
# The guest's busybox and bash for an architecture other than the host's:
# Debian's busybox-static and bash-static packages of that architecture,
# downloaded with apt through a scratch configuration of our own (the
# host's sources, that architecture only), so the host's apt state and its
# list of architectures stay untouched.  Unpacked into DIR/root.
#
#   guest-root.sh DEB_ARCH DIR     e.g. guest-root.sh arm64 build/guest-arm64
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

arch=$1
dir=$(abspath "$2")
root=$dir/root
[ -x "$root/bin/busybox" ] && [ -x "$root/bin/bash-static" ] && exit 0

apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources"
# The host's deb sources, restricted to the guest's architecture.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	sed -e '/^Architectures:/d' -e '/^Types:/a Architectures: '"$arch" "$f"
	echo
done > "$apt_dir/sources/guest.sources"
[ -s "$apt_dir/sources/guest.sources" ] || die "no deb822 sources in /etc/apt/sources.list.d"

opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/sources"
      -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
      -o Dir::State::Status=/dev/null
      -o APT::Architecture="$arch" -o APT::Architectures="$arch")
say "fetching busybox-static and bash-static for $arch"
apt-get "${opts[@]}" -qq update
(cd "$dir" && apt-get "${opts[@]}" -qq download busybox-static bash-static)
rm -rf "$root"
mkdir -p "$root"
for deb in "$dir"/busybox-static_*_"$arch".deb "$dir"/bash-static_*_"$arch".deb; do
	dpkg-deb -x "$deb" "$root"
done
[ -x "$root/bin/busybox" ] && [ -x "$root/bin/bash-static" ] ||
	die "the $arch packages have no bin/busybox or bin/bash-static"
say "guest userland for $arch in $root"

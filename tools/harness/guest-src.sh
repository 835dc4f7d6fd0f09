#!/bin/bash
# The guest's busybox and bash for an architecture Debian has no binary
# packages of (riscv64 in Debian 12): Debian's busybox and bash source
# packages, downloaded with apt through a scratch deb-src configuration of
# our own (the host's sources; the host's apt state stays untouched),
# unpacked with their Debian patches and cross built as static programs
# with the architecture's cross compiler.  busybox gets Debian's own
# configuration of busybox-static; bash that of a static bash without
# its own malloc.  Installed as DIR/root/bin/busybox and
# DIR/root/bin/bash-static, the names guest-root.sh gives Debian's.
#
#   guest-src.sh DEB_ARCH DIR     e.g. guest-src.sh riscv64 build/guest-riscv
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

arch=$1
dir=$(abspath "$2")
root=$dir/root
[ -x "$root/bin/busybox" ] && [ -x "$root/bin/bash-static" ] && exit 0

case $arch in
riscv64) cross=riscv64-linux-gnu ;;
*) die "no cross compiler known for $arch" ;;
esac
command -v "$cross-gcc" >/dev/null || die "$cross-gcc missing: run 'make deps ARCH=...'"
jobs=${KP_JOBS:-$(nproc)}

apt_dir=$dir/apt
src=$dir/src
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources" "$src"
# The host's deb sources as deb-src.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	sed -e '/^Architectures:/d' -e 's/^Types:.*/Types: deb-src/' "$f"
	echo
done > "$apt_dir/sources/guest-src.sources"
[ -s "$apt_dir/sources/guest-src.sources" ] || die "no deb822 sources in /etc/apt/sources.list.d"
opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/sources"
      -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
      -o Dir::State::Status=/dev/null)

if ! ls "$src"/busybox_*.dsc "$src"/bash_*.dsc >/dev/null 2>&1; then
	say "fetching Debian's busybox and bash sources"
	apt-get "${opts[@]}" -qq update
	(cd "$src" && apt-get "${opts[@]}" -qq --download-only source busybox bash)
fi

# unpack NAME: the source package NAME unpacked with its patches; prints
# the directory.
unpack() {
	local d
	d=$(find "$src" -maxdepth 1 -type d -name "$1-[0-9]*" | head -n 1)
	if [ -z "$d" ]; then
		(cd "$src" && dpkg-source -x "$(ls "$1"_*.dsc | head -n 1)" >/dev/null)
		d=$(find "$src" -maxdepth 1 -type d -name "$1-[0-9]*" | head -n 1)
	fi
	[ -n "$d" ] || die "could not unpack $1"
	echo "$d"
}

mkdir -p "$root/bin"

if [ ! -x "$root/bin/busybox" ]; then
	bb=$(unpack busybox)
	say "building busybox (static, $arch) in $bb"
	# Debian's configuration of its busybox-static package.
	cat "$bb/debian/config/os/linux" "$bb/debian/config/pkg/static" > "$bb/.config"
	(yes "" || true) | make -C "$bb" -s oldconfig >/dev/null
	make -C "$bb" -s -j"$jobs" CROSS_COMPILE="$cross-" busybox > "$dir/busybox.log" 2>&1 ||
		{ tail -n 30 "$dir/busybox.log" >&2; die "busybox did not build (log: $dir/busybox.log)"; }
	cp "$bb/busybox" "$root/bin/busybox"
fi

if [ ! -x "$root/bin/bash-static" ]; then
	bs=$(unpack bash)
	say "building bash (static, $arch) in $bs"
	mkdir -p "$bs/build-$arch"
	(cd "$bs/build-$arch" &&
	 ../configure -q --host="$cross" --build="$(gcc -dumpmachine)" \
		--enable-static-link --without-bash-malloc --disable-nls \
		--without-installed-readline &&
	 make -s -j"$jobs" bash) > "$dir/bash.log" 2>&1 ||
		{ tail -n 30 "$dir/bash.log" >&2; die "bash did not build (log: $dir/bash.log)"; }
	cp "$bs/build-$arch/bash" "$root/bin/bash-static"
	"$cross-strip" "$root/bin/bash-static"
fi

file "$root/bin/busybox" "$root/bin/bash-static" 2>/dev/null | grep -q 'statically linked' ||
	say "warning: the guest programs may not be static"
say "guest userland for $arch in $root"

#!/bin/bash
# Pack the guest's initramfs: busybox, bash, our init and shell tests, the
# kprobes sample modules, our test modules, the documentation's examples
# (/kptest/doc) with the host's perf and bpftrace (x86_64), the static test
# programs, the kernel's modules (/lib/modules), upstream's ftrace selftests
# (/kptest/ftrace) and the user's EXTRA modules with their .txt data files.
#
#   initramfs.sh BUILD_DIR [EXTRA_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

bdir=$(abspath "$1")
extra=${2:-}
tree=$bdir/linux
guest=$top/tools/harness/guest
tests=$top/tools/testing/kprobes/guest
list=$bdir/initramfs.list

# tree_entries SRC DST: gen_init_cpio lines for the directories and regular
# files under SRC, placed at DST, keeping the executable bits.
tree_entries() {
	local src=$1 dst=$2 rel mode
	[ -d "$src" ] || return 0
	echo "dir $dst 755 0 0"
	(cd "$src" && find . -mindepth 1 \( -type d -o -type f \) -printf '%y %m %P\n' | LC_ALL=C sort -k3) |
	while read -r type mode rel; do
		if [ "$type" = d ]; then
			echo "dir $dst/$rel 755 0 0"
		else
			echo "file $dst/$rel $src/$rel $mode 0 0"
		fi
	done
}

# Another architecture's busybox and bash come from its Debian packages,
# or are cross built from Debian's sources where it has none.
if [ -n "$kp_guest_src" ]; then
	"$top/tools/harness/guest-src.sh" "$kp_deb_arch" "$top/build/guest-$kp_arch"
elif [ "$kp_arch" != x86_64 ]; then
	"$top/tools/harness/guest-root.sh" "$kp_deb_arch" "$top/build/guest-$kp_arch"
fi

# The documentation's examples for the guest, and the checks of the others.
"$top/tools/harness/doc-examples.py" "$bdir/doc"

# host_tools TOOL...: the host's Debian-packaged TOOLs (perf, bpftrace) for
# the guest: /usr/bin/TOOL, every library ldd finds for them (each once) and
# the dynamic loader, at the paths the loader looks in.  A TOOL the host
# does not have is left out (its examples then skip, saying so).
host_tools() {
	local t bin lib bins=()
	for t in "$@"; do
		bin=$(command -v "$t") || continue
		bin=$(readlink -f "$bin")
		echo "file /usr/bin/$t $bin 755 0 0"
		bins+=("$bin")
	done
	[ ${#bins[@]} = 0 ] && return 0
	echo "dir /lib 755 0 0"
	echo "dir /lib/x86_64-linux-gnu 755 0 0"
	echo "dir /lib64 755 0 0"
	for bin in "${bins[@]}"; do
		ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
	done | LC_ALL=C sort -u |
	while read -r lib; do
		echo "file $lib $(readlink -f "$lib") 755 0 0"
	done
}

{
	for d in /dev /proc /sys /tmp /bin /sbin /usr /usr/bin /usr/sbin /root \
		 /kptest /kptest/tests /kptest/modules /extra; do
		echo "dir $d 755 0 0"
	done
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "file /bin/busybox $(kp_guest_bin busybox) 755 0 0"
	echo "slink /bin/sh busybox 777 0 0"
	echo "file /bin/bash $(kp_guest_bin bash-static) 755 0 0"
	echo "file /init $guest/init 755 0 0"
	[ -f "$tests/lib.sh" ] && echo "file /kptest/lib.sh $tests/lib.sh 644 0 0"
	for f in "$tests"/[0-9]*.sh; do
		[ -f "$f" ] && echo "file /kptest/tests/${f##*/} $f 755 0 0"
	done
	for f in "$tree"/samples/kprobes/*.ko "$bdir"/oot/kptest/*.ko "$bdir"/oot/docs/*.ko; do
		[ -f "$f" ] && echo "file /kptest/modules/${f##*/} $f 644 0 0"
	done
	# Static test programs (kprobe_perf).
	echo "dir /kptest/bin 755 0 0"
	for f in "$bdir"/oot/bin/*; do
		[ -f "$f" ] && echo "file /kptest/bin/${f##*/} $f 755 0 0"
	done
	# The kernel's modules and modules.dep, for modprobe (no symlinks:
	# lib/modules/<release>/build points back at the tree).
	tree_entries "$bdir/oot/modroot/lib" /lib
	# The documentation's command examples (15-doc-examples.sh runs them),
	# with the host's perf and bpftrace (Debian's linux-perf and bpftrace)
	# and their libraries for the README's examples and 86-bpftrace.sh:
	# in the trees build.sh made (the example module is there), not in
	# make bench's own.  bpftrace adds about 200 MB (LLVM and clang) to
	# the unpacked image, 80 MB compressed.
	if [ -d "$bdir/oot/docs" ]; then
		tree_entries "$bdir/doc" /kptest/doc
		[ "$kp_arch" = x86_64 ] && host_tools perf bpftrace
	fi
	# Upstream's ftrace selftests, pristine from the tree, for ftracetest.
	tree_entries "$tree/tools/testing/selftests/ftrace" /kptest/ftrace
	if [ -n "$extra" ]; then
		[ -f "$extra/run.sh" ] || die "$extra/run.sh missing"
		echo "file /extra/run.sh $(cd "$extra" && pwd)/run.sh 755 0 0"
		for f in "$bdir"/oot/extra/*.ko "$bdir"/oot/extra/*.txt; do
			[ -f "$f" ] && echo "file /extra/${f##*/} $f 644 0 0"
		done
	fi
} > "$list"

# Fixed timestamps (-t 0, gzip -n): the same files give the same image, which
# the benchmark's -icount runs need to repeat exactly.
"$tree/usr/gen_init_cpio" -t 0 "$list" | gzip -n -1 > "$bdir/initramfs.cpio.gz"
say "initramfs: $bdir/initramfs.cpio.gz"

#!/bin/bash
# Build the kernel in BUILD_DIR/linux, then the out-of-tree modules (our test
# modules, the README's example module and, when given, the user's EXTRA directory), install the kernel's
# modules under BUILD_DIR/oot/modroot and build the static guest programs
# (BUILD_DIR/oot/bin: kprobe_perf, kprobe_bpf, uprobe_target, uprobe_i386,
# uprobe_pmu, uprobe_calls, uprobe_multi, uprobe_corners, uprobe_stub, wp_coexist).
#
#   build.sh BUILD_DIR [EXTRA_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

bdir=$(abspath "$1")
extra=${2:-}
tree=$bdir/linux
jobs=${KP_JOBS:-$(nproc)}

say "building kernel in $tree ($kp_arch, -j$jobs)"
make -C "$tree" -j"$jobs" -s "${kp_image##*/}" modules

# Build a directory of out-of-tree modules from a private copy, so the
# source directory stays clean and a stale object never survives.
build_oot() {
	local src=$1 dst=$2
	[ -f "$src/Kbuild" ] || [ -f "$src/Makefile" ] || die "$src has no Kbuild or Makefile"
	mkdir -p "$dst"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' "$src/" "$dst/"
	say "building modules in $src"
	make -C "$tree" -s M="$dst" modules
}

rm -rf "$bdir/oot"
build_oot "$top/tools/testing/kprobes/modules" "$bdir/oot/kptest"
# The README's example of a module against the API, which the guest's
# 15-doc-examples.sh loads as the README says.
build_oot "$top/samples/kprobes/extra" "$bdir/oot/docs"

# The kernel's own modules under lib/modules/<release>, with modules.dep,
# for modprobe in the guest (ftracetest's kprobe_module.tc modprobes the
# trace-printk sample).
say "installing the kernel's modules in $bdir/oot/modroot"
make -C "$tree" -s INSTALL_MOD_PATH="$bdir/oot/modroot" modules_install >/dev/null

# Static user-space test programs for the guest (no libc there): those in
# C alone for every architecture, those with x86 assembly or x86 registers
# for x86_64 only, and the i386 ones for both x86 widths.
mkdir -p "$bdir/oot/bin"
prog() {
	local src=$1 name=${1##*/}
	shift
	name=${name%.c}
	say "building tools/testing/kprobes/$src ($kp_arch, static)"
	"${cc:-$kp_ucc}" "${kp_ucflags[@]}" -static -O2 -Wall "$@" -o "$bdir/oot/bin/$name" "$top/tools/testing/kprobes/$src"
}
prog perf/kprobe_perf.c
prog bpf/kprobe_bpf.c
prog uprobe/uprobe_pmu.c -pthread
prog uprobe/uprobe_calls.c -fno-omit-frame-pointer
if [ "$kp_arch" = x86_64 ]; then
	prog uprobe/uprobe_target.c -pthread
	prog perf/wp_coexist.c
	prog uprobe/uprobe_multi.c -pthread
	prog uprobe/uprobe_corners.c
	prog uprobe/uprobe_stub.c
	# i386 code, from Debian's cross compiler: gcc-multilib would
	# conflict with the other architectures' cross compilers.
	cc=$kp_ucc32 prog uprobe/uprobe_i386.c -fno-pie -no-pie -pthread
elif [ "$kp_arch" = i386 ]; then
	# The i386 programs a 32-bit kernel runs natively (the others are
	# x86_64 assembly).
	prog perf/wp_coexist.c
	prog uprobe/uprobe_i386.c -fno-pie -no-pie -pthread
fi
if [ -n "$extra" ]; then
	build_oot "$(cd "$extra" && pwd)" "$bdir/oot/extra"
fi

#!/bin/bash
# Build the kernel in BUILD_DIR/linux, then the out-of-tree modules (our test
# modules and, when given, the user's EXTRA directory), install the kernel's
# modules under BUILD_DIR/oot/modroot and build the static guest programs
# (BUILD_DIR/oot/bin: kprobe_perf, kprobe_bpf, uprobe_target, uprobe_i386,
# uprobe_pmu, uprobe_multi, wp_coexist).
#
#   build.sh BUILD_DIR [EXTRA_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

bdir=$(abspath "$1")
extra=${2:-}
tree=$bdir/linux
jobs=${KP_JOBS:-$(nproc)}

say "building kernel in $tree (-j$jobs)"
make -C "$tree" -j"$jobs" -s bzImage modules

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

# The kernel's own modules under lib/modules/<release>, with modules.dep,
# for modprobe in the guest (ftracetest's kprobe_module.tc modprobes the
# trace-printk sample).
say "installing the kernel's modules in $bdir/oot/modroot"
make -C "$tree" -s INSTALL_MOD_PATH="$bdir/oot/modroot" modules_install >/dev/null

# Static user-space test programs for the guest (no libc there).
mkdir -p "$bdir/oot/bin"
say "building tools/testing/kprobes/perf/kprobe_perf (static)"
gcc -static -O2 -Wall -o "$bdir/oot/bin/kprobe_perf" "$top/tools/testing/kprobes/perf/kprobe_perf.c"
say "building tools/testing/kprobes/bpf/kprobe_bpf (static)"
gcc -static -O2 -Wall -o "$bdir/oot/bin/kprobe_bpf" "$top/tools/testing/kprobes/bpf/kprobe_bpf.c"
say "building tools/testing/kprobes/uprobe/uprobe_target (static)"
gcc -static -O2 -Wall -pthread -o "$bdir/oot/bin/uprobe_target" "$top/tools/testing/kprobes/uprobe/uprobe_target.c"
say "building tools/testing/kprobes/perf/wp_coexist (static)"
gcc -static -O2 -Wall -o "$bdir/oot/bin/wp_coexist" "$top/tools/testing/kprobes/perf/wp_coexist.c"
say "building tools/testing/kprobes/uprobe/uprobe_pmu (static)"
gcc -static -O2 -Wall -o "$bdir/oot/bin/uprobe_pmu" "$top/tools/testing/kprobes/uprobe/uprobe_pmu.c"
say "building tools/testing/kprobes/uprobe/uprobe_multi (static)"
gcc -static -O2 -Wall -pthread -o "$bdir/oot/bin/uprobe_multi" "$top/tools/testing/kprobes/uprobe/uprobe_multi.c"
say "building tools/testing/kprobes/uprobe/uprobe_i386 (static, 32-bit)"
gcc -m32 -static -fno-pie -no-pie -O2 -Wall -pthread -o "$bdir/oot/bin/uprobe_i386" "$top/tools/testing/kprobes/uprobe/uprobe_i386.c"
if [ -n "$extra" ]; then
	build_oot "$(cd "$extra" && pwd)" "$bdir/oot/extra"
fi

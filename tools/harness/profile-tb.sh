#!/bin/bash
# Where a loop's guest instructions go, without gdb: boot BUILD_DIR's
# kernel as make bench does (one vCPU, -icount), wait until the console
# shows AFTER, let KP_PROF_DELAY seconds (2.5) go by, have QEMU log every
# translation block it runs for KP_PROF_SECONDS (0.5), and count the
# iterations of the loop between two runs of the instruction at BOUNDARY
# (tools/harness/profile_tb.py: per iteration, per function, in order).
# For architectures where profile.sh's gdb cannot go (the host's gdb has
# no arm64) and QEMU has no plugins.
#
#   profile-tb.sh BUILD_DIR MODE AFTER BOUNDARY [OUT]
#
# MODE and KP_CMDLINE as for boot.sh.  BOUNDARY is a hex address: a kernel
# one, a module one (the module, KP_PROF_KO, default the benchmark's
# kpbench.ko, loaded at KP_PROF_MODBASE, default 0xffff800078800000, where
# the first module lands on arm64 here) or a user one.  Example, arm64's
# boosted kprobe hit (kpb_target_nt is kpbench.ko's first function):
#   ARCH=arm64 KP_CMDLINE="kpbench.set=hits kpbench.loops=3000000" \
#   tools/harness/profile-tb.sh build/arm64/bench/ours extra \
#   'kpbench: hit.brk' 0xffff800078800000
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

[ $# -ge 4 ] || die "usage: profile-tb.sh BUILD_DIR MODE AFTER BOUNDARY [OUT]"
bdir=$(abspath "$1")
mode=$2
after=$3
boundary=$4
out=$(abspath "${5:-$bdir/profile-tb}")
ko=${KP_PROF_KO:-$bdir/oot/extra/kpbench.ko}
sock=$out/monitor.sock
rm -f "$sock" "$out/trace.txt" "$out/console.log"

KP_QEMU_ARGS="-smp 1 -icount shift=0,sleep=off -monitor unix:$sock,server,nowait ${KP_QEMU_ARGS:-}" \
	KP_TIMEOUT=${KP_TIMEOUT:-1800} \
	"$top/tools/harness/boot.sh" "$bdir" "$mode" "$out/console.log" >/dev/null &
qemu=$!
"$top/tools/harness/profile_tb.py" log "$out/console.log" "$sock" "$after" \
	"${KP_PROF_DELAY:-2.5}" "${KP_PROF_SECONDS:-0.5}" "$out/trace.txt"
wait "$qemu" || true
"$top/tools/harness/profile_tb.py" count "$out/trace.txt" "$bdir/linux/vmlinux" \
	"$ko" "${KP_PROF_MODBASE:-0xffff800078800000}" "$boundary"

#!/bin/bash
# Where a probe hit's guest instructions go: boot BUILD_DIR's kernel on one
# vCPU with QEMU's gdb stub, let gdb single-step a few hits from START to
# their end (tools/harness/profile.py), and print the count per hit and the
# functions the last hit ran through.  For finding what to cut before
# measuring the result with make bench.
#
#   profile.sh BUILD_DIR MODE START [OUT]
#
# MODE and KP_CMDLINE as for boot.sh (say extra, with the benchmark module
# as EXTRA and KP_CMDLINE="kpbench.set=hits kpbench.loops=1000").  START is
# a kernel symbol or *ADDRESS; OUT (default BUILD_DIR/profile) gets the
# console log, gdb's log and the traces.  KP_PROF_UNTIL=return (default:
# the hit ends when START's return address is reached), user (it ends in
# user space) or iret (after an iretq: a whole x86 trap from its entry
# symbol); KP_PROF_COND, a gdb condition on START; KP_PROF_SKIP=N hits
# to let go first; KP_PROF_AFTER=SYMBOL to arm START only once SYMBOL ran
# (past the boot, whose ftrace self tests take an int3 per patched site);
# KP_PROF_N traces (3); KP_PROF_MIN and KP_PROF_RESKIP to drop hits shorter
# than MIN instructions and let RESKIP go after each; KP_PROF_PORT (1234).
#
# Example, a uprobe hit from the int3 in user mode to the return there:
#   KP_CMDLINE="kpbench.set=uhits upbench.n=20000" KP_PROF_UNTIL=user \
#   KP_PROF_COND='(*(unsigned long *)($rsp + 8) & 3) == 3' KP_PROF_SKIP=3000 \
#   KP_PROF_AFTER=uprobe_register \
#   tools/harness/profile.sh build/bench/ours extra asm_exc_int3
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

[ $# -ge 3 ] || die "usage: profile.sh BUILD_DIR MODE START [OUT]"
bdir=$(abspath "$1")
mode=$2
out=$(abspath "${4:-$bdir/profile}")
mkdir -p "$out"
port=${KP_PROF_PORT:-1234}
command -v gdb >/dev/null || die "gdb missing: apt-get install gdb"

KP_QEMU_ARGS="-smp 1 -gdb tcp::$port ${KP_QEMU_ARGS:-}" \
	KP_TIMEOUT=${KP_TIMEOUT:-1800} \
	"$top/tools/harness/boot.sh" "$bdir" "$mode" "$out/console.log" >/dev/null &
qemu=$!
sleep 2
KP_PROF_PORT=$port KP_PROF_START=$3 KP_PROF_TRACE=$out/trace.txt \
	timeout "${KP_TIMEOUT:-1800}" gdb -q -batch -x "$top/tools/harness/profile.py" \
	"$bdir/linux/vmlinux" >"$out/gdb.log" 2>&1 ||
	say "gdb ended with an error (see $out/gdb.log)"
wait "$qemu" || true
"$top/tools/harness/profile.py" "$out/trace.txt" "$bdir/linux/System.map"

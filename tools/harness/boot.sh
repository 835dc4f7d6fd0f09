#!/bin/bash
# Boot BUILD_DIR's kernel and initramfs in QEMU (TCG, 2 vCPUs).
#
#   boot.sh BUILD_DIR MODE [LOG]
#
# MODE is passed to the guest's init (demo, test, extra, shell).  With a LOG,
# the serial console goes there (and, filtered, to stdout) under a timeout.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

bdir=$(abspath "$1")
mode=$2
log=${3:-}
tree=$bdir/linux

# One host thread runs both vCPUs by default: under multi-threaded TCG a
# vCPU can run stale code across another vCPU's text patching (seen with
# stock upstream kprobes and ftrace too), which crashes guests at random.
# KP_TCG_THREAD=multi brings it back, for experiments.  32-bit arm cannot
# boot two vCPUs on one thread and runs multi-threaded (arch.sh says why).
# The machine, CPU and memory are ARCH's (arch.sh).
qemu=("${kp_qemu[@]}" -smp 2 -m "${kp_mem:-1024}"
      -accel "tcg,thread=${KP_TCG_THREAD:-$kp_tcg_thread}"
      -kernel "$tree/$kp_image" -initrd "$bdir/initramfs.cpio.gz"
      -no-reboot -display none
      -append "console=$kp_console kp.mode=$mode panic=-1 ${kp_cmdline:+$kp_cmdline }${KP_CMDLINE:-}")
qemu+=(${KP_QEMU_ARGS:-})

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio
fi
if [ -z "$log" ]; then
	exec timeout "${KP_TIMEOUT:-1200}" "${qemu[@]}" -serial stdio -monitor none </dev/null
fi

say "booting $mode run, log in $log (timeout ${KP_TIMEOUT:-1200}s)"
set +e
timeout "${KP_TIMEOUT:-1200}" "${qemu[@]}" -serial stdio -monitor none </dev/null |
	tee "$log" | grep --line-buffered -E '^(\[[ 0-9.]+\] )?( *(not )?ok [0-9]|kptest:)'
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 124 ] && say "QEMU timed out"
exit 0

#!/bin/sh
# BPF on kprobes, a kprobes user: /kptest/bin/kprobe_bpf (static C, raw
# bpf() calls, tools/testing/kprobes/bpf/kprobe_bpf.c) loads a kprobe
# program that counts its runs in an array map and records
# bpf_get_func_ip() and regs->ax, attaches it to perf kprobe PMU events on
# __x64_sys_getppid (an ftrace call site, as s390x's __s390x_sys_getppid;
# arm64: __arm64_sys_getppid, a breakpoint, arm64 has no kprobes on ftrace)
# as an entry probe, a return probe and an entry probe that overrides the
# return value with -EXDEV, calls getppid() and checks the map, the
# results, the kprobes list ([FTRACE]), and that closing the event
# detaches the program.  Its lines are the results.
. /kptest/lib.sh

prog=/kptest/bin/kprobe_bpf
need /sys/bus/event_source/devices/kprobe/type
need "$prog"
case $(uname -m) in
aarch64) sym=__arm64_sys_getppid ;;
riscv64) sym=__riscv_sys_getppid ;;
ppc64le) sym=sys_getppid ;;
armv7l)	sym=sys_getppid ;;	# 32-bit arm: no syscall wrappers
s390x)	sym=__s390x_sys_getppid ;;
i?86)	sym=__ia32_sys_getppid ;;
*)	sym=__x64_sys_getppid ;;
esac
"$prog" -n 50 "$sym"
rc=$?
check_klog
exit $rc

#!/bin/sh
# BPF uprobe_multi links of thousands of probes, the kernel's batch attach
# and detach: /kptest/bin/uprobe_multi (static C,
# tools/testing/kprobes/uprobe/uprobe_multi.c) probes a pad of nops of its
# own: exact int3s and runs, the file's bytes and pages back after close,
# all-or-nothing on a bad offset, a USDT semaphore count, and links coming
# and going while a thread runs the pad under perf uprobe events that must
# count every call, and children fork.  Its lines are the results.
. /kptest/lib.sh
x86_64_only "uprobe_multi is x86_64 assembly"

prog=/kptest/bin/uprobe_multi
need /sys/bus/event_source/devices/uprobe/type
need "$prog"
"$prog" -n 6000 -r 20
rc=$?
check_klog
exit $rc

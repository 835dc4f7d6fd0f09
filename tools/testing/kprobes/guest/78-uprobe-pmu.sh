#!/bin/sh
# The perf uprobe PMU and a raw-bpf() BPF program on a uprobe, both users
# of the uprobes API: /kptest/bin/uprobe_pmu (static C,
# tools/testing/kprobes/uprobe/uprobe_pmu.c) probes a function of its own,
# entry and return, and checks the counts and what the program saw, and a
# BPF uprobe_multi link on two of its functions, filtered on its pid, and
# both again with four threads calling at once.  Its lines are the results.
. /kptest/lib.sh

prog=/kptest/bin/uprobe_pmu
need /sys/bus/event_source/devices/uprobe/type
need "$prog"
"$prog" -n 50
rc=$?
check_klog
exit $rc

#!/bin/sh
# The perf kprobe PMU, a kprobes user: /kptest/bin/kprobe_perf (static C,
# tools/testing/kprobes/perf/kprobe_perf.c) opens perf_event_open() events
# of the "kprobe" PMU type on kernel_clone, bound to itself, by name, by
# address and as a return probe, forks and checks each count equals the
# number of forks; a disabled event does not count; the probe is in the
# kprobes list while the event is open and leaves it on close; an unknown
# symbol is refused.  Its lines are the results.
. /kptest/lib.sh

prog=/kptest/bin/kprobe_perf
need /sys/bus/event_source/devices/kprobe/type
need "$prog"
"$prog" -n 20 kernel_clone
rc=$?
check_klog
exit $rc

#!/bin/sh
# Uprobe results users compare with stock Linux, on code of
# /kptest/bin/uprobe_corners (tools/testing/kprobes/uprobe/uprobe_corners.c):
#  - the user stack seen from a return probe, through perf and BPF, when an
#    outer function's return probe is pending too;
#  - return probes on a function returning with "ret $8" and its caller;
#  - a probed popfq that sets TF: the program's own single-step trap;
#  - the return trampoline reached with nothing pending (SIGILL);
#  - probed sgdt, sidt and smsw, which the kernel emulates under UMIP
#    (the guest's CPU has it): the step ends without its debug trap;
#  - a per-process probe (register_uprobe(), samples/uprobes) on a process
#    that maps the probed text a second time: only the address asked for
#    counts, in task context and in the trap, entries and returns.
. /kptest/lib.sh
x86_64_only "uprobe_corners is x86_64 assembly"

prog=/kptest/bin/uprobe_corners
need /sys/bus/event_source/devices/uprobe/type
need "$prog"
rc=0
kmark
check "the CPU has UMIP: sgdt, sidt and smsw from user space are emulated" \
	grep -qw umip /proc/cpuinfo || rc=1
for mode in stack retimm popf tramp umip; do
	"$prog" $mode 20 || rc=1
done

mod=$(find /lib/modules -name uprobe_example.ko | head -n 1)
if [ -z "$mod" ]; then
	skip "register_uprobe() on text mapped twice" "no samples/uprobes module (stock kernel?)"
else
	P=/sys/module/uprobe_example/parameters
	for irq in 0 1; do
		go=$KP_TMP/go.$irq
		rm -f "$go" "$KP_TMP/twomap.out"
		"$prog" twomap "$go" 30 20 > "$KP_TMP/twomap.out" &
		tpid=$!
		taddr=
		for _i in $(seq 50); do
			taddr=$(sed -n "s/^pid $tpid addr //p" "$KP_TMP/twomap.out")
			[ -n "$taddr" ] && break
			sleep 0.2
		done
		if ! insmod "$mod" pid=$tpid vaddr=$taddr irq=$irq ret=1; then
			notok "irq=$irq: insmod uprobe_example pid=$tpid vaddr=$taddr"
			kill "$tpid"
			wait "$tpid" 2>/dev/null
			rc=1
			continue
		fi
		touch "$go"
		for _i in $(seq 100); do
			grep -q '^done' "$KP_TMP/twomap.out" && break
			sleep 0.2
		done
		check "irq=$irq: 30 calls through a second mapping and 20 at the address: 20 hits (got $(cat $P/hits))" \
			[ "$(cat $P/hits)" = 20 ] || rc=1
		check "irq=$irq: and 20 returns (got $(cat $P/ret_hits))" \
			[ "$(cat $P/ret_hits)" = 20 ] || rc=1
		kill "$tpid"
		wait "$tpid" 2>/dev/null
		rmmod uprobe_example
	done
fi
check_klog || rc=1
exit $rc

#!/bin/sh
# A debugger single-stepping through probed code (PTRACE_SINGLESTEP) or
# stepping it by blocks (PTRACE_SINGLEBLOCK) sees exactly what it sees
# without the probe: the same stops at the same addresses (never one in the
# XOL area, never a missing stop after an emulated instruction) and the
# same registers at the end.  One uprobe_events probe at a time on each
# instruction class of uprobe_target; it must fire once per traced run,
# except on rep movsb: the debugger stops after each of its 9 iterations,
# at the probed address, and each stop re-enters the probe.  The 5-byte nop
# also runs twice, the second time through its optimized jump.
. /kptest/lib.sh
x86_64_only "uprobe_target is x86_64 assembly"

T=/sys/kernel/tracing
prog=/kptest/bin/uprobe_target
need "$T/uprobe_events"
need "$prog"

echo 0 > "$T/events/enable" 2>/dev/null
echo > "$T/uprobe_events"
"$prog" offsets > "$KP_TMP/offsets"

while read -r name off; do
	case "$name" in fault_*|nop5_fn|rec|ljfunc|ljdeep|erestart_fn|usdt_sem) continue ;; esac
	echo "p:up_pt $prog:$off" >> "$T/uprobe_events"
	# A nop5 run twice: the second run goes through the optimized site's
	# jump, which the step follows into its stub.
	modes="step block"
	[ "$name" = nop5 ] && modes="step block step2 block2"
	for mode in $modes; do
		want=1
		[ "$name" = rep_movsb ] && want=9
		case $mode in *2) want=2 ;; esac
		base=$("$prog" ptrace "$name" "$mode")
		echo > "$T/trace"
		echo 1 > "$T/events/uprobes/up_pt/enable"
		got=$("$prog" ptrace "$name" "$mode")
		echo 0 > "$T/events/uprobes/up_pt/enable"
		h=$(grep -c ' up_pt:' "$T/trace")
		check "$name, $mode: traced with the probe as without ($got) and $want hit(s) (got $h)" \
			eval '[ -n "$base" ] && [ "$got" = "$base" ] && [ "$h" = "$want" ]'
		[ "$got" = "$base" ] || diag "without the probe: $base"
	done
	echo > "$T/uprobe_events"
done < "$KP_TMP/offsets"
check_klog
exit 0

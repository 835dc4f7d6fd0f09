#!/bin/sh
# The per-process uprobe API (register_uprobe()) through its sample,
# samples/uprobes/uprobe_example.ko: a probe on one address of a running
# uprobe_target counts its hits, in task context and in the trap; with
# ret=1 the function's returns are counted too; three probes on one
# address each get every hit; a forked child's runs are not counted; the
# probe ends by itself when the process exits or execs (rmmod after that
# is fine); errors for a missing process, a kernel thread and an address
# outside executable code.
. /kptest/lib.sh
x86_64_only "uprobe_target is x86_64 assembly"

prog=/kptest/bin/uprobe_target
mod=$(find /lib/modules -name uprobe_example.ko | head -n 1)
if [ -z "$mod" ]; then
	skip "uprobe_example sample" "no samples/uprobes module (stock kernel?)"
	exit 0
fi
need "$prog"
P=/sys/module/uprobe_example/parameters

# start CASE SECONDS: run uprobe_target loop in the background; sets
# tpid and taddr.
start() {
	start_mode loop "$@"
}

# start_mode MODE CASE SECONDS: the same for another mode of uprobe_target
# (the file is truncated by the background job itself, maybe late: look
# for its own pid).
start_mode() {
	rm -f "$KP_TMP/loop.out"
	"$prog" "$@" > "$KP_TMP/loop.out" &
	tpid=$!
	taddr=
	for _i in $(seq 50); do
		taddr=$(sed -n "s/^pid $tpid addr //p" "$KP_TMP/loop.out" 2>/dev/null | head -n 1)
		[ -n "$taddr" ] && break
		sleep 0.2
	done
}

for irq in 0 1; do
	start nop 30
	kmark
	if insmod "$mod" pid=$tpid vaddr=$taddr irq=$irq 2> "$KP_TMP/insmod.out"; then
		sleep 1
		h1=$(cat $P/hits)
		sleep 1
		h2=$(cat $P/hits)
		check "irq=$irq: the probe on pid $tpid at $taddr counts hits ($h1, then $h2)" \
			eval '[ "$h1" -gt 0 ] && [ "$h2" -gt "$h1" ]'
		ctx=trap
		[ $irq = 0 ] && ctx=task
		mode=irq
		[ $irq = 0 ] && mode=task
		check "irq=$irq: debugfs uprobes/list shows the probe with its hits" \
			grep -q "^pid $tpid $taddr $mode hits=[1-9]" /sys/kernel/debug/uprobes/list
		check "irq=$irq: the handler ran in $ctx context" \
			sh -c "dmesg | grep -q 'hit at .* ($ctx)'"
		kill "$tpid"
		wait "$tpid" 2>/dev/null
		h3=$(cat $P/hits)
		sleep 1
		check "irq=$irq: no hits after the process exited" [ "$(cat $P/hits)" = "$h3" ]
		check "irq=$irq: rmmod after the process exited" rmmod uprobe_example
	else
		notok "irq=$irq: insmod uprobe_example pid=$tpid vaddr=$taddr"
		diag_file "$KP_TMP/insmod.out"
		kill "$tpid"
		wait "$tpid" 2>/dev/null
	fi
done

# A return probe on ret_fn: every call returns once.
start ret_fn 30
rfaddr=$taddr
if insmod "$mod" pid=$tpid vaddr=$rfaddr ret=1 2> "$KP_TMP/insmod.out"; then
	sleep 2
	# Stopped, so that both counts are read at the same point.
	kill -STOP "$tpid"
	sleep 0.2
	h=$(cat $P/hits)
	r=$(cat $P/ret_hits)
	kill -CONT "$tpid"
	check "ret=1: returns counted with the hits ($h hits, $r returns)" \
		eval '[ "$h" -gt 0 ] && [ "$r" -gt 0 ] && [ $((h - r)) -le 1 ] && [ $((r - h)) -le 1 ]'
	check "ret=1: rmmod with the process running" rmmod uprobe_example
else
	notok "ret=1: insmod uprobe_example pid=$tpid vaddr=$rfaddr"
	diag_file "$KP_TMP/insmod.out"
fi
check "uprobe_target still runs after the probe left" kill -0 "$tpid"
kill "$tpid"
wait "$tpid" 2>/dev/null

# Three probes on one address: each sees every hit.  They are registered
# one after the other, so the process waits stopped until all three are in.
start nop 30
kill -STOP "$tpid"
if insmod "$mod" pid=$tpid vaddr=$taddr nprobes=3 2> "$KP_TMP/insmod.out"; then
	kill -CONT "$tpid"
	sleep 2
	kill -STOP "$tpid"
	sleep 0.2
	check "nprobes=3: all three probes hit ($(cat $P/probes_hit)), hits a multiple of 3 ($(cat $P/hits))" \
		eval '[ "$(cat $P/probes_hit)" = 3 ] && [ $(($(cat $P/hits) % 3)) = 0 ]'
	kill -CONT "$tpid"
	check "nprobes=3: rmmod" rmmod uprobe_example
else
	kill -CONT "$tpid"
	notok "nprobes=3: insmod"
	diag_file "$KP_TMP/insmod.out"
fi
kill "$tpid"
wait "$tpid" 2>/dev/null

# wait_line TEXT: until uprobe_target's output has a line TEXT (10 s).
wait_line() {
	for _i in $(seq 50); do
		grep -qx "$1" "$KP_TMP/loop.out" && return 0
		sleep 0.2
	done
	return 1
}

# fork: the child runs the probed code 100 times, then the parent does.
start_mode forkloop push 20
if insmod "$mod" pid=$tpid vaddr=$taddr 2> "$KP_TMP/insmod.out"; then
	if wait_line done; then
		h=$(cat $P/hits)
		check "fork: 100 hits from the parent, none from its child (got $h)" [ "$h" = 100 ]
	else
		notok "fork: uprobe_target forkloop finishes"
	fi
	check "fork: rmmod" rmmod uprobe_example
else
	notok "fork: insmod"
	diag_file "$KP_TMP/insmod.out"
fi
kill "$tpid"
wait "$tpid" 2>/dev/null

# exec: 50 hits, then the process execs the same program: no more hits.
start_mode execloop pushf 20
if insmod "$mod" pid=$tpid vaddr=$taddr 2> "$KP_TMP/insmod.out"; then
	wait_line exec
	sleep 2
	h=$(cat $P/hits)
	check "exec: 50 hits before the exec, none after (got $h)" [ "$h" = 50 ]
	check "exec: the new image runs the probed code" \
		[ "$(grep -c '^pid ' "$KP_TMP/loop.out")" = 2 ]
	check "exec: rmmod" rmmod uprobe_example
else
	notok "exec: insmod"
	diag_file "$KP_TMP/insmod.out"
fi
kill "$tpid"
wait "$tpid" 2>/dev/null

# Errors.
start nop 10
err_of() {
	insmod "$mod" "$@" > "$KP_TMP/insmod.out" 2>&1 && { rmmod uprobe_example; echo loaded; return; }
	klog_since | sed -n 's/.*register_uprobe(.*) failed: \(-[0-9]*\).*/\1/p' | tail -n 1
}
kmark
e=$(err_of pid=999999 vaddr=$taddr)
check "no such pid: -ESRCH (got $e)" [ "$e" = -3 ]
kmark
e=$(err_of pid=2 vaddr=$taddr)
check "a kernel thread: -EINVAL (got $e)" [ "$e" = -22 ]
kmark
e=$(err_of pid=$tpid vaddr=0x10)
check "an unmapped address: -EINVAL (got $e)" [ "$e" = -22 ]
kill "$tpid"
wait "$tpid" 2>/dev/null
check_klog
exit 0

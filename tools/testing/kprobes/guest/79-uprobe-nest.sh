#!/bin/sh
# Uprobes registered from a uprobe handler (tools/testing/kprobes/modules/
# up_nest.c).  A per-process probe on uprobe_target's nop case registers,
# from its handler in task context:
#  - a file probe on the push case with its USDT semaphore one page past
#    the end of the file, in a private writable mapping of it: arming fails
#    with -EFAULT after the consumer was published, and the call must
#    return instead of waiting for the handler it is called from;
#  - a second per-process probe on the same address, which then counts
#    every later hit.
# The process keeps running, rmmod returns, the semaphore's failed site is
# gone from debugfs uprobes/list, and the kernel log stays quiet.  Then a
# probe takes itself off from its handler while 8 threads hit it.
. /kptest/lib.sh
x86_64_only "uprobe_target is x86_64 assembly"

prog=/kptest/bin/uprobe_target
mod=$KP_MODS/up_nest.ko
need "$prog"
need "$mod"
P=/sys/module/up_nest/parameters
LIST=/sys/kernel/debug/uprobes/list

off_of() {
	"$prog" offsets | sed -n "s/^$1 //p"
}
nop_off=$(off_of nop)
push_off=$(off_of push)

"$prog" eofloop nop 30 > "$KP_TMP/loop.out" &
tpid=$!
taddr=
eof=
for _i in $(seq 50); do
	taddr=$(sed -n "s/^pid $tpid addr //p" "$KP_TMP/loop.out" 2>/dev/null)
	eof=$(sed -n 's/^eof //p' "$KP_TMP/loop.out" 2>/dev/null)
	[ -n "$taddr" ] && break
	sleep 0.2
done
diag "pid $tpid nop at $taddr (file $nop_off), push at file $push_off, eof page $eof"

kmark
if insmod "$mod" pid=$tpid vaddr=$taddr nest_off=$push_off ref_off=$eof \
		> "$KP_TMP/insmod.out" 2>&1; then
	for _i in $(seq 50); do
		[ "$(cat $P/inner_ret)" != 1 ] && break
		sleep 0.2
	done
	sleep 1
	check "uprobe_register() from the handler failed with -EFAULT (got $(cat $P/nest_ret))" \
		[ "$(cat $P/nest_ret)" = -14 ]
	check "register_uprobe() from the handler worked (got $(cat $P/inner_ret))" \
		[ "$(cat $P/inner_ret)" = 0 ]
	h1=$(cat $P/hits)
	i1=$(cat $P/inner_hits)
	sleep 1
	check "the process still hits both probes ($h1 -> $(cat $P/hits), inner $i1 -> $(cat $P/inner_hits))" \
		eval '[ "$(cat $P/hits)" -gt "$h1" ] && [ "$(cat $P/inner_hits)" -gt "$i1" ]'
	check "the failed site is not in uprobes/list" \
		eval "! grep -q ':$push_off ' $LIST"
	check "rmmod up_nest with the process running" rmmod up_nest
	check "no probe of pid $tpid left in uprobes/list" \
		eval "! grep -q '^pid $tpid ' $LIST"
else
	notok "insmod up_nest pid=$tpid vaddr=$taddr"
	diag_file "$KP_TMP/insmod.out"
fi
check "uprobe_target is still alive" kill -0 "$tpid"
kill "$tpid"
wait "$tpid" 2>/dev/null

# unregister_uprobe() from the handler at its 50th hit while 8 threads run
# into the address; rmmod then waits for the other threads' handlers.
for irq in 0 1; do
	"$prog" threadloop 8 15 > "$KP_TMP/loop.out" &
	tpid=$!
	taddr=
	for _i in $(seq 50); do
		taddr=$(sed -n "s/^pid $tpid addr //p" "$KP_TMP/loop.out" 2>/dev/null)
		[ -n "$taddr" ] && break
		sleep 0.2
	done
	if insmod "$mod" pid=$tpid vaddr=$taddr selfoff=50 irq=$irq \
			> "$KP_TMP/insmod.out" 2>&1; then
		for _i in $(seq 50); do
			[ "$(cat $P/hits)" -ge 50 ] && break
			sleep 0.2
		done
		sleep 1
		h1=$(cat $P/hits)
		sleep 1
		h2=$(cat $P/hits)
		check "irq=$irq: the probe took itself off at hit 50 ($h1 hits, then $h2)" \
			eval '[ "$h1" -ge 50 ] && [ "$h1" -le 58 ] && [ "$h2" = "$h1" ]'
		check "irq=$irq: no probe of pid $tpid left in uprobes/list" \
			eval "! grep -q '^pid $tpid ' $LIST"
		check "irq=$irq: rmmod up_nest with 8 threads running" rmmod up_nest
	else
		notok "irq=$irq: insmod up_nest pid=$tpid vaddr=$taddr selfoff=50"
		diag_file "$KP_TMP/insmod.out"
	fi
	check "irq=$irq: uprobe_target is still alive" kill -0 "$tpid"
	kill "$tpid"
	wait "$tpid" 2>/dev/null
done
check_klog
exit 0

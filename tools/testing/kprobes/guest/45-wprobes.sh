#!/bin/sh
# Watchpoint probes through their sample, samples/kprobes/wprobe_example.ko
# (parameters symbol, offset, len, kind=w|rw, changed=0|1), which logs
#   "<symbol>+0x<off>: <code> (<comm>/<pid>, CPU <n>) wrote|left <new>, was <old>"
# for each access.
#
# On a real kernel variable, panic_timeout, stored by writing
# /proc/sys/kernel/panic: the list line (type w, its address the one in
# /proc/kallsyms, len=4, kind), the logged old and new values, the stats
# line, debugfs enabled disarming and re-arming it (the old value after
# re-arming is the one stored meanwhile), a read-write watch logging a load,
# the changed-only mode, refused parameters.  Then on module data,
# kp_target's kpt_result (stored on each write to debugfs kp_target/call):
# the list names the module, and when kp_target goes the probe goes
# [GONE], never fires on a reloaded kp_target, and leaves on rmmod.
# Last, perf and ptrace breakpoints of a task next to a wprobe
# (/kptest/bin/wp_coexist).
. /kptest/lib.sh
x86_any "watchpoint probes are x86 only"

need "$KP_LIST"
need "$KP_STATS"
PANIC=/proc/sys/kernel/panic
need "$PANIC"

# wlines: the sample's access lines since the last mark.
wlines() {
	klog_since | grep -E 'wprobe_example: .*\+0x[0-9a-f]+: .* (wrote|left) 0x'
}
# wait_wlines N: wait up to 3 s for N access lines (the handler's printk
# runs in the debug trap and may be flushed a little later).
wait_wlines() {
	_n=0
	while [ "$_n" -lt 30 ]; do
		[ "$(wlines | grep -c .)" -ge "$1" ] && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}
# wlist SYMBOL: the list's w lines on SYMBOL+0x...
wlist() {
	list_sym "$1" w
}
# hex N: N as the sample prints a 4-byte value (panic_timeout is -1 here).
hex() {
	printf '0x%x' $(($1 & 0xffffffff))
}
wunload() {
	check "rmmod wprobe_example" unload wprobe_example || diag_file "$KP_TMP/rmmod.out"
}

if [ ! -f "$KP_MODS/wprobe_example.ko" ]; then
	notok "wprobe_example.ko is in the guest"
	exit 0
fi
orig=$(cat "$PANIC")
diag "panic_timeout is $orig"

# 1. A write watch on panic_timeout.
if check "insmod wprobe_example.ko symbol=panic_timeout len=4" \
	load wprobe_example symbol=panic_timeout len=4; then
	l=$(wlist panic_timeout)
	diag "list: $l"
	check "one w line on panic_timeout in the list" test "$(echo "$l" | grep -c .)" = 1 || show_list
	a=$(echo "$l" | awk '{ print $1 }')
	k=$(ksym_addr panic_timeout)
	check "its address is panic_timeout's in /proc/kallsyms ($a, $k)" test "$a" = "$k"
	check "the line says len=4 and kind w" test "$(echo "$l" | awk '{ print $4, $5 }')" = "len=4 w"
	check "the line has no status tag" test -z "$(echo "$l" | awk '{ print $6 }')"

	kmark
	echo 7 > "$PANIC"
	wait_wlines 1
	w=$(wlines)
	diag "log: $w"
	check "one line logged for one store" test "$(echo "$w" | grep -c .)" = 1
	check "it says 'wrote 0x7, was $(hex "$orig")'" \
		test -n "$(echo "$w" | grep -F "panic_timeout+0x0: " | grep -F "wrote 0x7, was $(hex "$orig")")"
	check "it names the writing task (sh)" test -n "$(echo "$w" | grep -F '(sh/')"
	h=$(awk '$2 == "panic_timeout+0x0" { print $3, $4 }' "$KP_STATS")
	check "stats: panic_timeout+0x0 with 1 hit, 0 missed ($h)" test "$h" = "1 0" ||
		diag_file "$KP_STATS"

	kmark
	cat "$PANIC" > /dev/null
	sleep 0.3
	check "a load does not fire a write watch" test -z "$(wlines)"

	kmark
	echo 0 > "$KP_ENABLED"
	check "enabled=0: the w line stays in the list" test -n "$(wlist panic_timeout)"
	echo 8 > "$PANIC"
	sleep 0.3
	check "enabled=0: a store is not logged" test -z "$(wlines)"
	echo 1 > "$KP_ENABLED"
	echo 9 > "$PANIC"
	wait_wlines 1
	w=$(wlines)
	check "enabled=1: the next store is logged, old value the one stored while disarmed" \
		test -n "$(echo "$w" | grep -F 'wrote 0x9, was 0x8')" || diag "log: $w"
	wunload
	check "the w line left the list" test -z "$(wlist panic_timeout)" || show_list
	check "the stats line left" test -z "$(awk '$2 == "panic_timeout+0x0"' "$KP_STATS")"
	kmark
	echo 10 > "$PANIC"
	sleep 0.3
	check "no line logged after rmmod" test -z "$(wlines)"
else
	diag_file "$KP_TMP/insmod.out" "insmod"
fi

# 2. A read-write watch logs loads too.
if check "insmod wprobe_example.ko symbol=panic_timeout kind=rw" \
	load wprobe_example symbol=panic_timeout kind=rw; then
	check "the line says len=4 and kind rw" \
		test "$(wlist panic_timeout | awk '{ print $4, $5 }')" = "len=4 rw" || show_list
	kmark
	cat "$PANIC" > /dev/null
	wait_wlines 1
	check "a load is logged as 'left 0xa, was 0xa'" \
		test -n "$(wlines | grep -F 'left 0xa, was 0xa')" || diag "log: $(wlines)"
	wunload
fi

# 3. Changed-only: storing the same value is not logged.
if check "insmod wprobe_example.ko symbol=panic_timeout changed=1" \
	load wprobe_example symbol=panic_timeout changed=1; then
	check "the line is tagged [CHANGED]" test -n "$(wlist panic_timeout | grep -F '[CHANGED]')" ||
		show_list
	kmark
	echo 10 > "$PANIC"
	echo 10 > "$PANIC"
	sleep 0.3
	check "two stores of the same value: nothing logged" test -z "$(wlines)"
	echo 11 > "$PANIC"
	wait_wlines 1
	check "a change is logged ('wrote 0xb, was 0xa')" \
		test "$(wlines | grep -c .)" = 1 -a -n "$(wlines | grep -F 'wrote 0xb, was 0xa')" ||
		diag "log: $(wlines)"
	wunload
fi
echo "$orig" > "$PANIC"

# 4. Refused requests.
for args in "len=3" "len=16" "offset=2 len=4" "symbol=no_such_variable_here"; do
	if load wprobe_example symbol=panic_timeout $args; then
		notok "insmod wprobe_example.ko $args is refused"
		unload wprobe_example
	else
		ok "insmod wprobe_example.ko $args is refused"
	fi
done
check "no w line left in the list" test -z "$(awk '$2 == "w"' "$KP_LIST")" || show_list

# 5. Module data: kp_target's kpt_result goes [GONE] with its module.
if check "gone: insmod kp_target.ko" load kp_target; then
	if check "gone: insmod wprobe_example.ko symbol=kp_target:kpt_result" \
		load wprobe_example symbol=kp_target:kpt_result; then
		l=$(wlist kpt_result)
		diag "list: $l"
		check "gone: the w line names the module kp_target" \
			test "$(echo "$l" | awk '{ print $4 }')" = kp_target || show_list
		a=$(echo "$l" | awk '{ print $1 }')
		kmark
		echo 2 > "$KP_TARGET_CALL"
		wait_wlines 1
		check "gone: a store by kp_target is logged ('wrote 0x7')" \
			test -n "$(wlines | grep -F 'wrote 0x7, was')" || diag "log: $(wlines)"
		check "gone: rmmod kp_target while watched" unload kp_target ||
			diag_file "$KP_TMP/rmmod.out"
		l=$(awk -v a="$a" '$1 == a && $2 == "w"' "$KP_LIST")
		diag "list: $l"
		check "gone: the probe is still listed, [GONE]" test -n "$(echo "$l" | grep -F '[GONE]')" ||
			show_list
		check "gone: a [GONE] probe is not shown [DISABLED]" test -z "$(echo "$l" | grep -F '[DISABLED]')"
		if check "gone: insmod kp_target.ko again" load kp_target; then
			kmark
			echo 3 > "$KP_TARGET_CALL"
			sleep 0.3
			check "gone: the [GONE] probe does not fire on the new kp_target" test -z "$(wlines)"
			unload kp_target
		fi
		wunload
		check "gone: the [GONE] line left the list" test -z "$(awk '$2 == "w"' "$KP_LIST")" ||
			show_list
	fi
	is_loaded kp_target && unload kp_target
fi

# 6. perf and ptrace breakpoints next to a wprobe: the wprobe holds one of
#    the four debug registers on every CPU, so a task gets three perf
#    breakpoints and the fourth is refused (ENOSPC); each counts its stores;
#    ptrace's DR0/DR7 work; with the wprobe gone the task gets all four.
WPC=/kptest/bin/wp_coexist
if [ ! -x "$WPC" ]; then
	notok "$WPC is in the guest"
elif check "coexist: insmod wprobe_example.ko symbol=panic_timeout" \
	load wprobe_example symbol=panic_timeout; then
	out=$("$WPC" perf 3); rc=$?
	check "coexist: 3 perf breakpoints open and count with a wprobe registered ($out)" test $rc = 0
	out=$("$WPC" perf 4); rc=$?
	check "coexist: a 4th perf breakpoint is refused with ENOSPC ($out)" \
		test $rc = 2 -a -n "$(echo "$out" | grep -F 'opened 3 of 4, then errno 28')"
	out=$("$WPC" ptrace); rc=$?
	check "coexist: ptrace DR0/DR7 watch works with a wprobe registered ($out)" test $rc = 0
	kmark
	echo 12 > "$PANIC"
	wait_wlines 1
	check "coexist: the wprobe still fires" test -n "$(wlines | grep -F 'wrote 0xc')"
	echo "$orig" > "$PANIC"
	wunload
	out=$("$WPC" perf 4); rc=$?
	check "coexist: with the wprobe gone, 4 perf breakpoints open and count ($out)" test $rc = 0
fi

check_klog
exit 0

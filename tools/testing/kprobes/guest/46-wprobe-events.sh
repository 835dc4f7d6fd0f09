#!/bin/sh
# Watchpoint probe trace events (kernel/trace/trace_wprobe.c): one line in
# dynamic_events watches a kernel variable,
#   w[:[GROUP/]EVENT] [w|r|rw]@SYMBOL[+OFFS][:LEN] [FETCHARGS]
# with $value for the watched bytes after the access (the default argument).
# On panic_timeout (stored by writing /proc/sys/kernel/panic): the
# definition as dynamic_events shows it, the w line in the kprobes list, one
# record per store with the stored value, a record per load for "r@", fetch
# args ($value with a type, $comm), nothing recorded while the event is
# disabled, refused definitions, and the probe leaving the list when the
# event is deleted.
. /kptest/lib.sh
x86_any "watchpoint probes are x86 only"

T=/sys/kernel/tracing
DE=$T/dynamic_events
PANIC=/proc/sys/kernel/panic
need "$DE"
need "$PANIC"
orig=$(cat "$PANIC")

wclean() {
	echo 0 > "$T/tracing_on"
	for e in wtest wtest2 wtest3; do
		[ -d "$T/events/wprobes/$e" ] && echo 0 > "$T/events/wprobes/$e/enable"
		grep -q "/$e " "$DE" && echo "-:wprobes/$e" >> "$DE"
	done
	echo > "$T/trace"
	echo 1 > "$T/tracing_on"
}
# wlist_gone: wait up to 3 s for no w line on panic_timeout in the list
# (a deleted event gives its probe back from a work item).
wlist_gone() {
	_n=0
	while [ "$_n" -lt 30 ]; do
		[ -z "$(list_sym panic_timeout w)" ] && return 0
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}
# records EVENT: lines of EVENT in the trace buffer.
records() {
	grep " $1: (" "$T/trace"
}

wclean

# 1. The one-line watch, default length (the symbol's size) and argument.
if check "echo 'w:wtest w@panic_timeout' >> dynamic_events" \
	sh -c "echo 'w:wtest w@panic_timeout' >> $DE"; then
	d=$(grep '/wtest ' "$DE")
	diag "dynamic_events: $d"
	check "dynamic_events shows 'w:wprobes/wtest w@panic_timeout+0:4 value=\$value'" \
		test "$d" = 'w:wprobes/wtest w@panic_timeout+0:4 value=$value'
	check "the event directory is there" test -d "$T/events/wprobes/wtest"
	check "the kprobes list has a w line on panic_timeout, len=4" \
		test -n "$(list_sym panic_timeout w | grep -F 'len=4 w')" || show_list
	echo 21 > "$PANIC"
	check "nothing recorded while the event is disabled" test -z "$(records wtest)"
	echo 1 > "$T/events/wprobes/wtest/enable"
	echo 22 > "$PANIC"
	echo 23 > "$PANIC"
	r=$(records wtest)
	diag "trace: $r"
	check "two stores, two records" test "$(echo "$r" | grep -c .)" = 2
	check "the records carry value=22 and value=23" \
		test -n "$(echo "$r" | grep 'value=22$')" -a -n "$(echo "$r" | grep 'value=23$')"
	cat "$PANIC" > /dev/null
	check "a load is not recorded by a w@ event" test "$(records wtest | grep -c .)" = 2
	echo 0 > "$T/events/wprobes/wtest/enable"
	echo 24 > "$PANIC"
	check "disabled again: no more records" test "$(records wtest | grep -c .)" = 2
	check "an enabled event cannot be deleted" \
		sh -c "echo 1 > $T/events/wprobes/wtest/enable; ! echo '-:wprobes/wtest' >> $DE"
	echo 0 > "$T/events/wprobes/wtest/enable"
	check "echo '-:wprobes/wtest' >> dynamic_events deletes it" \
		sh -c "echo '-:wprobes/wtest' >> $DE"
	check "the event is gone from dynamic_events" test -z "$(grep '/wtest ' "$DE")"
	check "its probe left the kprobes list" wlist_gone || show_list
fi
echo > "$T/trace"

# 2. Loads and stores, with fetch args.
if check "w:wtest2 r@panic_timeout:4 v=\$value:x32 who=\$comm" \
	sh -c "echo 'w:wtest2 r@panic_timeout:4 v=\$value:x32 who=\$comm' >> $DE"; then
	check "the kprobes list line says rw" \
		test -n "$(list_sym panic_timeout w | grep -F 'len=4 rw')" || show_list
	echo 1 > "$T/events/wprobes/wtest2/enable"
	echo 26 > "$PANIC"
	cat "$PANIC" > /dev/null
	echo 0 > "$T/events/wprobes/wtest2/enable"
	r=$(records wtest2)
	diag "trace: $r"
	check "the store by sh is recorded (v=0x1a who=\"sh\")" \
		test -n "$(echo "$r" | grep -F 'v=0x1a who="sh"')"
	check "the load by cat is recorded (v=0x1a who=\"cat\")" \
		test -n "$(echo "$r" | grep -F 'v=0x1a who="cat"')"
	echo '-:wprobes/wtest2' >> "$DE"
	check "wtest2 deleted" test -z "$(grep '/wtest2 ' "$DE")"
fi

# 3. Refused definitions leave nothing behind.
for def in 'w:wbad w@no_such_variable_here' 'w:wbad w@panic_timeout:3' \
	'w:wbad w@panic_timeout+2:4' 'w:wbad x@panic_timeout' 'w:wbad w@panic_timeout:4 $valuex'; do
	if sh -c "echo '$def' >> $DE" 2>/dev/null; then
		notok "refused: $def"
		echo '-:wprobes/wbad' >> "$DE"
	else
		ok "refused: $def"
	fi
done
check "no wbad event left" test -z "$(grep '/wbad ' "$DE")"
check "no w line left in the kprobes list" wlist_gone || show_list

wclean
echo "$orig" > "$PANIC"
check_klog
exit 0

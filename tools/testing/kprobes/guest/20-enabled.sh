#!/bin/sh
# /sys/kernel/debug/kprobes/enabled: the global arm/disarm switch.
#
# Reads "1" after boot; writing 0 disarms every probe (a kprobe on
# kernel_clone stops counting forks), writing 1 arms them again, except a
# probe registered disabled, which stays [DISABLED].  Only what kstrtobool
# takes is accepted: "2", "abc" and "" (echo writes just "\n") fail with an
# error from write() and leave the value as it was.  A return hooked by a
# kretprobe before the disarm still comes back.
. /kptest/lib.sh

need "$KP_ENABLED"

enabled() {
	cat "$KP_ENABLED" 2>/dev/null
}
# set_enabled VALUE: write VALUE and a newline; the shell's status is the
# write's.
set_enabled() {
	echo "$1" > "$KP_ENABLED"
}

v=$(enabled)
check "enabled reads 1 at start" test "$v" = 1 || diag "read '$v'"

if check "insmod kp_probe.ko sym=kernel_clone" probe_load sym=kernel_clone; then
	d=$(delta_forks hits 3)
	check "probe counts forks while enabled (3 forks, $d hits)" ge "$d" 3

	check "echo 0 > enabled succeeds" set_enabled 0
	v=$(enabled)
	check "enabled reads 0 after writing 0" test "$v" = 0 || diag "read '$v'"
	d=$(delta_forks hits 5)
	check "no hits while disarmed (5 forks, $d hits)" test "$d" = 0
	check "writing 2 while disarmed fails" test "$(set_enabled 2; echo $?)" != 0
	v=$(enabled)
	check "enabled still reads 0 after the bad write" test "$v" = 0 || diag "read '$v'"

	check "echo 1 > enabled succeeds" set_enabled 1
	v=$(enabled)
	check "enabled reads 1 after writing 1" test "$v" = 1 || diag "read '$v'"
	d=$(delta_forks hits 3)
	check "probe counts forks again once re-armed (3 forks, $d hits)" ge "$d" 3

	check "writing 1 while armed succeeds" set_enabled 1
	check "enabled reads 1 after writing 1 twice" test "$(enabled)" = 1
	check "rmmod kp_probe" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
fi

# The words kstrtobool takes, as upstream's enabled file does.
for pair in n:0 y:1 off:0 on:1 N:0 Y:1 no:0 yes:1; do
	w=${pair%:*}
	check "writing '$w' to enabled succeeds" set_enabled "$w"
	v=$(enabled)
	check "enabled reads ${pair#*:} after writing '$w'" test "$v" = "${pair#*:}" ||
		diag "read '$v'"
done
set_enabled 1

# Bad values: write() fails, the value stays.
for bad in 2 abc ""; do
	if set_enabled "$bad"; then
		notok "writing '$bad' to enabled fails"
	else
		ok "writing '$bad' to enabled fails"
	fi
	v=$(enabled)
	check "enabled still reads 1 after writing '$bad'" test "$v" = 1 || diag "read '$v'"
	[ "$v" = 1 ] || set_enabled 1
done

# A probe registered disabled stays disabled across a disarm and re-arm.
if check "insmod kp_probe.ko sym=kernel_clone disabled=1" probe_load sym=kernel_clone disabled=1; then
	line=$(list_sym kernel_clone k)
	check "probe registered disabled shows [DISABLED]" \
		test -n "$(echo "$line" | grep -F '[DISABLED]')" || show_list
	check "echo 0 > enabled succeeds (with a disabled probe)" set_enabled 0
	check "echo 1 > enabled succeeds (with a disabled probe)" set_enabled 1
	line=$(list_sym kernel_clone k)
	check "probe registered disabled is still [DISABLED] after 0 -> 1" \
		test -n "$(echo "$line" | grep -F '[DISABLED]')" || show_list
	d=$(delta_forks hits 3)
	check "probe registered disabled does not fire after 0 -> 1 (3 forks, $d hits)" test "$d" = 0
	check "rmmod kp_probe (disabled)" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
fi

# A return already hooked by a kretprobe comes back while everything is
# disarmed: on powerpc (and the other architectures whose return trampoline
# is a kprobe of their own) that probe must stay armed, or the return loops
# in the trampoline until kprobes are armed again.
T=/sys/kernel/tracing
EV='r:kp_enabled/nsleep hrtimer_nanosleep'
if [ -w "$T/kprobe_events" ] && echo "$EV" >> "$T/kprobe_events" &&
   echo 1 > "$T/events/kp_enabled/nsleep/enable"; then
	sleep 2 &
	pid=$!
	usleep 500000		# asleep in hrtimer_nanosleep(), its return hooked
	set_enabled 0
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 40 ]; do
		usleep 250000
		i=$((i + 1))
	done
	check "a hooked return comes back while disarmed (sleep 2 ended)" \
		test "$(kill -0 "$pid" 2>/dev/null || echo gone)" = gone
	set_enabled 1
	wait "$pid"
	echo 0 > "$T/events/kp_enabled/nsleep/enable"
	echo "-:kp_enabled/nsleep" >> "$T/kprobe_events"
	check "the event is gone" test -z "$(grep kp_enabled "$T/kprobe_events")"
else
	notok "kretprobe event on hrtimer_nanosleep"
fi

v=$(enabled)
check "enabled reads 1 at the end" test "$v" = 1 || diag "read '$v'"
exit 0

#!/bin/sh
# /sys/kernel/debug/kprobes/enabled: the global arm/disarm switch.
#
# Reads "1" after boot; writing 0 disarms every probe (a kprobe on
# kernel_clone stops counting forks), writing 1 arms them again, except a
# probe registered disabled, which stays [DISABLED].  Only what kstrtobool
# takes is accepted: "2", "abc" and "" (echo writes just "\n") fail with an
# error from write() and leave the value as it was.
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

v=$(enabled)
check "enabled reads 1 at the end" test "$v" = 1 || diag "read '$v'"
exit 0

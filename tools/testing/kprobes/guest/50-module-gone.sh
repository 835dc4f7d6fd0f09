#!/bin/sh
# Probes on module code whose module goes away.
#
# kp_target.ko has kp_target_func() in its text, called on each write to
# /sys/kernel/debug/kp_target/call.  A probe on it (kp_probe.ko) fires; the
# list names the module; rmmod kp_target is allowed while probed (a probe
# pins nothing); the probe stays registered, marked [GONE] (upstream then
# prints the bare address, since the symbol left with the module, so the line
# is found again by its address); unregistering it (rmmod kp_probe) works and
# the line goes.  The same for a kretprobe, and for a probe registered
# disabled (upstream shows [GONE], not [DISABLED], once the module is gone).
# With a [GONE] probe still registered, a fresh kp_target (likely at the same
# address) runs without hitting it.
#
# Not tested: a probe on kp_target_init_func(), in kp_target's __init text.
# That text runs only during insmod kp_target, before any other module can
# probe it, and is freed (and its symbol dropped from kallsyms) when init
# returns; what we check instead is that probing it afterwards is refused.
# But on 64-bit powerpc, where a module's .init sections are laid out with
# its core text and never freed (upstream's module_init_section() there
# says no section is .init, stock alike): when kallsyms still has the
# function after init, it is live code, and a probe on it must be
# accepted, listed under the module and removable.
. /kptest/lib.sh

need "$KP_LIST"

# list_addr ADDRESS: the list lines of probes at ADDRESS.
list_addr() {
	awk -v a="$1" '$1 == a' "$KP_LIST"
}
has() {
	test -n "$(echo "$1" | grep -F -- "$2")"
}
hasnt() {
	test -z "$(echo "$1" | grep -F -- "$2")"
}
not_loaded() {
	! is_loaded "$1"
}
target_load() {
	load kp_target && return 0
	diag_file "$KP_TMP/insmod.out" "insmod kp_target.ko"
	return 1
}

# gone_round WHAT TYPE PARAMS...: kp_target loaded, kp_probe with PARAMS on
# kp_target_func (list type TYPE), then kp_target goes.  Returns with
# kp_probe still loaded, its probe [GONE]; GONE_LINE/GONE_ADDR describe it.
GONE_LINE=
GONE_ADDR=
gone_round() {
	_w=$1
	_t=$2
	shift 2
	GONE_LINE=
	check "$_w: insmod kp_target.ko" target_load || return 1
	if ! check "$_w: insmod kp_probe.ko $*" probe_load "$@"; then
		unload kp_target
		return 1
	fi
	_l=$(list_sym kp_target_func "$_t")
	diag "list: $_l"
	check "$_w: one list line on kp_target_func, type $_t" test "$(echo "$_l" | grep -c .)" = 1 ||
		show_list
	_m=$(echo "$_l" | awk '{ print $4 }')
	check "$_w: the list line names the module kp_target" \
		test "$_m" = kp_target -o "$_m" = "[kp_target]"
	# On s390x a function's entry is its ftrace call site: the probe
	# there goes through ftrace, and its hits below are still exact.
	if [ "$(uname -m)" = s390x ]; then
		check "$_w: the probe on kp_target_func's entry (its ftrace site) is [FTRACE]" \
			has "$_l" '[FTRACE]'
	fi
	GONE_ADDR=$(echo "$_l" | awk '{ print $1; exit }')
	case "$*" in
	*disabled=1*)
		d=$(delta_calls hits 3)
		check "$_w: disabled probe does not fire (3 calls, $d hits)" test "$d" = 0 ;;
	*)	d=$(delta_calls hits 3)
		check "$_w: probe fires on kp_target_func (3 calls, $d hits)" test "$d" = 3 ;;
	esac

	check "$_w: rmmod kp_target while probed" unload kp_target ||
		diag_file "$KP_TMP/rmmod.out"
	check "$_w: kp_target is gone" not_loaded kp_target
	if [ -z "$GONE_ADDR" ] || [ "$GONE_ADDR" = 0000000000000000 ]; then
		GONE_LINE=$(grep -F '[GONE]' "$KP_LIST")
	else
		GONE_LINE=$(list_addr "$GONE_ADDR")
	fi
	diag "list: $GONE_LINE"
	check "$_w: the probe is still listed" test "$(echo "$GONE_LINE" | grep -c .)" = 1 ||
		show_list
	check "$_w: the probe is marked [GONE]" has "$GONE_LINE" '[GONE]'
	check "$_w: a [GONE] probe is not shown [DISABLED]" hasnt "$GONE_LINE" '[DISABLED]'
	check "$_w: the line keeps its type ($_t)" \
		test "$(echo "$GONE_LINE" | awk '{ print $2; exit }')" = "$_t"
	return 0
}

# gone_end WHAT: unregister the [GONE] probe.
gone_end() {
	check "$1: rmmod kp_probe (unregisters the [GONE] probe)" unload kp_probe ||
		diag_file "$KP_TMP/rmmod.out"
	if [ -n "$GONE_ADDR" ] && [ "$GONE_ADDR" != 0000000000000000 ]; then
		check "$1: the [GONE] line left the list" test -z "$(list_addr "$GONE_ADDR")" || show_list
	else
		check "$1: the [GONE] line left the list" test -z "$(grep -F '[GONE]' "$KP_LIST")" || show_list
	fi
}

# 1. A kprobe, named as module:symbol.  While it is [GONE], load kp_target
#    again and call it: the old probe must not fire (nor crash anything).
if gone_round "kprobe" k sym=kp_target:kp_target_func; then
	if check "kprobe: reload kp_target with the [GONE] probe registered" target_load; then
		new=$(ksym_addr kp_target_func)
		diag "kp_target_func now at $new (the [GONE] probe at $GONE_ADDR)"
		d=$(delta_calls hits 3)
		check "kprobe: the [GONE] probe does not fire on the new kp_target (3 calls, $d hits)" \
			test "$d" = 0
		check "kprobe: rmmod kp_target again" unload kp_target || diag_file "$KP_TMP/rmmod.out"
	fi
	gone_end "kprobe"
fi

# 2. A kretprobe, named plainly.
if gone_round "kretprobe" r sym=kp_target_func ret=1; then
	gone_end "kretprobe"
fi

# 3. A kprobe registered disabled.
if gone_round "disabled kprobe" k sym=kp_target:kp_target_func disabled=1; then
	gone_end "disabled kprobe"
fi

# 4. kp_target's __init function, after its init ran: no such symbol left
# (powerpc64: the function stays, see above).
init_kept() {
	[ "$(uname -m)" = ppc64le ] &&
		awk '$3 == "kp_target_init_func" && $4 == "[kp_target]" { f = 1 } END { exit !f }' /proc/kallsyms
}
if check "init: insmod kp_target.ko" target_load; then
	if init_kept; then
		diag "kp_target_init_func is still in kallsyms after init (powerpc64 never frees a module's .init text)"
		if check "init: a probe on kp_target's __init function, kept in core text on powerpc64, is accepted" \
			probe_load sym=kp_target:kp_target_init_func; then
			l=$(list_sym kp_target_init_func k)
			check "init: its list line names the module kp_target ($l)" \
				test "$(echo "$l" | awk '{ print $4 }')" = kp_target
			check "init: its list line is not [GONE]" hasnt "$l" "[GONE]"
			check "init: rmmod kp_probe (probe on the __init function)" unload kp_probe
		fi
	elif probe_load sym=kp_target:kp_target_init_func > /dev/null; then
		notok "init: a probe on kp_target's freed __init function is refused"
		unload kp_probe
	else
		ok "init: a probe on kp_target's freed __init function is refused"
		diag "registration error: $(probe_error)"
	fi
	check "init: rmmod kp_target" unload kp_target || diag_file "$KP_TMP/rmmod.out"
fi

check "no [GONE] probe left in the list" test -z "$(grep -F '[GONE]' "$KP_LIST")" || show_list
check_klog
exit 0

#!/bin/sh
# /sys/kernel/debug/kprobes/blacklist: the functions no kprobe may go on.
#
# Upstream's line is "0x%px-0x%px\t%ps" (start, end, function).  The list
# holds at least the NOKPROBE_SYMBOL()s of code that is not ours:
# notifier_call_chain (kernel/notifier.c) and do_int3 (arch/x86/kernel/traps.c).
# The file is read-only, and register_kprobe() on a listed function fails
# with EINVAL.
. /kptest/lib.sh

need "$KP_BLACKLIST"
bl=$KP_TMP/blacklist
cat "$KP_BLACKLIST" > "$bl" 2>&1
check "blacklist is readable" test $? = 0
n=$(grep -c . "$bl")
check "blacklist is not empty ($n lines)" ge "$n" 1

tab=$(printf '\t')
bad=$KP_TMP/bad
grep -Ev "^0x[0-9a-f]+-0x[0-9a-f]+${tab}[^ ${tab}]+\$" "$bl" > "$bad"
check "every line reads 0x<start>-0x<end><TAB><symbol>" test ! -s "$bad" ||
	{ diag "$(grep -c . "$bad") bad lines, the first:"; head -n 5 "$bad" | sed 's/^/#   /'; }

# bl_line SYMBOL: the blacklist line of SYMBOL.
bl_line() {
	awk -F "$tab" -v s="$1" '$2 == s { print; exit }' "$bl"
}

known=
for s in notifier_call_chain do_int3 kprobe_int3_handler; do
	[ -n "$(bl_line "$s")" ] && known="$known $s"
done
check "blacklist holds a known NOKPROBE symbol (found:${known:- none})" test -n "$known"
check "blacklist holds notifier_call_chain" test -n "$(bl_line notifier_call_chain)"

# The range of notifier_call_chain starts at its address and is not empty.
line=$(bl_line notifier_call_chain)
start=$(echo "$line" | sed -n 's/^0x\([0-9a-f]*\)-0x\([0-9a-f]*\).*/\1/p')
end=$(echo "$line" | sed -n 's/^0x\([0-9a-f]*\)-0x\([0-9a-f]*\).*/\2/p')
kaddr=$(ksym_addr notifier_call_chain)
if [ -z "$line" ]; then
	notok "notifier_call_chain's range is its function"
elif [ "$start" = 0000000000000000 ]; then
	skip "notifier_call_chain's range is its function" "kallsyms hides addresses"
elif is_hex "$start" && is_hex "$end" && [ "$start" = "$kaddr" ] &&
	[ "$(hexdiff "$end" "$start")" -gt 0 ]; then
	ok "notifier_call_chain's range is its function"
else
	notok "notifier_call_chain's range is its function"
	diag "line '$line', /proc/kallsyms address '$kaddr'"
fi

# Read-only.
if echo notifier_call_chain > "$KP_BLACKLIST"; then
	notok "writing to the blacklist fails"
else
	ok "writing to the blacklist fails"
fi
n2=$(grep -c . "$KP_BLACKLIST")
check "blacklist unchanged after the write ($n2 lines)" test "$n2" = "$n"

# No kprobe on a blacklisted function.
for s in notifier_call_chain do_int3; do
	if [ -z "$(bl_line "$s")" ]; then
		skip "insmod kp_probe.ko sym=$s fails with EINVAL" "$s not in the blacklist"
		continue
	fi
	if probe_load sym="$s"; then
		notok "insmod kp_probe.ko sym=$s fails (blacklisted)"
		unload kp_probe
		continue
	fi
	ok "insmod kp_probe.ko sym=$s fails (blacklisted)"
	e=$(probe_error)
	check "register_kprobe($s) returned -EINVAL (got '$e')" test "$e" = -22 ||
		diag_file "$KP_TMP/insmod.out" "insmod said"
	check "no probe on $s left in the list" test -z "$(list_sym "$s")" || show_list
done
exit 0

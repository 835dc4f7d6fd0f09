#!/bin/sh
# /sys/kernel/debug/kprobes/list: a kprobe, a kretprobe and a probe
# registered disabled, all on kernel_clone (kp_probe.ko), show up in
# upstream's format and go away on rmmod.
#
# Upstream's line is "%px  %s  %s+0x%x  %s " (address, "k" or "r",
# symbol+offset, module name or " "), then the status tags
# [GONE][DISABLED][OPTIMIZED][FTRACE].  A probe asked for at a function's
# entry sits after its endbr64 when the kernel has IBT, so kernel_clone+0x0
# may read kernel_clone+0x4.  We run as root, so the address is the real one
# (all zeros only when kallsyms hides addresses).
. /kptest/lib.sh

need "$KP_LIST"
readable() {
	cat "$1" > /dev/null
}
check "list is readable" readable "$KP_LIST"
check "no probe on kernel_clone before the test" test -z "$(list_sym kernel_clone)" || show_list

# A list line for kernel_clone, of type $1 ("k" or "r").
fmt_ok() {
	echo "$1" | grep -Eq "^[0-9a-f]+  $2  kernel_clone\\+0x[0-9a-f]+  "
}

# --- a kprobe ---
if check "insmod kp_probe.ko sym=kernel_clone" probe_load sym=kernel_clone; then
	line=$(list_sym kernel_clone)
	diag "list: $line"
	check "one list line for the kprobe" test "$(echo "$line" | grep -c .)" = 1 || show_list
	check "kprobe line has upstream's format (address  k  kernel_clone+0x..)" fmt_ok "$line" k
	off=$(echo "$line" | awk '{ print $3 }')
	off=${off#kernel_clone+}
	offv=
	# powerpc (ELFv2) puts a probe on a function's entry at its local
	# entry or its ftrace call site, within its first 16 bytes
	# (upstream's kprobe_lookup_name(), stock alike).
	case "$(uname -m):$off" in
	*:0x0|*:0x4) offv=$((off)); ok "kprobe sits at the function entry ($off, 0x4 after an endbr64)" ;;
	ppc64le:0x8|ppc64le:0xc|ppc64le:0x10)
		offv=$((off)); ok "kprobe sits at the function entry ($off: powerpc's local entry or ftrace call site)" ;;
	*) notok "kprobe sits at the function entry (got offset '$off')" ;;
	esac
	addr=$(echo "$line" | awk '{ print $1 }')
	kaddr=$(ksym_addr kernel_clone)
	if [ "$addr" = 0000000000000000 ] || [ -z "$kaddr" ] || [ "$kaddr" = 0000000000000000 ]; then
		skip "list address is kernel_clone's address + offset" "kallsyms hides addresses"
	elif [ -n "$offv" ] && is_hex "$addr" && [ "$(hexdiff "$addr" "$kaddr")" = "$offv" ]; then
		ok "list address is kernel_clone's address + offset"
	else
		notok "list address is kernel_clone's address + offset"
		diag "list address '$addr', /proc/kallsyms kernel_clone '$kaddr', offset '$off'"
	fi
	check "an enabled kprobe has no [GONE]/[DISABLED] tag" \
		test -z "$(echo "$line" | grep -F -e '[GONE]' -e '[DISABLED]')"
	# With the function tracer, a function's entry is ftrace's call site,
	# where probes go through ftrace when the kernel has probes on ftrace
	# call sites (its ftrace handler is then in kallsyms; arm64 has none).
	if [ -e /sys/kernel/tracing/available_filter_functions ] &&
	   grep -q '^kernel_clone$' /sys/kernel/tracing/available_filter_functions; then
		if grep -q ' kprobe_ftrace_handler$' /proc/kallsyms; then
			check "a probe on an ftrace call site is [FTRACE]" \
				test -n "$(echo "$line" | grep -F '[FTRACE]')"
		else
			check "no probes on ftrace call sites here: a probe at a function's entry is not [FTRACE]" \
				test -z "$(echo "$line" | grep -F '[FTRACE]')"
		fi
	else
		skip "a probe on an ftrace call site is [FTRACE]" "no function tracer"
	fi
	d=$(delta_forks hits 3)
	check "kprobe pre_handler runs on fork (3 forks, $d hits)" ge "$d" 3
	d=$(delta_forks post_hits 3)
	check "kprobe post_handler runs on fork (3 forks, $d hits)" ge "$d" 3
	check "rmmod kp_probe" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	check "kprobe line gone after rmmod" test -z "$(list_sym kernel_clone)" || show_list
fi

# --- a kretprobe ---
if check "insmod kp_probe.ko sym=kernel_clone ret=1" probe_load sym=kernel_clone ret=1; then
	line=$(list_sym kernel_clone)
	diag "list: $line"
	check "one list line for the kretprobe" test "$(echo "$line" | grep -c .)" = 1 || show_list
	check "kretprobe line has upstream's format (address  r  kernel_clone+0x..)" fmt_ok "$line" r
	d=$(delta_forks entry_hits 3)
	check "kretprobe entry_handler runs on fork (3 forks, $d hits)" ge "$d" 3
	d=$(delta_forks hits 3)
	check "kretprobe handler runs on return (3 forks, $d hits)" ge "$d" 3
	check "rmmod kp_probe (kretprobe)" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	check "kretprobe line gone after rmmod" test -z "$(list_sym kernel_clone)" || show_list
fi

# --- a kprobe registered disabled ---
if check "insmod kp_probe.ko sym=kernel_clone disabled=1" probe_load sym=kernel_clone disabled=1; then
	line=$(list_sym kernel_clone k)
	diag "list: $line"
	check "probe registered disabled shows [DISABLED]" \
		test -n "$(echo "$line" | grep -F '[DISABLED]')" || show_list
	d=$(delta_forks hits 3)
	check "probe registered disabled does not fire (3 forks, $d hits)" test "$d" = 0
	check "rmmod kp_probe (disabled)" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	check "disabled probe's line gone after rmmod" test -z "$(list_sym kernel_clone)" || show_list
fi
exit 0

#!/bin/sh
# The kprobes samples (samples/kprobes, built as modules).
#
# kprobe_example.ko (parameter "symbol", default kernel_clone) logs a line
# naming the symbol from its pre and from its post handler; upstream's read
# "<kernel_clone> p->addr = ..., ip = ..., flags = ..." (pre) and
# "<kernel_clone> p->addr = ..., flags = ..." (post), ours may say
# "pre_handler"/"post_handler": pre lines are told by either, post lines are
# the other handler lines.  kretprobe_example.ko (parameter "func") logs
# "<func> returned ...".  Both are in the list while loaded and leave it on
# rmmod.  Then two probes on one address: a sample and kp_probe.ko together
# both fire, and each keeps working when the other goes.
. /kptest/lib.sh

need "$KP_LIST"
sym=kernel_clone
pre_re='pre_handler|pre handler|ip = '

# handler_lines: kernel log lines since the last mark that name $sym (or a
# handler) and are not a load/unload message.
handler_lines() {
	klog_since | grep -E "$sym|pre_handler|post_handler" |
		grep -Eiv 'planted|registered|missed|kptest-mark'
}

# --- kprobe_example ---
if [ ! -f "$KP_MODS/kprobe_example.ko" ]; then
	notok "kprobe_example.ko is in the guest"
elif check "insmod kprobe_example.ko symbol=$sym" load kprobe_example symbol=$sym; then
	check "list shows kprobe_example's kprobe on $sym" test -n "$(list_sym $sym k)" || show_list
	kmark
	forks 3
	h=$KP_TMP/handlers
	handler_lines > "$h"
	pre=$(grep -Ec "$pre_re" "$h")
	post=$(grep -Evc "$pre_re" "$h")
	check "kprobe_example's pre_handler logged for 3 forks ($pre lines)" ge "$pre" 3 ||
		diag_file "$h" "handler lines"
	check "kprobe_example's post_handler logged for 3 forks ($post lines)" ge "$post" 3 ||
		diag_file "$h" "handler lines"
	check "rmmod kprobe_example" unload kprobe_example || diag_file "$KP_TMP/rmmod.out"
	check "kprobe_example's probe gone from the list" test -z "$(list_sym $sym)" || show_list
	kmark
	forks 2
	check "no handler lines after rmmod" test -z "$(handler_lines)"
else
	diag_file "$KP_TMP/insmod.out" "insmod"
fi

# --- kretprobe_example ---
if [ ! -f "$KP_MODS/kretprobe_example.ko" ]; then
	notok "kretprobe_example.ko is in the guest"
elif check "insmod kretprobe_example.ko func=$sym" load kretprobe_example func=$sym; then
	check "list shows kretprobe_example's kretprobe on $sym (type r)" \
		test -n "$(list_sym $sym r)" || show_list
	kmark
	forks 3
	n=$(handler_lines | grep -c returned)
	check "kretprobe_example logged '$sym ... returned' for 3 forks ($n lines)" ge "$n" 3 ||
		klog_since | tail -n 10 | defang
	check "rmmod kretprobe_example" unload kretprobe_example || diag_file "$KP_TMP/rmmod.out"
	check "kretprobe_example's probe gone from the list" test -z "$(list_sym $sym)" || show_list
else
	diag_file "$KP_TMP/insmod.out" "insmod"
fi

# --- two probes at one address: kprobe_example and kp_probe.ko ---
# two_probes SAMPLE PARAM TYPE: SAMPLE (with PARAM=$sym, its probe of list
# type TYPE) and a kp_probe kprobe on $sym at once.
two_probes() {
	_s=$1
	[ -f "$KP_MODS/$_s.ko" ] || return 0
	if ! load "$_s" "$2=$sym"; then
		notok "insmod $_s.ko with kp_probe.ko on the same function"
		diag_file "$KP_TMP/insmod.out" "insmod"
		return 0
	fi
	if ! check "insmod kp_probe.ko sym=$sym alongside $_s" probe_load sym=$sym; then
		unload "$_s"
		return 0
	fi
	l=$(list_sym $sym)
	diag "list: $l"
	check "$_s + kp_probe: two lines on $sym, types $3 and k" \
		test "$(echo "$l" | awk '{ print $2 }' | sort | tr -d '\n')" = "$(printf '%s\n' "$3" k | sort | tr -d '\n')" ||
		show_list
	check "$_s + kp_probe: both lines at the same address" \
		test "$(echo "$l" | awk '{ print $1 }' | sort -u | grep -c .)" = 1
	kmark
	d=$(delta_forks hits 3)
	check "$_s + kp_probe: kp_probe fires (3 forks, $d hits)" ge "$d" 3
	n=$(handler_lines | grep -c .)
	check "$_s + kp_probe: $_s fires too ($n log lines)" ge "$n" 3
	check "rmmod $_s while kp_probe stays" unload "$_s" || diag_file "$KP_TMP/rmmod.out"
	l=$(list_sym $sym)
	check "$_s gone: one line left on $sym, type k" test "$(echo "$l" | awk '{ print $2 }' | tr -d '\n')" = k ||
		show_list
	d=$(delta_forks hits 3)
	check "$_s gone: kp_probe still fires (3 forks, $d hits)" ge "$d" 3
	check "rmmod kp_probe" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	check "$_s + kp_probe: nothing left on $sym" test -z "$(list_sym $sym)" || show_list
}
two_probes kprobe_example symbol k
two_probes kretprobe_example func r

check_klog
exit 0

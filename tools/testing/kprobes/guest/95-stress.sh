#!/bin/sh
# Probes coming and going on a busy system (kp_stress.ko, see its source):
# for kp.stress=SECONDS (kernel command line, default 60) the module's
# threads register, unregister, enable and disable kprobes and kretprobes,
# alone and in batches, on a pool of sites in a few functions while its
# callers run those functions on both CPUs; meanwhile this script loads and
# unloads kp_target.ko (probed module text), calls into it, toggles
# debug.kprobes-optimization and kprobes/enabled, forks and reads /proc and
# the kprobes list.  Then the module's exact phase and teardown report their
# checks, and the kernel log must be clean.  "make stress" runs it alone
# for 10 minutes.  Without jump optimization (riscv64, s390x) there is no
# debug.kprobes-optimization to toggle, only kprobes/enabled.
. /kptest/lib.sh

KNOB=/proc/sys/debug/kprobes-optimization
case "$(uname -m)" in x86_64|i?86|aarch64|armv7l) need "$KNOB" ;; esac
need "$KP_ENABLED"

secs=60
for arg in $(cat /proc/cmdline); do
	case "$arg" in kp.stress=*) secs=${arg#kp.stress=} ;; esac
done
end=$(($(date +%s) + secs))
running() {
	[ "$(date +%s)" -lt "$end" ]
}

# Module text coming and going, with calls into it while it is there.
modules_loop() {
	while running; do
		insmod "$KP_MODS/kp_target.ko" 2>/dev/null
		target_call 20 2>/dev/null
		rmmod kp_target 2>/dev/null
		usleep 50000
	done
}

# The global knobs.
knobs_loop() {
	_i=0
	while running; do
		[ -e "$KNOB" ] && echo $((_i & 1)) > "$KNOB"
		[ $((_i % 3)) = 0 ] && echo 0 > "$KP_ENABLED"
		usleep 200000
		echo 1 > "$KP_ENABLED"
		usleep 300000
		_i=$((_i + 1))
	done
	[ -e "$KNOB" ] && echo 1 > "$KNOB"
	echo 1 > "$KP_ENABLED"
}

# The rest of the system: forks, printing, the kprobes debugfs files.
workload_loop() {
	while running; do
		forks 5
		cat "$KP_LIST" "$KP_STATS" /proc/self/status > /dev/null
		head -c 4096 /proc/kallsyms > /dev/null
	done
}

# s390x under QEMU 7.2: a stepped instruction loses the condition code it
# sets (s390_cc_lost in lib.sh), so the churn's probes on compares (every
# boundary of kps_short, snprintf, sort_r) make those functions compute
# wrong results, on any kernel.  Checked before the churn: then a wrong
# result is reported as a known failure; every other check stands.
cc_todo=
if [ "$(uname -m)" = s390x ] && s390_cc_lost; then
	cc_todo=$s390_cc_why
fi

kmark
if ! load kp_stress seconds="$secs"; then
	notok "kp_stress.ko loads"
	diag_file "$KP_TMP/insmod.out"
	klog_since | defang
	exit 1
fi
ok "kp_stress.ko loads ($(klog_since | sed -n 's/.*kp_stress: \(.*pool probes\)/\1/p' | head -n 1))"

modules_loop &
knobs_loop &
workload_loop &
wait

# The knobs are back at 1: the module's exact phase needs every probe armed.
[ -e "$KNOB" ] && check "the optimization knob is back at 1" test "$(cat "$KNOB")" = 1
check "kprobes are enabled again" test "$(cat "$KP_ENABLED")" = 1
cat /sys/kernel/debug/kp_stress/result > "$KP_TMP/result" 2>&1
if ! grep -q '^ok - churn ran' "$KP_TMP/result"; then
	notok "kp_stress reports its result"
	diag_file "$KP_TMP/result"
fi
grep -E '^(not )?ok - ' "$KP_TMP/result" | sed 's/^\(not \)\{0,1\}ok - /&stress: /' |
	while IFS= read -r line; do
		case "$line" in
		"not ok - stress: probed functions computed the right results"*)
			[ -n "$cc_todo" ] && line="$line # TODO $cc_todo" ;;
		esac
		echo "$line"
	done
check "kp_stress.ko unloads" rmmod kp_stress
check "no probe is left in the list" test ! -s "$KP_LIST"
check_klog

#!/bin/sh
# Jump optimization seen from user space, and its knob
# /proc/sys/debug/kprobes-optimization (sysctl debug.kprobes-optimization):
#  - the knob reads 1 at boot, takes 0 and 1 and refuses anything else;
#  - kp_probe.ko post=0 on kp_target_asm+OFF (x86: +5, nops then a movabs,
#    a region with no branch; arm64: +24, "ldr x0, [x1]", a stepped
#    instruction; 32-bit arm: +20, "ldr r0, [r1]", run in arm's detour
#    buffer (opt-arm.c); see kp_target_asm.S) shows [OPTIMIZED] within a bounded
#    wait; the same probe with a post handler never does;
#  - 0 takes [OPTIMIZED] away at once, 1 brings it back;
#  - two CPUs call the probed function while the knob goes back and forth:
#    not one hit is lost; then while debugfs "enabled" goes back and forth:
#    no more hits than calls, and every call is hit again afterwards.
#
# 64-bit powerpc (upstream's optprobes.c) optimizes kernel text only: its
# detour buffer is a page of the kernel's text, and a module's text, in
# vmalloc space, is out of reach of a relative branch.  What it optimizes
# there is the probe powerpc's rethook puts on its return trampoline at
# boot (a nop), through which every kretprobe returns, so that probe is
# the one watched: it is [OPTIMIZED] after boot, the knob takes it away
# and brings it back, and a kretprobe (kp_probe.ko ret=1) on
# kp_target_func counts every return exactly, also while two CPUs call it
# and the knob goes back and forth.  debugfs "enabled" is not toggled
# there: disarming every probe takes out the trampoline's own, which a
# return in flight then needs (upstream's powerpc rethook).
. /kptest/lib.sh
case "$(uname -m)" in
x86_64|i?86)	OFF=5 ;;
aarch64)	OFF=24 ;;
armv7l)		OFF=20 ;;
ppc64le)	OFF= ;;
*)		skip "${0##*/} on $(uname -m)" "jump optimization is x86, arm64, 32-bit arm and powerpc64 only"
		exit 0 ;;
esac
OFFX=$(printf '0x%x' "${OFF:-0}")

KNOB=/proc/sys/debug/kprobes-optimization
need "$KNOB"

knob_set() {
	echo "$1" 2>/dev/null > "$KNOB"
}

check "the knob reads 1 at boot" test "$(cat "$KNOB")" = 1
for v in 2 -1 abc; do
	check "the knob refuses '$v'" sh -c "! echo $v 2>/dev/null > $KNOB"
	check "the knob still reads 1 after '$v'" test "$(cat "$KNOB")" = 1
done
check "the knob takes 0" knob_set 0
check "the knob reads 0" test "$(cat "$KNOB")" = 0
check "the knob takes 1" knob_set 1
check "the knob reads 1" test "$(cat "$KNOB")" = 1

# opt_state: the status tags of the probe on kp_target_asm+OFF (powerpc64:
# the one on its return trampoline).
OPT_AT=kp_target_asm+$OFFX
[ -z "$OFF" ] && OPT_AT=arch_rethook_trampoline+0x0
opt_state() {
	list_sym "${OPT_AT%+*}" k | awk -v at="$OPT_AT" '$3 == at { print $NF }'
}
# wait_opt WANT: poll until the probe is [OPTIMIZED] (WANT=1) or not (0),
# up to 30 s (the optimizer waits for an RCU-tasks grace period).
wait_opt() {
	_n=0
	while [ $_n -lt 300 ]; do
		case "$(opt_state)" in
		*OPTIMIZED*) [ "$1" = 1 ] && return 0 ;;
		*) [ "$1" = 0 ] && return 0 ;;
		esac
		usleep 100000
		_n=$((_n + 1))
	done
	return 1
}

# calls_on CPU N: call kp_target_asm() N times, pinned to CPU (background).
calls_on() {
	taskset -c "$1" sh -c "i=0; while [ \$i -lt $2 ]; do echo \$i > $KP_TARGET_CALL || exit 1; i=\$((i + 1)); done" &
}

# toggle FILE COUNT: write 0 then 1 to FILE COUNT times, with short pauses.
toggle() {
	_i=0
	while [ $_i -lt "$2" ]; do
		echo 0 > "$1"
		usleep 20000
		echo 1 > "$1"
		usleep 20000
		_i=$((_i + 1))
	done
}

hits() {
	probe_count hits
}

# toggled_calls FILE: 300 calls on each of CPUs 0 and 1 while FILE goes
# 0/1 ten times; sets $ran (00 when both callers finished) and $got (hits).
toggled_calls() {
	_b=$(hits)
	calls_on 0 300
	_p0=$!
	calls_on 1 300
	_p1=$!
	toggle "$1" 10
	wait $_p0
	_r0=$?
	wait $_p1
	ran=$_r0$?
	got=$(($(hits) - _b))
}

# knob_round WHAT: the calls of toggled_calls on the optimization knob:
# both CPUs ran, no WHAT (hit, return) lost, the probe [OPTIMIZED] again.
# With one CPU online, one skip line and status 1.
knob_round() {
	cpus=$(grep -c '^processor' /proc/cpuinfo)
	if [ "$cpus" -lt 2 ]; then
		skip "toggling while two CPUs call" "only $cpus CPU online"
		return 1
	fi
	toggled_calls "$KNOB"
	check "two CPUs made their calls while the knob toggled" test "$ran" = 00
	check "knob toggling lost no $1 ($got of 600 calls)" test "$got" = 600
	check "the knob ends at 1 and the probe [OPTIMIZED] again" wait_opt 1
	return 0
}

if ! check "insmod kp_target.ko" load kp_target; then
	check_klog
	exit 1
fi

# powerpc64: the return trampoline's probe and a kretprobe through it.
if [ -z "$OFF" ]; then
	check "the return trampoline's probe becomes [OPTIMIZED] within 30 s" wait_opt 1 || show_list
	if check "kp_probe.ko ret=1 on kp_target_func (returns through the trampoline)" \
		probe_load sym=kp_target:kp_target_func ret=1; then
		b=$(hits)
		target_call 20
		a=$(hits)
		check "the kretprobe fires through the optimized trampoline (20 calls: $b -> $a)" \
			test "$((a - b))" = 20

		knob_set 0
		check "knob 0: [OPTIMIZED] goes at once ($(opt_state))" wait_opt 0
		b=$(hits)
		target_call 20
		a=$(hits)
		check "knob 0: the kretprobe fires through the trampoline's breakpoint (20 calls: $b -> $a)" \
			test "$((a - b))" = 20
		knob_set 1
		check "knob 1: [OPTIMIZED] comes back" wait_opt 1 || show_list

		knob_round return
		b=$(hits)
		target_call 20
		a=$(hits)
		check "every return is hit afterwards (20 calls: $b -> $a)" test "$((a - b))" = 20
		n=$(probe_count nmissed)
		check "no missed hits ($n)" test "$n" = 0
		check "rmmod kp_probe" unload kp_probe
	fi
	check "rmmod kp_target" unload kp_target
	knob_set 1
	check_klog
	exit 0
fi

if check "kp_probe.ko with a post handler on kp_target_asm+$OFF" \
	probe_load sym=kp_target_asm offset=$OFF post=1; then
	usleep 500000
	check "with a post handler the probe is not [OPTIMIZED] ($(opt_state))" wait_opt 0 || show_list
	check "rmmod kp_probe (post handler)" unload kp_probe
fi

if check "kp_probe.ko without a post handler on kp_target_asm+$OFF" \
	probe_load sym=kp_target_asm offset=$OFF post=0; then
	check "the probe becomes [OPTIMIZED] within 30 s" wait_opt 1 || show_list
	b=$(hits)
	target_call 20
	a=$(hits)
	check "the optimized probe fires (20 calls: $b -> $a)" test "$((a - b))" = 20

	knob_set 0
	check "knob 0: [OPTIMIZED] goes at once ($(opt_state))" wait_opt 0
	knob_set 1
	check "knob 1: [OPTIMIZED] comes back" wait_opt 1 || show_list

	if knob_round hit; then
		toggled_calls "$KP_ENABLED"
		check "two CPUs made their calls while enabled toggled" test "$ran" = 00
		check "enabled toggling: at most one hit per call ($got of 600)" test "$got" -le 600
		check "enabled toggling: the probe is [OPTIMIZED] again" wait_opt 1
		b=$(hits)
		target_call 20
		a=$(hits)
		check "every call is hit again afterwards (20 calls: $b -> $a)" test "$((a - b))" = 20
	fi
	n=$(probe_count nmissed)
	check "no missed hits ($n)" test "$n" = 0
	check "rmmod kp_probe" unload kp_probe
fi
check "rmmod kp_target" unload kp_target
knob_set 1
check_klog

#!/bin/sh
# Upstream's ftrace selftests for kprobes, unmodified: ftracetest (from the
# kernel tree, at /kptest/ftrace in the guest) run with bash on every case
# of test.d/kprobe/ (uprobe_syntax_errors.tc among them) and on the
# kprobe, kretprobe and uprobe cases of test.d/dynevent/.
#
# One result per case, named "ftrace: <dir>/<case>.tc: <description>":
# PASS is "ok"; UNSUPPORTED, UNTESTED and XFAIL are "ok ... # SKIP" with
# the reason the case logged; FAIL, UNRESOLVED and UNDEFINED are "not ok"
# followed by the tail of the case's log as comments.
#
# The cases run in one ftracetest (multiple_kprobes.tc in a second one,
# last, see below), watched: a case that runs longer than
# KP_FT_TIMEOUT seconds (default 300) is killed with its whole process
# group and is "not ok [TIMEOUT]"; a case that ends its ftracetest without
# a result is "not ok [no result]".  Either way ftracetest starts again on
# the cases after it.
#
# Userspace: bash-static runs ftracetest and the cases; everything else
# they call is busybox (grep, sed, cut, tr, wc, head, tail, mktemp, find,
# sort, date, seq, xargs, expr, printf, sleep, ping, modprobe, rmmod).  No
# tput: ftracetest then prints without colours.  kprobe_module.tc modprobes
# the trace-printk sample from /lib/modules.
#
# KP_FT_CASES (space-separated paths relative to test.d, wildcards allowed)
# overrides the list, e.g. for a quick look in "make run INTERACTIVE=1":
#   KP_FT_CASES=kprobe/probepoint.tc sh /kptest/tests/70-ftracetest.sh
. /kptest/lib.sh

FT=/kptest/ftrace
BASH=/bin/bash
timeout_s=${KP_FT_TIMEOUT:-300}
cases=${KP_FT_CASES:-"kprobe/*.tc dynevent/add_remove_kprobe.tc dynevent/add_remove_uprobe.tc
	dynevent/clear_select_events.tc dynevent/generic_clear_event.tc
	dynevent/test_duplicates.tc dynevent/add_remove_btfarg.tc"}

if [ ! -x "$BASH" ]; then
	skip "ftrace: ftracetest" "no bash in the guest (bash-static)"
	exit 0
fi
need "$FT/ftracetest"
need /sys/kernel/tracing/kprobe_events

# quiet: log lines as comments, with the words the host takes for kernel
# trouble (tools/harness/summarize.py) broken up: these are test logs.
quiet() {
	sed -e 's/BUG:/BUG :/g; s/WARNING:/WARNING :/g; s/Oops/0ops/g' \
	    -e 's/Kernel panic/Kernel-panic/g; s/general protection/general-protection/g' \
	    -e 's/INFO: possible/INFO : possible/g; s/possible recursive/possible-recursive/g' \
	    -e 's/circular locking/circular-locking/g; s/UBSAN:/UBSAN :/g' \
	    -e 's/kretprobe BUG!/kretprobe BUG !/g; s/Call Trace:/Call-Trace:/g' \
	    -e 's/^/#   /'
}

now() {
	cut -d. -f1 /proc/uptime
}

# watchdog DIR PID: kill ftracetest PID's process group when its current
# case (the number of case logs in DIR) has not changed for $timeout_s.
watchdog() {
	_last=-1
	_since=$(now)
	while [ -d "/proc/$2" ]; do
		sleep 2
		_cur=$(ls "$1" 2>/dev/null | grep -c -e '-log\.')
		if [ "$_cur" != "$_last" ]; then
			# To the console at once (the script's output is shown
			# when it ends): where a guest that never ends was.
			[ "$_cur" -gt 0 ] && echo "kp-ftracetest: case" \
				"$((done_n + _cur)) of $total," \
				"$(sed -n "$((done_n + _cur))p" "$list" | sed 's,.*/test.d/,,')" \
				> /dev/kmsg
			_last=$_cur
			_since=$(now)
		elif [ $(($(now) - _since)) -ge "$timeout_s" ]; then
			echo "$_cur" > "$1.timeout"
			kill -9 "-$2" 2>/dev/null
			break
		fi
	done
}

logs=$KP_TMP/ftrace-logs
mkdir -p "$logs"
list=$logs/cases
: > "$list"
for pat in $cases; do
	for tc in $FT/test.d/$pat; do
		if [ ! -f "$tc" ]; then
			notok "ftrace: $pat: no such test case"
		else
			echo "$tc" >> "$list"
		fi
	done
done
# multiple_kprobes.tc probes the first 256 text symbols, whatever they are,
# so it may take down the guest where the architecture's code leaves a
# function of its trap path open to probes: it runs last and alone, after
# every other case's result is out.  On riscv (6.12) it does: stock dies
# at its probe on get_kprobe_ctlblk() (an out-of-line copy our kprobes.h
# does not leave); ours gets further, to riscv_v_context_nesting_end(),
# which runs on the way into the trap of a stepped instruction: a nested
# hit riscv cannot recover from (BUG()), and is_valid_bugaddr(), on the
# BUG()'s own trap path, is probed as well.  On 64-bit powerpc (6.12) it
# does too, on stock and on ours alike: among the 256 is
# do_program_check(), which traps.c's program check handler calls and
# which calls kprobe_handler(), and which is not NOKPROBE_SYMBOL(): once
# its probe is armed, each breakpoint hit traps again inside its own trap
# handling, and the guest never comes back.  There it is not run either,
# and is reported as a known failure.
alone=$(grep '/multiple_kprobes\.tc$' "$list")
if [ -n "$alone" ]; then
	grep -v '/multiple_kprobes\.tc$' "$list" > "$list.new"
	if [ "$(uname -m)" = riscv64 ]; then
		echo "not ok - ftrace: ${alone#$FT/test.d/}: not run # TODO it brings" \
			"down riscv 6.12, stock too: functions of riscv's trap path" \
			"(riscv_v_context_nesting_end, is_valid_bugaddr) take probes"
		alone=
	elif [ "$(uname -m)" = ppc64le ]; then
		echo "not ok - ftrace: ${alone#$FT/test.d/}: not run # TODO it brings" \
			"down powerpc64 6.12, stock too: do_program_check(), on the" \
			"breakpoint's own trap path, takes a probe"
		alone=
	else
		echo "$alone" >> "$list.new"
	fi
	mv "$list.new" "$list"
fi

# s390x under QEMU 7.2 (Debian 12's) loses the condition code of a stepped
# instruction (s390_cc_lost in lib.sh).  kprobe_insn_boundary.tc probes
# every instruction of kernel_clone's first 256 bytes, compares among
# them, and the fork it makes then goes astray and oopses (stock 6.12 the
# same, at the same place).  When the check shows the loss, the case is
# not run and is reported as a known failure.
if [ "$(uname -m)" = s390x ] && grep -q '/kprobe_insn_boundary\.tc$' "$list" &&
   s390_cc_lost; then
	grep -v '/kprobe_insn_boundary\.tc$' "$list" > "$list.new"
	mv "$list.new" "$list"
	echo "not ok - ftrace: kprobe/kprobe_insn_boundary.tc: not run # TODO" \
		"$s390_cc_why: the case's probes on kernel_clone's compares send" \
		"its fork astray and the guest oopses, stock 6.12 too"
fi
total=$(grep -c . "$list")

# report I RESULT LOG: the result line of the I-th case of the list.
report() {
	tc=$(sed -n "${1}p" "$list")
	name=${tc#$FT/test.d/}
	desc=$(sed -n 's/^#[[:space:]]*description:[[:space:]]*//p' "$tc" | head -n 1)
	what="ftrace: $name: $desc"
	case "$2" in
	PASS)
		ok "$what" ;;
	UNSUPPORTED|UNTESTED|XFAIL)
		# Why: the case's last line that is not a shell trace line.
		why=
		[ -f "$3" ] && why=$(grep -v -e '^+' -e '^execute' "$3" | grep . | tail -n 1)
		echo "ok - $what # SKIP $2${why:+: $why}" ;;
	*)
		if [ "$name" = dynevent/add_remove_uprobe.tc ] && [ -n "$sh_text_at_0" ]; then
			echo "not ok - $what [$2] # TODO $sh_text_at_0"
		elif [ "$2" = FAIL ] && [ -n "$no_kprobe_trace" ]; then
			echo "not ok - $what [$2] # TODO $no_kprobe_trace"
		elif [ "$2" = FAIL ] && [ -n "$no_func_args" ] && grep -q '\$arg[0-9]' "$tc"; then
			echo "not ok - $what [$2] # TODO $no_func_args"
		elif [ "$name" = kprobe/kprobe_eventname.tc ] && [ "$2" = UNRESOLVED ] &&
		     ! grep -q ' [tT] .*\.isra\.' /proc/kallsyms; then
			echo "not ok - $what [$2] # TODO the kernel has no .isra. function, which the case's last step needs"
		else
			notok "$what [$2]"
		fi
		if [ -f "$3" ]; then
			echo "# last lines of the log of $name:"
			tail -n 40 "$3" | quiet
		fi ;;
	esac
}

# dynevent/add_remove_uprobe.tc probes the shell /bin/sh runs as, found in
# its maps as "/bin/...sh": busybox does not match, bash does.  /bin/sh is
# bash while the cases run.
if [ "$(readlink /bin/sh)" = busybox ]; then
	ln -sf bash /bin/sh
	trap 'ln -sf busybox /bin/sh; kp_cleanup' EXIT
fi

# The case probes the first executable mapping of the shell at its file
# offset, as if code began there.  Where the linker put the ELF header in
# that segment (offset 0: every arm64 binary; x86-64's default separates
# them), the probe is on the header, which never runs, and the case fails
# on every kernel, stock too (make compare): reported as a TODO, not a
# failure, when it fails for that reason.
sh_text_at_0=
if echo 'cat /proc/$$/maps' | /bin/sh | grep "r-xp .*/bin/.*sh$" |
	awk '{ print $3 }' | grep -qx 00000000; then
	sh_text_at_0="the shell's executable mapping starts at file offset 0, the ELF header: the probe never hits on any kernel"
fi

# riscv (6.12) runs kprobe handlers in its breakpoint trap as NMIs, and the
# ring buffer takes no event from an NMI where the architecture does not
# select ARCH_HAVE_NMI_SAFE_CMPXCHG (riscv does not): a kprobe's events never
# reach the trace there, on any kernel.  Checked, not assumed: when a probe
# on kernel_clone is hit but leaves nothing in the trace, a case that fails
# is reported as a known failure for that reason.
no_kprobe_trace=
T=/sys/kernel/tracing
if [ "$(uname -m)" = riscv64 ] && echo 'p:kp_ft_check kernel_clone' >> $T/kprobe_events; then
	echo > $T/trace
	echo 1 > $T/events/kprobes/kp_ft_check/enable
	/bin/true
	echo 0 > $T/events/kprobes/kp_ft_check/enable
	hits=$(awk '$1 == "kp_ft_check" { print $2 }' $T/kprobe_profile)
	if [ "${hits:-0}" -gt 0 ] && ! grep -q 'kp_ft_check:' $T/trace; then
		no_kprobe_trace="a kprobe's events do not reach the trace here ($hits hits, no event): riscv's breakpoint trap is an NMI and its ring buffer takes no NMI writes"
	fi
	echo '-:kp_ft_check' >> $T/kprobe_events
	diag "kprobe events reach the trace: ${no_kprobe_trace:-yes}"
fi

# 32-bit arm (6.12) has no function argument access (it does not select
# HAVE_FUNCTION_ARG_ACCESS_API): a fetch of $argN is refused (EINVAL).
# tracefs's README still names $arg<N> (for return probes, on every
# architecture), so the cases that require it there run and fail, on
# any kernel.  Checked, not assumed: when a probe with $arg1 is refused,
# a case that uses $argN and fails is reported as a known failure.
no_func_args=
if [ "$(uname -m)" = armv7l ]; then
	if echo 'p:kp_ft_arg kernel_clone a=$arg1' 2>/dev/null >> $T/kprobe_events; then
		echo '-:kp_ft_arg' >> $T/kprobe_events
	else
		no_func_args="this architecture has no function argument access (\$argN is refused), though tracefs's README names \$arg<N>"
		diag "a probe with \$arg1 is refused here"
	fi
fi

done_n=0
run=0
while [ "$done_n" -lt "$total" ]; do
	run=$((run + 1))
	dir=$logs/run$run
	start=$(now)
	todo=$(tail -n +$((done_n + 1)) "$list")
	[ -n "$alone" ] && [ $((total - done_n)) -gt 1 ] && todo=$(echo "$todo" | sed '$d')
	ntodo=$(echo "$todo" | grep -c .)
	setsid "$BASH" "$FT/ftracetest" -k -l "$dir" $todo > "$dir.out" 2>&1 &
	pid=$!
	watchdog "$dir" "$pid" &
	wd=$!
	wait "$pid"
	rc=$?
	wait "$wd"
	# "[N]description<TAB>[RESULT]", N counting from 1 in this run.
	got=0
	sed -n 's/^\[\([0-9]*\)\].*\[\([A-Z]*\)\][[:space:]]*$/\1 \2/p' "$dir.out" > "$dir.results"
	while read -r i res; do
		[ "$i" = $((got + 1)) ] || break
		got=$i
		report $((done_n + i)) "$res" "$(ls "$dir/$i"-*-log.* 2>/dev/null | head -n 1)"
	done < "$dir.results"
	diag "ftracetest run $run: $got of $ntodo cases in $(($(now) - start)) s, status $rc"
	done_n=$((done_n + got))
	[ "$got" -lt "$ntodo" ] || continue
	# The case this run stopped in: timed out, or its ftracetest died.
	i=$((got + 1))
	log=$(ls "$dir/$i"-*-log.* 2>/dev/null | head -n 1)
	if [ -f "$dir.timeout" ]; then
		report $((done_n + 1)) "TIMEOUT after ${timeout_s} s" "$log"
	else
		report $((done_n + 1)) "no result, ftracetest status $rc" "$log"
		[ -n "$log" ] || { echo "# ftracetest said:"; tail -n 20 "$dir.out" | quiet; }
	fi
	done_n=$((done_n + 1))
done
diag "$total ftracetest cases"
check_klog
exit 0

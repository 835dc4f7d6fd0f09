#!/bin/sh
# bpftrace, as people use it, on our kprobes and uprobes: Debian's bpftrace
# (the x86_64 guest has it with its libraries, tools/harness/initramfs.sh).
# One bpftrace run counts, sums and takes stacks on
#   kprobe: and kretprobe: on kp_target_func() (kp_target.ko: f(x) = 3x + 1),
#     called N times with x = 0 .. N-1 through its debugfs file: N hits each,
#     the arguments and return values summed, kstack at the entry;
#   uprobe: and uretprobe: on depth() of /kptest/bin/uprobe_calls (static,
#     frame pointers): "uprobe_calls D" makes D + 1 calls, depth(d) returns
#     d; ustack at the innermost call.
# bpftrace runs that as its -c command and leaves at the outermost return
# (exit()); the program sleeps on, so that bpftrace can still name its
# frames when it reads the printed stack.  Under QEMU TCG one run takes about 10 s (loading LLVM
# and compiling the program dominate), hence one run for everything.
. /kptest/lib.sh

if ! command -v bpftrace > /dev/null 2>&1; then
	# Only the x86_64 guest carries Debian's bpftrace; there it must be.
	[ "$(uname -m)" = x86_64 ] || {
		skip "bpftrace on $(uname -m)" "bpftrace is in the x86_64 guest only"
		exit 0
	}
	need /usr/bin/bpftrace
fi
prog=/kptest/bin/uprobe_calls
need "$prog"
load kp_target || { notok "kp_target.ko loads"; diag_file "$KP_TMP/insmod.out"; exit 1; }
need "$KP_TARGET_CALL"

N=10	# kp_target_func(0 .. 9): the arguments sum to 45, the results to 145
D=5	# depth(5) .. depth(0): 6 calls, the arguments and results sum to 15

# The -c command: N calls of kp_target_func(), then the program, which
# sleeps until bpftrace is through (its pid is noted, to end it after).
cat > "$KP_TMP/calls.sh" <<EOF
echo \$\$ > $KP_TMP/calls.pid
i=0
while [ \$i -lt $N ]; do
	echo \$i > $KP_TARGET_CALL
	i=\$((i + 1))
done
exec $prog $D 120
EOF

# No casts in the program: without BTF (our test kernels have none) a cast
# makes bpftrace parse C, which wants kernel headers the guest lacks.  The
# int arguments and results arrive zero-extended (x86_64's 32-bit moves).
t0=$(date +%s)
timeout 900 bpftrace -c "/bin/sh $KP_TMP/calls.sh" -e "
kprobe:kp_target_func { @kcalls = count(); @kargs = sum(arg0); @kstk[kstack] = count(); }
kretprobe:kp_target_func { @krets = count(); @kret = sum(retval); }
uprobe:$prog:depth { @ucalls = count(); @uargs = sum(arg0); }
uprobe:$prog:depth /arg0 == 0/ { printf(\"ustack begin\\n%s\\nustack end\\n\", ustack); }
uretprobe:$prog:depth { @urets = count(); @uret = sum(retval); }
uretprobe:$prog:depth /retval == $D/ { exit(); }
" > "$KP_TMP/out" 2>&1
rc=$?
t1=$(date +%s)
[ -s "$KP_TMP/calls.pid" ] && kill "$(cat "$KP_TMP/calls.pid")" 2>/dev/null
diag_file "$KP_TMP/out" "bpftrace's output ($((t1 - t0)) s)"
check "bpftrace ran the program and exited 0 (status $rc)" [ "$rc" = 0 ]

# val MAP: the value bpftrace printed for a map without keys.
val() {
	sed -n "s/^@$1: //p" "$KP_TMP/out"
}
# stack MAP: the frames of the one stack a stack-keyed map holds, one a
# line ("func+off"), then "count C".  ustack: the frames of the stacks
# printed between "ustack begin" and "ustack end", then "count C", C the
# number of stacks.
ustack() {
	awk '$0 == "ustack begin" { on = 1; c++; next } $0 == "ustack end" { on = 0 }
		on && NF { print $1 } END { print "count " c }' "$KP_TMP/out"
}
stack() {
	awk -v m="@$1[" '$0 == m { on = 1; next }
		on && /^\]: / { print "count " substr($0, 4); exit }
		on { print $1 }' "$KP_TMP/out"
}

check "kprobe: kp_target_func hit $N times, arguments summed to 45 (got $(val kcalls), $(val kargs))" \
	test "$(val kcalls)" = $N -a "$(val kargs)" = 45
check "kretprobe: $N returns, retval summed to 145 (got $(val krets), $(val kret))" \
	test "$(val krets)" = $N -a "$(val kret)" = 145

# The kernel stack at the kprobe: kp_target_func first, its caller (the
# debugfs write handler) below it, the same stack all N times.
stack kstk > "$KP_TMP/kstk"
check "kstack: kp_target_func, then its caller kpt_call_set, $N times" \
	awk -v n="$N" 'NR == 1 && /^kp_target_func\+/ { a = 1 } NR == 2 && /^kpt_call_set\+/ { b = 1 }
		$0 == "count " n { c = 1 } END { exit !(a && b && c) }' "$KP_TMP/kstk"

check "uprobe: depth() called $((D + 1)) times, arguments summed to 15 (got $(val ucalls), $(val uargs))" \
	test "$(val ucalls)" = $((D + 1)) -a "$(val uargs)" = 15
check "uretprobe: $((D + 1)) returns, retval summed to 15 (got $(val urets), $(val uret))" \
	test "$(val urets)" = $((D + 1)) -a "$(val uret)" = 15

# The user stack at depth(0)'s entry, printed there (bpftrace names the
# frames when it reads the event, while the program lives; a stack kept
# in a map would be named at the end, after bpftrace killed the program,
# as bare addresses), walked by frame pointers: the probed
# address, the D - 1 frames of depth(2) .. depth(D) (the return into
# depth(1) is still on top of the stack, in no frame yet), then main().
ustack > "$KP_TMP/ustk"
check "ustack: depth+0, $((D - 1)) frames of depth, then main, once" \
	awk -v d="$D" 'NR == 1 { a = ($0 == "depth+0") }
		NR > 1 && NR <= d { if ($0 ~ /^depth\+/) n++ }
		NR == d + 1 && /^main\+/ { m = 1 }
		$0 == "count 1" { c = 1 } END { exit !(a && n == d - 1 && m && c) }' "$KP_TMP/ustk"

# Nothing left behind once bpftrace is gone: no kprobe on the function,
# no uprobe on the program (our uprobes list names sites "inode:offset").
check "bpftrace's kprobes are gone after it" sh -c "! grep -q kp_target_func $KP_LIST"
if [ -r "$KP_DBG/uprobes/list" ]; then
	ino=$(stat -c %i "$prog")
	check "bpftrace's uprobes are gone after it (none on inode $ino)" \
		sh -c "! grep -q '^$ino:' $KP_DBG/uprobes/list"
fi
check_klog

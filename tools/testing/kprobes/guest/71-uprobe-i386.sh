#!/bin/sh
# Uprobes in a 32-bit (compat) process, through uprobe_events, on
# /kptest/bin/uprobe_i386 (tools/testing/kprobes/uprobe/uprobe_i386.c,
# built with i686-linux-gnu-gcc -static):
#  - an entry probe on each instruction class of its cases (nops, endbr32,
#    push/pop of registers, %esp, an immediate and %es, pushf, pusha/popa,
#    call/jmp direct, through a register and through memory, jcc rel8 and
#    rel32, loop, jecxz, ret and ret $4, inc/dec (REX prefixes in 64-bit
#    code), daa, moves, absolute loads and stores, lea, leave, sub %esp,
#    rep movsb, sgdt, sidt and smsw, which the kernel emulates under UMIP),
#    emulated and stepped ones: every case records the same
#    registers, flags and stack words with the probes as without, and each
#    probe fires exactly once per run of its case;
#  - debugfs uprobes/list: no site of the 32-bit file is a jump or boosted;
#  - return probes: the values returned by nested calls, recursion 21 deep,
#    exact counts;
#  - 4 threads through entry and return probes: exact counts;
#  - fork: the child keeps the probes (exact counts), and a function that
#    forks returns through the return probe in both processes;
#  - a 64-bit file's probe is not armed in a 32-bit process mapping it.
. /kptest/lib.sh
x86_any "32-bit processes are x86 code"

T=/sys/kernel/tracing
prog=/kptest/bin/uprobe_i386
L=/sys/kernel/debug/uprobes/list
need "$T/uprobe_events"
need "$prog"

ev_clear() {
	echo 0 > "$T/events/enable" 2>/dev/null
	echo > "$T/uprobe_events"
	echo > "$T/trace"
}

# hits EVENT: lines of EVENT in the trace.
hits() {
	grep -c " $1:" "$T/trace"
}

# rets EVENT: the ret= values of EVENT's lines, in order, on one line.
rets() {
	grep " $1:" "$T/trace" | sed 's/.* ret=//' | tr '\n' ' '
}

# off NAME: the file offset uprobe_i386 gave for NAME.
off() {
	awk -v n="$1" '$1 == n { print $2 }' "$KP_TMP/offsets"
}

# ev_enable: enable each uprobe event; the names of those that failed.
ev_enable() {
	for _e in "$T"/events/uprobes/*/enable; do
		echo 1 2>/dev/null > "$_e" || echo "${_e%/enable}" | sed 's|.*/| |'
	done | tr -d '\n'
}

ev_clear
"$prog" offsets > "$KP_TMP/offsets"
check "uprobe_i386 runs and gives its offsets" [ -s "$KP_TMP/offsets" ]
"$prog" run 1 > "$KP_TMP/base"
check "uprobe_i386 runs its cases without probes" [ $? = 0 ]

# Entry probes on every case, and on ret_fn and reti_fn.
n=0
bad_def=
while read -r name o; do
	case "$name" in inner|outer|rec|forkret) continue ;; esac
	echo "p:i32_$name $prog:$o" >> "$T/uprobe_events" || bad_def="$bad_def $name"
	n=$((n + 1))
done < "$KP_TMP/offsets"
check "uprobe_events takes a probe on each of the $n instruction classes${bad_def:+ (refused:$bad_def)}" \
	[ -z "$bad_def" ]
bad_en=$(ev_enable)
check "each of the $n probes in 32-bit code can be enabled${bad_en:+ (failed:$bad_en)}" \
	[ -z "$bad_en" ]
"$prog" run 5 > "$KP_TMP/probed"
rc=$?
cp "$L" "$KP_TMP/list"
echo 0 > "$T/events/uprobes/enable"
check "uprobe_i386's cases give the same results five times in a row with the probes" [ $rc = 0 ]
while read -r name sig; do
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$KP_TMP/probed")
	h=$(hits "i32_$name")
	if [ "$got" = "$sig" ] && [ "$h" = 5 ]; then
		ok "probe on 32-bit case $name: registers, flags and stack unchanged, 5 hits"
	else
		notok "probe on 32-bit case $name: registers, flags and stack unchanged ($sig, probed $got), 5 hits (got $h)"
	fi
done < "$KP_TMP/base"
for f in ret_fn reti_fn; do
	h=$(hits "i32_$f")
	check "probe on the ret of 32-bit $f: 5 hits (got $h)" [ "$h" = 5 ]
done
ino=$(ls -i "$prog" | awk '{ print $1 }')
grep "^$ino:" "$KP_TMP/list" > "$KP_TMP/list32"
nl=$(grep -c ' hits=[1-9]' "$KP_TMP/list32")
nj=$(grep -c -e ' jump ' -e ' boost ' "$KP_TMP/list32")
check "debugfs uprobes/list: $n sites of the 32-bit file with hits (got $nl), none a jump or boosted (got $nj), emulated and stepped ones" \
	eval '[ "$nl" = "$n" ] && [ "$nj" = 0 ] && grep -q " emulate " "$KP_TMP/list32" && grep -q " step " "$KP_TMP/list32"'
[ "$nl" = "$n" ] && [ "$nj" = 0 ] || diag_file "$KP_TMP/list32" "$L (32-bit file)"
ev_clear

# Return probes on nested calls: outer(i) = inner(i) + inner(i + 1).
echo "p:i32_inner $prog:$(off inner)" >> "$T/uprobe_events"
echo "r:i32_inner_ret $prog:$(off inner) ret=\$retval:s32" >> "$T/uprobe_events"
echo "r:i32_outer_ret $prog:$(off outer) ret=\$retval:s32" >> "$T/uprobe_events"
bad_en=$(ev_enable)
out=$("$prog" nest 10)
echo 0 > "$T/events/uprobes/enable"
want_in=$(seq 0 9 | awk '{ printf "%d %d ", 3 * $1 + 1, 3 * $1 + 4 }')
want_out=$(seq 0 9 | awk '{ printf "%d ", 6 * $1 + 5 }')
check "nested calls under return probes return right ($out${bad_en:+, enable failed:$bad_en})" \
	[ "$out" = "nest ok" ]
check "return probes see the 32-bit return values: inner $(rets i32_inner_ret)" \
	[ "$(rets i32_inner_ret)" = "$want_in" ]
check "return probes see the 32-bit return values: outer $(rets i32_outer_ret)" \
	[ "$(rets i32_outer_ret)" = "$want_out" ]
check "20 entries and 20 returns of inner(), 10 returns of outer() (got $(hits i32_inner), $(hits i32_inner_ret), $(hits i32_outer_ret))" \
	eval '[ "$(hits i32_inner)" = 20 ] && [ "$(hits i32_inner_ret)" = 20 ] && [ "$(hits i32_outer_ret)" = 10 ]'
ev_clear

# Recursion: rec(20) returns 0, 1, ... 20 from the innermost frame out.
echo "r:i32_rec_ret $prog:$(off rec) ret=\$retval:s32" >> "$T/uprobe_events"
ev_enable > /dev/null
out=$("$prog" recurse 20)
echo 0 > "$T/events/uprobes/enable"
check "recursion 21 deep under a return probe returns right ($out)" [ "$out" = "rec 20" ]
check "21 returns of rec(), innermost first: $(rets i32_rec_ret)" \
	[ "$(rets i32_rec_ret)" = "$(seq 0 20 | tr '\n' ' ')" ]
ev_clear

# Threads, then fork, through an entry and a return probe.
echo "p:i32_inner $prog:$(off inner)" >> "$T/uprobe_events"
echo "r:i32_outer_ret $prog:$(off outer) ret=\$retval:s32" >> "$T/uprobe_events"
ev_enable > /dev/null
out=$("$prog" threads 4 200)
echo 0 > "$T/events/uprobes/enable"
check "4 threads x 200 calls ($out): 1600 entries of inner(), 800 returns of outer() (got $(hits i32_inner), $(hits i32_outer_ret))" \
	eval '[ "$out" = "threads ok" ] && [ "$(hits i32_inner)" = 1600 ] && [ "$(hits i32_outer_ret)" = 800 ]'
echo > "$T/trace"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" fork 50)
echo 0 > "$T/events/uprobes/enable"
check "fork: 100 calls in the parent, 50 in the child ($out): 300 entries of inner(), 150 returns of outer() (got $(hits i32_inner), $(hits i32_outer_ret))" \
	eval '[ "$out" = "fork ok" ] && [ "$(hits i32_inner)" = 300 ] && [ "$(hits i32_outer_ret)" = 150 ]'
ev_clear

# forkret() forks between its entry and its return: both processes return
# through the trampoline, the child with 0, the parent with the child's pid.
echo "r:i32_forkret $prog:$(off forkret) ret=\$retval:s32" >> "$T/uprobe_events"
ev_enable > /dev/null
out=$("$prog" forkret)
echo 0 > "$T/events/uprobes/enable"
pid=${out##* }
got=$(rets i32_forkret | tr ' ' '\n' | sort -n | tr '\n' ' ')
check "a function that forks returns in both processes ($out): returns 0 and $pid (got $got)" \
	eval '[ "${out% *}" = "forkret ok" ] && [ "$got" = "0 $pid " ]'
ev_clear

# A file of the other kind: a probe on 64-bit code (uprobe_target) is armed
# in the 64-bit process, not in a 32-bit one mapping the file executable;
# the 32-bit process's own file is.  A 32-bit kernel runs no 64-bit code.
t64=/kptest/bin/uprobe_target
if [ "$(uname -m)" = x86_64 ]; then
	o64=$("$t64" offsets | awk '$1 == "nop" { print $2 }')
	echo "p:i32_other $t64:$o64" >> "$T/uprobe_events"
	echo "p:i32_own $prog:$(off nop)" >> "$T/uprobe_events"
	bad_en=$(ev_enable)
	other=$("$prog" peek "$t64" "$o64")
	own=$("$prog" peek "$prog" "$(off nop)")
	"$t64" run 1 > /dev/null
	echo 0 > "$T/events/uprobes/enable"
	check "a 32-bit process sees no int3 at a 64-bit file's probe ($other), an int3 at its own file's ($own); the 64-bit process hits it once (got $(hits i32_other))${bad_en:+ (enable failed:$bad_en)}" \
		eval '[ "$other" = "peek 90" ] && [ "$own" = "peek cc" ] && [ "$(hits i32_other)" = 1 ]'
	ev_clear
fi

check_klog

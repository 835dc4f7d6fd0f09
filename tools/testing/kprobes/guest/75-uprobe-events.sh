#!/bin/sh
# Uprobes through uprobe_events (kernel/trace/trace_uprobe.c, unmodified) on
# /kptest/bin/uprobe_target (tools/testing/kprobes/uprobe/uprobe_target.c):
#  - one probe on each instruction class of its cases (nops, endbr64, push,
#    pushf, call, jmp, jcc, ret, RIP-relative loads, stores and lea, plain,
#    rep movsb, indirect call and jmp through a register and through
#    memory, loop, sub/add %rsp): every case records the same registers,
#    flags and red zone with the probes as without, and each probe fires
#    exactly once per run of its case; again with boosting off (debugfs
#    uprobes/boost), so that boosted copies and single-stepped ones are
#    both compared with the unprobed runs;
#  - a fault in a stepped copy (divide by zero, NULL load) is reported at
#    the probed address, in siginfo and in the ucontext;
#  - 32 threads hit one probe, and the count is exact;
#  - a SIGALRM storm while stepped copies and boosted copies run: no signal
#    handler sees an address in the XOL area or a stub, and no hit is lost
#    or counted twice;
#  - return probes through recursion and through longjmp(), and on a
#    function returning -ERESTARTSYS while signals arrive;
#  - a USDT semaphore (ref_ctr_offset) counts the armed probe, also when
#    its data mapping appears after the text's;
#  - a second mapping of the probed file gets the probe, also after mremap,
#    and loses it while mremap keeps moving it;
#  - a 5-byte nop becomes a jump to a stub after its first hit, shared with
#    a forked child and undone when the probe goes; a SIGALRM storm never
#    shows a stub's address; mremap of the jump makes it an int3 again;
#    optimizing and restoring under 4 running threads;
#  - debugfs uprobes/list shows the probes, how they run and their hits;
#  - bad probe definitions are refused and leave the kernel log quiet.
. /kptest/lib.sh
x86_64_only "uprobe_target is x86_64 assembly"

T=/sys/kernel/tracing
prog=/kptest/bin/uprobe_target
need "$T/uprobe_events"
need "$prog"

ev_clear() {
	echo 0 > "$T/events/enable" 2>/dev/null
	echo > "$T/uprobe_events"
	echo > "$T/trace"
}
ev_clear
"$prog" offsets > "$KP_TMP/offsets"

# hits EVENT: lines of EVENT in the trace.
hits() {
	grep -c " $1:" "$T/trace"
}

# remap_churn DESC OFFSET [nop5]: the probe at OFFSET comes and goes 30
# times while "remaploop" moves its page back and forth with mremap: each
# removal must find the page where it is now, or the breakpoint left
# behind kills the process with SIGTRAP.
remap_churn() {
	echo "p:up_remap $prog:$2" >> "$T/uprobe_events"
	"$prog" remaploop 8 ${3:-} > "$KP_TMP/remaploop.out" &
	rpid=$!
	sleep 1
	for _i in $(seq 30); do
		echo 1 > "$T/events/uprobes/up_remap/enable"
		sleep 0.05
		echo 0 > "$T/events/uprobes/up_remap/enable"
	done
	wait "$rpid"
	rc=$?
	out=$(tail -n 1 "$KP_TMP/remaploop.out")
	check "30 $1: the process lives ($out, status $rc, $(hits up_remap) hits)" \
		eval '[ "$rc" = 0 ] && [ "${out% *}" = "remaploop ok" ] && [ "$(hits up_remap)" -gt 0 ]'
	ev_clear
}

# storm EVENT CASE: run CASE 20000 times under a SIGALRM storm with EVENT
# enabled; sets out (the program's report), sig (signals handled), inside
# (signals that saw an ip in [uprobes]), how (probes debugfs lists as
# boosted, read before the event goes) and h (hits).
storm() {
	echo 1 > "$T/events/uprobes/enable"
	out=$("$prog" signals "$2" 20000)
	how=$(grep -c ' boost ' /sys/kernel/debug/uprobes/list)
	echo 0 > "$T/events/uprobes/enable"
	h=$(hits "$1")
	sig=$(echo "$out" | awk '{ print $2 }')
	inside=$(echo "$out" | awk '{ print $4 }')
}

"$prog" run 1 > "$KP_TMP/base" || notok "uprobe_target runs without probes"
n=0
bad_def=
while read -r name off; do
	case "$name" in fault_*|nop5_fn|rec|ljfunc|ljdeep|erestart_fn|usdt_sem) continue ;; esac
	echo "p:up_$name $prog:$off" >> "$T/uprobe_events" || bad_def="$bad_def $name"
	n=$((n + 1))
done < "$KP_TMP/offsets"
check "uprobe_events takes a probe on each of the $n instruction classes${bad_def:+ (refused:$bad_def)}" \
	[ -z "$bad_def" ]
echo 1 > "$T/events/uprobes/enable"
"$prog" run 5 > "$KP_TMP/probed"
rc=$?
L=/sys/kernel/debug/uprobes/list
cp "$L" "$KP_TMP/list"
echo 0 > "$T/events/uprobes/enable"
nl=$(grep -c ' consumers=1 .* hits=[1-9]' "$KP_TMP/list")
check "debugfs uprobes/list: $n probes with hits (got $nl), emulated, boosted and stepped ones" \
	eval '[ "$nl" = "$n" ] && grep -q " emulate " "$KP_TMP/list" && grep -q " boost " "$KP_TMP/list" && grep -q " step " "$KP_TMP/list"'
check "uprobe_target's cases give the same results five times in a row with the probes" [ $rc = 0 ]
while read -r name sig; do
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$KP_TMP/probed")
	# Case ret_fn runs case ret again: both probes fire in both cases.
	want=5
	case "$name" in ret|ret_fn) want=10 ;; esac
	h=$(hits "up_$name")
	if [ "$got" = "$sig" ] && [ "$h" = "$want" ]; then
		ok "probe on case $name: registers, flags and red zone unchanged, $h hits"
	else
		notok "probe on case $name: registers, flags and red zone unchanged ($sig, probed $got), $want hits (got $h)"
	fi
done < "$KP_TMP/base"

# The same with boosting off: what was boosted is stepped now.
B=/sys/kernel/debug/uprobes/boost
echo > "$T/trace"
echo 0 > "$B"
echo 1 > "$T/events/uprobes/enable"
"$prog" run 5 > "$KP_TMP/stepped"
rc=$?
echo 0 > "$T/events/uprobes/enable"
nb=$(grep -c ' boost ' /sys/kernel/debug/uprobes/list)
echo 1 > "$B"
bad=
while read -r name sig; do
	want=5
	case "$name" in ret|ret_fn) want=10 ;; esac
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$KP_TMP/stepped")
	[ "$got" = "$sig" ] && [ "$(hits "up_$name")" = "$want" ] || bad="$bad $name"
done < "$KP_TMP/base"
check "boosting off: no probe listed as boost ($nb), and every case as unprobed with exact hits${bad:+ (differ:$bad)}" \
	eval '[ "$nb" = 0 ] && [ $rc = 0 ] && [ -z "$bad" ]'
ev_clear

# Faults in the stepped copy.
for f in fault_div fault_load; do
	off=$(awk -v n="$f" '$1 == n { print $2 }' "$KP_TMP/offsets")
	echo "p:up_$f $prog:$off" >> "$T/uprobe_events"
done
echo 1 > "$T/events/uprobes/enable"
"$prog" fault > "$KP_TMP/fault"
echo 0 > "$T/events/uprobes/enable"
diag_file "$KP_TMP/fault" "uprobe_target fault"
check "SIGFPE of a probed div: ip and si_addr at the probed instruction" \
	grep -q "^div sig=8 ip_ok=1 addr_ok=1" "$KP_TMP/fault"
check "SIGSEGV of a probed NULL load: ip at the probed instruction" \
	grep -q "^load sig=11 ip_ok=1 addr_ok=1" "$KP_TMP/fault"
check "the probes on the faulting instructions fired" \
	eval '[ "$(hits up_fault_div)" -ge 1 ] && [ "$(hits up_fault_load)" -ge 1 ]'
ev_clear

# 32 threads on one probe: exact count.
off=$(awk '$1 == "nop" { print $2 }' "$KP_TMP/offsets")
echo "p:up_thr $prog:$off" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
"$prog" threads 32 200
echo 0 > "$T/events/uprobes/enable"
h=$(hits up_thr)
check "32 threads x 200 calls through one probe: 6400 hits (got $h)" [ "$h" = 6400 ]
ev_clear

# Signals while stepping: never delivered with ip in the XOL area.
off=$(awk '$1 == "rip_load" { print $2 }' "$KP_TMP/offsets")
echo "p:up_sig $prog:$off" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" signals rip_load 20000)
echo 0 > "$T/events/uprobes/enable"
h=$(hits up_sig)
sig=$(echo "$out" | awk '{ print $2 }')
check "SIGALRM storm over a stepped probe: $sig signals, none seen inside [uprobes] ($out)" \
	eval '[ -n "$sig" ] && [ "$sig" -gt 0 ] && [ "$(echo "$out" | awk '\''{ print $4 }'\'')" = 0 ]'
check "SIGALRM storm: 20000 hits (got $h)" [ "$h" = 20000 ]
ev_clear

# The same over a boosted copy: a signal that finds the thread at the copy
# sends it back to the probe, whose handlers must not run twice.
off=$(awk '$1 == "rip_add" { print $2 }' "$KP_TMP/offsets")
echo "p:up_bsig $prog:$off" >> "$T/uprobe_events"
storm up_bsig rip_add
check "SIGALRM storm over a boosted probe ($how listed as boost): $sig signals, none seen inside [uprobes] ($out), 20000 hits (got $h)" \
	eval '[ "$how" = 1 ] && [ -n "$sig" ] && [ "$sig" -gt 0 ] && [ "$inside" = 0 ] && [ "$h" = 20000 ]'
ev_clear

# Return probes through recursion and longjmp.
rec=$(awk '$1 == "rec" { print $2 }' "$KP_TMP/offsets")
echo "p:up_rec $prog:$rec" >> "$T/uprobe_events"
echo "r:up_recret $prog:$rec" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" recurse 20)
echo 0 > "$T/events/uprobes/enable"
check "recursion 21 deep under a return probe returns right ($out)" [ "$out" = "rec 20" ]
check "21 entries and 21 returns of rec() (got $(hits up_rec), $(hits up_recret))" \
	eval '[ "$(hits up_rec)" = 21 ] && [ "$(hits up_recret)" = 21 ]'
ev_clear
echo "r:up_recret $prog:$rec" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" recurse 100)
echo 0 > "$T/events/uprobes/enable"
check "recursion deeper than 64 return probes still returns right ($out)" [ "$out" = "rec 100" ]
check "at least 64 returns of rec() seen (got $(hits up_recret))" [ "$(hits up_recret)" -ge 64 ]
ev_clear
lj=$(awk '$1 == "ljfunc" { print $2 }' "$KP_TMP/offsets")
ljd=$(awk '$1 == "ljdeep" { print $2 }' "$KP_TMP/offsets")
echo "r:up_ljret $prog:$lj" >> "$T/uprobe_events"
echo "r:up_ljdret $prog:$ljd" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" longjmp 100)
rc=$?
echo 0 > "$T/events/uprobes/enable"
check "100 longjmp()s out of return-probed functions ($out, status $rc)" [ "$out" = "longjmp 100" ]
check "no return reported for the functions longjmp() left (got $(hits up_ljret), $(hits up_ljdret))" \
	eval '[ "$(hits up_ljret)" = 0 ] && [ "$(hits up_ljdret)" = 0 ]'
ev_clear

# A function returning -ERESTARTSYS under a return probe, with signals
# arriving: the uretprobe syscall's way out must not restart it.
er=$(awk '$1 == "erestart_fn" { print $2 }' "$KP_TMP/offsets")
echo "r:up_erret $prog:$er ret=\$retval:s64" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" erestart 5000)
rc=$?
echo 0 > "$T/events/uprobes/enable"
sig=$(echo "$out" | awk '{ print $6 }')
check "5000 returns of -512 under a SIGALRM storm, all right ($out, status $rc)" \
	eval '[ "$rc" = 0 ] && [ "$(echo "$out" | cut -d" " -f1-4)" = "erestart 5000 bad 0" ] && [ "$sig" -gt 0 ]'
check "5000 return events with ret=-512 (got $(grep -c ' up_erret:.*ret=-512' "$T/trace"))" \
	[ "$(grep -c ' up_erret:.*ret=-512' "$T/trace")" = 5000 ]
ev_clear

# A USDT semaphore: 1 in a process started while the probe is on, 0 after.
nop=$(awk '$1 == "nop" { print $2 }' "$KP_TMP/offsets")
sem=$(awk '$1 == "usdt_sem" { print $2 }' "$KP_TMP/offsets")
echo "p:up_sem $prog:$nop($sem)" >> "$T/uprobe_events"
check "uprobe_target without the probe: semaphore 0" [ "$("$prog" sem)" = "sem 0" ]
echo 1 > "$T/events/uprobes/up_sem/enable"
out=$("$prog" sem)
check "uprobe_target with the probe on: semaphore 1 ($out)" [ "$out" = "sem 1" ]
echo 0 > "$T/events/uprobes/up_sem/enable"
out=$("$prog" sem)
check "uprobe_target with the probe off again: semaphore 0 ($out)" [ "$out" = "sem 0" ]
ev_clear

# The probed page mapped again by hand, then moved with mremap.
rf=$(awk '$1 == "ret_fn" { print $2 }' "$KP_TMP/offsets")
echo "p:up_remap $prog:$rf" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" remap 20)
echo 0 > "$T/events/uprobes/enable"
h=$(hits up_remap)
check "a new mapping of the probed page, then mremap: 40 hits ($out, got $h)" \
	eval '[ "$out" = "remap ok" ] && [ "$h" = 40 ]'
ev_clear

# Two files, each with its own probe at the same offset, mapped by turns at
# one address: every hit counts for the file mapped there at the time
# (threads remember the site of their last hit; a new mapping must not
# find the old one's).
cp "$prog" "$KP_TMP/uprobe_target2"
echo "p:up_sw1 $prog:$rf" >> "$T/uprobe_events"
echo "p:up_sw2 $KP_TMP/uprobe_target2:$rf" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" swapmap "$KP_TMP/uprobe_target2" 10 5)
echo 0 > "$T/events/uprobes/enable"
h1=$(hits up_sw1) h2=$(hits up_sw2)
check "two files mapped by turns at one address, each probed: 50 hits each ($out, got $h1 and $h2)" \
	eval '[ "$out" = "swapmap ok" ] && [ "$h1" = 50 ] && [ "$h2" = 50 ]'
ev_clear
rm -f "$KP_TMP/uprobe_target2"

remap_churn "probe on/off rounds while mremap moves the probed page" "$rf"

# Probes defined, enabled, disabled and deleted (so their sites are freed)
# over and over while 8 threads hit an emulated one and a loop hits a
# stepped one: the hit path finds sites without locks and without taking
# references, except across a step, so this is where a freed site would
# be used.  Every process must live and the log stay clean.  (A round
# takes a second or more under TCG with 9 threads trapping: 2 at least.)
nop_off=$(awk '$1 == "nop" { print $2 }' "$KP_TMP/offsets")
rip_off=$(awk '$1 == "rip_store" { print $2 }' "$KP_TMP/offsets")
"$prog" threadloop 8 15 > "$KP_TMP/churn1.out" &
c1=$!
"$prog" loop rip_store 15 > "$KP_TMP/churn2.out" &
c2=$!
sleep 1
rounds=0 seen=0
while kill -0 "$c1" 2>/dev/null && [ "$rounds" -lt 60 ]; do
	echo "p:up_ch1 $prog:$nop_off" >> "$T/uprobe_events"
	echo "p:up_ch2 $prog:$rip_off" >> "$T/uprobe_events"
	echo 1 > "$T/events/uprobes/enable"
	sleep 0.02
	# The debugfs counts, not the trace: grepping a trace that 9
	# threads fill would take most of the round.
	grep -q ' hits=[1-9]' /sys/kernel/debug/uprobes/list && seen=$((seen + 1))
	echo 0 > "$T/events/uprobes/enable"
	echo > "$T/uprobe_events"
	rounds=$((rounds + 1))
done
wait "$c1"
r1=$?
wait "$c2"
r2=$?
ev_clear
check "$rounds rounds of define/enable/disable/delete while 9 threads hit: both processes live (status $r1 $r2), hits in $seen rounds" \
	eval '[ "$r1" = 0 ] && [ "$r2" = 0 ] && [ "$seen" -gt 0 ] && [ "$rounds" -ge 2 ]'

# text_anon PID: kB of private copies in the process's text mapping.
text_anon() {
	awk -v prog="$prog" '
		/^[0-9a-f]+-[0-9a-f]+ / { in_text = ($2 == "r-xp" && $NF == prog) }
		in_text && /^Anonymous:/ { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}

# Arming a running process gives it a private copy of the probed page;
# disarming gives the file's page back, so a probe that came and went
# costs the process nothing.
echo "p:up_cow $prog:$nop_off" >> "$T/uprobe_events"
"$prog" loop nop 6 > /dev/null &
cpid=$!
sleep 1
a0=$(text_anon "$cpid")
echo 1 > "$T/events/uprobes/up_cow/enable"
sleep 1
a1=$(text_anon "$cpid")
echo 0 > "$T/events/uprobes/up_cow/enable"
sleep 1
a2=$(text_anon "$cpid")
h=$(hits up_cow)
kill "$cpid" 2>/dev/null
wait "$cpid" 2>/dev/null
check "the probed text page is private while armed and the file's again after ($a0 -> $a1 -> $a2 kB, $h hits)" \
	eval '[ "$a0" = 0 ] && [ "$a1" -gt 0 ] && [ "$a2" = 0 ] && [ "$h" -gt 0 ]'
ev_clear

# Optimized sites.  A 5-byte nop becomes, on its first hit in a process, a
# jump to a stub in a "[uprobes]" page near the text that enters the kernel
# by a system call: no trap.  A forked child shares the stubs (its text has
# the parent's jumps); disabling puts the nop back.
# text_byte PID ADDR: the first byte of the process's text at ADDR, in hex.
text_byte() {
	dd if="/proc/$1/mem" bs=1 skip=$(($2)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n'
}
n5=$(awk '$1 == "nop5" { print $2 }' "$KP_TMP/offsets")
echo "p:up_opt $prog:$n5" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
"$prog" optfork 3 > "$KP_TMP/opt.out" &
opid=$!
for _i in $(seq 100); do
	grep -q done "$KP_TMP/opt.out" && break
	sleep 0.2
done
oaddr=$(awk '/^pid/ { print $4 }' "$KP_TMP/opt.out")
b1=$(text_byte "$opid" "$oaddr")
np=$(grep -c '\[uprobes\]' "/proc/$opid/maps")
grep -q "$(printf '%d:%#x' "$(stat -c %i "$prog")" "$n5") .* jump " /sys/kernel/debug/uprobes/list
lj=$?
echo 0 > "$T/events/uprobes/enable"
b2=$(text_byte "$opid" "$oaddr")
wait "$opid"
rc=$?
h=$(hits up_opt)
check "nop5 site: a jump (byte $b1) to a stub page ($np mapped) after the first hit, listed as jump ($lj)" \
	eval '[ "$b1" = e9 ] && [ "$np" -ge 1 ] && [ "$lj" = 0 ]'
check "nop5 site: 300 hits in the parent and the forked child sharing its stubs (got $h, status $rc)" \
	eval '[ "$h" = 300 ] && [ "$rc" = 0 ]'
check "nop5 site disabled: the nop is back in the running process (byte $b2)" [ "$b2" = 0f ]
ev_clear

echo "p:up_opt $prog:$n5" >> "$T/uprobe_events"
storm up_opt nop5
check "SIGALRM storm over an optimized site: $sig signals, none seen inside a stub ($out), 20000 hits (got $h)" \
	eval '[ -n "$sig" ] && [ "$sig" -gt 0 ] && [ "$inside" = 0 ] && [ "$h" = 20000 ]'
ev_clear

# mremap moves a jump away from its stub: it must become the int3 again.
n5f=$(awk '$1 == "nop5_fn" { print $2 }' "$KP_TMP/offsets")
echo "p:up_remap $prog:$n5f" >> "$T/uprobe_events"
echo 1 > "$T/events/uprobes/enable"
out=$("$prog" remap 20 nop5)
echo 0 > "$T/events/uprobes/enable"
h=$(hits up_remap)
check "an optimized site in a new mapping, then mremap: 40 hits ($out, got $h)" \
	eval '[ "$out" = "remap ok" ] && [ "$h" = 40 ]'
ev_clear
remap_churn "on/off rounds of an optimized site while mremap moves it" "$n5f" nop5

# Optimizing and putting back the nop while 4 threads run through it on
# both CPUs: each thread sees a nop, an int3 or the jump, never a mix.
"$prog" threadloop 4 10 nop5 > "$KP_TMP/optchurn.out" &
c1=$!
sleep 1
rounds=0
while kill -0 "$c1" 2>/dev/null && [ "$rounds" -lt 40 ]; do
	echo "p:up_och $prog:$n5" >> "$T/uprobe_events"
	echo 1 > "$T/events/uprobes/enable"
	sleep 0.05
	echo 0 > "$T/events/uprobes/enable"
	echo > "$T/uprobe_events"
	rounds=$((rounds + 1))
done
wait "$c1"
rc=$?
check "$rounds rounds of optimizing and restoring a nop5 under 4 threads: the process lives (status $rc)" \
	eval '[ "$rc" = 0 ] && [ "$rounds" -ge 2 ]'
ev_clear

# Bad definitions: refused with an error, nothing in the kernel log.
kmark
for def in "p:bad1 /nonexistent:0x10" "p:bad2 /sys:0x10" "p:bad3 $prog:0x7fffffff" \
	   "p:bad4 $prog:0x10(0x3)" "p:bad5 /proc/self/maps:0x0"; do
	if echo "$def" >> "$T/uprobe_events" 2>/dev/null; then
		# Some are only refused when enabled (the offset past the end).
		ename=${def%% *}; ename=${ename#p:}
		if [ -d "$T/events/uprobes/$ename" ] &&
		   echo 1 > "$T/events/uprobes/$ename/enable" 2>/dev/null; then
			notok "'$def' is refused"
		else
			ok "'$def' is refused when enabled"
		fi
	else
		ok "'$def' is refused"
	fi
done
ev_clear
check_klog
exit 0

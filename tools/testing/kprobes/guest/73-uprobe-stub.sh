#!/bin/sh
# Optimized uprobe sites and boosted copies where the process does
# something unusual to them (/kptest/bin/uprobe_stub, tools/testing/
# kprobes/uprobe/uprobe_stub.c; probes through uprobe_events):
#  - mremap(MREMAP_DONTUNMAP) moves an optimized site: calls at the new
#    address hit the probe, and disabling it leaves the nop there;
#  - the process munmaps its "[uprobes]" stub page, or marks it
#    MADV_DONTFORK and forks: the sites hit as int3s from then on, no
#    SIGSEGV, no hit lost;
#  - the stub's system call is not seen by Syscall User Dispatch nor by a
#    PTRACE_SYSCALL tracer;
#  - a SIGSEGV handler that longjmps out of a boosted copy's fault: the
#    next hits with the same registers still run the handlers;
#  - an int3 site that cannot be optimized in its mapping (made writable)
#    does not take the mmap_lock for writing on every hit;
#  - un-optimizing writes the int3, syncs every CPU, then the rest (traced
#    with kprobe events on uprobe_access_mm() and arch_uprobe_text_sync()).
# On a kernel without optimized sites (stock) the stub cases skip.
. /kptest/lib.sh
x86_64_only "optimized sites and boosted copies are x86_64 only"

T=/sys/kernel/tracing
prog=/kptest/bin/uprobe_stub
need "$T/uprobe_events"
need "$prog"

ev_clear() {
	echo 0 > "$T/events/enable" 2>/dev/null
	echo > "$T/kprobe_events"
	echo > "$T/uprobe_events"
	echo > "$T/trace"
}
ev_clear

hits() {
	grep -c " $1:" "$T/trace"
}

# probe NAME OFFSET-NAME: define and enable a uprobe on the program.
probe() {
	_o=$("$prog" offsets | awk -v n="$2" '$1 == n { print $2 }')
	echo "p:$1 $prog:$_o" >> "$T/uprobe_events" &&
		echo 1 > "$T/events/uprobes/$1/enable"
}

# run EVENT OFFSET-NAME ARGS...: the program with ARGS, a probe EVENT on
# OFFSET-NAME enabled (after the probes defined so far); sets out (what it
# printed), rc and h (EVENT's hits).
run() {
	_ev=$1
	probe "$1" "$2"
	shift 2
	out=$("$prog" "$@")
	rc=$?
	h=$(hits "$_ev")
}

# text_byte PID ADDR: the first byte of the process's text at ADDR, in hex.
text_byte() {
	dd if="/proc/$1/mem" bs=1 skip=$(($2)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n'
}

# wait_line FILE PATTERN: up to 10 s for PATTERN in FILE.
wait_line() {
	for _i in $(seq 50); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

N=20

# mremap(MREMAP_DONTUNMAP): no munmap path runs for the old range.
probe us_nop5 nop5
"$prog" dontunmap $N > "$KP_TMP/du.out" &
dpid=$!
wait_line "$KP_TMP/du.out" moved
echo 0 > "$T/events/uprobes/us_nop5/enable"
kill -USR1 "$dpid"
wait "$dpid"
rc=$?
out=$(tail -n 1 "$KP_TMP/du.out")
h=$(hits us_nop5)
check "MREMAP_DONTUNMAP of an optimized site: $((2 * N)) hits, no fault, the nop back after disabling ($out, status $rc, $h hits)" \
	eval '[ "$rc" = 0 ] && [ "$out" = "dontunmap faults 0 byte 0f" ] && [ "$h" = $((2 * N)) ]'
ev_clear

# The stub page munmapped: the sites fall back to int3s.
probe us_nop5b nop5b
run us_nop5 nop5 unmapstub $N
hb=$(hits us_nop5b)
if [ "$out" = "no stub" ]; then
	skip "munmap of the stub page" "no optimized sites"
else
	check "munmap of the stub page: no fault, $((2 * N)) + $N hits ($out, status $rc, $h + $hb hits)" \
		eval '[ "$rc" = 0 ] && [ "${out% byte *}" = "unmapstub faults 0" ] && [ "$h" = $((2 * N)) ] && [ "$hb" = $N ]'
fi
ev_clear

run us_nop5 nop5 dontfork $N
if [ "$out" = "no stub" ]; then
	skip "MADV_DONTFORK of the stub page" "no optimized sites"
else
	check "MADV_DONTFORK of the stub page, fork: the child runs the site, $((3 * N)) hits ($out, status $rc, $h hits)" \
		eval '[ "$rc" = 0 ] && [ "$out" = "dontfork child 0 faults 0" ] && [ "$h" = $((3 * N)) ]'
fi
ev_clear

# The stub's system call and the process's own system call hooks.
run us_nop5 nop5 sud $N
check "Syscall User Dispatch on: no SIGSYS nor SIGILL from an optimized site, $((N + 1)) hits ($out, status $rc, $h hits)" \
	eval '[ "$rc" = 0 ] && [ "$out" = "sud sigsys 0 sigill 0" ] && [ "$h" = $((N + 1)) ]'
ev_clear

run us_nop5 nop5 ptrace $N
check "PTRACE_SYSCALL: no stop at an optimized site's stub, $((N + 1)) hits ($out, status $rc, $h hits)" \
	eval '[ "$rc" = 0 ] && [ "${out#* stub }" = "0 status 0" ] && [ "$h" = $((N + 1)) ]'
ev_clear

# A fault of a boosted copy whose SIGSEGV handler longjmps away.
run us_fault fault fault $N
how=$(grep -c ' boost ' /sys/kernel/debug/uprobes/list 2>/dev/null)
check "$N faults of a boosted copy left by longjmp: $N hits ($out, status $rc, $h hits, ${how:-0} listed as boost)" \
	eval '[ "$rc" = 0 ] && [ "$out" = "fault faults $N" ] && [ "$h" = $N ]'
ev_clear

# An int3 site its mapping cannot take a jump in (writable): the hits do
# not each try again under the mmap_lock taken for writing.
if echo 'p:kp_dwk down_write_killable' >> "$T/kprobe_events"; then
	probe us_nop5 nop5
	echo "comm == \"uprobe_stub\"" > "$T/events/kprobes/kp_dwk/filter"
	echo 1 > "$T/events/kprobes/kp_dwk/enable"
	out=$("$prog" nowrite 200)
	echo 0 > "$T/events/kprobes/kp_dwk/enable"
	h=$(hits us_nop5)
	w=$(hits kp_dwk)
	check "200 int3 hits of a nop5 site in a writable mapping: mmap_lock taken for writing $w times (< 50), $h hits ($out)" \
		eval '[ "$out" = "nowrite ok" ] && [ "$h" = 200 ] && [ "$w" -lt 50 ]'
else
	skip "mmap_lock per hit of an unoptimizable site" "no kprobe on down_write_killable"
fi
ev_clear

# Un-optimizing: between the int3 and the other four bytes, a sync.
if echo 'p:kp_acc uprobe_access_mm vaddr=%si:x64 len=%cx:s32 wr=%r8:u8' >> "$T/kprobe_events" &&
   echo 'p:kp_sync arch_uprobe_text_sync' >> "$T/kprobe_events"; then
	probe us_nop5 nop5
	"$prog" loop 10 > "$KP_TMP/loop.out" &
	lpid=$!
	wait_line "$KP_TMP/loop.out" addr
	laddr=$(awk '/^pid/ { print $4 }' "$KP_TMP/loop.out")
	for _i in $(seq 50); do
		[ "$(text_byte "$lpid" "$laddr")" = e9 ] && break
		sleep 0.2
	done
	b1=$(text_byte "$lpid" "$laddr")
	echo > "$T/trace"
	echo 1 > "$T/events/kprobes/enable"
	echo 0 > "$T/events/uprobes/us_nop5/enable"
	echo 0 > "$T/events/kprobes/enable"
	b2=$(text_byte "$lpid" "$laddr")
	kill "$lpid"
	wait "$lpid" 2>/dev/null
	# The event before the write of the four bytes after the first.
	seq=$(awk '/ kp_acc:/ && / wr=1/ && / len=4/ { print prev; exit }
		/ kp_acc:/ { prev = "acc" } / kp_sync:/ { prev = "sync" }' "$T/trace")
	diag "un-optimizing $laddr (byte $b1, then $b2): before the tail write: $seq"
	check "un-optimizing a site syncs every CPU after the int3, before the other bytes" \
		eval '[ "$b1" = e9 ] && [ "$b2" = 0f ] && [ "$seq" = sync ]'
else
	skip "sync after the int3 when un-optimizing" "no uprobe_access_mm() or arch_uprobe_text_sync()"
fi
ev_clear
check_klog
exit 0

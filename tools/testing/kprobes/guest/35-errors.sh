#!/bin/sh
# register_kprobe()/register_kretprobe() error paths, through insmod of
# kp_probe.ko: a failed registration makes its init fail, so insmod fails,
# and kp_probe logs the error code ("kp_probe: register ... failed: error -N").
# busybox insmod's own message depends on its errno table (EINVAL reads
# "invalid module parameters"), so the code is taken from the kernel log.
#
#   unknown symbol                         -> ENOENT (-2)
#   unknown symbol in a loaded module      -> ENOENT
#   offset inside an instruction           -> x86: EILSEQ (-84); arm64:
#                                             EINVAL (-22), as upstream's
#                                             arm64 refuses an address that
#                                             is not a multiple of 4 (32-bit
#                                             arm's too, in ARM mode);
#                                             riscv64: EILSEQ, upstream's
#                                             riscv decodes from the entry;
#                                             ppc64le: EINVAL, as arm64
#                                             s390x: EINVAL, upstream's
#                                             s390 decodes from the entry
#   kretprobe away from the function entry -> EINVAL (-22)
#   freed init text (kernel_init_freeable) -> EINVAL; make test boots x86
#                                             with pti=on, which unmaps it,
#                                             so reading it unguarded oopses
#   kretprobe on __switch_to               -> x86: EINVAL (a kprobe is
#                                             fine), x86's kretprobe
#                                             blacklist; arm64 has none;
#                                             riscv: EINVAL for a kprobe
#                                             too (.irqentry.text), 32-bit
#                                             arm as well (its entry text)
#                                             and takes it, as upstream
#
# Instruction boundaries: kp_target_asm (kp_target.ko) is hand-written
# (see kp_target_asm.S).  x86: [endbr64,] 8 x nop, a 10-byte movabs, ret;
# offset 6 is a nop in the middle of the function and offset 15 is inside
# the movabs, with IBT or without; i386: 8 x nop, a 5-byte movl, ret:
# offset 6 again, and 10 inside the movl.  arm64: bti c, 4 x nop, ...; offset 8 is
# a nop and offset 10 is inside it.  riscv64 and 32-bit arm: 4 x nop (4
# bytes each), ...; the same two offsets.  ppc64le: 6 x nop, ...; offset
# 20 is a nop (powerpc takes the first 16 bytes for the function's entry,
# where a kretprobe may go) and offset 22 is inside it.
# s390x: 4 x nopr (2 bytes each), a 6-byte lgrl at 8, ...; offset 4 is a
# nop and offset 10 is inside the lgrl.
# kernel_clone+1: on x86 assumes kernel_clone starts with a multi-byte
# instruction, which holds for our config (X86_KERNEL_IBT=y: endbr64; with
# FUNCTION_TRACER it would be the 5-byte __fentry__ call); on arm64 it is
# inside the first (4-byte) instruction whatever it is.
. /kptest/lib.sh

case $(uname -m) in
x86_64)
	EILSEQ=-84	# inside an instruction
	NOP=6		# a nop inside kp_target_asm
	INSIDE=15	# inside kp_target_asm's movabs
	;;
i?86)
	EILSEQ=-84
	NOP=6
	INSIDE=10	# inside kp_target_asm's movl (no movabs on i386)
	;;
aarch64)
	EILSEQ=-22
	NOP=8
	INSIDE=10
	;;
riscv64)
	EILSEQ=-84
	NOP=8
	INSIDE=10
	;;
ppc64le)
	EILSEQ=-22
	NOP=20
	INSIDE=22
	;;
armv7l)
	EILSEQ=-22
	NOP=8
	INSIDE=10
	;;
s390x)
	EILSEQ=-22
	NOP=4
	INSIDE=10
	;;
*)
	x86_64_only "no instruction boundaries known here (kp_target.ko is x86, arm64, riscv64, ppc64le, 32-bit arm and s390x assembly)"
	;;
esac

need "$KP_LIST"

# refused DESCRIPTION ERRNO PARAMS...: insmod kp_probe.ko PARAMS fails, and
# the registration's error was ERRNO (e.g. -84).
refused() {
	_d=$1
	_e=$2
	shift 2
	if probe_load "$@" > "$KP_TMP/diag" 2>&1; then
		notok "$_d: insmod kp_probe.ko $* fails"
		diag "it registered:"
		klog_since | grep -F kp_probe | sed 's/^/#   /'
		unload kp_probe
		return
	fi
	ok "$_d: insmod kp_probe.ko $* fails"
	_got=$(probe_error)
	check "$_d: the error is $_e (got '$_got')" test "$_got" = "$_e" ||
		diag_file "$KP_TMP/diag" "insmod"
}

refused "unknown symbol" -2 sym=kp_no_such_symbol_at_all
refused "unknown symbol in kp_target (not loaded)" -2 sym=kp_target:kp_target_func
refused "kernel_clone+1, inside its first instruction" $EILSEQ sym=kernel_clone offset=1
check "no probe on kernel_clone left in the list" test -z "$(list_sym kernel_clone)" || show_list

if grep -qw pti=on /proc/cmdline; then
	check "page-table isolation is on (pti=on)" \
		sh -c "dmesg | grep -q 'page tables isolation: enabled'"
fi
refused "freed init text (kernel_init_freeable)" -22 sym=kernel_init_freeable
if [ "$(uname -m)" = riscv64 ]; then
	# riscv's __switch_to is in .irqentry.text, which riscv's own
	# arch_populate_kprobe_blacklist() refuses (upstream's arch code).
	refused "kprobe on __switch_to (riscv: .irqentry.text)" -22 sym=__switch_to
	refused "kretprobe on __switch_to (riscv: .irqentry.text)" -22 sym=__switch_to ret=1
elif [ "$(uname -m)" = armv7l ]; then
	# 32-bit arm's __switch_to is in its entry text, which arm's own
	# arch_within_kprobe_blacklist() refuses (upstream's arch code).
	refused "kprobe on __switch_to (arm: entry text)" -22 sym=__switch_to
	refused "kretprobe on __switch_to (arm: entry text)" -22 sym=__switch_to ret=1
elif is_x86; then
	refused "kretprobe on __switch_to" -22 sym=__switch_to ret=1
elif check "kretprobe on __switch_to registers (no kretprobe blacklist here)" \
	probe_load sym=__switch_to ret=1; then
	_b=$(probe_count hits)
	sleep 1
	check "kretprobe on __switch_to fires" test "$(probe_count hits)" -gt "$_b"
	check "rmmod kp_probe (kretprobe on __switch_to)" unload kp_probe
fi
if [ "$(uname -m)" != riscv64 ] && [ "$(uname -m)" != armv7l ] &&
	check "kprobe on __switch_to registers" probe_load sym=__switch_to post=0; then
	_b=$(probe_count hits)
	sleep 1
	check "kprobe on __switch_to fires" test "$(probe_count hits)" -gt "$_b"
	check "rmmod kp_probe (__switch_to)" unload kp_probe
fi

if check "insmod kp_target.ko" load kp_target; then
	refused "unknown symbol in a loaded module" -2 sym=kp_target:kp_no_such_symbol
	refused "kp_target_asm+$INSIDE, inside an instruction" $EILSEQ sym=kp_target_asm offset=$INSIDE
	refused "kretprobe on kp_target_asm+$NOP, not the function entry" -22 \
		sym=kp_target_asm offset=$NOP ret=1

	# The control: a kprobe on an instruction boundary inside the function
	# is fine, and fires.
	if check "kprobe on kp_target_asm+$NOP (a nop) registers" probe_load sym=kp_target:kp_target_asm offset=$NOP; then
		line=$(list_sym kp_target_asm k)
		diag "list: $line"
		hex=$(printf 0x%x "$NOP")	# the list's offset is hex
		check "list shows kp_target_asm+$hex" \
			test "$(echo "$line" | awk '{ print $3 }')" = "kp_target_asm+$hex" || show_list
		check "a breakpoint probe (not an ftrace site) is not [FTRACE]" \
			test -z "$(echo "$line" | grep -F '[FTRACE]')"
		d=$(delta_calls hits 3)
		check "kprobe on kp_target_asm+$NOP fires (3 calls, $d hits)" test "$d" = 3
		d=$(delta_calls post_hits 3)
		check "its post_handler runs (3 calls, $d hits)" test "$d" = 3
		check "rmmod kp_probe" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	fi
	check "rmmod kp_target" unload kp_target || diag_file "$KP_TMP/rmmod.out"
else
	diag_file "$KP_TMP/insmod.out" "insmod kp_target.ko"
fi
check "no probe on kp_target_asm left in the list" test -z "$(list_sym kp_target_asm)" || show_list
check_klog
exit 0

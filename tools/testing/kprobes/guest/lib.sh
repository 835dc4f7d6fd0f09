# Shared helpers for the kprobes guest shell tests (busybox sh).  Installed
# at /kptest/lib.sh; a test sources it with ". /kptest/lib.sh".
#
# Output contract (tools/harness/guest/init): a result is a line
# "ok - <what>" or "not ok - <what>"; "ok - <what> # SKIP <why>" is a skip;
# every other line is a comment.  Never print the kernel-log alarm words the
# host scans comments for (see tools/harness/summarize.py) unless the kernel
# really printed them.

KP_DBG=/sys/kernel/debug
KP_DIR=$KP_DBG/kprobes
KP_LIST=$KP_DIR/list
KP_ENABLED=$KP_DIR/enabled
KP_BLACKLIST=$KP_DIR/blacklist
KP_STATS=$KP_DIR/stats
KP_MODS=/kptest/modules
KP_PROBE_DIR=$KP_DBG/kp_probe
KP_TARGET_CALL=$KP_DBG/kp_target/call
KP_TMP=/tmp/kptest.$$
KP_SEQ=0
KP_MARK=
mkdir -p "$KP_TMP"

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
skip() { echo "ok - $1 # SKIP $2"; }
diag() { echo "# $*"; }

# diag_file FILE [TITLE]: show a file (or "(empty)") as comment lines.
diag_file() {
	[ -n "${2:-}" ] && echo "# $2:"
	if [ -s "$1" ]; then
		sed 's/^/#   /' "$1"
	else
		echo "#   (empty)"
	fi
}

# check DESCRIPTION COMMAND...: one result from a command's exit status.
check() {
	_d=$1
	shift
	if "$@"; then ok "$_d"; return 0; fi
	notok "$_d"
	return 1
}

# is_uint VALUE: a decimal number.
is_uint() {
	case "$1" in ''|*[!0-9]*) return 1 ;; esac
	return 0
}

# forks N: fork (and exec) N processes; each is one kernel_clone().  The
# slash in the path makes busybox sh fork even for one of its applets.
forks() {
	_i=0
	while [ "$_i" -lt "$1" ]; do
		/bin/true
		_i=$((_i + 1))
	done
}

# Kernel log: kmark writes a unique marker line; klog_since [MARK] prints
# what the kernel logged after MARK (default: the latest marker), or all of
# it when the marker is missing.  KP_START marks the start of the test.
kmark() {
	KP_SEQ=$((KP_SEQ + 1))
	KP_MARK="kptest-mark $$.$KP_SEQ end"
	echo "$KP_MARK" 2>/dev/null > /dev/kmsg || KP_MARK=
}
klog_since() {
	dmesg | awk -v m="${1-$KP_MARK}" '{ a[n++] = $0 } m != "" && index($0, m) { n = 0 }
		END { for (i = 0; i < n; i++) print a[i] }'
}
# klog_bad: lines since the start of the test that mean the kernel is unhappy.
klog_bad() {
	klog_since "$KP_START" | grep -E 'BUG:|WARNING:|Oops|general protection|Call Trace:|kretprobe BUG|UBSAN:|possible recursive|circular locking'
}
kmark
KP_START=$KP_MARK

# load MODULE [PARAM=VALUE...]: insmod /kptest/modules/MODULE.ko, its
# messages in $KP_TMP/insmod.out.
load() {
	_m=$1
	shift
	insmod "$KP_MODS/$_m.ko" "$@" > "$KP_TMP/insmod.out" 2>&1
}
# unload MODULE: rmmod, its messages in $KP_TMP/rmmod.out.
unload() {
	rmmod "$1" > "$KP_TMP/rmmod.out" 2>&1
}
is_loaded() {
	grep -q "^$1 " /proc/modules
}

# probe_load [PARAM=VALUE...]: load kp_probe.ko; say what failed if it did.
probe_load() {
	kmark
	if load kp_probe "$@"; then
		return 0
	fi
	diag "insmod kp_probe.ko $* failed:"
	diag_file "$KP_TMP/insmod.out"
	klog_since | grep -F kp_probe | sed 's/^/#   /'
	return 1
}

# probe_error: the error code kp_probe.ko logged for its last failed
# registration ("-84"), empty when there is none.
probe_error() {
	klog_since | sed -n 's/.*kp_probe: register .* failed: error \(-[0-9]*\).*/\1/p' | tail -n 1
}

# probe_count FILE: a kp_probe counter (hits, post_hits, entry_hits, nmissed).
probe_count() {
	cat "$KP_PROBE_DIR/$1" 2>/dev/null
}

# list_sym SYMBOL [TYPE]: list lines of probes on SYMBOL+0x... (type k or r).
# Fields: $1 address, $2 type, $3 symbol+0xoffset, then the module name
# (probes in modules) and the status tags.
list_sym() {
	awk -v s="$1+0x" -v t="${2:-}" 'index($3, s) == 1 && (t == "" || $2 == t)' "$KP_LIST"
}

# Upstream's hex formats for /proc/kallsyms and the list (%px: 16 digits).
is_hex() {
	case "$1" in ''|*[!0-9a-f]*) return 1 ;; esac
	return 0
}

# ksym_addr SYMBOL: its address from /proc/kallsyms (first match).
ksym_addr() {
	awk -v s="$1" '$3 == s { print $1; exit }' /proc/kallsyms
}

# hexdiff A B: A - B for two hex addresses that differ by less than 2^31,
# computed on their low 32 bits (shell arithmetic is signed 64-bit).
hexdiff() {
	_a=$(echo "$1" | sed 's/^0x//; s/.*\(........\)$/\1/')
	_b=$(echo "$2" | sed 's/^0x//; s/.*\(........\)$/\1/')
	_r=$(((0x$_a - 0x$_b) & 0xffffffff))
	echo $((_r >= 2147483648 ? _r - 4294967296 : _r))
}

# Leave the kernel as we found it whatever happened: our modules out,
# kprobes enabled.
kp_cleanup() {
	for _m in kp_probe kprobe_example kretprobe_example wprobe_example kp_target; do
		is_loaded "$_m" && rmmod "$_m" 2>/dev/null
	done
	[ -w "$KP_ENABLED" ] && [ "$(cat "$KP_ENABLED" 2>/dev/null)" != 1 ] &&
		echo 1 > "$KP_ENABLED"
	rm -rf "$KP_TMP"
}
trap kp_cleanup EXIT

# s390_cc_lost: on s390x, does a probed instruction stepped from its slot
# lose the condition code it sets?  QEMU 7.2's TCG (Debian 12's) raises
# the PER instruction-fetch event that ends s390's step with the condition
# code of before the instruction, so the branch after a stepped compare
# goes the wrong way, on any kernel.  Checked with kp_probe.ko on the ltgr
# of kp_target_cc() (kp_target.ko: condition code 0 before it, 2 after it,
# then a jnz; hand-written, so no kprobe event may go there): true, with
# the reason in $s390_cc_why, when the function returns 1 unprobed and 0
# with the probe hit.
s390_cc_why=
s390_cc_lost() {
	_lost=
	load kp_target || return 1
	echo 1 > "$KP_TARGET_CALL"
	_cc0=$(cat $KP_DBG/kp_target/cc)
	if load kp_probe sym=kp_target:kp_target_cc offset=6; then
		echo 1 > "$KP_TARGET_CALL"
		_cc1=$(cat $KP_DBG/kp_target/cc)
		_hits=$(probe_count hits)
		unload kp_probe
		diag "kp_target_cc() returns $_cc0 unprobed, $_cc1 with a probe on its ltgr (${_hits:-?} hits)"
		[ "$_cc0" = 1 ] && [ "$_cc1" = 0 ] && [ "${_hits:-0}" -gt 0 ] && _lost=1
	fi
	unload kp_target
	[ -n "$_lost" ] || return 1
	s390_cc_why="QEMU's s390x TCG loses the condition code of an instruction stepped under PER (a probed ltgr's jnz not taken)"
	return 0
}

# need FILE: stop the test (one failure) when a file it needs is missing.
need() {
	[ -e "$1" ] && return 0
	notok "$1 exists"
	exit 1
}

# x86_64_only WHY: the rest of the script is about x86_64 code (its targets
# are x86_64 assembly, or the feature is x86_64's alone): elsewhere, one
# skip line that says why, and nothing else.
x86_64_only() {
	[ "$(uname -m)" = x86_64 ] && return 0
	skip "${0##*/} on $(uname -m)" "$1"
	exit 0
}

# is_x86: the kernel is x86, of either width.
is_x86() {
	case "$(uname -m)" in x86_64|i?86) return 0 ;; esac
	return 1
}

# x86_any WHY: the same for what both x86 widths have (x86_64 and i386
# kernels run the same x86 code of ours).
x86_any() {
	is_x86 && return 0
	skip "${0##*/} on $(uname -m)" "$1"
	exit 0
}

# show_list: the kprobes list as comment lines (after a failed check).
show_list() {
	diag_file "$KP_LIST" "$KP_LIST"
}

# ge VALUE MIN: VALUE is a number and at least MIN.
ge() {
	is_uint "$1" && [ "$1" -ge "$2" ]
}

# delta_forks COUNTER N: by how much kp_probe's COUNTER grew over N forks
# ("?" when it could not be read).  Other processes and kernel threads may
# add hits of their own, so compare with ">= N".
delta_forks() {
	_b=$(probe_count "$1")
	forks "$2"
	_a=$(probe_count "$1")
	if is_uint "$_b" && is_uint "$_a"; then
		echo $((_a - _b))
	else
		echo "?"
	fi
}

# target_call N: call kp_target_func() (and kp_target_asm()) N times.
target_call() {
	_i=0
	while [ "$_i" -lt "$1" ]; do
		echo "$_i" > "$KP_TARGET_CALL" || return 1
		_i=$((_i + 1))
	done
}

# delta_calls COUNTER N: by how much kp_probe's COUNTER grew over N calls of
# kp_target_func() ("?" when it could not be read).
delta_calls() {
	_b=$(probe_count "$1")
	target_call "$2"
	_a=$(probe_count "$1")
	if is_uint "$_b" && is_uint "$_a"; then
		echo $((_a - _b))
	else
		echo "?"
	fi
}

# defang: kernel log lines as comments, lower-cased, so that the host does
# not count an alarm the kernel printed once more through our output.
defang() {
	tr 'A-Z' 'a-z' | sed -e 's/general protection/general-protection/' \
		-e 's/possible recursive/possible-recursive/' \
		-e 's/circular locking/circular-locking/' -e 's/^/#   /'
}

# check_klog: one result, no kernel warning or oops since the test began.
check_klog() {
	_bad=$(klog_bad)
	if [ -z "$_bad" ]; then
		ok "no kernel warning or oops in the log during the test"
		return 0
	fi
	notok "no kernel warning or oops in the log during the test"
	echo "# $(echo "$_bad" | grep -c .) lines, the first (see the kernel log):"
	echo "$_bad" | head -n 5 | defang
	return 1
}

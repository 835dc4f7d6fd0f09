#!/bin/sh
# fail_function error injection (debugfs), a kprobes user: it puts a kprobe
# on the function's entry whose handler makes the function return at once
# with the injected value.
#
# The target is sethostname's system call entry, __x64_sys_sethostname
# (arm64: __arm64_sys_sethostname; every syscall is on the
# ALLOW_ERROR_INJECTION list, type ERRNO), exercised by busybox "hostname
# NAME" and by nothing else in the guest.  Checks: the function is in
# "injectable"; once injected (retval -EXDEV, probability 100, times -1)
# its kprobe is in the list and "hostname NAME" fails with EXDEV and leaves
# the name alone; with times=1 one call fails and the next succeeds;
# removed ('!func'), its kprobe leaves the list and "hostname NAME" works.
. /kptest/lib.sh

FF=$KP_DBG/fail_function
case $(uname -m) in
aarch64) func=__arm64_sys_sethostname ;;
riscv64) func=__riscv_sys_sethostname ;;
ppc64le) func=sys_sethostname ;;
armv7l)	func=sys_sethostname ;;	# 32-bit arm: no syscall wrappers
s390x)	func=__s390x_sys_sethostname ;;
i?86)	func=__ia32_sys_sethostname ;;
*)	func=__x64_sys_sethostname ;;
esac
errno=18	# EXDEV, "Invalid cross-device link": nothing else returns it here
need "$FF/inject"

old=$(hostname)
ff_cleanup() {
	echo > "$FF/inject" 2>/dev/null
	hostname "$old" 2>/dev/null
	kp_cleanup
}
trap ff_cleanup EXIT

# sethost NAME: run "hostname NAME", its output in $KP_TMP/host.out.
sethost() {
	hostname "$1" > "$KP_TMP/host.out" 2>&1
}

check "$func is listed in fail_function/injectable" \
	grep -q "^$func[[:space:]]*ERRNO" "$FF/injectable" ||
	diag "injectable has $(grep -c . "$FF/injectable") lines, sys_sethostname: $(grep sethostname "$FF/injectable")"

check "before injection: hostname kp-before succeeds" sethost kp-before ||
	diag_file "$KP_TMP/host.out"
check "before injection: the name is kp-before" test "$(hostname)" = kp-before

if ! echo "$func" > "$FF/inject"; then
	notok "inject $func"
	exit 1
fi
ok "inject $func"
check "fail_function/inject lists $func" grep -qx "$func" "$FF/inject" ||
	diag_file "$FF/inject" inject
printf '%#x\n' "-$errno" > "$FF/$func/retval"
rv=$(cat "$FF/$func/retval")	# printed "%llx": no 0x
rv=${rv#0x}
# A 32-bit kernel (32-bit arm) prints the unsigned long in 8 digits.
if is_hex "$rv" && { [ "$((0x$rv))" = "-$errno" ] ||
		     { [ ${#rv} = 8 ] && [ "$((0x$rv))" = "$(((1 << 32) - errno))" ]; }; }; then
	ok "retval reads back as -$errno ($rv)"
else
	notok "retval reads back as -$errno ($rv)"
fi
echo N > "$FF/task-filter"
echo 100 > "$FF/probability"
echo 1 > "$FF/interval"
echo 0 > "$FF/space"
echo 0 > "$FF/verbose"	# verbose would dump a stack trace per failure
echo -1 > "$FF/times"

l=$(list_sym "$func" k)
check "kprobes list shows fail_function's probe on $func" test -n "$l" || show_list
[ -n "$l" ] && diag "list: $l"

kmark
if sethost kp-injected; then
	notok "injected: hostname kp-injected fails"
else
	ok "injected: hostname kp-injected fails"
fi
diag_file "$KP_TMP/host.out" "hostname said"
check "injected: the error is EXDEV (Invalid cross-device link)" \
	grep -qi 'cross-device' "$KP_TMP/host.out"
check "injected: the name is still kp-before" test "$(hostname)" = kp-before
sethost kp-injected2
check "injected: a second call fails too (times -1)" grep -qi 'cross-device' "$KP_TMP/host.out"

# times=1: one more failure, then the calls go through.
echo 1 > "$FF/times"
sethost kp-once
check "times=1: the first call fails" grep -qi 'cross-device' "$KP_TMP/host.out" ||
	diag_file "$KP_TMP/host.out"
check "times=1: the next call succeeds" sethost kp-after-times ||
	diag_file "$KP_TMP/host.out"
check "times=1: the name is kp-after-times" test "$(hostname)" = kp-after-times

# probability=0: injected but never fires.
echo -1 > "$FF/times"
echo 0 > "$FF/probability"
check "probability=0: hostname kp-prob0 succeeds" sethost kp-prob0 ||
	diag_file "$KP_TMP/host.out"
echo 100 > "$FF/probability"

# Removal.
check "remove the injection ('!$func')" sh -c "echo '!$func' > '$FF/inject'"
check "fail_function/inject no longer lists $func" test -z "$(grep -x "$func" "$FF/inject")"
check "fail_function's probe on $func gone from the kprobes list" \
	test -z "$(list_sym "$func")" || show_list
check "after removal: hostname kp-after succeeds" sethost kp-after ||
	diag_file "$KP_TMP/host.out"
check "after removal: the name is kp-after" test "$(hostname)" = kp-after

check_klog
exit 0

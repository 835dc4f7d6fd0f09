#!/bin/sh
# Probes on ftrace call sites next to a livepatch (samples/livepatch:
# livepatch-sample.ko replaces cmdline_proc_show(), so /proc/cmdline reads
# "this has been live patched").  Both hook the function's __fentry__ site.
#  - a probe without a post handler leaves regs->ip alone, so a livepatch
#    loaded after it (its ops then runs before ours) still redirects, and
#    the probe still fires;
#  - a probe with a post handler needs regs->ip and claims it (IPMODIFY), so
#    on a livepatched function it is refused with -EBUSY, as upstream does;
#  - the other way round, the livepatch is refused while such a probe is
#    there, and /proc/cmdline stays the original.
. /kptest/lib.sh
x86_64_only "livepatch is x86_64 only"

LP=/sys/kernel/livepatch/livepatch_sample
PATCHED="this has been live patched"
need "$KP_LIST"
if ! modinfo livepatch-sample > /dev/null 2>&1; then
	notok "livepatch-sample.ko is in the guest (CONFIG_SAMPLE_LIVEPATCH=m)"
	exit 1
fi

# lp_settled: the livepatch's transition is over (bounded wait); a patch
# that was disabled leaves sysfs once it is.
lp_settled() {
	_i=0
	while [ "$_i" -lt 60 ]; do
		[ -d "$LP" ] || return 0
		[ "$(cat "$LP/transition" 2>/dev/null)" = 0 ] && return 0
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}
lp_load() {
	modprobe livepatch-sample > "$KP_TMP/modprobe.out" 2>&1 && lp_settled
}
# lp_unload: disable, wait for the transition, remove the module.
lp_unload() {
	[ -d "$LP" ] || return 0
	echo 0 > "$LP/enabled" && lp_settled
	_i=0
	while [ -d "$LP" ] && [ "$_i" -lt 30 ]; do
		sleep 1
		_i=$((_i + 1))
	done
	rmmod livepatch_sample
}
patched() {
	grep -qF "$PATCHED" /proc/cmdline
}
not_patched() {
	! patched
}
hits_grow() {
	_b=$(probe_count hits)
	cat /proc/cmdline > /dev/null
	cat /proc/cmdline > /dev/null
	_a=$(probe_count hits)
	is_uint "$_b" && is_uint "$_a" && [ "$_a" -ge $((_b + 2)) ]
}
ftrace_line() {
	list_sym cmdline_proc_show k | grep -qF '[FTRACE]'
}

# 1. Probe (pre handler only) first, then the livepatch.
check "pre-only probe on cmdline_proc_show" probe_load sym=cmdline_proc_show post=0 &&
	check "pre-only probe: on the ftrace site" ftrace_line
check "livepatch-sample loads next to a pre-only probe" lp_load ||
	diag_file "$KP_TMP/modprobe.out"
check "pre-only probe first: /proc/cmdline is the patched one" patched
check "pre-only probe first: the probe still fires" hits_grow
unload kp_probe

# 2. Livepatch there: a pre-only probe goes on, a post-handler probe not.
check "pre-only probe next to the livepatch" probe_load sym=cmdline_proc_show post=0
check "livepatch first: /proc/cmdline is the patched one" patched
check "livepatch first: the probe fires" hits_grow
unload kp_probe
kmark
check "post-handler probe on a livepatched function is refused" \
	sh -c "! insmod $KP_MODS/kp_probe.ko sym=cmdline_proc_show post=1 2>/dev/null"
check "... with -EBUSY" test "$(probe_error)" = -16
check "the refused probe left nothing in the list" \
	test -z "$(list_sym cmdline_proc_show)"
check "livepatch still in charge after the refusal" patched
check "livepatch-sample disables and unloads" lp_unload
check "livepatch gone: /proc/cmdline is the original" not_patched

# 3. Post-handler probe first: the livepatch is refused.
if check "post-handler probe on cmdline_proc_show" probe_load sym=cmdline_proc_show post=1; then
	check "the livepatch is refused while a post-handler probe is there" \
		sh -c "! modprobe livepatch-sample 2>/dev/null"
	check "... and /proc/cmdline stays the original" not_patched
	check "... and the probe fires as before" hits_grow
	unload kp_probe
fi
lp_unload 2>/dev/null

# 4. Once the post-handler probe is gone the livepatch goes on again.
check "livepatch-sample loads once the probe is gone" lp_load
check "... and patches" patched
check "livepatch-sample disables and unloads again" lp_unload
check_klog

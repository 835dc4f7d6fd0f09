#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of the extra_probe example (busybox sh, run from /extra with
# debugfs at /sys/kernel/debug): load the module, see its probe listed,
# fork a few processes, see the hit count move, unload, see the probe gone.
# Exits 0 when every check passes, 1 at the first one that fails.
set -u

sym=kernel_clone
list=/sys/kernel/debug/kprobes/list
hits=/sys/module/extra_probe/parameters/hits
loaded=0

pass() {
	echo "extra_probe: PASS: $*"
}

fail() {
	echo "extra_probe: FAIL: $*"
	[ $loaded = 1 ] && rmmod extra_probe
	exit 1
}

# The kprobes (kind k) on $sym at offset 0 in the list, whoever owns them.
show_probes() {
	# (+0x4 when the function starts with an endbr64: the probe goes after it)
	awk -v sym="$sym" '$2 == "k" && ($3 == sym "+0x0" || $3 == sym "+0x4" || $3 == sym)' "$list"
}

count_probes() {
	show_probes | wc -l
}

[ -r $list ] || fail "$list is not readable (debugfs mounted? CONFIG_KPROBES?)"
before=$(count_probes)
pass "$list readable, $before probe(s) on $sym before loading"

insmod ./extra_probe.ko symbol=$sym || fail "insmod ./extra_probe.ko symbol=$sym"
loaded=1
pass "insmod extra_probe.ko symbol=$sym"

now=$(count_probes)
[ "$now" -eq $((before + 1)) ] ||
	fail "expected $((before + 1)) probe(s) on $sym in $list, found $now"
pass "the probe on $sym is in $list:"
show_probes

[ -r $hits ] || fail "$hits is missing"
start=$(cat $hits)
pass "$hits reads $start before forking"

# Each of these forks at least once, so each goes through kernel_clone.
i=0
while [ $i -lt 5 ]; do
	/bin/true
	(/bin/true)
	i=$((i + 1))
done

end=$(cat $hits)
[ "$end" -gt 0 ] || fail "hits is $end after forking, expected more than 0"
[ "$end" -ge $((start + 5)) ] ||
	fail "hits went from $start to $end, expected at least 5 more"
pass "hits went from $start to $end after 10 forks"

rmmod extra_probe || fail "rmmod extra_probe"
loaded=0
pass "rmmod extra_probe"

now=$(count_probes)
[ "$now" -eq "$before" ] ||
	fail "expected $before probe(s) on $sym in $list after rmmod, found $now"
pass "the probe on $sym is gone from $list"

[ ! -e $hits ] || fail "$hits still exists after rmmod"
pass "$hits is gone"

echo "extra_probe: all checks passed"
exit 0

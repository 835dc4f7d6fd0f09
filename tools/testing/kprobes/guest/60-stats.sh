#!/bin/sh
# /sys/kernel/debug/kprobes/stats, our extension (not in upstream): a header
# line starting with '#', then one line per registered probe,
#   <address>  <symbol+0xoffset>  <hits>  <missed>
# whitespace separated.  With kp_probe.ko on kernel_clone, N forks raise its
# hits by at least N; the address agrees with the list's; the line goes on
# rmmod.
. /kptest/lib.sh

need "$KP_STATS"

st=$KP_TMP/stats
snap() {
	cat "$KP_STATS" > "$st" 2>&1
}
# stats_sym SYMBOL: data lines of probes on SYMBOL+0x...
stats_sym() {
	awk -v s="$1+0x" '!/^#/ && index($2, s) == 1' "$st"
}
show_stats() {
	diag_file "$st" "$KP_STATS"
}
both_uint() {
	is_uint "$1" && is_uint "$2"
}

snap
check "stats is readable" test $? = 0
check "stats starts with a '#' header line" test "$(head -n 1 "$st" | cut -c1)" = "#" || show_stats
check "no probe on kernel_clone in stats before the test" test -z "$(stats_sym kernel_clone)" || show_stats

if check "insmod kp_probe.ko sym=kernel_clone" probe_load sym=kernel_clone; then
	snap
	line=$(stats_sym kernel_clone)
	diag "stats: $line"
	check "one stats line for the probe" test "$(echo "$line" | grep -c .)" = 1 || show_stats
	# shellcheck disable=SC2086 # split the line into its fields
	set -- $line
	check "stats line has 4 fields: address symbol+0xoff hits missed" test $# = 4
	before=${3:-}
	missed=${4:-}
	check "hits and missed are numbers ('$before' '$missed')" both_uint "$before" "$missed"
	a=$(echo "${1:-}" | sed 's/^0x//')
	l=$(list_sym kernel_clone k | awk '{ print $1; exit }')
	check "stats address agrees with the list ('${1:-}' vs '$l')" test -n "$a" -a "$a" = "$l"
	so=$(echo "$line" | awk '{ print $2 }')
	lo=$(list_sym kernel_clone k | awk '{ print $3; exit }')
	check "stats symbol+offset agrees with the list ('$so' vs '$lo')" test "$so" = "$lo"

	forks 5
	snap
	after=$(stats_sym kernel_clone | awk '{ print $3 }')
	if is_uint "$before" && is_uint "$after"; then
		d=$((after - before))
	else
		d="?"
	fi
	check "5 forks raise the hits column by at least 5 ($before -> $after)" ge "$d" 5
	m=$(stats_sym kernel_clone | awk '{ print $4 }')
	check "no missed hits on kernel_clone ($m)" test "$m" = 0

	# One line per registered probe: as many data lines as the list has.
	ns=$(grep -vc '^#' "$st")
	nl=$(grep -c . "$KP_LIST")
	check "one stats line per registered probe ($ns stats, $nl list)" test "$ns" = "$nl" ||
		{ show_stats; show_list; }

	check "rmmod kp_probe" unload kp_probe || diag_file "$KP_TMP/rmmod.out"
	snap
	check "stats line gone after rmmod" test -z "$(stats_sym kernel_clone)" || show_stats
fi
exit 0

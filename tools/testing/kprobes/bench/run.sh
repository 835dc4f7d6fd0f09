#!/bin/sh
# Guest side of the kprobes benchmark (busybox sh, run from /extra): load
# kpbench.ko, feed it the kernel's text symbols, run every measure.  The
# results are the module's "kpbench: ..." console lines.
#
# kpbench.<param>=<value> on the kernel command line goes to insmod, except
# kpbench.set=<list>: which groups to run, of hits,reg,cover (default all).
# No -e: a measure that fails says so and the others still run.
set -u

d=/sys/kernel/debug/kpbench
opt=/proc/sys/debug/kprobes-optimization

# Jump optimization on or off, where the kernel has the switch.
setopt() {
	if [ -w $opt ]; then echo "$1" > $opt; fi
}

run() {
	echo "$1" > $d/run || echo "kpbench: command '$1' failed"
}

args=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^kpbench\.//p' | grep -v '^set=' | tr '\n' ' ')
groups=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^kpbench\.set=//p')
groups=,${groups:-hits,reg,cover},
want() {
	case $groups in *,$1,*) return 0 ;; esac
	return 1
}

echo "kpbench: begin $(uname -r) $(nproc) cpus, groups ${groups#,} $args"
# shellcheck disable=SC2086 # one word per parameter
insmod ./kpbench.ko $args || exit 1

# Probe hits; the int3 measures with jump optimization off.
if want hits; then
	run base
	run int3
	setopt 0
	run boost
	run kret
	run kpkret
	setopt 1
	run opt
	run optkret
	run ftrace
fi

# Candidates: every text symbol of the kernel proper (not modules, not init
# text), one per address, in address order (fixed-width hex sorts as text).
awk 'NR == FNR { if ($3 == "_stext") s = $1; if ($3 == "_etext") e = $1; next }
	NF == 3 && ($2 == "t" || $2 == "T") && $1 >= s && $1 < e { print $1 }' \
	/proc/kallsyms /proc/kallsyms | sort -u > /tmp/kpbench.syms
echo "kpbench: candidates $(wc -l < /tmp/kpbench.syms) text symbols"
cat /tmp/kpbench.syms > $d/syms

if want reg; then
	run "reg 1000"
	run "reg 10000"
fi
if want cover; then
	run "cover entry"
	run "cover inner"
fi

rmmod kpbench
echo "kpbench: end"

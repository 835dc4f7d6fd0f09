#!/bin/sh
# The documentation's examples: every command block the README and the
# documents under Documentation/trace and tools/testing/kprobes mark for the
# guest, extracted at build time by tools/harness/doc-examples.py into
# /kptest/doc (NNN.sh, and an index of "NNN FILE:LINE TAGS"), runs here as
# a reader would type it: "sh -ex" from /kptest/modules, where the example
# modules are.  One result per block, from its exit status; its output as
# comments.  The host-side checks of the other blocks (make targets,
# variables, scripts, C excerpts) come first, from /kptest/doc/host.tap.
. /kptest/lib.sh

D=/kptest/doc
T=/sys/kernel/tracing
need "$D/index"

[ -f "$D/host.tap" ] && cat "$D/host.tap"

# What one block may leave behind when it fails half-way.
doc_cleanup() {
	[ -w "$T/events/enable" ] && echo 0 > "$T/events/enable"
	[ -w "$T/tracing_on" ] && echo 1 > "$T/tracing_on"
	for f in kprobe_events uprobe_events dynamic_events; do
		[ -w "$T/$f" ] && echo > "$T/$f" 2>/dev/null
	done
	[ -w "$T/trace" ] && echo > "$T/trace"
	for m in extra_probe kprobe_example kretprobe_example wprobe_example uprobe_example; do
		is_loaded "$m" && rmmod "$m" 2>/dev/null
	done
}

while read -r id where tags; do
	why=
	for t in $tags; do
		case "$t" in
		x86_64) [ "$(uname -m)" = x86_64 ] || why="x86_64 only" ;;
		x86) is_x86 || why="x86 only" ;;
		# Our debugfs files, uprobes list or wprobes: not on stock.
		ours) [ -e "$KP_STATS" ] || why="uses interfaces of ours, not on this kernel" ;;
		# Reads a kprobe's events from the trace buffer.  riscv (6.12)
		# runs kprobe handlers in its breakpoint trap as NMIs, and its
		# ring buffer refuses writes from NMIs (riscv does not select
		# ARCH_HAVE_NMI_SAFE_CMPXCHG): upstream's limit, on stock alike.
		kprobe-trace) [ "$(uname -m)" != riscv64 ] ||
			why="riscv's ring buffer takes no events from its breakpoint trap (an NMI)" ;;
		# Puts a uprobe on the guest's busybox.  Debian's armhf busybox
		# is Thumb-2 code, which upstream's 32-bit arm uprobes refuse
		# (they take ARM code only), on stock alike.
		uprobe-busybox) [ "$(uname -m)" != armv7l ] ||
			why="the guest's busybox is Thumb-2 code, which 32-bit arm's uprobes refuse" ;;
		needs=*) command -v "${t#needs=}" > /dev/null 2>&1 ||
			why="${t#needs=} is not in the guest" ;;
		esac
	done
	if [ -n "$why" ]; then
		skip "$where: the example runs" "$why"
		continue
	fi
	kmark
	(cd "$KP_MODS" && sh -ex "$D/$id.sh") < /dev/null > "$KP_TMP/out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		ok "$where: the example runs"
	else
		notok "$where: the example runs (exit status $rc)"
	fi
	diag_file "$KP_TMP/out" "$where"
	doc_cleanup
done < "$D/index"

check_klog

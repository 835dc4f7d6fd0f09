#!/bin/bash
# make bench: what probes cost on our kernel and on stock 6.12, in one table.
#
#   bench.sh
#
# Builds both kernels with the same config (the harness's, with the
# debugging aids off by tools/testing/kprobes/bench/bench.config, so they are
# separate from build/ours and build/stock) in build/bench/{stock,ours}, the
# benchmark module against each,
# and boots each three times: under -icount (the guest clock counts
# instructions, so the figures repeat exactly), without it (wall-clock
# nanoseconds, hit costs only), and on two host threads (uprobe hits from
# two threads against one).  Writes build/bench/bench.{md,csv} and prints the
# table; a complete run also writes it into tools/testing/kprobes/bench/
# README.md and its headline rows into README.md (KP_BENCH_DOC below).
#
# KP_BENCH_SET=uhits,hits (say) limits the icount run to those groups of
# tools/testing/kprobes/bench/run.sh; KP_BENCH_WALL=0 skips the wall-clock
# and two-vCPU runs, KP_BENCH_WALL=multi runs only the two-vCPU ones.
# KP_BENCH_SIDES="stock ours" picks the kernels; KP_BENCH_REPEAT=1 boots
# each icount run a second time and fails if any figure differs.
#
# ARCH=arm64 (make bench ARCH=arm64) does the same for arm64, cross built,
# on qemu-system-aarch64, in build/arm64/bench, with its own defaults: the
# icount run only (KP_BENCH_WALL=0 and KP_BENCH_TESTCFG=0 unless asked
# for), and run.sh's arm64 groups; its table goes to its own section of
# tools/testing/kprobes/bench/README.md, never to README.md's headline.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

h=$top/tools/harness
src=$top/tools/testing/kprobes/bench
if [ "$kp_arch" = x86_64 ]; then
	out=$top/build/bench
	trees=$top/build
	wall=${KP_BENCH_WALL:-1}
	testcfg=${KP_BENCH_TESTCFG:-1}
	runs="icount wall multi testcfg"
	timeout=${KP_BENCH_TIMEOUT:-1800}
else
	out=$top/build/$kp_arch/bench
	trees=$top/build/$kp_arch
	wall=${KP_BENCH_WALL:-0}
	testcfg=${KP_BENCH_TESTCFG:-0}
	runs=icount
	[ "$wall" = 0 ] || runs+=" wall multi"
	[ "$testcfg" = 0 ] || runs+=" testcfg"
	# Both icount boots share the host's cores; arm64's run longer.
	timeout=${KP_BENCH_TIMEOUT:-3600}
fi
sides=${KP_BENCH_SIDES:-stock ours}
jobs=${KP_JOBS:-$(nproc)}
mkdir -p "$out"

# Kernel and benchmark module of one side; a side that fails to build is
# reported as such in the table instead of stopping the other.
build_side() {
	local side=$1 bdir=$out/$1
	KP_CONFIG_EXTRA=$src/bench.config "$h/prepare.sh" "$bdir" "$side" &&
	say "building $side kernel (-j$jobs)" &&
	make -C "$bdir/linux" -j"$jobs" -s "${kp_image##*/}" modules &&
	rm -rf "$bdir/oot/extra" && mkdir -p "$bdir/oot/extra" &&
	rsync -a --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' "$src/" "$bdir/oot/extra/" &&
	make -C "$bdir/linux" -s M="$bdir/oot/extra" modules &&
	mkdir -p "$bdir/oot/bin" &&
	"$kp_ucc" -static -O2 -Wall -pthread -o "$bdir/oot/bin/upbench_loop" "$src/upbench_loop.c"
}

# The probe set of "reg" and "cover", the same on both sides: the kernel
# proper's functions that every built kernel has, under a name that is
# unique in each (two static functions of one name cannot be told apart).
probe_set() {
	local side
	for side in "${built[@]}"; do
		awk '($2 == "t" || $2 == "T") && $3 ~ /^[A-Za-z_]/ { print $3 }' \
			"$out/$side/linux/System.map" | sort | uniq -u
	done | sort | uniq -c | awk -v n=${#built[@]} '$1 == n { print $2 }' > "$out/probe-set.txt"
	say "probe set: $(wc -l < "$out/probe-set.txt") functions common to: ${built[*]}"
}

# One boot: icount (every measure) or wall (hit costs, best of 3 loops);
# TAG names a second icount run.  The guest has one vCPU (the later -smp
# wins): with two, QEMU's round-robin TCG does not repeat an -icount run
# exactly.  With one, and the guest's clock starting at a fixed date (the
# date feeds the guest's random numbers, hence address-space layouts), the
# whole console log repeats byte for byte.
run_side() {
	local side=$1 mode=$2 tag=${3:-}
	local log=$out/$side-$mode$tag.log qargs="-smp 1" cmdline=""
	local tcg=single
	if [ "$mode" = icount ]; then
		qargs+=" -icount shift=0,sleep=off -rtc base=2024-01-01T00:00:00,clock=vm"
		cmdline=${KP_BENCH_SET:+kpbench.set=$KP_BENCH_SET}
	elif [ "$mode" = multi ]; then
		# Two vCPUs on two host threads: uprobe hits scaling.
		qargs="" tcg=multi cmdline="kpbench.set=umulti"
	else
		cmdline="kpbench.set=hits,watch kpbench.reps=3"
	fi
	KP_QEMU_ARGS=$qargs KP_CMDLINE=$cmdline KP_TCG_THREAD=$tcg \
		KP_TIMEOUT=$timeout \
		"$h/boot.sh" "$out/$side" extra "$log" >/dev/null
	grep -a -o 'kpbench: .*' "$log" | tr -d '\r' > "$out/$side-$mode$tag.txt" || true
	grep -q '^kpbench: end' "$out/$side-$mode$tag.txt" ||
		say "$side $mode run did not finish, see $log"
}

built=()
for side in $sides; do
	rm -f "$out/$side"-*.txt "$out/$side"-*.log "$out/$side.failed"
	if build_side "$side"; then
		built+=("$side")
	else
		say "$side kernel or module did not build"
		echo "build failed" > "$out/$side.failed"
	fi
done

[ ${#built[@]} = 0 ] || probe_set
for side in "${built[@]}"; do
	cp "$out/probe-set.txt" "$out/$side/oot/extra/" &&
	"$h/initramfs.sh" "$out/$side" "$src"
done

# The icount runs do not depend on host load: run them side by side, the
# repeat too.
for side in "${built[@]}"; do
	run_side "$side" icount &
	if [ "${KP_BENCH_REPEAT:-0}" = 1 ]; then
		run_side "$side" icount .repeat &
	fi
done
wait
# The wall-clock runs do: one at a time.
for side in "${built[@]}"; do
	[ "$wall" = 0 ] && break
	[ "$wall" = multi ] || run_side "$side" wall
	run_side "$side" multi
done

# The test config (lockdep, the atomic-sleep checks) in the trees make test
# and make stock build, with the benchmark module as their EXTRA: its hit
# costs and the fork rows under -icount, KUnit off and one vCPU as above; then ours's KUnit
# suites under -icount on two vCPUs, which must pass (kpo_test_churn once
# never ended there, while it passed in seconds without icount).
# KP_BENCH_TESTCFG=0 skips this part.
kunit_rc=0
testcfg_side() {
	local side=$1 tree=$trees/$1
	if [ "$side" = ours ]; then
		make -C "$top" --no-print-directory -s initramfs EXTRA="$src" >/dev/null
	else
		make -C "$top" --no-print-directory -s stock EXTRA="$src" >/dev/null
	fi || { say "$side test-config kernel did not build"; return 0; }
	# The fork rows' program, which make test's guest does not have.
	mkdir -p "$tree/oot/bin" &&
	"$kp_ucc" -static -O2 -Wall -pthread -o "$tree/oot/bin/upbench_loop" \
		"$src/upbench_loop.c" &&
	"$h/initramfs.sh" "$tree" "$src" >/dev/null ||
		{ say "$side test-config guest programs did not build"; return 0; }
	KP_QEMU_ARGS="-smp 1 -icount shift=0,sleep=off -rtc base=2024-01-01T00:00:00,clock=vm" \
		KP_CMDLINE="kpbench.set=hits,watch,ufork kunit.enable=0" \
		KP_TIMEOUT=$timeout \
		"$h/boot.sh" "$tree" extra "$out/$side-testcfg.log" >/dev/null
	grep -a -o 'kpbench: .*' "$out/$side-testcfg.log" | tr -d '\r' > "$out/$side-testcfg.txt" || true
	[ "$side" = ours ] || return 0
	KP_QEMU_ARGS="-icount shift=0,sleep=off" KP_TIMEOUT=$timeout \
		"$h/boot.sh" "$tree" kunit "$out/ours-kunit-icount.log" >/dev/null
	if "$h/summarize.py" "$out/ours-kunit-icount.log" "$tree/linux/.config"; then
		say "ours: KUnit under -icount passed"
	else
		say "ours: KUnit under -icount failed, see $out/ours-kunit-icount.log"
		kunit_rc=1
	fi
}
if [ "$testcfg" = 1 ]; then
	for side in $sides; do
		rm -f "$out/$side"-testcfg.* "$out/$side"-kunit-icount.log
		testcfg_side "$side"
	done
fi

version=$(make -C "$out/${built[0]:-stock}/linux" -s kernelversion 2>/dev/null || echo unknown)

# The documents get the table of a complete run only: both kernels, every
# group, the wall-clock, two-vCPU and test-config runs, every boot to its
# end (arm64: the icount runs, and the others only when asked for).
# KP_BENCH_DOC=1 writes them anyway, KP_BENCH_DOC=0 never.  arm64's table
# has its own markers in the document and no headline rows in README.md.
doc=$src/README.md
partial=
[ -z "${KP_BENCH_SET:-}" ] || partial+=" KP_BENCH_SET=$KP_BENCH_SET"
[ "${KP_BENCH_SIDES:-stock ours}" = "stock ours" ] || partial+=" KP_BENCH_SIDES=\"$KP_BENCH_SIDES\""
if [ "$kp_arch" = x86_64 ]; then
	[ "$wall" = 1 ] || partial+=" KP_BENCH_WALL=$KP_BENCH_WALL"
	[ "$testcfg" = 1 ] || partial+=" KP_BENCH_TESTCFG=$KP_BENCH_TESTCFG"
	command="${partial# }${partial:+ }make bench"
	readme=$top/README.md
else
	command="${partial# }${partial:+ }${KP_BENCH_WALL:+KP_BENCH_WALL=$KP_BENCH_WALL }${KP_BENCH_TESTCFG:+KP_BENCH_TESTCFG=$KP_BENCH_TESTCFG }make bench ARCH=$kp_arch"
	readme=
fi
for side in stock ours; do
	for run in $runs; do
		grep -qs '^kpbench: end' "$out/$side-$run.txt" || partial+=" ($side $run run unfinished)"
	done
done
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
if [ "${KP_BENCH_DOC:-}" = 1 ] || { [ -z "$partial" ] && [ "${KP_BENCH_DOC:-}" != 0 ]; }; then
	"$h/bench_table.py" "$out" "$version" "$doc" "$readme" "$command" "$commit"
	if [ -n "$readme" ]; then
		say "the table is in ${doc#"$top"/}, its headline rows in README.md"
	else
		say "the table is in ${doc#"$top"/}, section $kp_arch"
	fi
else
	"$h/bench_table.py" "$out" "$version"
	say "a partial run ($partial ), so ${doc#"$top"/} and README.md keep their table (KP_BENCH_DOC=1 writes it)"
fi

say "make bench took ${SECONDS}s"
rc=$kunit_rc
if [ "${KP_BENCH_REPEAT:-0}" = 1 ]; then
	for side in "${built[@]}"; do
		if diff "$out/$side-icount.txt" "$out/$side-icount.repeat.txt" >&2; then
			say "$side: icount figures repeat exactly"
		else
			say "$side: icount figures differ between two runs"
			rc=1
		fi
	done
fi
exit $rc

#!/bin/bash
# Build (not boot) our kernel in the configurations a user can pick besides
# the test config (which has modules, ftrace, jump optimization,
# kretprobes and PREEMPT=y, "full"): each fragment in config/variants/
# on top of the test config, in build/cfg-NAME; and arm64 with Debian's
# cross compiler, where kprobes must switch off cleanly.
#
#   configs.sh [NAME...]    default: every variant, then arm64
#
# Prints one line per configuration and "configs: N built, N failed".
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

variants=$harness/config/variants
jobs=${KP_JOBS:-$(nproc)}
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in "$variants"/*.config; do
		n=${f##*/}
		names+=("${n%.config}")
	done
	names+=(arm64)
fi

built=0
failed=0
results=()

# build_one NAME: configure and build one variant; its log in the build dir.
build_one() {
	local n=$1 bdir=$top/build/cfg-$1 start=$SECONDS rc=0
	mkdir -p "$bdir"
	if [ "$n" = arm64 ]; then
		"$harness/deps.sh" gcc-aarch64-linux-gnu
		export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
		KP_CONFIG_FRAGS=$harness/config/arm64.frag \
			"$harness/prepare.sh" "$bdir" ours > "$bdir/build.log" 2>&1 || rc=$?
		if [ $rc = 0 ] && { ! grep -q '^CONFIG_HAVE_KPROBES=y' "$bdir/linux/.config" ||
				    grep -q '^CONFIG_KPROBES=y' "$bdir/linux/.config"; }; then
			echo "arm64: want HAVE_KPROBES=y and KPROBES off" >> "$bdir/build.log"
			rc=1
		fi
		if [ $rc = 0 ] && { ! grep -q '^CONFIG_ARCH_SUPPORTS_UPROBES=y' "$bdir/linux/.config" ||
				    grep -q '^CONFIG_UPROBES=y' "$bdir/linux/.config"; }; then
			echo "arm64: want ARCH_SUPPORTS_UPROBES=y and UPROBES off" >> "$bdir/build.log"
			rc=1
		fi
	else
		[ -f "$variants/$n.config" ] || die "no variant $n in $variants"
		KP_CONFIG_EXTRA=$variants/$n.config \
			"$harness/prepare.sh" "$bdir" ours > "$bdir/build.log" 2>&1 || rc=$?
	fi
	if [ $rc = 0 ]; then
		local targets=(vmlinux)
		grep -q '^CONFIG_MODULES=y' "$bdir/linux/.config" && targets+=(modules)
		nice make -C "$bdir/linux" -j"$jobs" -s "${targets[@]}" >> "$bdir/build.log" 2>&1 || rc=$?
	fi
	unset ARCH CROSS_COMPILE
	if [ $rc = 0 ]; then
		built=$((built + 1))
		results+=("ok     $n ($((SECONDS - start)) s)")
	else
		failed=$((failed + 1))
		results+=("FAILED $n ($((SECONDS - start)) s, see build/cfg-$n/build.log)")
	fi
	say "${results[-1]}"
}

"$harness/deps.sh"
for n in "${names[@]}"; do
	build_one "$n"
done
printf '%s\n' "${results[@]}"
echo "configs: $built built, $failed failed"
[ $failed = 0 ]

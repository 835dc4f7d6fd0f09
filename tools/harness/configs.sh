#!/bin/bash
# Build (not boot) our kernel in the configurations a user can pick besides
# the test config (which has modules, ftrace, jump optimization,
# kretprobes and PREEMPT=y, "full"): each fragment in config/variants/
# on top of the test config, in build/cfg-NAME; and the other
# architectures with Debian's cross compilers (installed on demand), each
# a small kernel (config/cross/common.config and NAME.config on top of
# tinyconfig) with KPROBES, KRETPROBES, UPROBES, KPROBE_EVENTS and
# UPROBE_EVENTS on, running upstream's architecture code on our core.
#
#   configs.sh [NAME...]    default: every variant, then every cross build
#
# Prints one line per configuration and "configs: N built, N failed".
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

variants=$harness/config/variants
cross=$harness/config/cross
jobs=${KP_JOBS:-$(nproc)}

# The cross builds: NAME (Debian's architecture) ARCH CROSS_COMPILE package
# ("-": no prefix, the host's compiler builds it).
cross_builds=(
	"arm64 arm64 aarch64-linux-gnu- gcc-aarch64-linux-gnu"
	"riscv64 riscv riscv64-linux-gnu- gcc-riscv64-linux-gnu"
	"ppc64el powerpc powerpc64le-linux-gnu- gcc-powerpc64le-linux-gnu"
	"s390x s390 s390x-linux-gnu- gcc-s390x-linux-gnu"
	"armhf arm arm-linux-gnueabihf- gcc-arm-linux-gnueabihf"
	"i386 i386 - gcc"
)
# What every cross build must have on.
cross_want=(KPROBES KRETPROBES UPROBES KPROBE_EVENTS UPROBE_EVENTS)

# cross_line NAME: the line of cross_builds for NAME, or nothing.
cross_line() {
	local l
	for l in "${cross_builds[@]}"; do
		[ "${l%% *}" = "$1" ] && echo "$l" && return
	done
	return 0
}

names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in "$variants"/*.config; do
		n=${f##*/}
		names+=("${n%.config}")
	done
	for l in "${cross_builds[@]}"; do
		names+=("${l%% *}")
	done
fi

built=0
failed=0
results=()

# prepare_cross NAME BUILD_DIR: lay out and configure a cross build tree,
# and check that the probe options are on.
prepare_cross() {
	local n=$1 bdir=$2 line opt rc=0
	read -r _ arch cc pkg <<< "$(cross_line "$n")"
	[ "$cc" = - ] && cc=
	"$harness/deps.sh" "$pkg" || return 1
	ARCH=$arch CROSS_COMPILE=$cc KP_BUILD_ONLY=1 \
		KP_CONFIG_FRAGS="$cross/common.config $cross/$n.config" \
		"$harness/prepare.sh" "$bdir" ours || return 1
	for opt in "${cross_want[@]}"; do
		if ! grep -qx "CONFIG_$opt=y" "$bdir/linux/.config"; then
			echo "$n: CONFIG_$opt is not y" >&2
			rc=1
		fi
	done
	return $rc
}

# build_one NAME: configure and build one configuration; its log in the
# build dir.
build_one() {
	local n=$1 bdir=$top/build/cfg-$1 start=$SECONDS rc=0 line
	local env=()
	mkdir -p "$bdir"
	line=$(cross_line "$n")
	if [ -n "$line" ]; then
		read -r _ arch cc _ <<< "$line"
		[ "$cc" = - ] && cc=
		env=(ARCH="$arch" CROSS_COMPILE="$cc")
		prepare_cross "$n" "$bdir" > "$bdir/build.log" 2>&1 || rc=$?
	else
		[ -f "$variants/$n.config" ] || die "no configuration $n (a variant or a cross build)"
		env=(ARCH=x86_64)
		KP_CONFIG_EXTRA=$variants/$n.config \
			"$harness/prepare.sh" "$bdir" ours > "$bdir/build.log" 2>&1 || rc=$?
	fi
	if [ $rc = 0 ]; then
		local targets=(vmlinux)
		grep -q '^CONFIG_MODULES=y' "$bdir/linux/.config" && targets+=(modules)
		env "${env[@]}" nice make -C "$bdir/linux" -j"$jobs" -s "${targets[@]}" \
			>> "$bdir/build.log" 2>&1 || rc=$?
	fi
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

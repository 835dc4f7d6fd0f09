#!/bin/bash
# Apply the series in PATCH_DIR with `git am` to a pristine upstream tree,
# build after every patch, boot the result with only the KUnit suites
# (guest mode kunit) and run checkpatch.pl on each.  Exits non-zero when a
# patch does not apply, does not build, or its boot fails (a failed KUnit
# case, a kernel warning, no clean end); checkpatch findings are reported
# (one line per patch, the messages in build/check/<patch>.checkpatch).
#
#   check-patches.sh PATCH_DIR
#
# KP_CHECK_BOOT=all (default) boots after every patch, last only after the
# last one, none never: a boot takes a few minutes under TCG.
# KP_CHECK_UPTO=N checks the first N patches only.  KP_CHECK_FROM=N starts
# at patch N after a run that checked the patches before it: they must be
# the same to the byte (the tree they give is found among that run's
# commits), and only what changed after them is rebuilt.
#
# The tree is a git repository (build/check/linux) that is reset to upstream
# (or, with KP_CHECK_FROM, to the last run's commit before that patch)
# on every run; the kernel is built out of it (O=build/check/obj), so later
# runs and later patches rebuild only what changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

pdir=$(abspath "$1")
check=$(abspath "$top/build/check")
tree=$check/linux
obj=$check/obj
tarball=${KP_UPSTREAM_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
jobs=${KP_JOBS:-$(nproc)}
frags=("$harness"/config/*.config)
git=(git -C "$tree" -c user.name=check -c user.email=check@localhost)

if [ ! -f "$tree/.git/refs/tags/pristine" ]; then
	say "extracting a pristine tree into $tree (once)"
	rm -rf "$tree"; mkdir -p "$tree"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	"${git[@]}" init -q
	# -f: upstream's .gitignore must not hide files of the tarball.
	"${git[@]}" add -f -A
	"${git[@]}" commit -q -m upstream
	"${git[@]}" tag pristine
fi
"${git[@]}" am --abort >/dev/null 2>&1 || true

# The harness's config; rerun after every patch, as one may add symbols.
configure() {
	mkdir -p "$obj"
	make -C "$tree" O="$obj" -s tinyconfig >/dev/null
	KCONFIG_CONFIG=$obj/.config "$tree/scripts/kconfig/merge_config.sh" -m \
		"$obj/.config" "${frags[@]}" >/dev/null
	make -C "$tree" O="$obj" -s olddefconfig >/dev/null
}

# boot.sh and initramfs.sh take a build directory whose linux/ holds the
# built kernel: here that is the object tree.
bootdir=$check/boot
mkdir -p "$bootdir"
ln -sfn "$obj" "$bootdir/linux"

# Upstream's startup self test of kprobe events (FTRACE_STARTUP_TEST) puts
# a kprobe on a function entry, which is an ftrace call site, and a
# kretprobe on the same function: until the patches that bring back
# HAVE_KRETPROBES and HAVE_KPROBES_ON_FTRACE are in, it can only warn.
# An empty "kprobe_event=" (no boot-time events) is upstream's own way to
# skip the tracing startup self tests: boot with it until then, and say so.
selftest_cmdline() {
	grep -q 'select HAVE_KRETPROBES' "$tree/arch/x86/Kconfig" &&
		grep -q 'select HAVE_KPROBES_ON_FTRACE' "$tree/arch/x86/Kconfig" ||
		echo "kprobe_event="
}

# Boot with the KUnit suites only and print what ran; fail on a failed
# suite or case, a kernel warning, or a guest that did not reach its end.
boot_kunit() {
	local name=$1 log=$check/$1.boot.log suites bad cases args
	"$harness/initramfs.sh" "$bootdir" >/dev/null 2>&1 ||
		{ echo "no initramfs"; return 1; }
	args=$(selftest_cmdline)
	KP_CMDLINE=$args KP_TIMEOUT=${KP_CHECK_TIMEOUT:-1800} \
		"$harness/boot.sh" "$bootdir" kunit "$log" >/dev/null 2>&1
	# KTAP: a suite's verdict is the line at the top level.
	suites=$(sed -E 's/^\[[ 0-9.]+\] //' "$log" | grep -cE '^ok [0-9]+ ' || true)
	bad=$(sed -E 's/^\[[ 0-9.]+\] //' "$log" | grep -cE '^not ok [0-9]+ ' || true)
	cases=$("$harness/summarize.py" "$log" | tail -n 1)
	echo "boots${args:+ (tracing self tests off: no kretprobes or ftrace probes yet)}, KUnit suites: $suites passed, $bad failed (cases: $cases)"
	grep -q '^kptest: done' "$log" && [ "$bad" = 0 ] &&
		[[ $cases == *" 0 failed"* ]]
}

case ${KP_CHECK_BOOT:-all} in
all|last|none) ;;
*) die "KP_CHECK_BOOT must be all, last or none" ;;
esac
patches=("$pdir"/[0-9]*.patch)
patches=("${patches[@]/*\/0000-cover-letter.patch}")
# KP_CHECK_UPTO=N stops after the Nth patch ("last" is then that one).
if [ -n "${KP_CHECK_UPTO:-}" ]; then
	patches=("${patches[@]:0:$((KP_CHECK_UPTO + 1))}")
fi
last=${patches[-1]}

# The commit of the last run that has the tree patches 1..N-1 give, found
# by applying them to pristine in a scratch index; none if they changed.
resume_commit() {
	local idx=$check/resume.index p tree_id
	rm -f "$idx"
	GIT_INDEX_FILE=$idx "${git[@]}" read-tree pristine
	for p in "$@"; do
		GIT_INDEX_FILE=$idx "${git[@]}" apply --cached "$p" || return 1
	done
	tree_id=$(GIT_INDEX_FILE=$idx "${git[@]}" write-tree)
	rm -f "$idx"
	"${git[@]}" log --format='%H %T' pristine..HEAD |
		awk -v t="$tree_id" '$2 == t { print $1; exit }'
}

from=${KP_CHECK_FROM:-1}
base=pristine
if [ "$from" -gt 1 ]; then
	# patches[0] is the cover letter's empty place.
	base=$(resume_commit "${patches[@]:1:$((from - 1))}") && [ -n "$base" ] ||
		die "patches 1-$((from - 1)) are not those of the last run: check from 1"
	say "resuming at patch $from on the last run's tree after patch $((from - 1))"
	patches=("${patches[@]:$from}")
fi
"${git[@]}" reset -q --hard "$base"
"${git[@]}" clean -q -fdx

start=$(date +%s)
findings=0
failed_boots=0
summary=()
for p in "${patches[@]}"; do
	[ -n "$p" ] || continue
	name=${p##*/}
	"${git[@]}" am -q "$p" || die "$name does not apply"
	configure
	say "building after $name"
	t=$(date +%s)
	make -C "$tree" O="$obj" -j"$jobs" -s "${kp_image##*/}" modules >"$check/$name.build.log" 2>&1 ||
		{ tail -n 30 "$check/$name.build.log" >&2; die "build fails after $name"; }
	t=$(( $(date +%s) - t ))
	(cd "$tree" && scripts/checkpatch.pl -q --no-signoff --show-types "$p") \
		>"$check/$name.checkpatch" 2>&1 || true
	total=$(grep '^total:' "$check/$name.checkpatch" || echo "total: 0 errors, 0 warnings")
	total=${total#total: }
	total=${total%, * lines checked}
	case $total in
	"0 errors, 0 warnings") ;;
	*)	findings=$((findings + 1))
		say "checkpatch findings for $name:"
		grep -oE '^(ERROR|WARNING|CHECK):[A-Z0-9_]+' "$check/$name.checkpatch" | sort | uniq -c | sort -rn >&2 ;;
	esac
	booted="not booted"
	if [ "${KP_CHECK_BOOT:-all}" = all ] ||
	   { [ "${KP_CHECK_BOOT:-all}" = last ] && [ "$p" = "$last" ]; }; then
		say "booting after $name"
		if ! booted=$(boot_kunit "$name"); then
			failed_boots=$((failed_boots + 1))
			booted="BOOT FAILED: $booted (log: $check/$name.boot.log)"
		fi
	fi
	summary+=("$name: applies, builds (${t}s), $booted, checkpatch: $total")
	say "${summary[-1]}"
done
say "series checked in $(( $(date +%s) - start ))s against $(make -C "$tree" -s kernelversion):"
printf '  %s\n' "${summary[@]}" >&2
"$harness/cover-letter.py" --size "$pdir" >&2
say "$findings patch(es) with checkpatch findings (details in $check/*.checkpatch)"
[ "$failed_boots" = 0 ] || die "$failed_boots boot(s) failed"

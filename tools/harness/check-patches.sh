#!/bin/bash
# Apply the series in PATCH_DIR with `git am` to a pristine upstream tree,
# build after every patch and run checkpatch.pl on each.  Exits non-zero when
# a patch does not apply or does not build; checkpatch findings are reported
# (one line per patch, the messages in build/check/<patch>.checkpatch).
#
#   check-patches.sh PATCH_DIR
#
# The tree is a git repository (build/check/linux) that is reset to upstream
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
"${git[@]}" reset -q --hard pristine
"${git[@]}" clean -q -fdx

# The harness's config; rerun after every patch, as one may add symbols.
configure() {
	mkdir -p "$obj"
	make -C "$tree" O="$obj" -s tinyconfig >/dev/null
	KCONFIG_CONFIG=$obj/.config "$tree/scripts/kconfig/merge_config.sh" -m \
		"$obj/.config" "${frags[@]}" >/dev/null
	make -C "$tree" O="$obj" -s olddefconfig >/dev/null
}

start=$(date +%s)
findings=0
summary=()
for p in "$pdir"/*.patch; do
	name=${p##*/}
	"${git[@]}" am -q "$p" || die "$name does not apply"
	configure
	say "building after $name"
	t=$(date +%s)
	make -C "$tree" O="$obj" -j"$jobs" -s bzImage modules >"$check/$name.build.log" 2>&1 ||
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
	summary+=("$name: applies, builds (${t}s), checkpatch: $total")
done
say "series checked in $(( $(date +%s) - start ))s against $(make -C "$tree" -s kernelversion):"
printf '  %s\n' "${summary[@]}" >&2
say "$findings patch(es) with checkpatch findings (details in $check/*.checkpatch)"

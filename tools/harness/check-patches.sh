#!/bin/bash
# Apply the series in PATCH_DIR with `git am` to a pristine upstream tree,
# build after every patch and run checkpatch.pl on each.  Exits non-zero when
# a patch does not apply or does not build; checkpatch findings are reported.
#
#   check-patches.sh PATCH_DIR
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

pdir=$(abspath "$1")
tree=$top/build/check/linux
tarball=${KP_UPSTREAM_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
jobs=${KP_JOBS:-$(nproc)}
frags=("$harness"/config/*.config)

if [ ! -d "$tree/.git" ]; then
	say "extracting a pristine tree into $tree (once)"
	rm -rf "$tree"; mkdir -p "$tree"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	git -C "$tree" init -q
	git -C "$tree" add -A
	git -C "$tree" -c user.name=upstream -c user.email=upstream@localhost commit -q -m upstream
	git -C "$tree" tag pristine
fi
git -C "$tree" am --abort >/dev/null 2>&1 || true
git -C "$tree" reset -q --hard pristine
git -C "$tree" clean -q -fdx -e .config -e '*.o' -e '*.cmd' >/dev/null

configure() {
	make -C "$tree" -s tinyconfig >/dev/null
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "${frags[@]}" >/dev/null)
	make -C "$tree" -s olddefconfig >/dev/null
}

warnings=0
for p in "$pdir"/*.patch; do
	name=${p##*/}
	git -C "$tree" -c user.name=check -c user.email=check@localhost am -q "$p" ||
		die "$name does not apply"
	configure
	say "building after $name"
	make -C "$tree" -j"$jobs" -s bzImage modules >"$top/build/check/$name.build.log" 2>&1 ||
		{ tail -n 30 "$top/build/check/$name.build.log" >&2; die "build fails after $name"; }
	if ! (cd "$tree" && scripts/checkpatch.pl -q --no-signoff "$p") >"$top/build/check/$name.checkpatch" 2>&1; then
		warnings=$((warnings + 1))
		say "checkpatch findings for $name:"
		cat "$top/build/check/$name.checkpatch" >&2
	else
		say "$name: applies, builds, checkpatch clean"
	fi
done
say "$warnings patch(es) with checkpatch findings"

#!/bin/bash
# Write our work as a git format-patch series against pristine upstream,
# split as tools/harness/series.txt says.
#
#   patches.sh OUT_DIR
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

out=$(abspath "$1")
work=$out/work
tarball=${KP_UPSTREAM_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
series=$harness/series.txt

entries() { grep -v -e '^#' -e '^[[:space:]]*$' "$series"; }

# Upstream paths the series touches: owned files and files our hunks edit.
touched_upstream() {
	owned_patterns
	grep -h '^+++ b/' "$harness"/patches/*.patch | sed 's#^+++ b/##'
}

rm -rf "$out"
mkdir -p "$work"
mapfile -t wanted < <(touched_upstream | sed 's#/\*$#/#' | sort -u)
tar -xf "$tarball" -C "$work" --strip-components=1 --wildcards \
	$(printf 'linux-source-6.12/%s* ' "${wanted[@]}") 2>/dev/null || true
version=$(tar -xOf "$tarball" linux-source-6.12/Makefile | awk '
	/^VERSION/ {v=$3} /^PATCHLEVEL/ {p=$3} /^SUBLEVEL/ {s=$3} END {print v "." p "." s}')

git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.name=upstream -c user.email=upstream@localhost \
	commit -q -m "Linux $version (the files this series touches)"
base=$(git -C "$work" rev-parse HEAD)

# Make sure every file of ours and every hunk is placed in the series.
placed=$(entries | cut -d'|' -f2 | tr ' ' '\n' | grep -v '^$')
for f in $(our_files); do
	ok=0
	for p in $placed; do
		case "$f" in "$p"|"$p"/*) ok=1 ;; esac
	done
	[ $ok = 1 ] || die "series.txt does not place $f"
done

while IFS='|' read -r subject paths; do
	subject=$(echo "$subject" | sed 's/[[:space:]]*$//')
	for p in $paths; do
		case "$p" in
		patch:*)
			for h in "$harness"/patches/${p#patch:}; do
				[ -e "$h" ] || continue
				patch -d "$work" -p1 --quiet --forward < "$h"
			done ;;
		*)
			# An owned directory is replaced as a whole.
			if [ -d "$top/$p" ]; then rm -rf "${work:?}/$p"; fi
			for f in $(our_files | grep -E "^$p(/|$)"); do
				mkdir -p "$work/$(dirname "$f")"
				cp "$top/$f" "$work/$f"
			done ;;
		esac
	done
	# Upstream files under an owned pattern that we do not ship go away.
	while read -r pat; do
		for f in $(cd "$work" && compgen -G "$pat" || true); do
			[ -d "$work/$f" ] || [ -f "$top/$f" ] || rm -f "$work/$f"
		done
	done < <(owned_patterns | grep -E "^($(echo "$paths" | tr ' ' '\n' | grep -v '^patch:' | grep -v '^$' | paste -sd'|'))")
	git -C "$work" add -A
	git -C "$work" -c user.name="kprobes developers" -c user.email=kprobes@localhost \
		commit -q -s -m "$subject" -m "From the kprobes project repository; see its README.md."
done < <(entries)

git -C "$work" format-patch -q -o "$out" "$base"..HEAD
echo "$version" > "$out/UPSTREAM_VERSION"
say "series against Linux $version:"
ls "$out"/*.patch >&2

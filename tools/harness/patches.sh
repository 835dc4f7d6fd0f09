#!/bin/bash
# Write our work as a git format-patch series against pristine upstream,
# split as tools/harness/series.txt says, with a cover letter made from
# tools/harness/cover-letter.txt.
#
#   patches.sh OUT_DIR
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

out=$(abspath "$1")
work=$out/work
split=$out/split
tarball=${KP_UPSTREAM_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
series=$harness/series.txt

# Cut series.txt into $split/NNN.{subject,files,body}, one set per patch.
split_series() {
	mkdir -p "$split"
	awk -v dir="$split" '
		/^#/ { next }
		/^== / { n++; f = sprintf("%s/%03d", dir, n)
			 print substr($0, 4) > (f ".subject"); printf "" > (f ".files")
			 printf "" > (f ".body"); next }
		!n { if ($0 !~ /^[[:space:]]*$/) { print "text before the first patch: " $0 > "/dev/stderr"; exit 1 } next }
		/^files:/ { sub(/^files:[[:space:]]*/, ""); gsub(/[[:space:]]+/, "\n"); print >> (f ".files"); next }
		{ print >> (f ".body") }' "$series"
	# Trim the blank lines around each body.
	for b in "$split"/*.body; do
		sed -i -e '/./,$!d' "$b"
		sed -i -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' "$b"
	done
}

# Upstream paths the series touches: owned files and files our hunks edit.
touched_upstream() {
	owned_patterns
	grep -h '^+++ b/' "$harness"/patches/*.patch | sed 's#^+++ b/##'
}

# Every file of ours and every hunk in exactly one patch; hunks in name order.
check_placement() {
	local f p n ok last="" h
	cat "$split"/*.files | grep -v '^$' > "$split/all"
	for f in $(ours); do
		n=0
		while read -r p; do
			case "$f" in "$p"|"$p"/*) n=$((n + 1)) ;; esac
		done < <(grep -v '^patch:' "$split/all")
		[ $n = 1 ] || die "series.txt places $f $n times (must be once)"
	done
	while read -r p; do
		case "$p" in
		patch:*)
			h=${p#patch:}
			[ -f "$harness/patches/$h" ] || die "series.txt: no hunk $h"
			[[ -z "$last" || "$h" > "$last" ]] ||
				die "series.txt: hunk $h comes after $last (keep them in name order)"
			last=$h ;;
		*)	ok=0
			for f in $(ours); do
				case "$f" in "$p"|"$p"/*) ok=1; break ;; esac
			done
			[ $ok = 1 ] || die "series.txt: $p is not a file of ours" ;;
		esac
	done < "$split/all"
	for h in "$harness"/patches/*.patch; do
		n=$(grep -cx "patch:${h##*/}" "$split/all" || true)
		[ "$n" = 1 ] || die "series.txt places ${h##*/} $n times (must be once)"
	done
}

# Files of ours placed by the patches so far (one per line).
placed_so_far() {
	local p
	grep -hv '^patch:' "$split/placed" 2>/dev/null | while read -r p; do
		ours | grep -E "^$p(/|$)"
	done
}

# Upstream files under an owned pattern go as soon as the first file of
# ours under that pattern arrives: from then on, the pattern's files are
# exactly ours that have arrived.
drop_owned_upstream() {
	local pat f have
	have=$(placed_so_far)
	while read -r pat; do
		grep -qx "$pat" <<< "$have" && continue	# a plain replaced file
		for f in $have; do
			# shellcheck disable=SC2053
			[[ $f == $pat ]] || continue
			for f in $(cd "$work" && compgen -G "$pat" || true); do
				[ -d "$work/$f" ] || grep -qx "$f" <<< "$have" ||
					rm -f "$work/$f"
			done
			break
		done
	done < <(owned_patterns)
}

apply_entry() {
	local n=$1 p h f applied
	while read -r p; do
		[ -n "$p" ] || continue
		case "$p" in
		patch:*)
			h=$harness/patches/${p#patch:}
			# The hunk's own description is not part of the commit.
			# Exactly, or patch(1) leaves *.orig files that would
			# land in the commit: a hunk with an offset or fuzz was
			# written for another tree and is to be regenerated.
			applied=$(patch -d "$work" -p1 --forward \
				--no-backup-if-mismatch < "$h") ||
				die "${p#patch:} does not apply"
			if grep -qE 'offset|fuzz' <<<"$applied"; then
				die "${p#patch:} applies only with an offset or fuzz: regenerate it"
			fi ;;
		*)	for f in $(ours | grep -E "^$p(/|$)"); do
				mkdir -p "$work/$(dirname "$f")"
				cp "$top/$f" "$work/$f"
			done ;;
		esac
	done < "$split/$n.files"
	cat "$split/$n.files" >> "$split/placed"
	drop_owned_upstream
}

rm -rf "$out"
mkdir -p "$work"
# our_files once: it asks git, and every check below walks it.
ours_list=$out/ours
our_files > "$ours_list"
ours() { cat "$ours_list"; }
split_series
check_placement

mapfile -t wanted < <(touched_upstream | sed 's#/\*$#/#' | sort -u)
tar -xf "$tarball" -C "$work" --strip-components=1 --wildcards \
	$(printf 'linux-source-6.12/%s* ' "${wanted[@]}") 2>/dev/null || true
version=$(tar -xOf "$tarball" linux-source-6.12/Makefile | awk '
	/^VERSION/ {v=$3} /^PATCHLEVEL/ {p=$3} /^SUBLEVEL/ {s=$3} END {print v "." p "." s}')

git=(git -C "$work" -c user.name="kprobes developers" -c user.email=kprobes@localhost)
"${git[@]}" init -q -b series
"${git[@]}" add -A
"${git[@]}" -c user.name=upstream -c user.email=upstream@localhost \
	commit -q -m "Linux $version (the files this series touches)"
base=$("${git[@]}" rev-parse HEAD)

for s in "$split"/*.subject; do
	n=$(basename "$s" .subject)
	apply_entry "$n"
	"${git[@]}" add -A
	"${git[@]}" commit -q -s -F <(cat "$s"; echo; cat "$split/$n.body")
done

# The same tree as prepare.sh builds: every owned upstream file replaced.
while read -r pat; do
	for f in $(cd "$work" && compgen -G "$pat" || true); do
		[ -d "$work/$f" ] || [ -f "$top/$f" ] ||
			die "upstream $f survives the series"
	done
done < <(owned_patterns)

"${git[@]}" format-patch -q -n --cover-letter -o "$out" "$base"..HEAD
"$harness/cover-letter.py" "$harness/cover-letter.txt" "$out" "$version"
rm -rf "$split" "$ours_list"
echo "$version" > "$out/UPSTREAM_VERSION"
say "series against Linux $version:"
ls "$out"/*.patch >&2

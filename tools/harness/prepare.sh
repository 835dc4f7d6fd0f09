#!/bin/bash
# Lay out a configured kernel tree in $1/linux.
#
#   prepare.sh BUILD_DIR ours    upstream tree, our files in place of the owned
#                                ones, our integration patches, our config
#   prepare.sh BUILD_DIR stock   pristine upstream tree, the same config
#
# The tree is extracted once.  Later runs copy only the files of ours that
# changed (so kbuild rebuilds only what depends on them) and re-extract only
# when the patch set changes.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
harness=$top/tools/harness
. "$harness/lib.sh"

bdir=$(abspath "$1")
flavor=${2:-ours}
tree=$bdir/linux
tarball=${KP_UPSTREAM_TARBALL:-/usr/src/linux-source-6.12.tar.xz}

[ -f "$tarball" ] || die "$tarball missing: run 'make deps' first"

# Everything that decides the tree's content apart from our overlay files.
patch_sum() {
	if [ "$flavor" = ours ]; then
		cat "$harness"/patches/*.patch 2>/dev/null | sha1sum | cut -c1-40
	else
		echo stock
	fi
}

extract() {
	say "extracting $(basename "$tarball") into $tree"
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	if [ "$flavor" = ours ]; then
		remove_owned
		apply_patches
	fi
	patch_sum > "$tree/.kp-patches"
}

# Delete every upstream file that we own, so nothing of upstream's
# implementation can survive in a built kernel.  The list of what was
# deleted is kept: check_owned() looks for exactly those files later, so
# that build products next to them (.o, .ko, ...) are not mistaken for
# upstream sources.
remove_owned() {
	local pat f
	: > "$tree/.kp-owned-upstream"
	while read -r pat; do
		for f in $(cd "$tree" && compgen -G "$pat" || true); do
			[ -f "$tree/$f" ] || continue
			echo "$f" >> "$tree/.kp-owned-upstream"
			rm -f "$tree/$f"
		done
	done < <(owned_patterns)
}

apply_patches() {
	local p out
	for p in "$harness"/patches/*.patch; do
		[ -e "$p" ] || continue
		say "applying $(basename "$p")"
		out=$(patch -d "$tree" -p1 --forward --verbose < "$p") ||
			die "patch $(basename "$p") does not apply to this upstream tree"
		# A hunk whose header miscounts its lines ends the patch early:
		# patch calls the rest "trailing garbage" and still succeeds.
		! grep -q 'trailing garbage' <<< "$out" ||
			die "patch $(basename "$p"): a hunk's line counts are wrong"
	done
}

# Copy our kernel-tree files in, touching only those whose content changed,
# and delete the ones we laid earlier but no longer have.
overlay() {
	local new=$tree/.kp-overlay.new old=$tree/.kp-overlay f
	our_files > "$new"
	while read -r f; do
		mkdir -p "$tree/$(dirname "$f")"
		cmp -s "$top/$f" "$tree/$f" || cp "$top/$f" "$tree/$f"
	done < "$new"
	if [ -f "$old" ]; then
		comm -23 <(sort "$old") <(sort "$new") | while read -r f; do
			rm -f "$tree/$f"
		done
	fi
	mv "$new" "$old"
}

# Fail when an owned upstream file survived without our replacement, or
# when one of ours that the list names is missing.
check_owned() {
	local pat f bad=0
	while read -r pat; do
		case "$pat" in
		*[*?[]*) ;;
		*) [ -f "$top/$pat" ] || { echo "owned file $pat: ours is missing" >&2; bad=1; } ;;
		esac
	done < <(owned_patterns)
	while read -r f; do
		[ -f "$tree/$f" ] || continue
		if ! cmp -s "$tree/$f" "$top/$f"; then
			echo "owned file $f in the build tree is not ours" >&2
			bad=1
		fi
	done < "$tree/.kp-owned-upstream"
	if [ $bad != 0 ]; then
		# KP_PARTIAL=1 lets a developer compile-test a tree that is not
		# complete yet; it never passes for make run/test.
		[ "${KP_PARTIAL:-0}" = 1 ] && say "owned-file check failed (ignored: KP_PARTIAL=1)" && return
		die "owned-file check failed"
	fi
}

configure() {
	local frags=("${kp_config_frags[@]}") sum
	[ "$flavor" = ours ] && frags+=("${kp_config_ours[@]}")
	# KP_CONFIG_FRAGS: these fragments (paths) instead of ours, for another
	# architecture (make configs, arm64).
	[ -n "${KP_CONFIG_FRAGS:-}" ] && frags=(${KP_CONFIG_FRAGS})
	# KP_CONFIG_EXTRA: more fragments (paths), e.g. the benchmark's ftrace one.
	frags+=(${KP_CONFIG_EXTRA:-})
	sum=$( (cat "${frags[@]}"; echo "$flavor ${ARCH:-}") | sha1sum | cut -c1-40)
	if [ -f "$tree/.config" ] && [ "$(cat "$tree/.kp-config" 2>/dev/null)" = "$sum" ]; then
		return
	fi
	say "configuring ($flavor): tinyconfig + ${frags[*]##*/}"
	make -C "$tree" -s tinyconfig >/dev/null
	(cd "$tree" && KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m .config "${frags[@]}" >/dev/null)
	make -C "$tree" -s olddefconfig >/dev/null
	check_config "${frags[@]}"
	echo "$sum" > "$tree/.kp-config"
}

# Every option the fragments ask for must have survived olddefconfig
# (the stock tree lacks our own test symbol, which is fine there).  A later
# fragment may override an earlier one ("# CONFIG_X is not set" switches X
# off): the last word on each option counts.
check_config() {
	local opt want bad=0
	while read -r opt want; do
		# The stock tree lacks the symbols of our own tests and samples.
		[ "$flavor" = stock ] && case $opt in
			CONFIG_KPROBES_KUNIT_TEST|CONFIG_UPROBES_KUNIT_TEST|CONFIG_SAMPLE_UPROBES|\
			CONFIG_WPROBES|CONFIG_WPROBES_KUNIT_TEST|CONFIG_SAMPLE_WPROBES|CONFIG_WPROBE_EVENTS) continue ;;
		esac
		if [ "$want" = n ]; then
			! grep -q "^$opt=" "$tree/.config" || { echo "config: $opt is not off" >&2; bad=1; }
		else
			grep -qx "$opt=$want" "$tree/.config" || { echo "config: $opt=$want did not stick" >&2; bad=1; }
		fi
	done < <(sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)/\1 \2/p' \
			-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set/\1 n/p' "$@" |
		awk '{ last[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
			END { for (i = 0; i < n; i++) print order[i], last[order[i]] }')
	# x86 runs return probes on our own trampoline, never on rethook.
	if [ "$flavor" = ours ] && { [ "$kp_arch" = x86_64 ] || [ "$kp_arch" = i386 ]; } &&
	   grep -q '^CONFIG_KRETPROBE_ON_RETHOOK=y' "$tree/.config"; then
		echo "config: KRETPROBE_ON_RETHOOK must be off for our kprobes on x86" >&2
		bad=1
	fi
	[ $bad = 0 ] || die "configuration check failed"
}

mkdir -p "$bdir"
if [ ! -f "$tree/Makefile" ] || [ "$(cat "$tree/.kp-patches" 2>/dev/null)" != "$(patch_sum)" ]; then
	extract
fi
if [ "$flavor" = ours ]; then
	overlay
	check_owned
fi
configure
say "upstream $(make -C "$tree" -s kernelversion) ($flavor) ready in $tree"

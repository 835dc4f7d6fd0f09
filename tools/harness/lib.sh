# Shared helpers for the harness scripts (sourced, not run).

say() { echo "harness: $*" >&2; }
die() { echo "harness: error: $*" >&2; exit 1; }
abspath() { mkdir -p "$1" && (cd "$1" && pwd); }

# Patterns from owned.txt, without comments and blank lines.
owned_patterns() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$top/tools/harness/owned.txt"
}

# Our files that belong in the kernel tree, relative to the repository root:
# tracked files and new files git does not ignore.
our_files() {
	(cd "$top" && git ls-files --cached --others --exclude-standard -- \
		kernel arch include samples Documentation lib mm | sort -u |
		while read -r f; do [ -f "$f" ] && echo "$f"; done)
}

# ARCH from the Makefile: kernel image, compilers, QEMU, config fragments.
. "$top/tools/harness/arch.sh"

#!/bin/bash
# Install the Debian packages the harness needs, or say how to: the build
# tools, and QEMU and the guest's userland or cross compilers for ARCH.
#   deps.sh [PACKAGE...]   also these (make configs: the arm64 cross compiler)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
      dwarves cpio xz-utils kmod python3 python3-ply rsync git
      linux-perf	# the guest's perf, for the README's example
      bpftrace		# the guest's bpftrace: the README's example, 86-bpftrace.sh
      "${kp_arch_deps[@]}" "$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "harness: missing packages; run as root:" >&2
	echo "  apt-get update && $cmd" >&2
	exit 1
fi
echo "harness: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

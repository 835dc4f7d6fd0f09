#!/bin/bash
# Pack the guest's initramfs: busybox, bash, our init and shell tests, the
# kprobes sample modules, our test modules and the user's EXTRA modules.
#
#   initramfs.sh BUILD_DIR [EXTRA_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/harness/lib.sh"

bdir=$(abspath "$1")
extra=${2:-}
tree=$bdir/linux
guest=$top/tools/harness/guest
tests=$top/tools/testing/kprobes/guest
list=$bdir/initramfs.list

{
	for d in /dev /proc /sys /tmp /bin /sbin /usr /usr/bin /usr/sbin /root \
		 /kptest /kptest/tests /kptest/modules /extra; do
		echo "dir $d 755 0 0"
	done
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "file /bin/busybox /bin/busybox 755 0 0"
	echo "slink /bin/sh busybox 777 0 0"
	[ -x /bin/bash-static ] && echo "file /bin/bash /bin/bash-static 755 0 0"
	echo "file /init $guest/init 755 0 0"
	[ -f "$tests/lib.sh" ] && echo "file /kptest/lib.sh $tests/lib.sh 644 0 0"
	for f in "$tests"/[0-9]*.sh; do
		[ -f "$f" ] && echo "file /kptest/tests/${f##*/} $f 755 0 0"
	done
	for f in "$tree"/samples/kprobes/*.ko "$bdir"/oot/kptest/*.ko; do
		[ -f "$f" ] && echo "file /kptest/modules/${f##*/} $f 644 0 0"
	done
	if [ -n "$extra" ]; then
		[ -f "$extra/run.sh" ] || die "$extra/run.sh missing"
		echo "file /extra/run.sh $(cd "$extra" && pwd)/run.sh 755 0 0"
		for f in "$bdir"/oot/extra/*.ko; do
			[ -f "$f" ] && echo "file /extra/${f##*/} $f 644 0 0"
		done
	fi
} > "$list"

"$tree/usr/gen_init_cpio" "$list" | gzip -1 > "$bdir/initramfs.cpio.gz"
say "initramfs: $bdir/initramfs.cpio.gz"

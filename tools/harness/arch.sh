# Per-architecture settings of the harness (sourced by lib.sh).  The
# Makefile passes ARCH (x86_64 when not given): the kernel, the guest's
# userland and QEMU all follow it.  Anything but the host's architecture is
# cross built with Debian's compilers and booted under TCG.
#
#   kp_arch          x86_64, i386, arm64, riscv, ppc64el, armhf, s390x or
#                    mips64el (the name
#                    the Makefile takes)
#   kp_image         the kernel image, relative to the tree
#   kp_ucc           the C compiler for the static guest programs
#   kp_ucflags       its flags for them that the architecture needs (an array)
#   kp_ucc32         x86_64 only: the compiler for i386 guest programs
#   kp_deb_arch      Debian's name of the architecture (the guest packages)
#   kp_guest_src     1: the guest's busybox and bash are built from Debian's
#                    sources (guest-src.sh), the architecture has no packages
#   kp_console       the guest's serial console
#   kp_cmdline       more of the guest's kernel command line (or empty)
#   kp_qemu          QEMU, machine and CPU (an array)
#   kp_mem           the guest's memory in MiB (1024 unless said)
#   kp_tcg_thread    QEMU's TCG threading, single (the default, see boot.sh)
#                    or multi
#   kp_arch_deps     the Debian packages the architecture needs
#   kp_config_frags  the config fragments, in merge order (an array)
#   kp_config_ours   more fragments for our kernel only (an array)

kp_arch=${ARCH:-x86_64}
# armhf exports the kernel's ARCH=arm to the scripts it runs: they are
# armhf's too (KP_ARCH_NAME says so; configs.sh's arm builds have none).
[ "$kp_arch" = arm ] && [ "${KP_ARCH_NAME:-}" = armhf ] && kp_arch=armhf
kp_guest_src=
# ppc64el's kernel ARCH is powerpc (exported below): a script the harness
# runs from another sees that name.  make configs' powerpc build stays
# build-only.
[ "$kp_arch" = powerpc ] && [ -z "${KP_BUILD_ONLY:-}" ] && kp_arch=ppc64el
# mips64el's is mips, likewise.
[ "$kp_arch" = mips ] && [ -z "${KP_BUILD_ONLY:-}" ] && kp_arch=mips64el
kp_ucflags=()
kp_tcg_thread=single
kp_cmdline=
kp_mem=
case $kp_arch in
x86_64|x86)
	kp_arch=x86_64
	kp_image=arch/x86/boot/bzImage
	kp_ucc=gcc
	kp_deb_arch=amd64
	kp_console=ttyS0
	# SMAP on, so that the kernel's user-access rules hold in the guest
	# (a probe's detour must not run its handlers with AC set); UMIP, so
	# that the kernel emulates user sgdt, sidt and smsw (config/base.config).
	kp_qemu=(qemu-system-x86_64 -machine pc -cpu qemu64,+smap,+umip)
	# The i386 test program's compiler: Debian's cross compiler, since
	# gcc-multilib conflicts with every other architecture's.
	kp_ucc32=i686-linux-gnu-gcc
	kp_arch_deps=(qemu-system-x86 busybox-static bash-static
		      gcc-i686-linux-gnu libc6-dev-i386-cross)
	kp_config_frags=("$top"/tools/harness/config/*.config)
	kp_config_ours=()
	unset ARCH CROSS_COMPILE
	;;
i386|i686)
	# 32-bit x86 on our own x86 code (both widths share it): the
	# x86_64 fragments with the i386 overrides, the guest Debian's
	# i386 busybox and bash.
	kp_arch=i386
	kp_image=arch/x86/boot/bzImage
	kp_ucc=i686-linux-gnu-gcc
	kp_deb_arch=i386
	kp_console=ttyS0
	# SMAP and UMIP as on x86_64.
	kp_qemu=(qemu-system-i386 -machine pc -cpu qemu32,+smap,+umip)
	kp_arch_deps=(qemu-system-x86 gcc-i686-linux-gnu libc6-dev-i386-cross)
	kp_config_frags=("$top"/tools/harness/config/*.config
			 "$top"/tools/harness/config/i386/*.config)
	kp_config_ours=("$top"/tools/harness/config/i386/ours/*.config)
	# The host's gcc builds the kernel (-m32): kbuild's ARCH=i386 is
	# x86 with 64BIT off.
	export ARCH=i386
	unset CROSS_COMPILE
	;;
arm64)
	kp_image=arch/arm64/boot/Image
	kp_ucc=aarch64-linux-gnu-gcc
	kp_deb_arch=arm64
	kp_console=ttyAMA0
	kp_qemu=(qemu-system-aarch64 -machine virt -cpu cortex-a57)
	# ipxe-qemu: the virt machine's default NIC wants its option ROM
	# (qemu-system-x86 depends on it, qemu-system-arm only recommends it).
	kp_arch_deps=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
		      ipxe-qemu)
	# The architecture-neutral fragments, then the arm64 guest and the
	# options it does not have (a later fragment's word wins).
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/arm64/*.config)
	kp_config_ours=("$top"/tools/harness/config/arm64/ours/*.config)
	export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
	;;
riscv|riscv64)
	kp_arch=riscv
	kp_image=arch/riscv/boot/Image
	kp_ucc=riscv64-linux-gnu-gcc
	kp_deb_arch=riscv64
	kp_guest_src=1
	kp_console=ttyS0
	# QEMU's own OpenSBI build (qemu-system-data) as the M-mode firmware.
	kp_qemu=(qemu-system-riscv64 -machine virt -bios default)
	# Debian 12 has no riscv64 binary packages: the guest's busybox and
	# bash are cross built from Debian's source packages (guest-src.sh).
	kp_arch_deps=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-system-misc
		      ipxe-qemu)
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/riscv/*.config)
	kp_config_ours=("$top"/tools/harness/config/riscv/ours/*.config)
	export ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu-
	;;
ppc64el|ppc64le)
	kp_arch=ppc64el
	# The ELF itself, loaded by QEMU's pseries firmware (SLOF).  Not
	# QEMU's smaller x-vof firmware, faster to boot: it leaves the NVRAM
	# unformatted, and the kernel warns about a 0-length partition.
	kp_image=vmlinux
	kp_ucc=powerpc64le-linux-gnu-gcc
	kp_deb_arch=ppc64el
	kp_console=hvc0
	# POWER9 (Debian's ppc64el userland needs POWER8's VSX); the
	# spectre capabilities are ones TCG cannot give, so say they are
	# absent rather than have QEMU refuse to start; no VGA (its BIOS is
	# not in qemu-system-ppc).
	kp_qemu=(qemu-system-ppc64 -cpu power9 -vga none
		 -machine pseries,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off)
	kp_arch_deps=(gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross qemu-system-ppc)
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/ppc64el/*.config)
	kp_config_ours=("$top"/tools/harness/config/ppc64el/ours/*.config)
	# The Makefile's command line left its ARCH in MAKEFLAGS, where the
	# kernel's make would take it over the environment's.
	MAKEFLAGS=${MAKEFLAGS:-}
	MAKEFLAGS=${MAKEFLAGS//ARCH=${ARCH:-}/ARCH=powerpc}
	export ARCH=powerpc CROSS_COMPILE=powerpc64le-linux-gnu-
	;;
armhf)
	# 32-bit arm (kernel ARCH=arm), Debian's armhf: ARM-mode kernel, the
	# guest's busybox and bash Debian's own (Thumb-2 code).
	kp_image=arch/arm/boot/zImage
	kp_ucc=arm-linux-gnueabihf-gcc
	# ARM code: upstream's 32-bit arm uprobes refuse Thumb, which is
	# what Debian's armhf compiler emits by default.
	kp_ucflags=(-marm)
	kp_deb_arch=armhf
	kp_console=ttyAMA0
	# highmem=off: nothing of the machine above 4 GiB, which a kernel
	# without LPAE cannot reach.
	kp_qemu=(qemu-system-arm -machine virt,highmem=off -cpu cortex-a15)
	# One thread per vCPU: under single-threaded TCG (QEMU 7.2) two
	# vCPUs hang at the first text patch (ftrace's startup test): the
	# patching CPU never gets past the broadcast TLB invalidation
	# (TLBIMVAAIS, in v7wbi_flush_kern_tlb_range() from
	# __patch_text_real()) while the other spins in stop_machine()'s
	# multi_cpu_stop(); -smp 1 or multi-threaded TCG boot.  Not a probe:
	# no kprobe is registered yet at that point.
	kp_tcg_thread=multi
	kp_arch_deps=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-system-arm
		      ipxe-qemu)
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/armhf/*.config)
	kp_config_ours=("$top"/tools/harness/config/armhf/ours/*.config)
	export ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf- KP_ARCH_NAME=armhf
	# The kernel's name of it is arm: the Makefile's ARCH=armhf, which
	# make hands every make below it in MAKEFLAGS, must not reach kbuild.
	[ -z "${MAKEFLAGS:-}" ] || export MAKEFLAGS=${MAKEFLAGS//ARCH=armhf/}
	;;
s390x|s390)
	kp_arch=s390x
	kp_image=arch/s390/boot/bzImage
	kp_ucc=s390x-linux-gnu-gcc
	kp_deb_arch=s390x
	# The SCLP's VT220 console, which QEMU's -serial is on this machine.
	kp_console=ttysclp0
	# ftrace's boot-time test of the function_graph tracer traces every
	# call for 100 ms; under TCG on a busy host the ticks' traced work
	# outgrew the ticks, and 3 boots of 5 never got past it (both vCPUs
	# in the graph tracer's ring buffer code for minutes).  Deeper calls
	# than the first are not recorded: the test still finds entries.
	kp_cmdline=ftrace_graph_max_depth=1
	# QEMU's default CPU model under TCG ("qemu"); the kernel keeps its
	# default MARCH_Z196, since newer levels ask for facilities TCG lacks.
	kp_qemu=(qemu-system-s390x -machine s390-ccw-virtio)
	# qemu-system-misc brings the s390-ccw firmware (qemu-system-data);
	# the machine's devices are virtio-ccw, with no option ROMs to load.
	kp_arch_deps=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-system-misc)
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/s390x/*.config)
	kp_config_ours=("$top"/tools/harness/config/s390x/ours/*.config)
	# The kernel's name is s390.  The Makefile's own command line
	# (ARCH=s390x) rides down to every make below in MAKEFLAGS, where it
	# would win over the environment: it is taken out there.
	export ARCH=s390 CROSS_COMPILE=s390x-linux-gnu-
	MAKEFLAGS=$(sed -E 's/(^| )ARCH=[^ ]*//' <<< "${MAKEFLAGS:-}")
	export MAKEFLAGS
	;;
mips64el|mips64)
	kp_arch=mips64el
	# 64-bit little-endian MIPS on QEMU's malta board (kernel
	# ARCH=mips): QEMU loads the ELF itself and plays YAMON, passing the
	# command line and the memory size; the console is the board's
	# 16550 on the PIIX4's ISA bus.
	kp_image=vmlinux
	kp_ucc=mips64el-linux-gnuabi64-gcc
	kp_deb_arch=mips64el
	kp_console=ttyS0
	# MIPS64R2-generic: Debian's mips64el userland is mips64r2, which
	# the r6 CPUs (the only 64-bit ones malta brings up as a second
	# core, through CPS) cannot run.  So one CPU: -smp 2 leaves the
	# second idle in the boot monitor.
	kp_qemu=(qemu-system-mips64el -machine malta -cpu MIPS64R2-generic)
	# 256 MiB, what the board maps low: with -m 1024 the kernel stopped
	# in a WARNING at time 0 (2026-12-02); with 256 it booted to init.
	kp_mem=256
	kp_arch_deps=(gcc-mips64el-linux-gnuabi64 libc6-dev-mips64el-cross qemu-system-mips)
	kp_config_frags=("$top"/tools/harness/config/{kprobes,test,uprobes,users}.config
			 "$top"/tools/harness/config/mips64el/*.config)
	kp_config_ours=("$top"/tools/harness/config/mips64el/ours/*.config)
	# The kernel's name is mips; the Makefile's ARCH=mips64el leaves
	# MAKEFLAGS, as on s390x.
	export ARCH=mips CROSS_COMPILE=mips64el-linux-gnuabi64-
	MAKEFLAGS=$(sed -E 's/(^| )ARCH=[^ ]*//' <<< "${MAKEFLAGS:-}")
	export MAKEFLAGS
	;;
*)
	# make configs cross builds other architectures without booting
	# them: configs.sh sets ARCH, CROSS_COMPILE and the fragments.
	if [ -z "${KP_BUILD_ONLY:-}" ]; then
		echo "harness: error: ARCH=$kp_arch is not one the harness boots (x86_64, i386, arm64, riscv, ppc64el, armhf, s390x, mips64el)" >&2
		exit 1
	fi
	kp_arch_deps=()
	kp_config_frags=()
	kp_config_ours=()
	export ARCH CROSS_COMPILE
	;;
esac

# Where the guest's busybox and bash come from: the host's own packages,
# or the architecture's, fetched by guest-root.sh into build/guest-ARCH.
kp_guest_bin() {
	if [ "$kp_arch" = x86_64 ]; then
		echo "/bin/$1"
	else
		echo "$top/build/guest-$kp_arch/root/bin/$1"
	fi
}

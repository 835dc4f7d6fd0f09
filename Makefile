# Our kprobes, uprobes and watchpoint probes for Linux 6.12: build, boot in
# QEMU (TCG) and test, on x86_64 by default or on ARCH (below).
#
#   make run        build our kernel and boot it in QEMU with a short demo
#   make run INTERACTIVE=1   ... with a shell in the guest instead
#   make test       build, boot once, run every test: "N passed, N failed, N skipped"
#   make stock      build the pristine upstream kernel with the same config
#   make test-stock run the same guest tests on the stock kernel
#   make compare    boot both: upstream's ftrace kprobe and uprobe selftests
#                   on stock and on ours, side by side
#   make patches    the work as a git format-patch series against upstream
#   make check-patches  apply the series to a pristine tree, build and checkpatch each patch
#   make bench      probe hit and registration cost, ours against stock (build/bench)
#   make stress     probes coming and going under load for STRESS_SECONDS (600)
#   make test-debug make test on a KASAN + KFENCE + lockdep kernel (build/debug)
#   make test-icount  the KUnit suites alone, under -icount
#   make configs    build (not boot) the other configurations: modules, ftrace,
#                   optprobes, kretprobes off; PREEMPT_NONE/VOLUNTARY; and
#                   arm64, riscv64, ppc64el, s390x, armhf, i386 built with
#                   kprobes, kretprobes, uprobes and their trace events on
#   make deps       install the Debian packages the targets need (the others
#                   do it first)
#   make clean / distclean
#
# ARCH: x86_64 (default); i386 (our x86 code on a 32-bit kernel, the host's
# gcc -m32, qemu-system-i386); arm64 (our own arm64 code, cross built, QEMU virt);
# riscv (upstream's riscv code on our core, OpenSBI, the guest's busybox and
# bash cross built from Debian's sources); ppc64el (upstream's powerpc code,
# QEMU pseries, POWER9, SLOF), armhf (upstream's 32-bit arm code, ARM mode,
# QEMU virt, multi-threaded TCG), s390x (upstream's s390 code, QEMU
# s390-ccw-virtio, SCLP console); their make test and make stress pass
# (tools/testing/kprobes/README.md).  mips64el (upstream's mips code, QEMU
# malta, MIPS64r2, one CPU): new, see that README.  Each has its trees in
# build/ARCH/ours and build/ARCH/stock, make bench's in build/ARCH/bench, and
# the same targets (test, stock, test-stock, compare, stress, bench).
# EXTRA=<dir>: build the out-of-tree modules in <dir> against the kernel, put
# them and <dir>/run.sh in the guest (at /extra) and run run.sh after boot.
# B=<dir>: build directory for our tree (default build/ours, build/ARCH/ours).

ARCH ?= x86_64
export ARCH
ifeq ($(ARCH),x86_64)
B ?= build/ours
STOCK_B ?= build/stock
# pti=on: freed init text is then unmapped (35-errors.sh probes it).
TEST_CMDLINE := pti=on
else
B ?= build/$(ARCH)/ours
STOCK_B ?= build/$(ARCH)/stock
endif
# The kernel's name of ARCH, for the make clean of a tree (armhf is arm).
KARCH := $(if $(filter armhf,$(ARCH)),arm,$(ARCH))
STRESS_SECONDS ?= 600
EXTRA ?=
INTERACTIVE ?=
H := tools/harness

.PHONY: all deps prepare kernel initramfs run test stock test-stock compare \
	patches check-patches bench stress configs test-debug test-icount \
	clean distclean

all: kernel

deps:
	@$(H)/deps.sh

prepare: deps
	@$(H)/prepare.sh $(B) ours

kernel: prepare
	@$(H)/build.sh $(B) $(EXTRA)

initramfs: kernel
	@$(H)/initramfs.sh $(B) $(EXTRA)

run: initramfs
ifeq ($(INTERACTIVE),)
	@$(H)/boot.sh $(B) demo
else
	@$(H)/boot.sh $(B) shell
endif

test: initramfs
	@KP_CMDLINE="$(TEST_CMDLINE) $${KP_CMDLINE:-}" $(H)/boot.sh $(B) test $(B)/test.log
	@$(H)/summarize.py $(B)/test.log $(B)/linux/.config

stock: deps
	@$(H)/prepare.sh $(STOCK_B) stock
	@$(H)/build.sh $(STOCK_B) $(EXTRA)
	@$(H)/initramfs.sh $(STOCK_B) $(EXTRA)

test-stock: stock
	@KP_CMDLINE="$(TEST_CMDLINE) $${KP_CMDLINE:-}" $(H)/boot.sh $(STOCK_B) test $(STOCK_B)/test.log
	@$(H)/summarize.py $(STOCK_B)/test.log $(STOCK_B)/linux/.config

# Only the stress test (95-stress.sh with kp_stress.ko), KUnit off.  On
# armhf with the config, for the boot-time self test that fails there on
# stock too (summarize.py's KNOWN_SELFTEST).
STRESS_CONFIG := $(if $(filter armhf,$(ARCH)),$(B)/linux/.config)
stress: initramfs
	@KP_CMDLINE="kp.tests=95 kp.stress=$(STRESS_SECONDS) kunit.enable=0" \
		KP_TIMEOUT=$$(($(STRESS_SECONDS) + 900)) \
		$(H)/boot.sh $(B) test $(B)/stress.log
	@$(H)/summarize.py $(B)/stress.log $(STRESS_CONFIG)

# The KUnit suites alone, under -icount (the guest clock counts
# instructions, as in make bench), where kpo_test_churn once never ended.
test-icount: initramfs
	@KP_QEMU_ARGS="-icount shift=0,sleep=off $${KP_QEMU_ARGS:-}" \
		$(H)/boot.sh $(B) kunit $(B)/icount.log
	@$(H)/summarize.py $(B)/icount.log $(B)/linux/.config

# The debug variant in its own tree; under TCG KASAN makes everything slow.
test-debug:
	@$(MAKE) --no-print-directory test B=build/debug \
		KP_CONFIG_EXTRA=$(CURDIR)/$(H)/config/debug.frag KP_TIMEOUT=$${KP_TIMEOUT:-5400}

# CONFIGS="modules-off s390x" builds only those.
configs: deps
	@$(H)/configs.sh $(CONFIGS)

# Both kernels boot the same guest and run only its ftracetest script; the
# cases are compared (fails when ours does not pass a case stock passes).
compare: initramfs stock
	@KP_CMDLINE="kp.tests=70" $(H)/boot.sh $(B) test $(B)/compare.log
	@KP_CMDLINE="kp.tests=70" $(H)/boot.sh $(STOCK_B) test $(STOCK_B)/compare.log
	@$(H)/compare.py $(STOCK_B)/compare.log $(B)/compare.log

patches: deps
	@$(H)/patches.sh build/patches

check-patches: patches
	@$(H)/check-patches.sh build/patches

bench: deps
	@$(H)/bench.sh

clean:
	rm -rf $(B)/oot $(B)/initramfs.* $(B)/*.log $(STOCK_B)/oot build/patches
	[ ! -d $(B)/linux ] || $(MAKE) -C $(B)/linux -s ARCH=$(KARCH) clean
	[ ! -d $(STOCK_B)/linux ] || $(MAKE) -C $(STOCK_B)/linux -s ARCH=$(KARCH) clean

distclean:
	rm -rf build

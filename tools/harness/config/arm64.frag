# make configs: arm64 with KPROBES, UPROBES and UPROBE_EVENTS switched off:
# everything around them that includes <linux/kprobes.h> or
# <linux/uprobes.h> must still build: perf, ftrace, BPF, modules.  (arm64
# with kprobes on is make test ARCH=arm64's config.)
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_KALLSYMS=y
CONFIG_DEBUG_FS=y
CONFIG_PERF_EVENTS=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
# CONFIG_UPROBE_EVENTS is not set
CONFIG_BPF_SYSCALL=y
# BPF_EVENTS needs kprobe or uprobe events: neither is there.
# CONFIG_BPF_EVENTS is not set
# CONFIG_KPROBES is not set

# make configs: arm64, a HAVE_KPROBES architecture our core does not serve.
# KPROBES must stay off there (it depends on X86_64); everything around it
# that includes <linux/kprobes.h> must still build: perf, ftrace, uprobes
# (arm64's probes/ directory), BPF, modules.
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_KALLSYMS=y
CONFIG_DEBUG_FS=y
CONFIG_PERF_EVENTS=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_UPROBE_EVENTS=y
CONFIG_BPF_SYSCALL=y
CONFIG_BPF_EVENTS=y
# CONFIG_KPROBES is not set

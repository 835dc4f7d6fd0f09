# make test-debug: the test config plus the memory-safety checkers (KASAN,
# generic, outline; KFENCE) and lockdep with irq-flag tracing (already in
# the test config: PROVE_LOCKING selects TRACE_IRQFLAGS).  KASAN needs the
# full SLUB.
# CONFIG_SLUB_TINY is not set
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_OUTLINE=y
CONFIG_KASAN_VMALLOC=y
CONFIG_KFENCE=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y

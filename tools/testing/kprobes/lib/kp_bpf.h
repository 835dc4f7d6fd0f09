/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the static BPF guest programs (bpf/kprobe_bpf.c, uprobe/uprobe_pmu.c)
 * share: the bpf() system call and the one-element array map their
 * programs record into.
 */
#ifndef KP_BPF_H
#define KP_BPF_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Where struct pt_regs, the programs' context, holds the return value
 * register: x86_64's ax (r15 .. r8 come first), arm64's x0, riscv64's a0
 * (pc, ra, sp, gp, tp, t0-t2, s0 and s1 come first), powerpc64's r3
 * (gpr[] comes first), 32-bit arm's r0.  REGS_RET_SIZE is the register's
 * size, for the program's load: a 64-bit load on 32-bit arm would take r1
 * with r0.  s390x's %r2 (args[0], the two words of the PSW, %r0 and
 * %r1 come first).  mips64's $2 (v0: regs[] comes first).  i386's ax (bx, cx, dx, si, di and bp come first).
 */
#if defined(__x86_64__)
#define REGS_RET_OFF	(10 * 8)
#elif defined(__aarch64__)
#define REGS_RET_OFF	0
#elif defined(__riscv) && __riscv_xlen == 64
#define REGS_RET_OFF	(10 * 8)
#elif defined(__powerpc64__)
#define REGS_RET_OFF	(3 * 8)
#elif defined(__arm__)
#define REGS_RET_OFF	0
#elif defined(__s390x__)
#define REGS_RET_OFF	(5 * 8)
#elif defined(__i386__)
#define REGS_RET_OFF	(6 * 4)
#elif defined(__mips__) && _MIPS_SIM == _ABI64
#define REGS_RET_OFF	(2 * 8)
#else
#error "which pt_regs word is the return value here?"
#endif
#if __SIZEOF_LONG__ == 8
#define REGS_RET_SIZE	BPF_DW
#else
#define REGS_RET_SIZE	BPF_W
#endif

/* Map element 0, as the programs write it. */
struct seen {
	uint64_t count;		/* runs */
	uint64_t func_ip;	/* bpf_get_func_ip() */
	uint64_t ax;		/* the return value register */
};

static inline long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* A one-element array map of @value_size bytes: its fd, or -1. */
static inline int create_array_map(uint32_t value_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(uint32_t);
	attr.value_size = value_size;
	attr.max_entries = 1;
	return sys_bpf(BPF_MAP_CREATE, &attr);
}

static inline int create_map(void)
{
	return create_array_map(sizeof(struct seen));
}

/* Element 0 of the map, or all ones when it cannot be read. */
static inline struct seen read_map(int map_fd)
{
	struct seen v;
	uint32_t key = 0;
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)&v;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr))
		memset(&v, 0xff, sizeof(v));
	return v;
}

#endif /* KP_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the static uprobe guest programs (uprobe/uprobe_pmu.c,
 * uprobe/uprobe_multi.c, bench/upbench_loop.c) share: the perf uprobe
 * PMU, a counting BPF program, and BPF uprobe_multi links.  Include
 * kp_bpf.h first.
 */
#ifndef KP_UPROBE_H
#define KP_UPROBE_H

#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_DIR "/sys/bus/event_source/devices/uprobe"

static inline int pmu_value(const char *file, const char *prefix)
{
	char path[256], buf[64];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), PMU_DIR "/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, prefix, strlen(prefix)))
		v = atoi(buf + strlen(prefix));
	fclose(f);
	return v;
}

/* A disabled uprobe PMU event on @path:@offset, counting in thread @pid. */
static inline int open_uprobe_at(int type, int ret_bit, const char *path,
				 unsigned long offset, int retprobe, int pid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = retprobe ? 1ULL << ret_bit : 0;
	attr.uprobe_path = (uint64_t)(uintptr_t)path;
	attr.probe_offset = offset;
	attr.disabled = 1;
	attr.sample_period = 1;
	attr.exclude_kernel = 1;
	return syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
}

static inline uint64_t count_of(int fd)
{
	uint64_t v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

#define I(c, d, s, o, k) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
			  .src_reg = (s), .off = (o), .imm = (k) })

/* A BPF_PROG_TYPE_KPROBE program of @n instructions: its fd, or -1. */
static inline int load_kprobe_prog(const struct bpf_insn *p, int n,
				   int attach_type)
{
	static char log[65536];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = attach_type;
	attr.insn_cnt = n;
	attr.insns = (uint64_t)(uintptr_t)p;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0)
		printf("# BPF_PROG_LOAD: %s\n# %.2000s\n", strerror(errno), log);
	return fd;
}

/* Count the run, remember bpf_get_func_ip() and ctx->ax in map[0]. */
static inline int load_prog(int map_fd, int attach_type)
{
	struct bpf_insn p[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_func_ip),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0),
		I(BPF_LDX | BPF_MEM | REGS_RET_SIZE, BPF_REG_8, BPF_REG_6, REGS_RET_OFF, 0),
		I(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		I(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		I(0, 0, 0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 4, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
		I(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1,
		  offsetof(struct seen, count), BPF_ADD),
		I(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_7,
		  offsetof(struct seen, func_ip), 0),
		I(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_8,
		  offsetof(struct seen, ax), 0),
		I(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return load_kprobe_prog(p, sizeof(p) / sizeof(p[0]), attach_type);
}

/* The userspace headers may predate uprobe_multi links: our own copy. */
#define UPROBE_MULTI_ATTACH	48	/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN	1	/* BPF_F_UPROBE_MULTI_RETURN */

struct uprobe_multi_link_attr {		/* bpf_attr.link_create */
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
	uint8_t pad[128 - 60];
};

/*
 * A BPF uprobe_multi link of @prog_fd on @cnt offsets of @path (USDT
 * semaphores at @refs unless NULL), filtered on process @pid unless 0:
 * its fd, or -1 with errno set.
 */
static inline int uprobe_multi_link(int prog_fd, const char *path,
				    const uint64_t *offs, const uint64_t *refs,
				    uint32_t cnt, int retprobe, int pid)
{
	struct uprobe_multi_link_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = UPROBE_MULTI_ATTACH;
	attr.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offs;
	attr.ref_ctr_offsets = (uint64_t)(uintptr_t)refs;
	attr.cnt = cnt;
	attr.pid = pid;
	return syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

#endif /* KP_UPROBE_H */

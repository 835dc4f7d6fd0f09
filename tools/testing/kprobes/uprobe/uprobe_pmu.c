// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_pmu: uprobes through the perf "uprobe" PMU and through a BPF
 * program, from user space, on a function of this very program.
 *
 *   uprobe_pmu [-n CALLS]      (default 50)
 *
 * The perf part opens events of the uprobe PMU (type from
 * /sys/bus/event_source/devices/uprobe/type, attr.uprobe_path (config1)
 * pointing at our executable, attr.probe_offset (config2) the file offset
 * of target_fn(), the retprobe bit from format/retprobe) bound to this
 * task, calls target_fn() CALLS times and checks the counts, entry and
 * return; a disabled event does not count; a missing file is -ENOENT and
 * a directory -EINVAL.  The BPF part loads a BPF_PROG_TYPE_KPROBE program
 * built here instruction by instruction (bpf() system call), attaches it
 * to such an event with PERF_EVENT_IOC_SET_BPF and checks what it saw:
 * CALLS runs, bpf_get_func_ip() at target_fn, and on the return probe the
 * function's return value in %rax.  The uprobe_multi part attaches the
 * program to target_fn() and target_fn2() at once with a BPF_LINK_CREATE
 * of type BPF_TRACE_UPROBE_MULTI filtered on our pid, entry and return:
 * every call of ours runs it, a forked child's calls do not.  Last, the
 * uretprobe system call made from anywhere but the trampoline is SIGILL.
 *
 * One TAP line per check; exits 1 when one failed.  Built static.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe pmu"
#include "../lib/kp_user.h"
#include "../lib/kp_bpf.h"

#define PMU_DIR "/sys/bus/event_source/devices/uprobe"

__attribute__((noinline)) long target_fn(long x)
{
	asm volatile("" ::: "memory");
	return x * 2 + 1;
}

__attribute__((noinline)) long target_fn2(long x)
{
	asm volatile("" ::: "memory");
	return x - 1;
}

static char exe[4096];
static unsigned long fn_off;

static int pmu_value(const char *file, const char *prefix)
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

static int open_uprobe(int type, int ret_bit, const char *path, int retprobe)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = retprobe ? 1ULL << ret_bit : 0;
	attr.uprobe_path = (uint64_t)(uintptr_t)path;
	attr.probe_offset = fn_off;
	attr.disabled = 1;
	attr.sample_period = 1;
	attr.exclude_kernel = 1;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long calls(int n)
{
	long r = 0;
	int i;

	for (i = 0; i < n; i++)
		r = target_fn(i);
	return r;
}

static uint64_t count_of(int fd)
{
	uint64_t v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

/* ---- BPF ---- */

#define I(c, d, s, o, k) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
			  .src_reg = (s), .off = (o), .imm = (k) })

/* Count the run, remember bpf_get_func_ip() and ctx->ax in map[0]. */
static int load_prog(int map_fd, int attach_type)
{
	struct bpf_insn p[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_func_ip),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0),
		I(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_8, BPF_REG_6, 80, 0), /* ax */
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
	static char log[65536];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = attach_type;
	attr.insn_cnt = sizeof(p) / sizeof(p[0]);
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

static void bpf_case(int type, int ret_bit, int retprobe, int n)
{
	const char *what = retprobe ? "return probe" : "entry probe";
	int map_fd = create_map(), prog_fd, fd;
	long last;
	struct seen s;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, 0);
	result(prog_fd >= 0, "bpf %s: the program loads", what);
	if (prog_fd < 0)
		return;
	fd = open_uprobe(type, ret_bit, exe, retprobe);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		result(0, "bpf %s: attached (%s)", what, strerror(errno));
		return;
	}
	last = calls(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	s = read_map(map_fd);
	result(s.count == (uint64_t)n, "bpf %s: %d runs for %d calls", what,
	       (int)s.count, n);
	result(s.func_ip == (uint64_t)(uintptr_t)target_fn,
	       "bpf %s: bpf_get_func_ip() is target_fn (%#llx, want %p)", what,
	       (unsigned long long)s.func_ip, (void *)target_fn);
	if (retprobe)
		result(s.ax == (uint64_t)last, "bpf %s: %%rax is the return value (%lld, want %ld)",
		       what, (long long)s.ax, last);
	close(fd);
	close(prog_fd);
	close(map_fd);
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

static void multi_case(int retprobe, int n)
{
	const char *what = retprobe ? "uprobe_multi return" : "uprobe_multi entry";
	uint64_t offs[2] = { fn_off, self_file_offset((void *)target_fn2) };
	struct uprobe_multi_link_attr attr;
	int map_fd = create_map(), prog_fd, link, i;
	struct seen s;
	pid_t child;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	result(prog_fd >= 0, "%s: the program loads", what);
	if (prog_fd < 0)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = UPROBE_MULTI_ATTACH;
	attr.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	attr.path = (uint64_t)(uintptr_t)exe;
	attr.offsets = (uint64_t)(uintptr_t)offs;
	attr.cnt = 2;
	attr.pid = getpid();
	link = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	result(link >= 0, "%s: link on target_fn and target_fn2 (%s)", what,
	       link >= 0 ? "ok" : strerror(errno));
	if (link < 0)
		goto out;
	for (i = 0; i < n; i++)
		target_fn2(target_fn(i));
	child = fork();
	if (!child) {
		calls(n);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	s = read_map(map_fd);
	result(s.count == 2ULL * n, "%s: %d runs for %d calls of ours, none for the child's",
	       what, (int)s.count, 2 * n);
	close(link);
	calls(n);
	s = read_map(map_fd);
	result(s.count == 2ULL * n, "%s: no run after the link is closed (%d)",
	       what, (int)s.count);
out:
	close(prog_fd);
	close(map_fd);
}

int main(int argc, char **argv)
{
	int n = 50, type, ret_bit, fd, i, status = 0;
	pid_t child;
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-n"))
		n = atoi(argv[2]);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = '\0';
	fn_off = self_file_offset((void *)target_fn);
	type = pmu_value("type", "");
	ret_bit = pmu_value("format/retprobe", "config:");
	result(type > 0 && ret_bit >= 0 && fn_off, "PMU type %d, retprobe bit %d, target_fn at %s:%#lx",
	       type, ret_bit, exe, fn_off);
	if (type <= 0 || ret_bit < 0 || !fn_off)
		return 1;

	for (i = 0; i < 2; i++) {
		const char *what = i ? "return probe" : "entry probe";

		fd = open_uprobe(type, ret_bit, exe, i);
		if (fd < 0) {
			result(0, "perf %s opens (%s)", what, strerror(errno));
			continue;
		}
		calls(n);
		result(count_of(fd) == 0, "perf %s: nothing counted while disabled", what);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		calls(n);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		result(count_of(fd) == (uint64_t)n, "perf %s: %d calls counted (got %lld)",
		       what, n, (long long)count_of(fd));
		close(fd);
	}

	fd = open_uprobe(type, ret_bit, "/nonexistent/file", 0);
	result(fd < 0 && errno == ENOENT, "perf: a missing file is refused with ENOENT (%s)",
	       fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_uprobe(type, ret_bit, "/", 0);
	result(fd < 0 && errno == EINVAL, "perf: a directory is refused with EINVAL (%s)",
	       fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);

	bpf_case(type, ret_bit, 0, n);
	bpf_case(type, ret_bit, 1, n);
	multi_case(0, n);
	multi_case(1, n);

	/* sys_uretprobe (335) belongs to the trampoline alone. */
	child = fork();
	if (!child) {
		syscall(335);
		_exit(0);
	}
	waitpid(child, &status, 0);
	result(WIFSIGNALED(status) && WTERMSIG(status) == SIGILL,
	       "the uretprobe system call outside the trampoline: SIGILL (status %#x)",
	       status);
	return failures ? 1 : 0;
}

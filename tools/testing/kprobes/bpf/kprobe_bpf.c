// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_bpf: BPF programs on kprobes, from user space, without libbpf.
 *
 *   kprobe_bpf [-n CALLS] [SYMBOL]     (defaults: 50, getppid's system call
 *                                      entry, __x64_sys_getppid on x86_64,
 *                                      __arm64_sys_getppid on arm64,
 *                                      sys_getppid on ppc64el)
 *
 * SYMBOL must be what this program's getppid() system call runs.  The
 * program loads a BPF_PROG_TYPE_KPROBE program written here instruction by
 * instruction (bpf() system call, BPF_PROG_LOAD), opens a perf event of the
 * "kprobe" PMU on SYMBOL (perf_event_open(), type from
 * /sys/bus/event_source/devices/kprobe/type), attaches the program with
 * PERF_EVENT_IOC_SET_BPF, calls getppid() CALLS times and reads what the
 * program recorded in an array map.  The program only looks at this
 * process (it runs for every task that hits the probe) and records, in
 * map element 0: how many times it ran, bpf_get_func_ip() (the probed
 * function as the kprobes core tells BPF through kprobe_running()) and
 * regs->ax (the return value, for a return probe).  Rounds:
 *
 *   kprobe     count == CALLS, func_ip == SYMBOL's address in /proc/kallsyms
 *   kretprobe  the same, and regs->ax is what getppid() returned
 *   override   bpf_override_return(-EXDEV) in an entry probe: getppid()
 *              fails with EXDEV, CALLS times, then works again once the
 *              event is closed
 *
 * and in every round: the probe is in the kprobes list while the event is
 * open (on x86_64 and s390x [FTRACE] when the kernel has the function
 * tracer: system call entry points are ftrace call sites; arm64 has no
 * kprobes on ftrace),
 * and after the event is closed it is gone,
 * the program no longer runs and getppid() works.
 *
 * Prints "ok - ..." / "not ok - ..." lines (others start with "#") for the
 * guest's init; exits 1 when a check failed.  Built static on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KP_TAP_WHAT "bpf kprobe"
#include "../lib/kp_user.h"
#include "../lib/kp_bpf.h"

#define PMU_DIR "/sys/bus/event_source/devices/kprobe"
#define KP_LIST "/sys/kernel/debug/kprobes/list"
#define FTRACE_FUNCS "/sys/kernel/tracing/available_filter_functions"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* getppid's system call entry; whether kprobes there sit on ftrace. */
#if defined(__aarch64__)
#define SYS_GETPPID	"__arm64_sys_getppid"
#define KP_ON_FTRACE	0
#elif defined(__powerpc64__)
#define SYS_GETPPID	"sys_getppid"
#define KP_ON_FTRACE	1
#elif defined(__arm__)
#define SYS_GETPPID	"sys_getppid"	/* no system call wrappers */
#define KP_ON_FTRACE	0
#elif defined(__s390x__)
#define SYS_GETPPID	"__s390x_sys_getppid"
#define KP_ON_FTRACE	1
#elif defined(__mips__)
#define SYS_GETPPID	"sys_getppid"	/* no system call wrappers */
#define KP_ON_FTRACE	0
#elif defined(__i386__)
#define SYS_GETPPID	"__ia32_sys_getppid"
#define KP_ON_FTRACE	1
#else
#define SYS_GETPPID	"__x64_sys_getppid"
#define KP_ON_FTRACE	1
#endif

/*
 * Where a probe on a function's entry lands, from its symbol's address: on
 * it, or x86_64 just past an endbr64 (4); powerpc64 on the function's
 * local entry or its ftrace call site, within its first 16 bytes
 * (upstream's powerpc kprobe_lookup_name()).  bpf_get_func_ip() gives the
 * symbol on x86_64 (bpf_trace.c's get_entry_ip() steps back over the
 * endbr64) but the probe's own address everywhere else, which on powerpc64
 * is not the symbol's.
 */
static int at_entry(unsigned long long a, unsigned long long addr)
{
#if defined(__powerpc64__)
	return a >= addr && a <= addr + 16;
#else
	return a == addr || a == addr + 4;
#endif
}

/* ---- instructions ---- */

static struct bpf_insn insn(uint8_t code, int dst, int src, int off, int imm)
{
	struct bpf_insn i;

	memset(&i, 0, sizeof(i));
	i.code = code;
	i.dst_reg = dst;
	i.src_reg = src;
	i.off = off;
	i.imm = imm;
	return i;
}

#define MOV_REG(d, s)	insn(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, k)	insn(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, k)
#define ADD_IMM(d, k)	insn(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, k)
#define RSH_IMM(d, k)	insn(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, k)
/* A load of the return value register from the context (kp_bpf.h). */
#define LOAD_RET(d, s)	insn(BPF_LDX | BPF_MEM | REGS_RET_SIZE, d, s, REGS_RET_OFF, 0)
#define STORE64(d, o, s) insn(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STORE32_IMM(d, o, k) insn(BPF_ST | BPF_MEM | BPF_W, d, 0, o, k)
#define ATOMIC_ADD64(d, o, s) insn(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define CALL(f)		insn(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* Jumps to "out:" get their offset once build_prog() knows where it is. */
#define JNE_IMM(d, k)	insn(BPF_JMP | BPF_JNE | BPF_K, d, 0, 0, k)
#define JEQ_IMM(d, k)	insn(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 0, k)

/*
 * The program.  r6 = ctx (struct pt_regs *); nothing happens unless the
 * current process is @pid; with @override (an errno), the probed function
 * is made to return -@override at once.
 */
static int build_prog(struct bpf_insn *p, int map_fd, int pid, int override)
{
	int n = 0, i, jumps[2], nj = 0;

	p[n++] = MOV_REG(BPF_REG_6, BPF_REG_1);
	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = RSH_IMM(BPF_REG_0, 32);		/* the tgid */
	jumps[nj++] = n;
	p[n++] = JNE_IMM(BPF_REG_0, pid);
	if (override) {
		p[n++] = MOV_REG(BPF_REG_1, BPF_REG_6);
		p[n++] = MOV_IMM(BPF_REG_2, -override);
		p[n++] = CALL(BPF_FUNC_override_return);
	}
	p[n++] = MOV_REG(BPF_REG_1, BPF_REG_6);
	p[n++] = CALL(BPF_FUNC_get_func_ip);
	p[n++] = MOV_REG(BPF_REG_7, BPF_REG_0);
	p[n++] = LOAD_RET(BPF_REG_8, BPF_REG_6);
	/* r0 = map_lookup_elem(map, &(u32){0}) */
	p[n++] = STORE32_IMM(BPF_REG_10, -4, 0);
	p[n++] = insn(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n++] = insn(0, 0, 0, 0, 0);		/* upper half of the 64-bit load */
	p[n++] = MOV_REG(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD_IMM(BPF_REG_2, -4);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	jumps[nj++] = n;
	p[n++] = JEQ_IMM(BPF_REG_0, 0);
	p[n++] = MOV_IMM(BPF_REG_1, 1);
	p[n++] = ATOMIC_ADD64(BPF_REG_0, offsetof(struct seen, count), BPF_REG_1);
	p[n++] = STORE64(BPF_REG_0, offsetof(struct seen, func_ip), BPF_REG_7);
	p[n++] = STORE64(BPF_REG_0, offsetof(struct seen, ax), BPF_REG_8);
	/* out: */
	for (i = 0; i < nj; i++)
		p[jumps[i]].off = n - jumps[i] - 1;
	p[n++] = MOV_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();
	return n;
}

static char verifier_log[65536];

static int load_prog(int map_fd, int override)
{
	struct bpf_insn prog[64];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insn_cnt = build_prog(prog, map_fd, getpid(), override);
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.log_buf = (uint64_t)(uintptr_t)verifier_log;
	attr.log_size = sizeof(verifier_log);
	attr.log_level = 1;
	verifier_log[0] = '\0';
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		char *line = strtok(verifier_log, "\n");

		printf("# BPF_PROG_LOAD: %s; verifier log:\n", strerror(errno));
		for (; line; line = strtok(NULL, "\n"))
			printf("#   %s\n", line);
	}
	return fd;
}

/* ---- the kernel side ---- */

/* Read one number from PATH with scanf format FMT; 0 on success. */
static int read_num(const char *path, const char *fmt, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, fmt, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/*
 * The kprobes list line of the probe of type T at ADDR, the entry of a
 * function (or where at_entry() says a probe there may land), copied to
 * BUF; 1 when there is one,
 * 0 when not, -1 without a list.  By address: the list names the probe
 * with a symbol of its own choice, and system call stubs have aliases
 * (__x64_sys_getppid is __do_sys_getppid).
 */
static int list_line(unsigned long long addr, char t, char *buf, size_t len)
{
	char line[512], type[8];
	unsigned long long a;
	FILE *f = fopen(KP_LIST, "r");
	int n = 0;

	if (!f)
		return -1;
	while (!n && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %7s", &a, type) == 2 && type[0] == t &&
		    at_entry(a, addr)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line);
			n = 1;
		}
	}
	fclose(f);
	return n;
}

/* The kprobes list as comment lines, after a failed check. */
static void show_list(void)
{
	char line[512];
	FILE *f = fopen(KP_LIST, "r");

	if (!f)
		return;
	printf("# %s:\n", KP_LIST);
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

static int open_kprobe(int type, unsigned long long config, const char *sym)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.kprobe_func = (uint64_t)(uintptr_t)sym;	/* config1 */
	attr.probe_offset = 0;				/* config2 */
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	/* Not bound to a task: the program runs for whoever hits the probe. */
	return syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- one round ---- */

struct round {
	const char *what;
	char type;		/* 'k' or 'r', as in the kprobes list */
	int override;		/* the errno to return, or 0 */
};

static void run_round(const struct round *r, int pmu, int retbit,
		      const char *sym, unsigned long long addr, int n)
{
	unsigned long long cfg = 0;
	int map_fd, prog_fd, ev_fd, i, fails = 0;
	long ppid = getppid(), got, bad_got = 0, bad_err = 0;
	unsigned long long probe_at = 0;	/* from the kprobes list */
	char line[512];
	struct seen s;

	if (r->type == 'r')
		cfg = 1ULL << retbit;
	map_fd = create_map();
	if (map_fd < 0) {
		result(0, "%s: BPF_MAP_CREATE (%s)", r->what, strerror(errno));
		return;
	}
	prog_fd = load_prog(map_fd, r->override);
	result(prog_fd >= 0, "%s: BPF_PROG_LOAD: the verifier accepts the program",
	       r->what);
	if (prog_fd < 0)
		goto out_map;
	ev_fd = open_kprobe(pmu, cfg, sym);
	if (ev_fd < 0) {
		result(0, "%s: perf_event_open on %s (%s)", r->what, sym, strerror(errno));
		goto out_prog;
	}
	if (ioctl(ev_fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		result(0, "%s: PERF_EVENT_IOC_SET_BPF (%s)", r->what, strerror(errno));
		close(ev_fd);
		goto out_prog;
	}
	result(1, "%s: perf_event_open on %s and PERF_EVENT_IOC_SET_BPF", r->what, sym);
	ioctl(ev_fd, PERF_EVENT_IOC_ENABLE, 0);

	i = list_line(addr, r->type, line, sizeof(line));
	if (i == 1)
		sscanf(line, "%llx", &probe_at);
	if (i < 0) {
		printf("# no %s to look at\n", KP_LIST);
	} else {
		result(i == 1, "%s: the kprobes list shows a probe of type %c at %s ('%s')",
		       r->what, r->type, sym, i ? line : "");
		if (i != 1)
			show_list();
		/*
		 * System call entries are ftrace call sites when ftrace is
		 * in, and x86's kprobes use them (arm64's do not).
		 */
		if (KP_ON_FTRACE && access(FTRACE_FUNCS, R_OK) == 0)
			result(i == 1 && strstr(line, "[FTRACE]"),
			       "%s: the kernel has the function tracer: the probe is [FTRACE]",
			       r->what);
	}

	for (i = 0; i < n; i++) {
		errno = 0;
		got = syscall(SYS_getppid);
		if (r->override ? !(got == -1 && errno == r->override) : got != ppid) {
			fails++;
			bad_got = got;
			bad_err = errno;
		}
	}
	s = read_map(map_fd);
	result(s.count == (uint64_t)n, "%s: the program ran %llu times for %d calls",
	       r->what, (unsigned long long)s.count, n);
#if defined(__powerpc64__)
	result(s.func_ip == probe_at,
	       "%s: bpf_get_func_ip() gave %#llx, the probe is at %#llx (%s at %#llx in /proc/kallsyms)",
	       r->what, (unsigned long long)s.func_ip, probe_at, sym, addr);
#else
	result(s.func_ip == addr,
	       "%s: bpf_get_func_ip() gave %#llx, %s is at %#llx in /proc/kallsyms",
	       r->what, (unsigned long long)s.func_ip, sym, addr);
#endif
	if (r->type == 'r')
		result(s.ax == (uint64_t)ppid,
		       "%s: regs->ax at the return is %lld, getppid() returns %ld",
		       r->what, (long long)s.ax, ppid);
	if (r->override)
		result(!fails, "%s: getppid() failed with %s in all %d calls (%d did not; the last of those got %ld, %s)",
		       r->what, strerror(r->override), n, fails, bad_got, strerror(bad_err));
	else
		result(!fails, "%s: getppid() still returns %ld (%d calls did not; the last of those got %ld)",
		       r->what, ppid, fails, bad_got);

	close(ev_fd);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	s = read_map(map_fd);
	result(s.count == (uint64_t)n,
	       "%s: event closed, %d more calls leave the count at %d (now %llu)",
	       r->what, n, n, (unsigned long long)s.count);
	got = syscall(SYS_getppid);
	result(got == ppid, "%s: event closed, getppid() returns %ld (want %ld)",
	       r->what, got, ppid);
	i = list_line(addr, r->type, line, sizeof(line));
	if (i >= 0)
		result(i == 0, "%s: the probe left the kprobes list on close", r->what);
out_prog:
	close(prog_fd);
out_map:
	close(map_fd);
}

int main(int argc, char **argv)
{
	const struct round rounds[] = {
		{ "kprobe", 'k', 0 },
		{ "kretprobe", 'r', 0 },
		{ "override", 'k', EXDEV },
	};
	const char *sym = SYS_GETPPID;
	int n = 50, pmu, retbit = -1, opt;
	unsigned long long addr;
	size_t i;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: %s [-n CALLS] [SYMBOL]\n", argv[0]);
			return 2;
		}
		n = atoi(optarg);
	}
	if (optind < argc)
		sym = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (read_num(PMU_DIR "/type", "%d", &pmu) || pmu <= 0) {
		result(0, "%s/type gives the kprobe PMU type", PMU_DIR);
		return 1;
	}
	if (read_num(PMU_DIR "/format/retprobe", "config:%d", &retbit) ||
	    retbit < 0 || retbit > 63) {
		result(0, "%s/format/retprobe names a bit of config", PMU_DIR);
		return 1;
	}
	addr = ksym_addr(sym);
	if (!addr) {
		result(0, "%s has an address in /proc/kallsyms", sym);
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(rounds); i++) {
#ifdef __arm__
		/* 32-bit arm has no HAVE_KPROBE_OVERRIDE, upstream either. */
		if (rounds[i].override) {
			printf("ok - " KP_TAP_WHAT ": %s # SKIP no bpf_override_return() on 32-bit arm\n",
			       rounds[i].what);
			continue;
		}
#endif
		run_round(&rounds[i], pmu, retbit, sym, addr, n);
	}
	return failures ? 1 : 0;
}

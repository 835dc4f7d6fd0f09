// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_corners: uprobe cases where what a user sees must be what stock
 * Linux shows, each on code of this very program, through the perf uprobe
 * PMU (and a raw-bpf() BPF program) from user space.
 *
 *   uprobe_corners stack [N]   user stacks from a return probe: top() ->
 *                              outer() -> inner(), return probes on outer
 *                              and inner; inner's return samples its user
 *                              stack through perf (PERF_SAMPLE_CALLCHAIN)
 *                              and through bpf_get_stack(BPF_F_USER_STACK).
 *                              Both must be exactly the three return
 *                              addresses: in outer, in top, in base()
 *   uprobe_corners retimm [N]  return probes on imm_f, which returns with
 *                              "ret $8", and on its caller imm_caller:
 *                              every call returns where it should, and
 *                              each return probe counts N
 *   uprobe_corners popf [N]    a probe on a popfq that sets TF: the
 *                              program's own single-step trap comes after
 *                              the next instruction, once per call
 *   uprobe_corners tramp       the return trampoline entered with nothing
 *                              pending: by a jump (SIGILL, as stock), and
 *                              as the return address of a probed function
 *                              entered by a jump (no instance; its return
 *                              is SIGILL)
 *   uprobe_corners umip [N]    probes on sgdt, sidt and smsw to memory,
 *                              which the kernel emulates under UMIP (no
 *                              trap after the stepped copy): each stores
 *                              what it stores unprobed, each probe counts
 *                              N, no signal
 *   uprobe_corners twomap FILE N M   map the page of twin_fn() again,
 *                              print "pid P addr A" (twin_fn), wait until
 *                              FILE exists, call the copy N times and the
 *                              original M times, print "done", sleep 30 s
 *
 * One TAP line per check; exits 1 when one failed.  Built static, without
 * frame pointers in C: the assembly functions keep their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <ucontext.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe corners"
#include "../lib/kp_user.h"
#include "../lib/kp_bpf.h"
#include "../lib/kp_uprobe.h"

/*
 * base -> top -> outer -> inner, each with a frame pointer; base clears
 * %rbp first, so that a frame-pointer walk ends at top's frame.  The
 * return addresses are global labels.
 */
asm(
"	.text\n"
"	.globl base, top, outer, inner, ret_in_outer, ret_in_top, ret_in_base\n"
"base:	push %rbp\n"
"	xor %ebp, %ebp\n"
"	call top\n"
"ret_in_base:\n"
"	pop %rbp\n"
"	ret\n"
"top:	push %rbp\n"
"	mov %rsp, %rbp\n"
"	call outer\n"
"ret_in_top:\n"
"	pop %rbp\n"
"	ret\n"
"outer:	push %rbp\n"
"	mov %rsp, %rbp\n"
"	call inner\n"
"ret_in_outer:\n"
"	pop %rbp\n"
"	ret\n"
"inner:	push %rbp\n"
"	mov %rsp, %rbp\n"
"	mov $7, %eax\n"
"	pop %rbp\n"
"	ret\n"
/* imm_f(): 42, popping the argument its caller pushed. */
"	.globl imm_caller, imm_f\n"
"imm_caller:\n"
"	push %rbp\n"
"	mov %rsp, %rbp\n"
"	push %rdi\n"
"	call imm_f\n"
"	add $1, %eax\n"
"	pop %rbp\n"
"	ret\n"
"imm_f:	mov $42, %eax\n"
"	ret $8\n"
/* popf with TF set: the trap comes after the first nop. */
"	.globl popf_fn, popf_probe\n"
"popf_fn:\n"
"	pushfq\n"
"	orq $0x100, (%rsp)\n"
"popf_probe:\n"
"	popfq\n"
"	nop\n"
"	nop\n"
"	ret\n"
/* ra_fn(): its own return address, read after its entry hit. */
"	.globl ra_fn, jump_to, call_via\n"
"ra_fn:	nop\n"
"	mov (%rsp), %rax\n"
"	ret\n"
/* jump_to(addr): enter addr by a jump, returning to our caller. */
"jump_to:\n"
"	jmp *%rdi\n"
/* call_via(fn, ret): enter fn by a jump with ret as its return address. */
"call_via:\n"
"	push %rsi\n"
"	jmp *%rdi\n"
/* desc_fn(buf): the descriptor tables' registers and the MSW into buf. */
"	.globl desc_fn, sgdt_probe, sidt_probe, smsw_probe\n"
"desc_fn:\n"
"sgdt_probe:\n"
"	sgdt (%rdi)\n"
"sidt_probe:\n"
"	sidt 16(%rdi)\n"
"smsw_probe:\n"
"	smsw 32(%rdi)\n"
"	ret\n"
/* twin_fn(): position independent, for a second mapping of its page. */
"	.globl twin_fn\n"
"	.balign 4096\n"
"twin_fn:\n"
"	push %rbp\n"
"	pop %rbp\n"
"	ret\n"
);

void base(void);
void top(void);
void outer(void);
void inner(void);
extern char ret_in_outer[], ret_in_top[], ret_in_base[];
long imm_caller(long arg);
void imm_f(void);
void popf_fn(void);
extern char popf_probe[];
unsigned long ra_fn(void);
void jump_to(unsigned long addr);
void call_via(void (*fn)(void), unsigned long ret);
void twin_fn(void);
void desc_fn(unsigned char *buf);
extern char sgdt_probe[], sidt_probe[], smsw_probe[];

static char exe[4096];
static int pmu_type, ret_bit;

/* A uprobe PMU event of ours on @fn, enabled. */
static int probe(void *fn, int retprobe, uint64_t sample_type)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu_type;
	attr.config = retprobe ? 1ULL << ret_bit : 0;
	attr.uprobe_path = (uint64_t)(uintptr_t)exe;
	attr.probe_offset = self_file_offset(fn);
	attr.sample_period = 1;
	attr.sample_type = sample_type;
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 1;
	attr.wakeup_events = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		result(0, "perf_event_open on %p (%s)", fn, strerror(errno));
	return fd;
}

/* ---- stack traces from a return probe ---- */

#define STACK_MAX	8
#define RING_PAGES	8

static const char *expected_name[] = { "ret_in_outer", "ret_in_top",
				       "ret_in_base" };

/*
 * Is @ips[0..n) exactly the three expected return addresses?  Describe it
 * in @buf either way.
 */
static int stack_right(const uint64_t *ips, int n, char *buf, size_t len)
{
	const uint64_t want[] = { (uintptr_t)ret_in_outer,
				  (uintptr_t)ret_in_top,
				  (uintptr_t)ret_in_base };
	int i, ok = n == 3, at = 0;

	for (i = 0; i < n && at < (int)len - 40; i++) {
		int j, known = -1;

		for (j = 0; j < 3; j++)
			if (ips[i] == want[j])
				known = j;
		at += snprintf(buf + at, len - at, " %s", known >= 0 ?
			       expected_name[known] : "?");
		if (known < 0)
			at += snprintf(buf + at, len - at, "(%#llx)",
				       (unsigned long long)ips[i]);
		if (i < 3 && ips[i] != want[i])
			ok = 0;
	}
	if (!n)
		snprintf(buf, len, " (none)");
	return ok;
}

/* The user entries of the first sample in @ring, or -1. */
static int first_sample(void *ring, uint64_t *ips)
{
	struct perf_event_mmap_page *meta = ring;
	char *data = (char *)ring + getpagesize();
	uint64_t head = meta->data_head, pos = 0;

	__sync_synchronize();
	while (pos < head) {
		struct perf_event_header *h = (void *)(data + pos);

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t *p = (uint64_t *)(h + 1), nr = *p++;
			int n = 0;

			for (; nr; nr--, p++)
				if (*p < (uint64_t)PERF_CONTEXT_MAX &&
				    n < STACK_MAX)
					ips[n++] = *p;
			return n;
		}
		pos += h->size;
	}
	return -1;
}

/* r0 = bpf_get_stack(ctx, map[0], STACK_MAX * 8, BPF_F_USER_STACK) */
static int load_stack_prog(int map_fd)
{
	struct bpf_insn p[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		I(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		I(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		I(0, 0, 0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 5, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, STACK_MAX * 8),
		I(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_F_USER_STACK),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_stack),
		I(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return load_kprobe_prog(p, sizeof(p) / sizeof(p[0]), 0);
}

static void stack_case(int n)
{
	int outer_fd, perf_fd, bpf_fd, map_fd, prog_fd, i, got;
	uint64_t ips[STACK_MAX], map_ips[STACK_MAX];
	uint32_t key = 0;
	union bpf_attr attr;
	char desc[512];
	void *ring;

	outer_fd = probe((void *)outer, 1, 0);
	perf_fd = probe((void *)inner, 1, PERF_SAMPLE_CALLCHAIN);
	bpf_fd = probe((void *)inner, 1, 0);
	map_fd = create_array_map(STACK_MAX * sizeof(uint64_t));
	prog_fd = map_fd < 0 ? -1 : load_stack_prog(map_fd);
	if (outer_fd < 0 || perf_fd < 0 || bpf_fd < 0 || prog_fd < 0) {
		result(0, "stack: events and the BPF program set up");
		return;
	}
	ring = mmap(NULL, (RING_PAGES + 1) * getpagesize(),
		    PROT_READ | PROT_WRITE, MAP_SHARED, perf_fd, 0);
	if (ring == MAP_FAILED ||
	    ioctl(bpf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		result(0, "stack: ring buffer and BPF attach (%s)", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		base();

	got = first_sample(ring, ips);
	if (got < 0) {
		result(0, "stack: perf recorded a sample of inner's return");
	} else {
		int ok = stack_right(ips, got, desc, sizeof(desc));

		result(ok, "stack: perf user callchain from inner's return is ret_in_outer ret_in_top ret_in_base:%s",
		       desc);
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)map_ips;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		result(0, "stack: BPF map read (%s)", strerror(errno));
	} else {
		for (got = 0; got < STACK_MAX && map_ips[got]; got++)
			;
		result(stack_right(map_ips, got, desc, sizeof(desc)),
		       "stack: bpf_get_stack(BPF_F_USER_STACK) from inner's return is ret_in_outer ret_in_top ret_in_base:%s",
		       desc);
	}
	result(count_of(outer_fd) == (uint64_t)n,
	       "stack: outer's return probe counted %d (got %lld)", n,
	       (long long)count_of(outer_fd));
	close(bpf_fd);
	close(perf_fd);
	close(outer_fd);
	close(prog_fd);
	close(map_fd);
}

/* ---- ret $imm16 ---- */

static void retimm_case(int n)
{
	int f_fd = probe((void *)imm_f, 1, 0);
	int c_fd = probe((void *)imm_caller, 1, 0);
	int i, bad = 0;

	if (f_fd < 0 || c_fd < 0)
		return;
	for (i = 0; i < n; i++)
		if (imm_caller(i) != 43)
			bad++;
	result(!bad, "retimm: imm_caller() returned 43 from every call through \"ret $8\" (%d wrong)",
	       bad);
	result(count_of(f_fd) == (uint64_t)n,
	       "retimm: imm_f's return probe counted %d (got %lld)", n,
	       (long long)count_of(f_fd));
	result(count_of(c_fd) == (uint64_t)n,
	       "retimm: imm_caller's return probe counted %d (got %lld)", n,
	       (long long)count_of(c_fd));
	close(c_fd);
	close(f_fd);
}

/* ---- popf setting TF ---- */

static volatile int traps;

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	traps++;
	uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L;
}

static void popf_case(int n)
{
	struct sigaction sa = { .sa_sigaction = on_trap,
				.sa_flags = SA_SIGINFO };
	int fd = probe(popf_probe, 0, 0);
	int i;

	if (fd < 0)
		return;
	sigaction(SIGTRAP, &sa, NULL);
	traps = 0;
	for (i = 0; i < n; i++)
		popf_fn();
	result(traps == n, "popf: a probed popfq that sets TF: %d single-step traps for %d calls (got %d)",
	       n, n, traps);
	result(count_of(fd) == (uint64_t)n,
	       "popf: the probe on popfq counted %d (got %lld)", n,
	       (long long)count_of(fd));
	signal(SIGTRAP, SIG_DFL);
	close(fd);
}

/* ---- the trampoline with nothing pending ---- */

static sigjmp_buf tramp_jb;
static volatile int tramp_sig;

static void on_tramp_sig(int sig)
{
	tramp_sig = sig;
	siglongjmp(tramp_jb, 1);
}

static void tramp_case(void)
{
	struct sigaction sa = { .sa_handler = on_tramp_sig };
	int fd = probe((void *)ra_fn, 1, 0);
	unsigned long tramp;

	if (fd < 0)
		return;
	tramp = ra_fn();
	result(count_of(fd) == 1, "tramp: ra_fn's return probe counted 1 (got %lld)",
	       (long long)count_of(fd));
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);

	tramp_sig = 0;
	if (!sigsetjmp(tramp_jb, 1))
		jump_to(tramp);
	result(tramp_sig == SIGILL,
	       "tramp: a jump to the trampoline with nothing pending: SIGILL (got %d)",
	       tramp_sig);

	tramp_sig = 0;
	if (!sigsetjmp(tramp_jb, 1))
		call_via((void (*)(void))ra_fn, tramp);
	result(tramp_sig == SIGILL,
	       "tramp: a probed function entered with the trampoline as return address and nothing pending: SIGILL at its return (got %d)",
	       tramp_sig);
	result(count_of(fd) == 1,
	       "tramp: no return probe hit for that entry (count %lld)",
	       (long long)count_of(fd));
	signal(SIGILL, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	close(fd);
}

/* ---- instructions the kernel emulates in the step ---- */

static void umip_case(int n)
{
	static char *const at[] = { sgdt_probe, sidt_probe, smsw_probe };
	static const char *const name[] = { "sgdt", "sidt", "smsw" };
	unsigned char ref[48], got[48];
	int fd[3], i, bad = 0;

	memset(ref, 0, sizeof(ref));
	desc_fn(ref);
	for (i = 0; i < 3; i++) {
		fd[i] = probe(at[i], 0, 0);
		if (fd[i] < 0)
			return;
	}
	for (i = 0; i < n; i++) {
		memset(got, 0, sizeof(got));
		desc_fn(got);
		if (memcmp(got, ref, sizeof(got)))
			bad++;
	}
	result(!bad, "umip: probed sgdt, sidt and smsw store what they store unprobed in %d calls (%d differ)",
	       n, bad);
	for (i = 0; i < 3; i++) {
		result(count_of(fd[i]) == (uint64_t)n,
		       "umip: the probe on %s counted %d (got %lld)", name[i], n,
		       (long long)count_of(fd[i]));
		close(fd[i]);
	}
}

/* ---- the same text mapped twice ---- */

static int twomap(const char *file, int n, int m)
{
	unsigned long off = self_file_offset((void *)twin_fn);
	int fd = open("/proc/self/exe", O_RDONLY), i;
	void (*copy)(void);
	struct stat st;
	char *map;

	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);
	if (fd < 0 || map == MAP_FAILED || off & 4095)
		return 3;
	copy = (void (*)(void))map;
	printf("pid %d addr %#lx\n", getpid(), (unsigned long)twin_fn);
	while (stat(file, &st))
		usleep(20000);
	for (i = 0; i < n; i++)
		copy();
	for (i = 0; i < m; i++)
		twin_fn();
	printf("done\n");
	sleep(30);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20;
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 4 && !strcmp(argv[1], "twomap"))
		return twomap(argv[2], atoi(argv[3]), atoi(argv[4]));
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = '\0';
	pmu_type = pmu_value("type", "");
	ret_bit = pmu_value("format/retprobe", "config:");
	if (pmu_type <= 0 || ret_bit < 0 || argc < 2) {
		result(0, "uprobe PMU type %d retprobe bit %d, mode given", pmu_type,
		       ret_bit);
		return 1;
	}
	if (!strcmp(argv[1], "stack"))
		stack_case(n);
	else if (!strcmp(argv[1], "retimm"))
		retimm_case(n);
	else if (!strcmp(argv[1], "popf"))
		popf_case(n);
	else if (!strcmp(argv[1], "tramp"))
		tramp_case();
	else if (!strcmp(argv[1], "umip"))
		umip_case(n);
	else
		return 2;
	return failures ? 1 : 0;
}

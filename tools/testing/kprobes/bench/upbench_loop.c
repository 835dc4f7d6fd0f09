// SPDX-License-Identifier: GPL-2.0
/*
 * User side of the uprobe benchmark: small functions, each starting with
 * one instruction class a probe goes on, called in a tight loop.
 *
 *   upbench_loop offsets          "<case> <file offset of its function>"
 *   upbench_loop loop CASE N      call CASE N times: "loop CASE N <ns>"
 *   upbench_loop threads CASE N T T threads call CASE N times each, at
 *                                 once: "threads CASE N T <ns>"
 *   upbench_loop multi N          attach one BPF uprobe_multi link to N
 *                                 instructions of a nop sled in this very
 *                                 (running, hence armed) program, hit
 *                                 each site once, then close it (the
 *                                 hits timed neither way): "multi N
 *                                 <attach ns> <detach ns>"
 *   upbench_loop fork|exec|mmap N N forks (child exits at once), fork and
 *                                 exec of "upbench_loop true", or mmaps of
 *                                 this file's text: "OP N <ns>"
 *
 * With the perf uprobe PMU's counting events as the consumer, as
 * "perf stat -e" opens them (the probe on this very program, counting in
 * this process and, inherited, its children):
 *
 *   upbench_loop perf CASE N      call CASE N times with an event on it
 *                                 ("func": a return probe): "perf CASE N
 *                                 <ns> <count>"
 *   upbench_loop pclose N         open N events on N sites of the sled,
 *                                 then close them one by one: "pclose N
 *                                 <ns> <ns of this process's CPU time>"
 *   upbench_loop pmmap N          N times mmap, first touch and munmap of
 *                                 this file's probed page while another
 *                                 process is probed there: first by this
 *                                 process, never probed, then after an
 *                                 event on it came, was hit and went:
 *                                 "pmmap N <ns never> <ns gone>"
 *   upbench_loop pfork N          N forks whose child calls a probed
 *                                 function 10 times: "pfork N <ns> <count>"
 *   upbench_loop pgone N          fork + exit + wait, N times each: before
 *                                 this process had a probe; after it had
 *                                 1,000 events (five on the functions of
 *                                 ub_five, the rest on the sled) and closed
 *                                 them; the same, the child calling the
 *                                 five once each; with a system-wide event
 *                                 on each of the five (the parent hit them
 *                                 once first), the child calling each once:
 *                                 "pgone N <ns> <ns> <ns> <ns> <count>"
 *
 * Under QEMU's -icount the guest's nanoseconds are instructions.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "../lib/kp_bpf.h"
#include "../lib/kp_uprobe.h"

long ub_data = 42;

/*
 * Each function: the probed instruction, then whatever returns.  nop and
 * ret read the same on both architectures, so these are shared; UB_SITE
 * is the size of one probe site in the sled.
 */
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_nop\n"
"ub_nop:	nop\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_ret\n"
"ub_ret:	ret\n"
"	.p2align 4\n"
"	.globl ub_sled\n"	/* for uprobe_multi: SLED one-instruction sites */
"ub_sled:	.rept 10000\n"
"	nop\n"
"	.endr\n"
"	ret\n"
);

void ub_nop(void), ub_ret(void), ub_func(void), ub_sled(void);

struct ub_case {
	const char *name;
	void (*fn)(void);
};

#if defined(__aarch64__)
#define UB_SITE	4
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_stp\n"	/* a frame set-up: stepped out of line */
"ub_stp:	stp x29, x30, [sp, #-16]!\n"
"	ldp x29, x30, [sp], #16\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_adrp\n"	/* pc-relative: simulated */
"ub_adrp:	adrp x0, ub_data\n"
"	ldr x0, [x0, :lo12:ub_data]\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_func\n"	/* for return probes: a plain function */
"ub_func:	stp x29, x30, [sp, #-16]!\n"
"	mov x29, sp\n"
"	ldp x29, x30, [sp], #16\n"
"	ret\n"
);

void ub_stp(void), ub_adrp(void);

/* For pgone: five functions of 16 bytes, each a nop and a ret. */
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_five\n"
"ub_five:	.rept 5\n"
"	.p2align 4\n"
"	nop\n"
"	ret\n"
"	.endr\n"
);

static const struct ub_case cases[] = {
	{ "nop", ub_nop }, { "stp", ub_stp }, { "ret", ub_ret },
	{ "adrp", ub_adrp }, { "func", ub_func },
};
#elif defined(__i386__)
/*
 * i386: the x86_64 cases that 32-bit code has (no RIP-relative load; the
 * endbr is endbr32).
 */
#define UB_SITE	1
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_push\n"
"ub_push:	push %ebp\n"
"	pop %ebp\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_endbr\n"
"ub_endbr:	endbr32\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_nop5\n"
"ub_nop5:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_func\n"	/* for return probes: a plain function */
"ub_func:	mov 4(%esp), %eax\n"
"	ret\n"
);

void ub_push(void), ub_endbr(void), ub_nop5(void);

static const struct ub_case cases[] = {
	{ "nop", ub_nop }, { "push", ub_push }, { "endbr", ub_endbr },
	{ "ret", ub_ret }, { "nop5", ub_nop5 }, { "func", ub_func },
};
#else
#define UB_SITE	1
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_push\n"
"ub_push:	push %rbp\n"
"	pop %rbp\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_endbr\n"
"ub_endbr:	endbr64\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_riprel\n"
"ub_riprel:	mov ub_data(%rip), %rax\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_nop5\n"
"ub_nop5:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.p2align 4\n"
"	.globl ub_func\n"	/* for return probes: a plain function */
"ub_func:	mov %rdi, %rax\n"
"	ret\n"
);

void ub_push(void), ub_endbr(void), ub_riprel(void), ub_nop5(void);

/*
 * For pgone: five functions of 16 bytes, each a 5-byte nop (USDT's) and a
 * ret, so that their probes are optimized sites where the kernel has them.
 */
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_five\n"
"ub_five:	.rept 5\n"
"	.p2align 4\n"
"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.endr\n"
);

static const struct ub_case cases[] = {
	{ "nop", ub_nop }, { "push", ub_push }, { "endbr", ub_endbr },
	{ "ret", ub_ret }, { "riprel", ub_riprel }, { "nop5", ub_nop5 },
	{ "func", ub_func },
};
#endif

#define SLED	10000
#define FIVE	5

void ub_five(void);

#define NCASES	(sizeof(cases) / sizeof(cases[0]))

static void (*find(const char *name))(void)
{
	unsigned int i;

	for (i = 0; i < NCASES; i++)
		if (!strcmp(cases[i].name, name))
			return cases[i].fn;
	fprintf(stderr, "no case %s\n", name);
	exit(2);
}

/* The file offset of @addr, from the program headers of our static ELF. */
static long file_offset(unsigned long addr)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM), i;

	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    addr >= ph[i].p_vaddr &&
		    addr < ph[i].p_vaddr + ph[i].p_filesz)
			return addr - ph[i].p_vaddr + ph[i].p_offset;
	return -1;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The calls go through a volatile pointer: one call a round, not inlined. */
static void calls(void (*fn)(void), long n)
{
	void (*volatile f)(void) = fn;

	while (n--)
		f();
}

static struct {
	void (*fn)(void);
	long n;
	pthread_barrier_t go;
} tcase;

static void *thread_fn(void *arg)
{
	pthread_barrier_wait(&tcase.go);
	calls(tcase.fn, tcase.n);
	return NULL;
}

static int threads(const char *name, long n, int t)
{
	pthread_t tid[64];
	unsigned long long t0;
	int i;

	if (t < 1 || t > 64)
		return 2;
	tcase.fn = find(name);
	tcase.n = n;
	pthread_barrier_init(&tcase.go, NULL, t + 1);
	for (i = 0; i < t; i++)
		if (pthread_create(&tid[i], NULL, thread_fn, NULL))
			return 1;
	t0 = now_ns();
	pthread_barrier_wait(&tcase.go);
	for (i = 0; i < t; i++)
		pthread_join(tid[i], NULL);
	printf("threads %s %ld %d %llu\n", name, n, t, now_ns() - t0);
	return 0;
}

/* "r0 = 0; exit": the cheapest program a uprobe_multi link takes. */
static int load_empty_prog(void)
{
	struct bpf_insn p[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = UPROBE_MULTI_ATTACH;
	attr.insn_cnt = 2;
	attr.insns = (uint64_t)(uintptr_t)p;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int multi(long n)
{
	static uint64_t offs[SLED];
	unsigned long long t0, t1, t2, t3;
	long base = file_offset((unsigned long)ub_sled), i;
	int prog = load_empty_prog(), link;

	if (n < 1 || n > SLED || base < 0 || prog < 0) {
		fprintf(stderr, "multi: bad count or no program (%s)\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++)
		offs[i] = base + i * UB_SITE;
	t0 = now_ns();
	link = uprobe_multi_link(prog, "/proc/self/exe", offs, NULL, n, 0, 0);
	t1 = now_ns();
	if (link < 0) {
		fprintf(stderr, "multi: BPF_LINK_CREATE: %s\n", strerror(errno));
		return 1;
	}
	ub_sled();	/* every site hit once: they are armed */
	t2 = now_ns();	/* the hits are neither attach nor detach */
	close(link);
	t3 = now_ns();
	printf("multi %ld %llu %llu\n", n, t1 - t0, t3 - t2);
	return 0;
}

/* Process life-cycle costs that uprobes' hooks sit on. */
static int lifecycle(const char *op, long n)
{
	unsigned long long t0 = now_ns();
	int fd = open("/proc/self/exe", O_RDONLY);
	long i;

	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		if (!strcmp(op, "mmap")) {
			void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_EXEC,
				       MAP_PRIVATE, fd, 0);

			if (p == MAP_FAILED)
				return 1;
			munmap(p, 1 << 20);
			continue;
		}
		pid_t pid = fork();

		if (!pid) {
			if (!strcmp(op, "exec"))
				execl("/proc/self/exe", "upbench_loop", "true",
				      (char *)NULL);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	printf("%s %ld %llu\n", op, n, now_ns() - t0);
	return 0;
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * An enabled counting event of the perf uprobe PMU on @offset of this
 * program, in this process (and its children when @inherit): what "perf
 * stat -e" opens.  Exits when the PMU refuses it.
 */
static int perf_on(long offset, int retprobe, int inherit)
{
	static int type = -2, ret_bit;
	struct perf_event_attr attr;
	int fd;

	if (type == -2) {
		type = pmu_value("type", "");
		ret_bit = pmu_value("format/retprobe", "config:");
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = retprobe ? 1ULL << ret_bit : 0;
	attr.uprobe_path = (uint64_t)(uintptr_t)"/proc/self/exe";
	attr.probe_offset = offset;
	attr.inherit = inherit;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (type < 0 || ret_bit < 0 || offset < 0 || fd < 0) {
		fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

static int perf_loop(const char *name, long n)
{
	void (*fn)(void) = find(name);
	unsigned long long t0, t;
	int fd = perf_on(file_offset((unsigned long)fn),
			 !strcmp(name, "func"), 0);

	calls(fn, 1000);	/* fault everything in first */
	t0 = now_ns();
	calls(fn, n);
	t = now_ns() - t0;
	printf("perf %s %ld %llu %llu\n", name, n, t,
	       (unsigned long long)count_of(fd));
	close(fd);
	return 0;
}

static int perf_close(long n)
{
	static int fds[SLED];
	long base = file_offset((unsigned long)ub_sled), i;
	unsigned long long t0, c0;

	if (n < 1 || n > SLED)
		return 2;
	for (i = 0; i < n; i++)
		fds[i] = perf_on(base + i * UB_SITE, 0, 0);
	ub_sled();	/* armed, and hit: as a user's events would be */
	t0 = now_ns();
	c0 = cpu_ns();
	for (i = 0; i < n; i++)
		close(fds[i]);
	printf("pclose %ld %llu %llu\n", n, now_ns() - t0, cpu_ns() - c0);
	return 0;
}

/* mmap, read the page of @off, munmap, @n times: the ns they took. */
static unsigned long long map_touch(int fd, long off, long n)
{
	long page = sysconf(_SC_PAGESIZE), start = off & ~(page - 1);
	unsigned long long t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		volatile char *p = mmap(NULL, 16 * page, PROT_READ | PROT_EXEC,
					MAP_PRIVATE, fd, start);

		if (p == MAP_FAILED)
			exit(1);
		(void)p[off - start];
		munmap((void *)p, 16 * page);
	}
	return now_ns() - t0;
}

static int perf_mmap(long n)
{
	long off = file_offset((unsigned long)ub_ret);
	int fd = open("/proc/self/exe", O_RDONLY), go[2], ready[2], ev;
	unsigned long long never, gone;
	pid_t holder;
	char c = 0;

	if (fd < 0 || pipe(go) || pipe(ready))
		return 1;
	/* Another process, probed at the page we map, for the whole run. */
	holder = fork();
	if (!holder) {
		close(go[1]);
		ev = perf_on(off, 0, 0);
		ub_ret();
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		while (read(go[0], &c, 1) > 0)
			;
		close(ev);
		_exit(0);
	}
	close(go[0]);
	if (holder < 0 || read(ready[0], &c, 1) != 1)
		return 1;
	never = map_touch(fd, off, n);
	ev = perf_on(file_offset((unsigned long)ub_nop), 0, 0);
	ub_nop();
	close(ev);
	sleep(1);	/* what the close left for later is done */
	gone = map_touch(fd, off, n);
	close(go[1]);
	waitpid(holder, NULL, 0);
	printf("pmmap %ld %llu %llu\n", n, never, gone);
	return 0;
}

static int perf_fork(long n)
{
	int ev = perf_on(file_offset((unsigned long)ub_func), 0, 1);
	unsigned long long t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (!pid) {
			calls(ub_func, 10);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	t0 = now_ns() - t0;
	printf("pfork %ld %llu %llu\n", n, t0,
	       (unsigned long long)count_of(ev));
	return 0;
}

/* ub_five's function @i. */
static void (*five_fn(int i))(void)
{
	return (void (*)(void))((char *)ub_five + 16 * i);
}

/* CPU time of this process and of its children reaped so far, in ns. */
static unsigned long long family_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return cpu_ns() + (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	       1000000000ULL + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
	       1000ULL;
}

static unsigned long long fork_cpu[4];
static int fork_phase;

/*
 * @n times fork, the child calling ub_five's functions (@call) and
 * exiting; the elapsed ns, and the CPU time in fork_cpu[] (without what
 * the guest spent idle or in other tasks, as a check on the first).
 */
static unsigned long long forks(long n, int call)
{
	unsigned long long c0 = family_cpu_ns(), t0 = now_ns();
	long i;
	int j;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (!pid) {
			for (j = 0; call && j < FIVE; j++)
				calls(five_fn(j), 1);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			exit(1);
	}
	t0 = now_ns() - t0;
	fork_cpu[fork_phase++ & 3] = family_cpu_ns() - c0;
	return t0;
}

/*
 * A counting event of the perf uprobe PMU on @offset of this program in
 * every process, on CPU @cpu (system-wide events are per CPU).
 */
static int perf_on_cpu(long offset, int cpu)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu_value("type", "");
	attr.uprobe_path = (uint64_t)(uintptr_t)"/proc/self/exe";
	attr.probe_offset = offset;
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (attr.type < 0 || offset < 0 || fd < 0) {
		fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/*
 * What fork costs a process whose probes are gone, and a child of a
 * process whose (optimized) sites are armed: see the top of the file.
 */
static int perf_gone(long n)
{
	static int fds[1000];
	long sled = file_offset((unsigned long)ub_sled);
	long five = file_offset((unsigned long)ub_five);
	unsigned long long never, gone, calls5, sys;
	unsigned long long count = 0;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), sysfd[FIVE * 64];
	int i, j, nsys = 0;

	if (ncpu < 1 || ncpu > 64)
		return 2;
	never = forks(n, 0);
	for (i = 0; i < FIVE; i++)
		fds[i] = perf_on(five + 16 * i, 0, 0);
	for (; i < 1000; i++)
		fds[i] = perf_on(sled + (i - FIVE) * UB_SITE, 0, 0);
	ub_sled();	/* armed, and hit: as a user's events would be */
	for (i = 0; i < FIVE; i++)
		calls(five_fn(i), 1);
	for (i = 0; i < 1000; i++)
		close(fds[i]);
	sleep(1);	/* what the closes left for later is done */
	gone = forks(n, 0);
	calls5 = forks(n, 1);
	for (i = 0; i < FIVE; i++)
		for (j = 0; j < ncpu; j++)
			sysfd[nsys++] = perf_on_cpu(five + 16 * i, j);
	for (i = 0; i < FIVE; i++)
		calls(five_fn(i), 1);	/* optimized here where they can be */
	sys = forks(n, 1);
	for (i = 0; i < nsys; i++) {
		count += count_of(sysfd[i]);
		close(sysfd[i]);
	}
	printf("pgone %ld %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", n,
	       never, gone, calls5, sys, count, fork_cpu[0], fork_cpu[1],
	       fork_cpu[2], fork_cpu[3]);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long t0;
	unsigned int i;
	long n;

	if (argc == 2 && !strcmp(argv[1], "offsets")) {
		for (i = 0; i < NCASES; i++)
			printf("%s %ld\n", cases[i].name,
			       file_offset((unsigned long)cases[i].fn));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "loop")) {
		void (*fn)(void) = find(argv[2]);

		n = atol(argv[3]);
		calls(fn, 1000);	/* fault everything in first */
		t0 = now_ns();
		calls(fn, n);
		printf("loop %s %ld %llu\n", argv[2], n, now_ns() - t0);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "true"))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "multi"))
		return multi(atol(argv[2]));
	if (argc == 3 && (!strcmp(argv[1], "fork") ||
			  !strcmp(argv[1], "exec") || !strcmp(argv[1], "mmap")))
		return lifecycle(argv[1], atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "perf"))
		return perf_loop(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "pclose"))
		return perf_close(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "pmmap"))
		return perf_mmap(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "pfork"))
		return perf_fork(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "pgone"))
		return perf_gone(atol(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "threads"))
		return threads(argv[2], atol(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: see the top of upbench_loop.c\n");
	return 2;
}

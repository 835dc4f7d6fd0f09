// SPDX-License-Identifier: GPL-2.0
/*
 * A static program to put uprobes on.  Each "case" is a small assembly
 * routine that sets every register, the flags and the 128-byte red zone
 * to known values, runs one instruction of some class at the global label
 * probe_<case>, and records the registers, flags and red zone afterwards.
 * A probe on that label must not change what is recorded, so nothing
 * recorded may depend on where the stack is (ASLR): sub_rsp sets the flags
 * again after its arithmetic on %rsp.
 *
 *   uprobe_target offsets        "<case> <file offset of probe_<case>>"
 *   uprobe_target run [N]        run each case N times, print a signature
 *                                 of its results: "<case> <hex>"
 *   uprobe_target loop CASE SEC  run CASE every millisecond for SEC seconds
 *   uprobe_target eofloop CASE SEC   like loop, after mapping our own file
 *                                 private and writable one page past its
 *                                 end: "eof <file offset of that page>", an
 *                                 address no semaphore can be counted at
 *   uprobe_target threads T N    T threads run case nop N times each
 *   uprobe_target threadloop T SEC [CASE]   T threads run case nop (CASE)
 *                                 back to back
 *                                 for SEC seconds ("pid P addr A" first)
 *   uprobe_target fault          divide by zero and NULL load at probed
 *                                 addresses: where the signal says they were
 *   uprobe_target recurse D      call the recursive function rec() to depth D
 *   uprobe_target longjmp N      N times: leave ljfunc() by longjmp
 *   uprobe_target erestart N     N calls of erestart_fn(), which returns
 *                                 -512 (-ERESTARTSYS), under a SIGALRM
 *                                 storm: "erestart N bad B signals S"
 *   uprobe_target signals CASE N run CASE N times under a SIGALRM storm;
 *                                 "signals S in_xol X": no handler may see
 *                                 an ip in the [uprobes] area (X == 0)
 *   uprobe_target remap N [nop5] map the page of ret_fn (nop5_fn) from our
 *                                 own file again, call it there N times,
 *                                 mremap it elsewhere, N calls more, munmap
 *   uprobe_target remaploop SEC [nop5]  map the page of ret_fn (nop5_fn)
 *                                 again and, for SEC seconds, call it there
 *                                 and mremap the page back and forth
 *                                 between two places: "remaploop ok <calls>"
 *   uprobe_target swapmap FILE R N   R rounds: map the page of ret_fn from
 *                                 our own file at one address, call it N
 *                                 times, unmap it, map the same page of
 *                                 FILE (a copy of us) at the same address,
 *                                 N calls, unmap: "swapmap ok"
 *   uprobe_target ptrace CASE step|block|step2|block2   a traced child runs
 *                                 CASE (twice for *2) while we single-step
 *                                 it (or step by blocks):
 *                                 "ptrace CASE MODE steps N ips H regs R",
 *                                 H a hash of every ip the child stopped
 *                                 at, R one of its recorded registers
 *   uprobe_target optfork SEC    run case nop5 100 times, fork a child that
 *                                 runs it 100 times, 100 more, print "done"
 *                                 and sleep SEC seconds
 *   uprobe_target sem            print the USDT semaphore usdt_sem
 *   uprobe_target forkloop CASE SEC   like loop, but after 2 s a child runs
 *                                 CASE 100 times, then the parent does;
 *                                 "done" when both are through
 *   uprobe_target execloop CASE SEC   like loop, but after 2 s it runs CASE
 *                                 50 times and execs "loop CASE SEC"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe_target"
#include "../lib/kp_user.h"

struct snap {
	unsigned long gpr[16];	/* rax..r15, rsp as a delta */
	unsigned long flags;
	unsigned long redzone[16];
};

struct snap snap_out;
unsigned long rip_var = 0x1122334455667788UL;
unsigned long rip_store;
char rep_src[16] = "abcdefghijklmno";
char rep_dst[16];
unsigned long saved_rsp;
/* A USDT semaphore: in .data, so that it lives in a file-backed mapping. */
volatile unsigned short usdt_sem __attribute__((section(".data")));

/*
 * CASE name, pre, body: pre runs before the probed label (with the known
 * register values loaded), body starts at probe_<name>.  Flags start as
 * CF|PF|AF|ZF|SF|OF.
 */
asm(
"	.text\n"
"	.macro SAVE_OUT\n"
"	mov %rax, snap_out+0(%rip)\n"
"	mov %rcx, snap_out+8(%rip)\n"
"	mov %rdx, snap_out+16(%rip)\n"
"	mov %rbx, snap_out+24(%rip)\n"
"	mov %rsp, snap_out+32(%rip)\n"
"	mov %rbp, snap_out+40(%rip)\n"
"	mov %rsi, snap_out+48(%rip)\n"
"	mov %rdi, snap_out+56(%rip)\n"
"	mov %r8, snap_out+64(%rip)\n"
"	mov %r9, snap_out+72(%rip)\n"
"	mov %r10, snap_out+80(%rip)\n"
"	mov %r11, snap_out+88(%rip)\n"
"	mov %r12, snap_out+96(%rip)\n"
"	mov %r13, snap_out+104(%rip)\n"
"	mov %r14, snap_out+112(%rip)\n"
"	mov %r15, snap_out+120(%rip)\n"
"	.irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n"
"	mov -8*\\i(%rsp), %rax\n"
"	mov %rax, snap_out+136+8*(\\i-1)(%rip)\n"
"	.endr\n"
"	pushfq\n"
"	popq snap_out+128(%rip)\n"
"	.endm\n"
/*
 * The flags of arithmetic on %rsp depend on its value, which ASLR changes
 * from run to run: those cases run on a stack at a fixed address, and go
 * back to their own (mov leaves the flags alone) before the snapshot,
 * with the address they left %rsp at in %r8.
 */
"	.macro ALT_STACK\n"
"	mov %rsp, alt_saved(%rip)\n"
"	lea alt_top(%rip), %rsp\n"
"	.endm\n"
"	.macro OWN_STACK\n"
"	mov %rsp, %r8\n"
"	mov alt_saved(%rip), %rsp\n"
"	.endm\n"
"	.macro CASE name, pre, body\n"
"	.globl case_\\name\n"
"	.type case_\\name, @function\n"
"case_\\name:\n"
"	push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
"	mov %rsp, saved_rsp(%rip)\n"
"	pushq $0x8d5\n"
"	popfq\n"
"	mov $0x5a5a5a5a5a5a5a5a, %rax\n"
"	.irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n"
"	mov %rax, -8*\\i(%rsp)\n"
"	.endr\n"
"	mov $0x1010, %rax\n mov $3, %rcx\n mov $0x3030, %rdx\n mov $0x4040, %rbx\n"
"	mov $0x6060, %rbp\n mov $0x7070, %rsi\n mov $0x8080, %rdi\n"
"	mov $0x9090, %r8\n mov $0xa0a0, %r9\n mov $0xb0b0, %r10\n mov $0xc0c0, %r11\n"
"	mov $0xd0d0, %r12\n mov $0xe0e0, %r13\n mov $0xf0f0, %r14\n mov $0x1111, %r15\n"
"	\\pre\n"
"	.globl probe_\\name\n"
"probe_\\name:\n"
"	\\body\n"
"	SAVE_OUT\n"
"	pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
"	ret\n"
"	.size case_\\name, .-case_\\name\n"
"	.endm\n"

"	CASE nop, \"\", \"nop\"\n"
"	CASE nop5, \"\", \".byte 0x0f,0x1f,0x44,0x00,0x00\"\n"
"	CASE endbr, \"\", \"endbr64\"\n"
"	CASE push, \"\", \"push %rbx; pop %r8\"\n"
"	CASE push_r12, \"\", \"push %r12; pop %r9\"\n"
"	CASE pushf, \"\", \"pushfq; pop %r10\"\n"
"	CASE call, \"\", \"call 1f; 1: pop %r11\"\n"
"	CASE jmp, \"\", \"jmp 1f; mov $0xbad, %rax; 1:\"\n"
"	CASE jcc_taken, \"\", \"je 1f; mov $0xbad, %rax; 1:\"\n"
"	CASE jcc_not, \"\", \"jne 1f; mov $0x600d, %rdx; 1:\"\n"
"	CASE ret, \"\", \"call ret_fn\"\n"
"	CASE rip_load, \"\", \"mov rip_var(%rip), %rsi\"\n"
"	CASE rip_load_rdi, \"\", \"mov rip_var(%rip), %rdi\"\n"
"	CASE rip_add, \"\", \"add rip_var(%rip), %rbx\"\n"
"	CASE rip_store, \"\", \"mov %rcx, rip_store(%rip)\"\n"
"	CASE rip_lea, \"\", \"lea probe_rip_lea(%rip), %r13\"\n"
"	CASE plain, \"\", \"add %rcx, %rdx\"\n"
"	CASE xchg, \"\", \"xchg %rax, %rbx\"\n"
"	CASE rep_movsb, \"lea rep_src(%rip), %rsi; lea rep_dst(%rip), %rdi; mov $9, %rcx\", \"rep movsb\"\n"
"	CASE call_reg, \"lea 1f(%rip), %rax\", \"call *%rax; 1: pop %r11\"\n"
"	CASE jmp_mem, \"\", \"jmp *jt_target(%rip); mov $0xbad, %rax; jt_label: nop\"\n"
"	CASE call_mem, \"\", \"call *ct_target(%rip); ct_label: nop\"\n"
"	CASE loop, \"\", \"loop 1f; 1: nop\"\n"
"	CASE sub_rsp, \"\", \"sub $64, %rsp; add $64, %rsp; pushq $0x8d5; popfq\"\n"
"	CASE sub_rsp_f, \"ALT_STACK\", \"sub $72, %rsp; lea 72(%rsp), %rsp; OWN_STACK\"\n"
"	CASE add_rsp_f, \"ALT_STACK; sub $0x100, %rsp\", \"add $0x100, %rsp; OWN_STACK\"\n"
"	CASE pop, \"push %rdx\", \"pop %r10\"\n"
"	CASE mov_rr, \"\", \"mov %rbx, %r9\"\n"
"	CASE mov_8b, \"\", \".byte 0x4c, 0x8b, 0xda\"\n"
"	CASE mov_rr32, \"mov $-1, %rdi\", \"mov %ebx, %edi\"\n"
"	CASE lea_base, \"\", \"lea 0x10(%rbx), %rsi\"\n"
"	CASE leave, \"ALT_STACK; push %rbp; mov %rsp, %rbp; sub $24, %rsp\", \"leave; OWN_STACK\"\n"
"	CASE rip_load32, \"mov $-1, %rsi\", \"mov rip_var(%rip), %esi\"\n"
"	.type ret_fn, @function\n"
"	.globl probe_ret_fn\n"
"ret_fn:\n"
"probe_ret_fn:\n"
"	ret\n"
/* A 5-byte nop (an optimized site) that runs from any address. */
"	.globl probe_nop5_fn\n"
"probe_nop5_fn:\n"
"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.globl ct_fn\n"
"ct_fn:\n"
"	pop %r11\n"
"	push %r11\n"
"	ret\n"
"	.data\n"
"alt_saved: .quad 0\n"
"	.balign 64\n"
"alt_stack: .skip 1024 - 24\n"
"alt_top: .skip 24\n"
"jt_target: .quad jt_label\n"
"ct_target: .quad ct_fn\n"
"	.text\n"
);

#define CASES(X) X(nop) X(nop5) X(endbr) X(push) X(push_r12) X(pushf) \
	X(call) X(jmp) X(jcc_taken) X(jcc_not) X(ret) X(ret_fn) X(rip_load) \
	X(rip_load_rdi) X(rip_add) X(rip_store) X(rip_lea) X(plain) X(xchg) \
	X(rep_movsb) X(call_reg) X(jmp_mem) X(call_mem) X(loop) X(sub_rsp) \
	X(sub_rsp_f) X(add_rsp_f) X(pop) X(mov_rr) X(mov_8b) X(mov_rr32) \
	X(lea_base) X(leave) X(rip_load32)

#define DECL(n) extern char probe_##n[]; void case_##n(void);
CASES(DECL)
void case_ret_fn(void) { case_ret(); }
extern char probe_nop5_fn[];

struct tcase {
	const char *name;
	void (*fn)(void);
	void *probe;
};

#define ENTRY(n) { #n, case_##n, probe_##n },
static const struct tcase cases[] = { CASES(ENTRY) };
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static unsigned long signature(void)
{
	unsigned long h = 1469598037UL, *w = (unsigned long *)&snap_out;
	unsigned int i;

	snap_out.gpr[4] -= saved_rsp;	/* rsp: only where it is relative */
	for (i = 0; i < sizeof(snap_out) / sizeof(long); i++)
		h = (h ^ w[i]) * 1099511628211UL;
	h ^= rip_store * 3 + rep_dst[0] + rep_dst[8] * 7;
	return h;
}

static int run(int n)
{
	unsigned int i, j, bad = 0;

	for (i = 0; i < NCASES; i++) {
		unsigned long sig = 0;

		for (j = 0; j < (unsigned int)n; j++) {
			unsigned long s;

			rip_store = 0;
			memset(rep_dst, 0, sizeof(rep_dst));
			memset(&snap_out, 0, sizeof(snap_out));
			cases[i].fn();
			/* The red zone goes into the signature: pushes write it. */
			s = signature();
			if (j && s != sig)
				bad++;
			sig = s;
		}
		printf("%s %lx\n", cases[i].name, sig);
	}
	return bad ? 1 : 0;
}

static void *thread_fn(void *arg)
{
	long n = (long)arg;

	while (n--)
		case_nop();
	return NULL;
}

static time_t loop_end;
static void (*loop_fn)(void) = case_nop;

static void *thread_loop_fn(void *arg)
{
	while (time(NULL) < loop_end)
		loop_fn();
	return NULL;
}

static int threads(int t, long n)
{
	pthread_t tid[64];
	int i;

	if (t > 64)
		t = 64;
	for (i = 0; i < t; i++)
		pthread_create(&tid[i], NULL, n < 0 ? thread_loop_fn : thread_fn,
			       (void *)n);
	for (i = 0; i < t; i++)
		pthread_join(tid[i], NULL);
	return 0;
}

/* Faulting instructions with their own probe labels. */
asm(
"	.text\n"
"	.globl fault_div, probe_fault_div, probe_fault_load\n"
"fault_div:\n"
"	xor %edx, %edx\n"
"	mov $7, %eax\n"
"	xor %ecx, %ecx\n"
"probe_fault_div:\n"
"	div %ecx\n"
"	ret\n"
"	.globl fault_load\n"
"fault_load:\n"
"	xor %eax, %eax\n"
"probe_fault_load:\n"
"	mov (%rax), %rax\n"
"	ret\n"
);
extern char probe_fault_div[], probe_fault_load[];
void fault_div(void);
void fault_load(void);

#define MAX_RIPS	65536
static unsigned long alarm_rip[MAX_RIPS];
static volatile unsigned int nalarm;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	unsigned int n = nalarm;

	if (n < MAX_RIPS)
		alarm_rip[n] = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	nalarm = n + 1;
}

/* Run @c @n times while SIGALRM comes every 50 us. */
static int signals(const struct tcase *c, long n)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { 0 };
	unsigned long start[8], end[8], a, b;
	unsigned int i, k, nr = 0, in_xol = 0;
	char line[512];
	FILE *f;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (n--)
		c->fn();
	setitimer(ITIMER_REAL, &off, NULL);
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]") && nr < 8 &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2) {
			start[nr] = a;
			end[nr++] = b;
		}
	if (f)
		fclose(f);
	/* The XOL page and the stub pages of optimized sites. */
	for (i = 0; i < nalarm && i < MAX_RIPS; i++)
		for (k = 0; k < nr; k++)
			if (alarm_rip[i] >= start[k] && alarm_rip[i] < end[k])
				in_xol++;
	printf("signals %u in_xol %u\n", nalarm, in_xol);
	return 0;
}

static sigjmp_buf fault_jb;
static volatile unsigned long fault_ip, fault_addr;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	fault_ip = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	fault_addr = (unsigned long)si->si_addr;
	siglongjmp(fault_jb, sig);
}

static int fault(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };
	int sig;

	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sig = sigsetjmp(fault_jb, 1);
	if (!sig)
		fault_div();
	printf("div sig=%d ip_ok=%d addr_ok=%d\n", sig,
	       fault_ip == (unsigned long)probe_fault_div,
	       fault_addr == (unsigned long)probe_fault_div);
	sig = sigsetjmp(fault_jb, 1);
	if (!sig)
		fault_load();
	printf("load sig=%d ip_ok=%d addr_ok=%d\n", sig,
	       fault_ip == (unsigned long)probe_fault_load, fault_addr == 0);
	return 0;
}

__attribute__((noinline)) int rec(int d)
{
	int r;

	asm volatile("" ::: "memory");
	if (d <= 0)
		return 0;
	r = rec(d - 1);
	/* Opaque to the compiler: no turning the recursion into a loop. */
	asm volatile("" : "+r" (r));
	return r + 1;
}

/*
 * Returns what a syscall returns when it is to be restarted: a return
 * probe's trip back through the uretprobe syscall must not look like one
 * when a signal is pending on its way out.
 */
__attribute__((noinline)) long erestart_fn(void)
{
	asm volatile("" ::: "memory");
	return -512;
}

static int erestart(long n)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { 0 };
	long i, bad = 0;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < n; i++)
		if (erestart_fn() != -512)
			bad++;
	setitimer(ITIMER_REAL, &off, NULL);
	printf("erestart %ld bad %ld signals %u\n", n, bad, nalarm);
	return 0;
}

/* Where a traced child's case is over: the tracer stops stepping here. */
__attribute__((noinline)) void case_done(void)
{
	asm volatile("" ::: "memory");
}

/* One traced run of @c, stepped by instructions or by blocks. */
static int ptrace_case(const struct tcase *c, int block, int runs)
{
	unsigned long ips = 5381, regs_h = 5381, steps = 0;
	struct user_regs_struct r;
	unsigned int i;
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		while (runs--)
			c->fn();
		case_done();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return 3;
	for (;;) {
		if (ptrace(block ? PTRACE_SINGLEBLOCK : PTRACE_SINGLESTEP, pid, NULL, NULL) ||
		    waitpid(pid, &st, 0) != pid)
			return 4;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
			printf("ptrace %s: child status %#x after %lu steps\n", c->name, st, steps);
			kill(pid, SIGKILL);
			return 5;
		}
		ptrace(PTRACE_GETREGS, pid, NULL, &r);
		if (r.rip == (unsigned long)case_done)
			break;
		ips = ips * 33 ^ r.rip;
		if (++steps > 200000)
			return 6;
	}
	/* What the case recorded, but for %rsp (where the stack is). */
	for (i = 0; i < sizeof(snap_out) / 8; i++) {
		unsigned long v;

		if (i == 4)
			continue;
		v = ptrace(PTRACE_PEEKDATA, pid, (char *)&snap_out + 8 * i, NULL);
		regs_h = regs_h * 33 ^ v;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("ptrace %s %s steps %lu ips %lx regs %lx\n", c->name,
	       block ? "block" : "step", steps, ips, regs_h);
	return 0;
}

static jmp_buf lj;
static volatile int lj_go = 1;

__attribute__((noinline)) void ljdeep(int d)
{
	asm volatile("" ::: "memory");
	if (d > 0)
		ljdeep(d - 1);
	if (lj_go)
		longjmp(lj, 1);
}

__attribute__((noinline)) int ljfunc(int d)
{
	asm volatile("" ::: "memory");
	ljdeep(d);
	return 0;
}

/*
 * Two files' copies of one page, one after the other at the same address:
 * a hit must find the probe of the file mapped there now.
 */
static int swapmap(const char *other, int rounds, int n)
{
	unsigned long off = self_file_offset(probe_ret_fn);
	unsigned long pg = off & ~4095UL;
	int fd[2] = { open("/proc/self/exe", O_RDONLY), open(other, O_RDONLY) };
	char *at, *m;
	int r, f, i;

	at = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd[0] < 0 || fd[1] < 0 || at == MAP_FAILED)
		return 3;
	munmap(at, 4096);
	for (r = 0; r < rounds; r++) {
		for (f = 0; f < 2; f++) {
			m = mmap(at, 4096, PROT_READ | PROT_EXEC,
				 MAP_PRIVATE | MAP_FIXED, fd[f], pg);
			if (m != at)
				return 4;
			for (i = 0; i < n; i++)
				((void (*)(void))(m + (off - pg)))();
			munmap(m, 4096);
		}
	}
	printf("swapmap ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "offsets")) {
		for (i = 0; i < NCASES; i++)
			printf("%s %#lx\n", cases[i].name, self_file_offset(cases[i].probe));
		printf("fault_div %#lx\n", self_file_offset(probe_fault_div));
		printf("fault_load %#lx\n", self_file_offset(probe_fault_load));
		printf("nop5_fn %#lx\n", self_file_offset(probe_nop5_fn));
		printf("rec %#lx\n", self_file_offset((void *)rec));
		printf("ljfunc %#lx\n", self_file_offset((void *)ljfunc));
		printf("ljdeep %#lx\n", self_file_offset((void *)ljdeep));
		printf("erestart_fn %#lx\n", self_file_offset((void *)erestart_fn));
		printf("usdt_sem %#lx\n", self_file_offset((void *)&usdt_sem));
		return 0;
	}
	if (!strcmp(argv[1], "addr") && argc > 2) {
		for (i = 0; i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				printf("%#lx\n", (unsigned long)cases[i].probe);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return run(argc > 2 ? atoi(argv[2]) : 1);
	if (!strcmp(argv[1], "eofloop") && argc > 3) {
		int fd = open("/proc/self/exe", O_RDONLY);
		off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
		off_t end = (size + 4095) & ~4095L;

		if (size < 0 || mmap(NULL, end + 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE, fd, 0) == MAP_FAILED)
			return 2;
		printf("eof %#lx\n", (unsigned long)end);
		argv[1] = "loop";
	}
	if (!strcmp(argv[1], "loop") && argc > 3) {
		time_t end = time(NULL) + atoi(argv[3]);
		struct timespec ms = { 0, 1000000 };

		for (i = 0; i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				break;
		if (i == NCASES)
			return 2;
		printf("pid %d addr %#lx\n", getpid(), (unsigned long)cases[i].probe);
		while (time(NULL) < end) {
			cases[i].fn();
			nanosleep(&ms, NULL);
		}
		return 0;
	}
	if (!strcmp(argv[1], "signals") && argc > 3) {
		for (i = 0; i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				return signals(&cases[i], atol(argv[3]));
		return 2;
	}
	if (!strcmp(argv[1], "remap") && argc > 2) {
		unsigned long off = self_file_offset(argc > 3 ? probe_nop5_fn : probe_ret_fn);
		unsigned long pg = off & ~4095UL;
		int fd = open("/proc/self/exe", O_RDONLY), n = atoi(argv[2]);
		char *m, *m2;
		void (*fn)(void);

		m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, pg);
		if (fd < 0 || m == MAP_FAILED)
			return 3;
		/* ret_fn and nop5_fn run from any address. */
		fn = (void (*)(void))(m + (off - pg));
		for (i = 0; i < (unsigned int)n; i++)
			fn();
		m2 = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		m2 = mremap(m, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, m2 + 4096);
		if (m2 == MAP_FAILED)
			return 4;
		fn = (void (*)(void))(m2 + (off - pg));
		for (i = 0; i < (unsigned int)n; i++)
			fn();
		munmap(m2, 4096);
		close(fd);
		printf("remap ok\n");
		return 0;
	}
	if (!strcmp(argv[1], "remaploop") && argc > 2) {
		unsigned long off = self_file_offset(argc > 3 ? probe_nop5_fn : probe_ret_fn);
		unsigned long pg = off & ~4095UL, calls = 0;
		int fd = open("/proc/self/exe", O_RDONLY);
		time_t end = time(NULL) + atoi(argv[2]);
		char *m, *slots;

		m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, pg);
		slots = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fd < 0 || m == MAP_FAILED || slots == MAP_FAILED)
			return 3;
		printf("pid %d\n", getpid());
		while (time(NULL) < end) {
			char *to = slots + 4096 * (1 + (calls & 1));

			((void (*)(void))(m + (off - pg)))();
			calls++;
			m = mremap(m, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			if (m == MAP_FAILED)
				return 4;
		}
		printf("remaploop ok %lu\n", calls);
		return 0;
	}
	if (!strcmp(argv[1], "swapmap") && argc > 4)
		return swapmap(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "ptrace") && argc > 3) {
		for (i = 0; i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				return ptrace_case(&cases[i], !strncmp(argv[3], "block", 5),
						   argv[3][strlen(argv[3]) - 1] == '2' ? 2 : 1);
		return 2;
	}
	if (!strcmp(argv[1], "sem")) {
		printf("sem %d\n", usdt_sem);
		return 0;
	}
	if ((!strcmp(argv[1], "forkloop") || !strcmp(argv[1], "execloop")) &&
	    argc > 3) {
		const struct tcase *c = NULL;
		pid_t child;

		for (i = 0; i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				c = &cases[i];
		if (!c)
			return 2;
		printf("pid %d addr %#lx\n", getpid(), (unsigned long)c->probe);
		sleep(2);
		if (argv[1][0] == 'e') {
			for (i = 0; i < 50; i++)
				c->fn();
			printf("exec\n");
			execl("/proc/self/exe", argv[0], "loop", argv[2], argv[3],
			      (char *)NULL);
			return 3;
		}
		child = fork();
		if (!child) {
			for (i = 0; i < 100; i++)
				c->fn();
			_exit(0);
		}
		waitpid(child, NULL, 0);
		for (i = 0; i < 100; i++)
			c->fn();
		printf("done\n");
		sleep(atoi(argv[3]));
		return 0;
	}
	if (!strcmp(argv[1], "optfork") && argc > 2) {
		pid_t child;

		printf("pid %d addr %#lx\n", getpid(), (unsigned long)probe_nop5);
		for (i = 0; i < 100; i++)
			case_nop5();
		child = fork();
		if (!child) {
			for (i = 0; i < 100; i++)
				case_nop5();
			_exit(0);
		}
		waitpid(child, NULL, 0);
		for (i = 0; i < 100; i++)
			case_nop5();
		printf("done\n");
		sleep(atoi(argv[2]));
		return 0;
	}
	if (!strcmp(argv[1], "threadloop") && argc > 3) {
		void *probe = probe_nop;

		for (i = 0; argc > 4 && i < NCASES; i++)
			if (!strcmp(cases[i].name, argv[4])) {
				loop_fn = cases[i].fn;
				probe = cases[i].probe;
			}
		loop_end = time(NULL) + atoi(argv[3]);
		printf("pid %d addr %#lx\n", getpid(), (unsigned long)probe);
		return threads(atoi(argv[2]), -1);
	}
	if (!strcmp(argv[1], "threads") && argc > 3)
		return threads(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(argv[1], "fault"))
		return fault();
	if (!strcmp(argv[1], "recurse") && argc > 2) {
		printf("rec %d\n", rec(atoi(argv[2])));
		return 0;
	}
	if (!strcmp(argv[1], "erestart") && argc > 2)
		return erestart(atol(argv[2]));
	if (!strcmp(argv[1], "longjmp") && argc > 2) {
		int n = atoi(argv[2]), done = 0;

		while (done < n) {
			if (!setjmp(lj))
				ljfunc(3);
			done++;
		}
		printf("longjmp %d\n", done);
		return 0;
	}
	return 2;
}

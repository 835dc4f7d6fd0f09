// SPDX-License-Identifier: GPL-2.0
/*
 * A static program for the corners of optimized uprobe sites (a probed
 * 5-byte nop that becomes a jump to a stub in a "[uprobes]" page) and of
 * boosted copies, driven by guest/73-uprobe-stub.sh, which puts the
 * probes on it through uprobe_events and counts their hits.  Each command
 * prints one line the script checks; on a kernel without optimized sites
 * (stock 6.12) the commands that need a stub say "no stub".
 *
 *   uprobe_stub offsets        "<name> <file offset>" of nop5, nop5b, fault
 *   uprobe_stub loop SEC       call nop5_fn every millisecond for SEC
 *                              seconds ("pid P addr A" first)
 *   uprobe_stub dontunmap N    map nop5_fn's page again, N calls there,
 *                              mremap(MREMAP_DONTUNMAP) it, N calls at the
 *                              new address; "pid P moved", then on SIGUSR1
 *                              "dontunmap faults F byte B" (B: the first
 *                              byte at the new address then)
 *   uprobe_stub unmapstub N    N calls of nop5_fn, munmap its stub page, N
 *                              calls more, N calls of nop5b_fn:
 *                              "unmapstub faults F byte B"
 *   uprobe_stub dontfork N     N calls of nop5_fn, MADV_DONTFORK on its
 *                              stub page, fork: N calls in the child, N in
 *                              the parent: "dontfork child S faults F"
 *   uprobe_stub sud N          one call of nop5_fn, then N calls with
 *                              Syscall User Dispatch blocking every system
 *                              call from outside our text:
 *                              "sud sigsys S sigill I"
 *   uprobe_stub ptrace N       one call of nop5_fn, then a child traced
 *                              with PTRACE_SYSCALL makes N calls:
 *                              "ptrace stops S stub U status C" (U: stops
 *                              at the uprobe stub's system call)
 *   uprobe_stub fault N        N times: fault_fn() loads from NULL at the
 *                              probed label with the same registers, and
 *                              the SIGSEGV handler longjmps out:
 *                              "fault faults F"
 *   uprobe_stub nowrite N      map nop5_fn's page again (armed), make it
 *                              writable, N calls there: "nowrite ok"
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe_stub"
#include "../lib/kp_user.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH	59
#define PR_SYS_DISPATCH_OFF		0
#define PR_SYS_DISPATCH_ON		1
#endif
#define SUD_ALLOW			0
#define SUD_BLOCK			1
#define NR_URETPROBE			335

/*
 * Two 5-byte nops that run from any address, each in a cache line of its
 * own (never across a page), and a load from NULL with every register set
 * to a known value, so that two runs of it hit the probe with the same
 * registers.
 */
asm(
"	.text\n"
"	.balign 64\n"
"	.globl nop5_fn, probe_nop5\n"
"nop5_fn:\n"
"probe_nop5:\n"
"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.balign 64\n"
"	.globl nop5b_fn, probe_nop5b\n"
"nop5b_fn:\n"
"probe_nop5b:\n"
"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	ret\n"
"	.balign 64\n"
"	.globl fault_fn, probe_fault\n"
"fault_fn:\n"
"	push %rbx\n"
"	push %rbp\n"
"	push %r12\n"
"	push %r13\n"
"	push %r14\n"
"	push %r15\n"
"	xor %eax, %eax\n"
"	mov $1, %ebx\n"
"	mov $2, %ecx\n"
"	mov $3, %edx\n"
"	mov $4, %esi\n"
"	mov $5, %edi\n"
"	mov $6, %ebp\n"
"	mov $8, %r8d\n"
"	mov $9, %r9d\n"
"	mov $10, %r10d\n"
"	mov $11, %r11d\n"
"	mov $12, %r12d\n"
"	mov $13, %r13d\n"
"	mov $14, %r14d\n"
"	mov $15, %r15d\n"
"probe_fault:\n"
"	mov (%rax), %rax\n"
"	pop %r15\n"
"	pop %r14\n"
"	pop %r13\n"
"	pop %r12\n"
"	pop %rbp\n"
"	pop %rbx\n"
"	ret\n"
);

void nop5_fn(void);
void nop5b_fn(void);
void fault_fn(void);
extern char probe_nop5[], probe_nop5b[], probe_fault[];

static sigjmp_buf jb;
static volatile int nsegv, nsys, nill, usr1;

static void on_sig(int sig)
{
	if (sig == SIGUSR1) {
		usr1 = 1;
		return;
	}
	if (sig == SIGSEGV)
		nsegv++;
	else if (sig == SIGSYS)
		nsys++;
	else
		nill++;
	siglongjmp(jb, 1);
}

static void catch(int sig)
{
	struct sigaction sa = { .sa_handler = on_sig };

	sigaction(sig, &sa, NULL);
}

/* @n calls of @fn; a fault in one counts and the next call follows. */
static void calls(void (*fn)(void), int n)
{
	volatile int i;

	for (i = 0; i < n; i++)
		if (!sigsetjmp(jb, 1))
			fn();
}

/* The stub page the jump at @site leads to, or NULL when it is no jump. */
static void *stub_page(void *site)
{
	unsigned char *p = site;
	int rel;

	if (p[0] != 0xe9)
		return NULL;
	memcpy(&rel, p + 1, sizeof(rel));
	return (void *)((unsigned long)(p + 5 + rel) & ~4095UL);
}

/* nop5_fn's page of our file mapped again, readable and executable. */
static void (*map_nop5(char **page))(void)
{
	unsigned long off = self_file_offset(probe_nop5), pg = off & ~4095UL;
	int fd = open("/proc/self/exe", O_RDONLY);
	char *m;

	if (fd < 0)
		return NULL;
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, pg);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*page = m;
	return (void (*)(void))(m + (off - pg));
}

static int dontunmap(int n)
{
	void (*fn)(void);
	char *m, *m2;

	fn = map_nop5(&m);
	if (!fn)
		return 3;
	catch(SIGSEGV);
	catch(SIGUSR1);
	calls(fn, n);
	m2 = mremap(m, 4096, 4096, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	if (m2 == MAP_FAILED)
		return 4;
	fn = (void (*)(void))(m2 + ((char *)fn - m));
	calls(fn, n);
	printf("pid %d moved\n", getpid());
	while (!usr1)
		pause();
	printf("dontunmap faults %d byte %02x\n", nsegv, *(unsigned char *)fn);
	return 0;
}

/* @n calls of nop5_fn: the stub page its jump leads to then, or NULL. */
static void *optimized_stub(int n)
{
	void *stub;

	catch(SIGSEGV);
	calls(nop5_fn, n);
	stub = stub_page(probe_nop5);
	if (!stub)
		printf("no stub\n");
	return stub;
}

static int unmapstub(int n)
{
	void *stub = optimized_stub(n);

	if (!stub)
		return 0;
	munmap(stub, 4096);
	calls(nop5_fn, n);
	calls(nop5b_fn, n);
	printf("unmapstub faults %d byte %02x\n", nsegv,
	       *(unsigned char *)probe_nop5);
	return 0;
}

static int dontfork(int n)
{
	void *stub = optimized_stub(n);
	int st = -1;
	pid_t pid;

	if (!stub)
		return 0;
	if (madvise(stub, 4096, MADV_DONTFORK))
		return 3;
	pid = fork();
	if (!pid) {
		calls(nop5_fn, n);
		_exit(nsegv);
	}
	waitpid(pid, &st, 0);
	calls(nop5_fn, n);
	printf("dontfork child %d faults %d\n", st, nsegv);
	return 0;
}

/* Where our own text is mapped: system calls from there stay allowed. */
static int text_range(unsigned long *start, unsigned long *len)
{
	unsigned long a = (unsigned long)nop5_fn, s, e;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 &&
		    a >= s && a < e) {
			*start = s;
			*len = e - s;
			found = 1;
		}
	if (f)
		fclose(f);
	return found;
}

static int sud(int n)
{
	static volatile char sel = SUD_ALLOW;
	unsigned long start, len;

	nop5_fn();
	if (!stub_page(probe_nop5))
		printf("# nop5 not optimized before SUD\n");
	if (!text_range(&start, &len))
		return 3;
	catch(SIGSYS);
	catch(SIGILL);
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, start, len,
		  &sel))
		return 4;
	sel = SUD_BLOCK;
	calls(nop5_fn, n);
	sel = SUD_ALLOW;
	prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
	printf("sud sigsys %d sigill %d\n", nsys, nill);
	return 0;
}

static int traced(int n)
{
	struct user_regs_struct regs;
	int st, stops = 0, stub = 0;
	pid_t pid;

	nop5_fn();
	pid = fork();
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		calls(nop5_fn, n);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD);
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, 0) || waitpid(pid, &st, 0) < 0 ||
		    !WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			continue;
		stops++;
		if (!ptrace(PTRACE_GETREGS, pid, 0, &regs) &&
		    regs.orig_rax == NR_URETPROBE)
			stub++;
	}
	printf("ptrace stops %d stub %d status %d\n", stops, stub, st);
	return 0;
}

static int nowrite(int n)
{
	void (*fn)(void);
	char *m;

	fn = map_nop5(&m);
	if (!fn || mprotect(m, 4096, PROT_READ | PROT_WRITE | PROT_EXEC))
		return 3;
	calls(fn, n);
	printf("nowrite ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "offsets")) {
		printf("nop5 %#lx\n", self_file_offset(probe_nop5));
		printf("nop5b %#lx\n", self_file_offset(probe_nop5b));
		printf("fault %#lx\n", self_file_offset(probe_fault));
		return 0;
	}
	if (!strcmp(argv[1], "loop")) {
		time_t end = time(NULL) + n;
		struct timespec ms = { 0, 1000000 };

		printf("pid %d addr %#lx\n", getpid(), (unsigned long)probe_nop5);
		while (time(NULL) < end) {
			nop5_fn();
			nanosleep(&ms, NULL);
		}
		return 0;
	}
	if (!strcmp(argv[1], "dontunmap"))
		return dontunmap(n);
	if (!strcmp(argv[1], "unmapstub"))
		return unmapstub(n);
	if (!strcmp(argv[1], "dontfork"))
		return dontfork(n);
	if (!strcmp(argv[1], "sud"))
		return sud(n);
	if (!strcmp(argv[1], "ptrace"))
		return traced(n);
	if (!strcmp(argv[1], "fault")) {
		catch(SIGSEGV);
		calls(fault_fn, n);
		printf("fault faults %d\n", nsegv);
		return 0;
	}
	if (!strcmp(argv[1], "nowrite"))
		return nowrite(n);
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A static 32-bit (i386) program to put uprobes on: built with i686-linux-gnu-gcc,
 * it runs as a compat process, whose code the kernel must decode, emulate
 * and step as 32-bit code.  Each "case" is a small assembly routine that
 * sets every register and the flags to known values, fills the 8 words
 * below the stack pointer, runs one instruction of some class at the
 * global label probe_<case> and records the registers, the flags and those
 * 8 words afterwards.  A probe on that label must not change what is
 * recorded.  Several cases are instructions that mean something else in
 * 64-bit mode (inc/dec are REX prefixes there, disp32 without a base is
 * RIP-relative there, push %es and daa do not exist there).
 *
 *   uprobe_i386 offsets       "<name> <file offset>" of each probe label,
 *                              of the functions below and of ret_fn/reti_fn
 *   uprobe_i386 run [N]       run each case N times: "<case> <hex>"
 *   uprobe_i386 nest N        outer(i) for i < N; outer(x) calls inner(x)
 *                              and inner(x + 1): "nest ok" when every value
 *                              came back right
 *   uprobe_i386 recurse D     rec(D), D + 1 frames deep: "rec D"
 *   uprobe_i386 threads T N   T threads call outer() N times each
 *   uprobe_i386 fork N        N calls of outer(), fork: the child makes N
 *                              calls and exits, the parent N more: "fork ok"
 *   uprobe_i386 forkret       forkret() forks inside: both processes
 *                              return from it: "forkret ok"
 *   uprobe_i386 peek FILE OFF the byte at offset OFF of FILE in a private
 *                              executable mapping of it: "peek <hex>"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe_i386"
#include "../lib/kp_user.h"

#define BELOW	8	/* words below %esp in the snapshot */

struct snap {
	unsigned int gpr[8];	/* eax..edi, esp as a delta */
	unsigned int flags;
	unsigned int below[BELOW];
};

struct snap snap_out;
unsigned int saved_esp;
unsigned int abs_var = 0x11223344;
unsigned int abs_store;
char rep_src[16] = "abcdefghijklmno";
char rep_dst[16];

/*
 * CASE name, pre, body: pre runs after the known values are loaded, body
 * starts at probe_<name>.  Flags start as CF|PF|AF|ZF|SF|OF.  Nothing may
 * depend on where the stack is: it moves from run to run.
 */
asm(
"	.text\n"
"	.macro SAVE_OUT\n"
"	mov %eax, snap_out+0\n"
"	mov %ecx, snap_out+4\n"
"	mov %edx, snap_out+8\n"
"	mov %ebx, snap_out+12\n"
"	mov %esp, snap_out+16\n"
"	mov %ebp, snap_out+20\n"
"	mov %esi, snap_out+24\n"
"	mov %edi, snap_out+28\n"
"	.irp i, 1,2,3,4,5,6,7,8\n"
"	mov -4*\\i(%esp), %eax\n"
"	mov %eax, snap_out+36+4*(\\i-1)\n"
"	.endr\n"
"	pushfl\n"
"	popl snap_out+32\n"
"	.endm\n"
"	.macro CASE name, pre, body\n"
"	.globl case_\\name\n"
"	.type case_\\name, @function\n"
"case_\\name:\n"
"	push %ebx\n push %ebp\n push %esi\n push %edi\n"
"	mov %esp, saved_esp\n"
"	pushl $0x8d5\n"
"	popfl\n"
"	mov $0x5a5a5a5a, %eax\n"
"	.irp i, 1,2,3,4,5,6,7,8\n"
"	mov %eax, -4*\\i(%esp)\n"
"	.endr\n"
"	mov $0x1010, %eax\n mov $3, %ecx\n mov $0x3030, %edx\n mov $0x4040, %ebx\n"
"	mov $0x6060, %ebp\n mov $0x7070, %esi\n mov $0x8080, %edi\n"
"	\\pre\n"
"	.globl probe_\\name\n"
"probe_\\name:\n"
"	\\body\n"
"	SAVE_OUT\n"
"	pop %edi\n pop %esi\n pop %ebp\n pop %ebx\n"
"	ret\n"
"	.size case_\\name, .-case_\\name\n"
"	.endm\n"

"	CASE nop, \"\", \"nop\"\n"
"	CASE nop5, \"\", \".byte 0x0f,0x1f,0x44,0x00,0x00\"\n"
"	CASE endbr, \"\", \"endbr32\"\n"
"	CASE push, \"\", \"push %ebx; pop %edx\"\n"
"	CASE push_esp, \"\", \"push %esp; pop %edx; sub %esp, %edx; movl $0, -4(%esp)\"\n"
"	CASE push_imm, \"\", \"push $0x12345678; pop %edx\"\n"
"	CASE push_es, \"\", \"push %es; pop %edx\"\n"
"	CASE pushf, \"\", \"pushfl; pop %esi\"\n"
"	CASE pop, \"push %edx\", \"pop %ecx\"\n"
"	CASE pusha, \"\", \"pusha; movl $0, 12(%esp); lea 32(%esp), %esp\"\n"
"	CASE popa, \"push $0x99; pusha; movl $0x77, 28(%esp); movl $0, 12(%esp)\", \"popa; pop %edx\"\n"
"	CASE call, \"\", \"call 1f; 1: pop %edi\"\n"
"	CASE call_reg, \"mov $1f, %eax\", \"call *%eax; 1: pop %edi\"\n"
"	CASE call_mem, \"\", \"call *ct_target; ct_label: nop\"\n"
"	CASE jmp, \"\", \"jmp 1f; mov $0xbad, %eax; 1:\"\n"
"	CASE jmp_reg, \"mov $1f, %ecx\", \"jmp *%ecx; mov $0xbad, %eax; 1:\"\n"
"	CASE jmp_mem, \"\", \"jmp *jt_target; mov $0xbad, %eax; jt_label: nop\"\n"
"	CASE jcc_taken, \"\", \"je 1f; mov $0xbad, %eax; 1:\"\n"
"	CASE jcc_not, \"\", \"jne 1f; mov $0x600d, %edx; 1:\"\n"
"	CASE jcc32, \"\", \"jo 1f; .skip 200, 0x90; 1:\"\n"
"	CASE loop, \"\", \"loop 1f; 1: nop\"\n"
"	CASE jecxz, \"mov $0, %ecx\", \"jecxz 1f; mov $0xbad, %eax; 1:\"\n"
"	CASE ret, \"\", \"call ret_fn\"\n"
"	CASE ret_imm, \"push $7\", \"call reti_fn\"\n"
"	CASE inc, \"\", \"inc %eax\"\n"
"	CASE dec, \"\", \"dec %ebx\"\n"
"	CASE daa, \"\", \"daa\"\n"
"	CASE plain, \"\", \"add %ecx, %edx\"\n"
"	CASE xchg, \"\", \"xchg %eax, %ebx\"\n"
"	CASE mov_rr, \"\", \"mov %ebx, %edi\"\n"
"	CASE mov_abs, \"\", \"mov abs_var, %esi\"\n"
"	CASE mov_moffs, \"\", \"mov abs_var, %eax\"\n"
"	CASE store_abs, \"\", \"mov %ecx, abs_store\"\n"
"	CASE lea_base, \"\", \"lea 0x10(%ebx), %esi\"\n"
"	CASE lea_abs, \"\", \"lea 0x1234, %esi\"\n"
"	CASE lea_sib, \"\", \"lea 8(%ebx,%ecx,4), %esi\"\n"
"	CASE leave, \"push %ebp; mov %esp, %ebp; lea -24(%esp), %esp\", \"leave\"\n"
"	CASE sub_esp, \"\", \"sub $64, %esp; add $64, %esp; pushl $0x8d5; popfl\"\n"
"	CASE rep_movsb, \"mov $rep_src, %esi; mov $rep_dst, %edi; mov $9, %ecx\", \"rep movsb\"\n"
/* Under UMIP the kernel emulates these three (no trap after the step). */
"	CASE sgdt, \"\", \"sgdt desc_out; mov desc_out, %esi; mov desc_out+2, %edi\"\n"
"	CASE sidt, \"\", \"sidt desc_out; mov desc_out, %esi; mov desc_out+2, %edi\"\n"
"	CASE smsw, \"\", \"smsw desc_out; movzwl desc_out, %esi\"\n"
"	.type ret_fn, @function\n"
"	.globl probe_ret_fn\n"
"ret_fn:\n"
"probe_ret_fn:\n"
"	ret\n"
"	.globl probe_reti_fn\n"
"reti_fn:\n"
"probe_reti_fn:\n"
"	ret $4\n"
"ct_fn:\n"
"	pop %edi\n"
"	push %edi\n"
"	ret\n"
"	.data\n"
"desc_out: .skip 8\n"
"jt_target: .long jt_label\n"
"ct_target: .long ct_fn\n"
"	.text\n"

/* inner(x) = 3x + 1; outer(x) = inner(x) + inner(x + 1) = 6x + 5 */
"	.globl inner, outer, rec\n"
"	.type inner, @function\n"
"inner:\n"
"	mov 4(%esp), %eax\n"
"	lea 1(%eax,%eax,2), %eax\n"
"	ret\n"
"	.type outer, @function\n"
"outer:\n"
"	push %ebx\n"
"	push %esi\n"
"	mov 12(%esp), %ebx\n"
"	push %ebx\n"
"	call inner\n"
"	mov %eax, %esi\n"
"	inc %ebx\n"
"	mov %ebx, (%esp)\n"
"	call inner\n"
"	add $4, %esp\n"
"	add %esi, %eax\n"
"	pop %esi\n"
"	pop %ebx\n"
"	ret\n"
/* rec(d) = d, d + 1 frames deep */
"	.type rec, @function\n"
"rec:\n"
"	mov 4(%esp), %eax\n"
"	test %eax, %eax\n"
"	jz 1f\n"
"	dec %eax\n"
"	push %eax\n"
"	call rec\n"
"	add $4, %esp\n"
"	inc %eax\n"
"1:	ret\n"
);

#define CASES(X) X(nop) X(nop5) X(endbr) X(push) X(push_esp) X(push_imm) \
	X(push_es) X(pushf) X(pop) X(pusha) X(popa) X(call) X(call_reg) \
	X(call_mem) X(jmp) X(jmp_reg) X(jmp_mem) X(jcc_taken) X(jcc_not) \
	X(jcc32) X(loop) X(jecxz) X(ret) X(ret_imm) X(inc) X(dec) X(daa) \
	X(plain) X(xchg) X(mov_rr) X(mov_abs) X(mov_moffs) X(store_abs) \
	X(lea_base) X(lea_abs) X(lea_sib) X(leave) X(sub_esp) X(rep_movsb) \
	X(sgdt) X(sidt) X(smsw)

#define DECL(n) extern char probe_##n[]; void case_##n(void);
CASES(DECL)
extern char probe_ret_fn[], probe_reti_fn[];
int inner(int x);
int outer(int x);
int rec(int d);

struct tcase {
	const char *name;
	void (*fn)(void);
	void *probe;
};

#define ENTRY(n) { #n, case_##n, probe_##n },
static const struct tcase cases[] = { CASES(ENTRY) };
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static unsigned long long signature(void)
{
	unsigned long long h = 14695981039346656037ULL;
	unsigned int *w = (unsigned int *)&snap_out, i;

	snap_out.gpr[4] -= saved_esp;	/* esp: only where it is relative */
	for (i = 0; i < sizeof(snap_out) / sizeof(int); i++)
		h = (h ^ w[i]) * 1099511628211ULL;
	h ^= abs_store * 3ULL + rep_dst[0] + rep_dst[8] * 7;
	return h;
}

static int run(int n)
{
	unsigned int i, j, bad = 0;

	for (i = 0; i < NCASES; i++) {
		unsigned long long sig = 0;

		for (j = 0; j < (unsigned int)n; j++) {
			unsigned long long s;

			abs_store = 0;
			memset(rep_dst, 0, sizeof(rep_dst));
			memset(&snap_out, 0, sizeof(snap_out));
			cases[i].fn();
			s = signature();
			if (j && s != sig)
				bad++;
			sig = s;
		}
		printf("%s %llx\n", cases[i].name, sig);
	}
	return bad ? 1 : 0;
}

/* outer() @n times; the number of wrong results. */
static int calls(int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		bad += outer(i) != 6 * i + 5;
	return bad;
}

static void *thread_fn(void *arg)
{
	return (void *)(long)calls((long)arg);
}

static int threads(int t, long n)
{
	pthread_t tid[64];
	pthread_attr_t attr;
	void *ret;
	int i, err, bad = 0;

	if (t > 64)
		t = 64;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 16);
	for (i = 0; i < t; i++) {
		err = pthread_create(&tid[i], &attr, thread_fn, (void *)n);
		if (err) {
			printf("threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < t; i++) {
		pthread_join(tid[i], &ret);
		bad += (long)ret;
	}
	printf("threads %s\n", bad ? "bad" : "ok");
	return !!bad;
}

static int forks(int n)
{
	int bad = calls(n), st;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (!pid)
		_exit(calls(n) ? 1 : 0);
	bad += calls(n);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bad++;
	printf("fork %s\n", bad ? "bad" : "ok");
	return !!bad;
}

__attribute__((noinline)) int forkret(void)
{
	int r = fork();

	asm volatile("" : "+r" (r));
	return r;
}

static int fork_return(void)
{
	pid_t pid = forkret();
	int st;

	if (pid < 0)
		return 1;
	if (!pid)
		_exit(getppid() > 0 ? 7 : 1);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
		printf("forkret bad\n");
		return 1;
	}
	printf("forkret ok %d\n", pid);
	return 0;
}

/* What a mapping of @path shows at @off: an int3 where a probe is armed. */
static int peek(const char *path, unsigned long off)
{
	unsigned long pg = off & ~4095UL;
	int fd = open(path, O_RDONLY);
	unsigned char *m;

	if (fd < 0)
		return 2;
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, pg);
	if (m == MAP_FAILED)
		return 2;
	printf("peek %02x\n", m[off - pg]);
	return 0;
}

static void offsets(void)
{
	unsigned int i;

	for (i = 0; i < NCASES; i++)
		printf("%s %#lx\n", cases[i].name, self_file_offset(cases[i].probe));
	printf("ret_fn %#lx\n", self_file_offset(probe_ret_fn));
	printf("reti_fn %#lx\n", self_file_offset(probe_reti_fn));
	printf("inner %#lx\n", self_file_offset((void *)inner));
	printf("outer %#lx\n", self_file_offset((void *)outer));
	printf("rec %#lx\n", self_file_offset((void *)rec));
	printf("forkret %#lx\n", self_file_offset((void *)forkret));
}

int main(int argc, char **argv)
{
	int bad;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "offsets")) {
		offsets();
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return run(argc > 2 ? atoi(argv[2]) : 1);
	if (!strcmp(argv[1], "nest") && argc > 2) {
		bad = calls(atoi(argv[2]));
		printf("nest %s\n", bad ? "bad" : "ok");
		return !!bad;
	}
	if (!strcmp(argv[1], "recurse") && argc > 2) {
		printf("rec %d\n", rec(atoi(argv[2])));
		return 0;
	}
	if (!strcmp(argv[1], "threads") && argc > 3)
		return threads(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(argv[1], "fork") && argc > 2)
		return forks(atoi(argv[2]));
	if (!strcmp(argv[1], "forkret"))
		return fork_return();
	if (!strcmp(argv[1], "peek") && argc > 3)
		return peek(argv[2], strtoul(argv[3], NULL, 0));
	return 2;
}

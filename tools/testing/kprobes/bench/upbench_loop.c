// SPDX-License-Identifier: GPL-2.0
/*
 * User side of the uprobe benchmark: small functions, each starting with
 * one instruction class a probe goes on, called in a tight loop.
 *
 *   upbench_loop offsets          "<case> <file offset of its function>"
 *   upbench_loop loop CASE N      call CASE N times: "loop CASE N <ns>"
 *   upbench_loop threads CASE N T T threads call CASE N times each, at
 *                                 once: "threads CASE N T <ns>"
 *
 * Under QEMU's -icount the guest's nanoseconds are instructions.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

long ub_data = 42;

/* Each function: the probed instruction, then whatever returns. */
asm (
"	.text\n"
"	.p2align 4\n"
"	.globl ub_nop\n"
"ub_nop:	nop\n"
"	ret\n"
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
"	.globl ub_ret\n"
"ub_ret:	ret\n"
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

void ub_nop(void), ub_push(void), ub_endbr(void), ub_ret(void);
void ub_riprel(void), ub_nop5(void), ub_func(void);

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "nop", ub_nop }, { "push", ub_push }, { "endbr", ub_endbr },
	{ "ret", ub_ret }, { "riprel", ub_riprel }, { "nop5", ub_nop5 },
	{ "func", ub_func },
};

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
	if (argc == 5 && !strcmp(argv[1], "threads"))
		return threads(argv[2], atol(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: see the top of upbench_loop.c\n");
	return 2;
}

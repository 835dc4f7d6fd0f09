// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite for our uprobes: instruction analysis (what is accepted and
 * how it will run, what is refused and with which errno), the rewrite of
 * RIP-relative operands, each emulated instruction on synthetic registers
 * (with a user stack from kunit_vm_mmap() where it pushes or pops), and
 * the registration errors of both APIs on a shmem file; a removal a
 * filter asks for, in more mappings than the walk keeps on the stack,
 * left in place until the unregister takes it out; MMF_HAS_UPROBES clear
 * once the last probe in the process is gone and set again by the next
 * one, a debugger's int3 under a probe included; for optimized
 * sites, the jump and the stub undone from each of its instructions; for
 * boosted copies, what may be boosted and the copy's code; 32-bit code:
 * which files hold it, its decode and its emulation; and that
 * uprobe_sync_consumers() waits for every read section that could still
 * see what was unlinked before it, with readers on the other vCPU.
 */
#include <kunit/test.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/shmem_fs.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/sizes.h>
#include <linux/uprobes.h>
#include <asm/insn.h>
#include <asm/unistd.h>

#include "uprobes_internal.h"

struct insn_case {
	const char	*what;
	u8		bytes[MAX_UINSN_BYTES];
	int		err;		/* expected errno, 0 when accepted */
	u8		op;		/* expected enum uprobe_x86_op */
	u8		len;
};

static const struct insn_case insn_cases[] = {
	{ "nop",		{ 0x90 },				0, UPX_NOP, 1 },
	{ "nop5",		{ 0x0f, 0x1f, 0x44, 0, 0 },		0, UPX_NOP, 5 },
	{ "nopw",		{ 0x66, 0x0f, 0x1f, 0x44, 0, 0 },	0, UPX_NOP, 6 },
	{ "endbr64",		{ 0xf3, 0x0f, 0x1e, 0xfa },		0, UPX_NOP, 4 },
	{ "rdsspq",		{ 0xf3, 0x48, 0x0f, 0x1e, 0xc8 },	0, UPX_STEP, 5 },
	{ "pause",		{ 0xf3, 0x90 },				0, UPX_STEP, 2 },
	{ "xchg %eax,%r8d",	{ 0x41, 0x90 },				0, UPX_STEP, 2 },
	{ "push %rbp",		{ 0x55 },				0, UPX_PUSH, 1 },
	{ "push %r12",		{ 0x41, 0x54 },				0, UPX_PUSH, 2 },
	{ "push %bx",		{ 0x66, 0x53 },				0, UPX_STEP, 2 },
	{ "pushf",		{ 0x9c },				0, UPX_PUSHF, 1 },
	{ "call rel32",		{ 0xe8, 1, 2, 3, 4 },			0, UPX_CALL, 5 },
	{ "jmp rel8",		{ 0xeb, 0x10 },				0, UPX_JMP, 2 },
	{ "jmp rel32",		{ 0xe9, 0, 1, 0, 0 },			0, UPX_JMP, 5 },
	{ "je rel8",		{ 0x74, 0x05 },				0, UPX_JCC, 2 },
	{ "jg rel32",		{ 0x0f, 0x8f, 0, 1, 0, 0 },		0, UPX_JCC, 6 },
	{ "loop",		{ 0xe2, 0xfe },				0, UPX_LOOP, 2 },
	{ "jrcxz",		{ 0xe3, 0x02 },				0, UPX_LOOP, 2 },
	{ "jecxz",		{ 0x67, 0xe3, 0x02 },			-ENOTSUPP },
	{ "loopl (%ecx)",	{ 0x67, 0xe2, 0xfe },			-ENOTSUPP },
	{ "ret",		{ 0xc3 },				0, UPX_RET, 1 },
	{ "ret $16",		{ 0xc2, 0x10, 0x00 },			0, UPX_RET, 3 },
	{ "call *%rax",		{ 0xff, 0xd0 },				0, UPX_CALL_REG, 2 },
	{ "jmp *%r11",		{ 0x41, 0xff, 0xe3 },			0, UPX_JMP_REG, 3 },
	{ "notrack jmp *%rax",	{ 0x3e, 0xff, 0xe0 },			0, UPX_JMP_REG, 3 },
	{ "call *(%rax)",	{ 0xff, 0x10 },				0, UPX_STEP, 2 },
	{ "jmp *0x10(%rip)",	{ 0xff, 0x25, 0x10, 0, 0, 0 },		0, UPX_STEP, 6 },
	{ "mov %rsp,%rbp",	{ 0x48, 0x89, 0xe5 },			0, UPX_MOV, 3 },
	{ "mov %r8,%rdx (8b)",	{ 0x49, 0x8b, 0xd0 },			0, UPX_MOV, 3 },
	{ "mov %ebx,%edi",	{ 0x89, 0xdf },				0, UPX_MOV, 2 },
	{ "mov %bx,%di",	{ 0x66, 0x89, 0xdf },			0, UPX_STEP, 3 },
	{ "mov (%rax),%rbx",	{ 0x48, 0x8b, 0x18 },			0, UPX_STEP, 3 },
	{ "mov %rbx,(%rax)",	{ 0x48, 0x89, 0x18 },			0, UPX_STEP, 3 },
	{ "mov %fs:0x10(%rip),%rax", { 0x64, 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 }, 0, UPX_STEP, 8 },
	{ "lea 0x10(%rip),%rax", { 0x48, 0x8d, 0x05, 0x10, 0, 0, 0 },	0, UPX_LEA, 7 },
	{ "lea 0x8(%rbx),%rsi",	{ 0x48, 0x8d, 0x73, 0x08 },		0, UPX_LEA, 4 },
	{ "lea (%rbx,%rcx,4),%rsi", { 0x48, 0x8d, 0x34, 0x8b },		0, UPX_STEP, 4 },
	{ "sub $8,%rsp",	{ 0x48, 0x83, 0xec, 0x08 },		0, UPX_ADD_RSP, 4 },
	{ "add $0x1000,%rsp",	{ 0x48, 0x81, 0xc4, 0, 0x10, 0, 0 },	0, UPX_ADD_RSP, 7 },
	{ "sub $8,%r12",	{ 0x49, 0x83, 0xec, 0x08 },		0, UPX_STEP, 4 },
	{ "and $-16,%rsp",	{ 0x48, 0x83, 0xe4, 0xf0 },		0, UPX_STEP, 4 },
	{ "pop %rbp",		{ 0x5d },				0, UPX_POP, 1 },
	{ "pop %r15",		{ 0x41, 0x5f },				0, UPX_POP, 2 },
	{ "pop %bx",		{ 0x66, 0x5b },				0, UPX_STEP, 2 },
	{ "leave",		{ 0xc9 },				0, UPX_LEAVE, 1 },
	{ "lock add",		{ 0xf0, 0x48, 0x01, 0x07 },		0, UPX_STEP, 4 },
	{ "rep movsb",		{ 0xf3, 0xa4 },				0, UPX_STEP, 2 },
	{ "vmovdqu",		{ 0xc5, 0xfe, 0x6f, 0x05, 1, 0, 0, 0 },	0, UPX_STEP, 8 },
	{ "rdtsc",		{ 0x0f, 0x31 },				0, UPX_STEP, 2 },
	{ "xgetbv",		{ 0x0f, 0x01, 0xd0 },			0, UPX_STEP, 3 },
	{ "int3",		{ 0xcc },				-ENOTSUPP },
	{ "int $0x80",		{ 0xcd, 0x80 },				-ENOTSUPP },
	{ "int1",		{ 0xf1 },				-ENOTSUPP },
	{ "syscall",		{ 0x0f, 0x05 },				-ENOTSUPP },
	{ "sysenter",		{ 0x0f, 0x34 },				-ENOTSUPP },
	{ "ud2",		{ 0x0f, 0x0b },				-ENOTSUPP },
	{ "hlt",		{ 0xf4 },				-ENOTSUPP },
	{ "cli",		{ 0xfa },				-ENOTSUPP },
	{ "in %dx,%al",		{ 0xec },				-ENOTSUPP },
	{ "iretq",		{ 0x48, 0xcf },				-ENOTSUPP },
	{ "lret",		{ 0xcb },				-ENOTSUPP },
	{ "ljmp *(%rax)",	{ 0xff, 0x28 },				-ENOTSUPP },
	{ "mov %eax,%ss",	{ 0x8e, 0xd0 },				-ENOTSUPP },
	{ "xbegin",		{ 0xc7, 0xf8, 0, 0, 0, 0 },		-ENOTSUPP },
	{ "mov %cr0,%rax",	{ 0x0f, 0x20, 0xc0 },			-ENOTSUPP },
	{ "swapgs",		{ 0x0f, 0x01, 0xf8 },			-ENOTSUPP },
	{ "jmp rel16",		{ 0x66, 0xe9, 0, 0 },			-ENOTSUPP },
	{ "pusha (32-bit only)", { 0x60 },				-ENOTSUPP },
};

/*
 * Analyse @c's bytes into @a as 32-bit (@ia32) or 64-bit code and check
 * the outcome; true when it was accepted, as expected.
 */
static bool check_case(struct kunit *test, const struct insn_case *c,
		       struct arch_uprobe *a, bool ia32)
{
	int ret;

	memset(a, 0, sizeof(*a));
	memcpy(a->insn, c->bytes, MAX_UINSN_BYTES);
	a->ia32 = ia32;
	ret = arch_uprobe_analyze_insn(a, NULL, 0);
	KUNIT_EXPECT_EQ_MSG(test, ret, c->err, "%s", c->what);
	if (ret || c->err)
		return false;
	KUNIT_EXPECT_EQ_MSG(test, a->op, c->op, "%s", c->what);
	KUNIT_EXPECT_EQ_MSG(test, a->len, c->len, "%s", c->what);
	return true;
}

static void up_test_analysis(struct kunit *test)
{
	struct arch_uprobe a;
	int i;

	for (i = 0; i < ARRAY_SIZE(insn_cases); i++)
		check_case(test, &insn_cases[i], &a, false);
}

static void up_test_undecodable(struct kunit *test)
{
	/* A prefix run longer than any instruction. */
	struct arch_uprobe a = { .insn = { [0 ... 15] = 0x66 } };

	KUNIT_EXPECT_EQ(test, arch_uprobe_analyze_insn(&a, NULL, 0), -ENOEXEC);
}

static int slot_of(unsigned long off)
{
	return off / sizeof(long);
}

struct rip_case {
	const char	*what;
	u8		bytes[MAX_UINSN_BYTES];
	u8		ixol[MAX_UINSN_BYTES];
	unsigned long	scratch;	/* pt_regs offset */
	u8		op;		/* emulated, stepped when that faults */
};

static const struct rip_case rip_cases[] = {
	/* mov 0x10(%rip),%rax: modrm 05 becomes 86 (disp32(%rsi)). */
	{ "mov 0x10(%rip),%rax",
	  { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 },
	  { 0x48, 0x8b, 0x86, 0x10, 0, 0, 0 }, offsetof(struct pt_regs, si),
	  UPX_LOAD },
	/* The destination is %rsi: %rdi instead. */
	{ "mov 0x10(%rip),%rsi",
	  { 0x48, 0x8b, 0x35, 0x10, 0, 0, 0 },
	  { 0x48, 0x8b, 0xb7, 0x10, 0, 0, 0 }, offsetof(struct pt_regs, di),
	  UPX_LOAD },
	/* REX.B must not turn the base into %r14. */
	{ "mov 0x10(%rip),%r8 with REX.B",
	  { 0x4d, 0x8b, 0x05, 0x10, 0, 0, 0 },
	  { 0x4c, 0x8b, 0x86, 0x10, 0, 0, 0 }, offsetof(struct pt_regs, si),
	  UPX_LOAD },
	{ "jmp *0x20(%rip)",
	  { 0xff, 0x25, 0x20, 0, 0, 0 },
	  { 0xff, 0xa6, 0x20, 0, 0, 0 }, offsetof(struct pt_regs, si) },
	/* VEX3 with ~B clear (B set) gets ~B set. */
	{ "vmovdqu 0x8(%rip),%ymm0 (VEX3)",
	  { 0xc4, 0xc1, 0x7e, 0x6f, 0x05, 8, 0, 0, 0 },
	  { 0xc4, 0xe1, 0x7e, 0x6f, 0x86, 8, 0, 0, 0 }, offsetof(struct pt_regs, si) },
};

static void up_test_riprel(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(rip_cases); i++) {
		const struct rip_case *c = &rip_cases[i];
		struct arch_uprobe a = {};

		memcpy(a.insn, c->bytes, MAX_UINSN_BYTES);
		KUNIT_ASSERT_EQ_MSG(test, arch_uprobe_analyze_insn(&a, NULL, 0), 0,
				    "%s", c->what);
		KUNIT_EXPECT_EQ_MSG(test, a.op, c->op, "%s", c->what);
		KUNIT_EXPECT_TRUE_MSG(test, a.fixups & UPX_FIX_SCRATCH, "%s", c->what);
		KUNIT_EXPECT_EQ_MSG(test, a.scratch, slot_of(c->scratch), "%s", c->what);
		KUNIT_EXPECT_MEMEQ_MSG(test, a.ixol, c->ixol, a.len, "%s", c->what);
		/* The file's bytes stay as they were. */
		KUNIT_EXPECT_MEMEQ_MSG(test, a.insn, c->bytes, a.len, "%s", c->what);
	}
}

static void analyse_as(struct kunit *test, struct arch_uprobe *a, const u8 *b,
		       int n, bool ia32)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->insn, b, n);
	a->ia32 = ia32;
	KUNIT_ASSERT_EQ(test, arch_uprobe_analyze_insn(a, NULL, 0), 0);
}

static void analyse(struct kunit *test, struct arch_uprobe *a, const u8 *b, int n)
{
	analyse_as(test, a, b, n, false);
}

/* A page of user memory in the test's mm, for the stack of emulations. */
static unsigned long user_stack(struct kunit *test)
{
	unsigned long stack;

	stack = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, stack, 0UL, "no user stack");
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(stack));
	return stack;
}

#define VADDR	0x400000UL

static void up_test_emulate_branches(struct kunit *test)
{
	static const u8 jmp8[] = { 0xeb, 0x10 }, nop5[] = { 0x0f, 0x1f, 0x44, 0, 0 };
	static const u8 jmpr[] = { 0x41, 0xff, 0xe3 }, loop[] = { 0xe2, 0x20 };
	struct arch_uprobe a;
	struct pt_regs regs = { .ip = VADDR };

	analyse(test, &a, nop5, sizeof(nop5));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 5);

	regs.ip = VADDR;
	analyse(test, &a, jmp8, sizeof(jmp8));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 2 + 0x10);

	regs.ip = VADDR;
	regs.r11 = 0x12345678;
	analyse(test, &a, jmpr, sizeof(jmpr));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, 0x12345678UL);

	/* loop: taken while %rcx stays non-zero after the decrement. */
	analyse(test, &a, loop, sizeof(loop));
	regs.ip = VADDR;
	regs.cx = 2;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 2 + 0x20);
	KUNIT_EXPECT_EQ(test, regs.cx, 1UL);
	regs.ip = VADDR;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 2);
	KUNIT_EXPECT_EQ(test, regs.cx, 0UL);
}

/* Every condition code against flags that make it true and false. */
static void up_test_emulate_jcc(struct kunit *test)
{
	static const struct {
		u8 cc;
		unsigned long yes, no;
	} m[] = {
		{ 0x0, X86_EFLAGS_OF, 0 },			/* jo */
		{ 0x1, 0, X86_EFLAGS_OF },			/* jno */
		{ 0x2, X86_EFLAGS_CF, 0 },			/* jb */
		{ 0x3, 0, X86_EFLAGS_CF },			/* jae */
		{ 0x4, X86_EFLAGS_ZF, 0 },			/* je */
		{ 0x5, 0, X86_EFLAGS_ZF },			/* jne */
		{ 0x6, X86_EFLAGS_CF, 0 },			/* jbe */
		{ 0x7, 0, X86_EFLAGS_ZF },			/* ja */
		{ 0x8, X86_EFLAGS_SF, 0 },			/* js */
		{ 0x9, 0, X86_EFLAGS_SF },			/* jns */
		{ 0xa, X86_EFLAGS_PF, 0 },			/* jp */
		{ 0xb, 0, X86_EFLAGS_PF },			/* jnp */
		{ 0xc, X86_EFLAGS_SF, 0 },			/* jl */
		{ 0xd, 0, X86_EFLAGS_SF },			/* jge */
		{ 0xe, X86_EFLAGS_ZF, 0 },			/* jle */
		{ 0xf, 0, X86_EFLAGS_ZF },			/* jg */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(m); i++) {
		u8 b[] = { 0x70 | m[i].cc, 0x30 };
		struct arch_uprobe a;
		struct pt_regs regs = { .ip = VADDR, .flags = m[i].yes };

		analyse(test, &a, b, sizeof(b));
		KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
		KUNIT_EXPECT_EQ_MSG(test, regs.ip, VADDR + 2 + 0x30, "cc %x taken", m[i].cc);
		regs.ip = VADDR;
		regs.flags = m[i].no;
		KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
		KUNIT_EXPECT_EQ_MSG(test, regs.ip, VADDR + 2, "cc %x not taken", m[i].cc);
	}
}

/* call, ret, push and pushf on a user stack of the test's own mm. */
static void up_test_emulate_stack(struct kunit *test)
{
	static const u8 call[] = { 0xe8, 0x00, 0x01, 0, 0 }, ret16[] = { 0xc2, 0x10, 0 };
	static const u8 push[] = { 0x41, 0x54 }, pushf[] = { 0x9c };
	static const u8 callr[] = { 0xff, 0xd4 };	/* call *%rsp */
	unsigned long top, val;
	struct arch_uprobe a;
	struct pt_regs regs = {};

	top = user_stack(test) + PAGE_SIZE / 2;

	analyse(test, &a, call, sizeof(call));
	regs.ip = VADDR;
	regs.sp = top;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 5 + 0x100);
	KUNIT_EXPECT_EQ(test, regs.sp, top - 8);
	KUNIT_EXPECT_EQ(test, get_user(val, (unsigned long __user *)regs.sp), 0);
	KUNIT_EXPECT_EQ(test, val, VADDR + 5);

	analyse(test, &a, ret16, sizeof(ret16));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 5);
	KUNIT_EXPECT_EQ(test, regs.sp, top + 0x10);

	analyse(test, &a, push, sizeof(push));
	regs.ip = VADDR;
	regs.sp = top;
	regs.r12 = 0xfeedface;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 2);
	KUNIT_EXPECT_EQ(test, regs.sp, top - 8);
	KUNIT_EXPECT_EQ(test, get_user(val, (unsigned long __user *)regs.sp), 0);
	KUNIT_EXPECT_EQ(test, val, 0xfeedfaceUL);

	/* pushf stores the flags without RF. */
	analyse(test, &a, pushf, sizeof(pushf));
	regs.ip = VADDR;
	regs.sp = top;
	regs.flags = X86_EFLAGS_ZF | X86_EFLAGS_RF | X86_EFLAGS_FIXED;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, get_user(val, (unsigned long __user *)regs.sp), 0);
	KUNIT_EXPECT_EQ(test, val, (unsigned long)(X86_EFLAGS_ZF | X86_EFLAGS_FIXED));

	/* call *%rsp jumps to the old %rsp. */
	analyse(test, &a, callr, sizeof(callr));
	regs.ip = VADDR;
	regs.sp = top;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, top);
	KUNIT_EXPECT_EQ(test, regs.sp, top - 8);
}

/* pop, leave and RIP-relative loads read user memory; a fault steps. */
static void up_test_emulate_loads(struct kunit *test)
{
	static const u8 pop[] = { 0x41, 0x5f }, leave[] = { 0xc9 };
	static const u8 load[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 };
	static const u8 load32[] = { 0x8b, 0x05, 0x10, 0, 0, 0 };
	unsigned long top;
	struct arch_uprobe a;
	struct pt_regs regs = {};

	top = user_stack(test) + PAGE_SIZE / 2;
	KUNIT_ASSERT_EQ(test, put_user(0x8899aabbccddeeffUL,
				       (unsigned long __user *)top), 0);

	analyse(test, &a, pop, sizeof(pop));
	regs.ip = VADDR;
	regs.sp = top;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.r15, 0x8899aabbccddeeffUL);
	KUNIT_EXPECT_EQ(test, regs.sp, top + 8);
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 2);
	/* Nothing mapped there: left for the step, registers untouched. */
	regs.ip = VADDR;
	regs.sp = 16;
	KUNIT_EXPECT_FALSE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.sp, 16UL);
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR);
	KUNIT_EXPECT_TRUE(test, a.fixups & UPX_FIX_IP);

	analyse(test, &a, leave, sizeof(leave));
	regs.ip = VADDR;
	regs.sp = top - 64;
	regs.bp = top;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.bp, 0x8899aabbccddeeffUL);
	KUNIT_EXPECT_EQ(test, regs.sp, top + 8);

	/* The loads' address is the next instruction's plus 0x10. */
	analyse(test, &a, load, sizeof(load));
	regs.ip = top - 0x10 - sizeof(load);
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ax, 0x8899aabbccddeeffUL);
	KUNIT_EXPECT_EQ(test, regs.ip, top - 0x10);
	analyse(test, &a, load32, sizeof(load32));
	regs.ip = top - 0x10 - sizeof(load32);
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ax, 0xccddeeffUL);
}

#define ARITH	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | X86_EFLAGS_ZF | \
		 X86_EFLAGS_SF | X86_EFLAGS_OF)

/* Register moves, lea, and add/sub on %rsp with the flags they set. */
static void up_test_emulate_regs(struct kunit *test)
{
	static const u8 mov[] = { 0x49, 0x8b, 0xd0 }, mov32[] = { 0x89, 0xdf };
	static const u8 lea_rip[] = { 0x48, 0x8d, 0x05, 0x10, 0, 0, 0 };
	static const u8 lea32[] = { 0x8d, 0x73, 0x08 };	/* lea 8(%rbx),%esi */
	static const u8 sub[] = { 0x48, 0x83, 0xec, 0x08 };
	static const u8 add[] = { 0x48, 0x81, 0xc4, 0, 0x10, 0, 0 };
	static const unsigned long kept = X86_EFLAGS_IF | X86_EFLAGS_DF |
					  X86_EFLAGS_FIXED;
	struct arch_uprobe a;
	struct pt_regs regs = { .ip = VADDR };

	analyse(test, &a, mov, sizeof(mov));
	regs.r8 = 0x1122334455667788UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.dx, 0x1122334455667788UL);
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR + 3);

	analyse(test, &a, mov32, sizeof(mov32));
	regs.bx = 0xffffffff12345678UL;
	regs.di = ~0UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.di, 0x12345678UL);

	analyse(test, &a, lea_rip, sizeof(lea_rip));
	regs.ip = VADDR;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ax, VADDR + sizeof(lea_rip) + 0x10);

	analyse(test, &a, lea32, sizeof(lea32));
	regs.bx = 0x1fffffffcUL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.si, 4UL);

	/* 8 - 8: ZF, PF; 0 - 8: CF, SF, AF; -0x1000 + 0x1000: CF, ZF, PF. */
	analyse(test, &a, sub, sizeof(sub));
	regs.sp = 8;
	regs.flags = kept | X86_EFLAGS_OF | X86_EFLAGS_CF;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.sp, 0UL);
	KUNIT_EXPECT_EQ(test, regs.flags, kept | X86_EFLAGS_ZF | X86_EFLAGS_PF);
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.sp, -8UL);
	KUNIT_EXPECT_EQ(test, regs.flags & ARITH,
			(unsigned long)(X86_EFLAGS_CF | X86_EFLAGS_SF | X86_EFLAGS_AF));
	analyse(test, &a, add, sizeof(add));
	regs.sp = -0x1000UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.sp, 0UL);
	KUNIT_EXPECT_EQ(test, regs.flags,
			kept | X86_EFLAGS_CF | X86_EFLAGS_ZF | X86_EFLAGS_PF);
}

/* ---- 32-bit code ---------------------------------------------------------- */

/* ELF headers up to e_machine: only i386 is 32-bit code. */
static void up_test_file_mode(struct kunit *test)
{
	static const struct {
		const char	*what;
		u8		hdr[UPROBE_FILE_HDR_BYTES];
		bool		ia32;
	} c[] = {
		{ "i386", { 0x7f, 'E', 'L', 'F', ELFCLASS32, [18] = EM_386 }, true },
		{ "x86-64", { 0x7f, 'E', 'L', 'F', ELFCLASS64, [18] = EM_X86_64 } },
		{ "x32", { 0x7f, 'E', 'L', 'F', ELFCLASS32, [18] = EM_X86_64 } },
		{ "not ELF", { '#', '!', '/', 'b', [4] = ELFCLASS32, [18] = EM_386 } },
		{ "empty file" },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct arch_uprobe a = { .ia32 = !c[i].ia32 };

		arch_uprobe_file_mode(&a, c[i].hdr);
		KUNIT_EXPECT_EQ_MSG(test, a.ia32,
				    c[i].ia32 && IS_ENABLED(CONFIG_IA32_EMULATION),
				    "%s", c[i].what);
	}
}

static const struct insn_case insn32_cases[] = {
	/* REX prefixes in 64-bit code, one instruction each here. */
	{ "inc %eax",		{ 0x40, 0x90 },				0, UPX_STEP, 1 },
	{ "dec %ebx; ret",	{ 0x4b, 0xc3 },				0, UPX_STEP, 1 },
	{ "push %es",		{ 0x06 },				0, UPX_STEP, 1 },
	{ "pusha",		{ 0x60 },				0, UPX_STEP, 1 },
	{ "daa",		{ 0x27 },				0, UPX_STEP, 1 },
	{ "les (%esi),%eax",	{ 0xc4, 0x06 },				0, UPX_STEP, 2 },
	{ "vmovdqu (VEX)",	{ 0xc5, 0xfe, 0x6f, 0x06 },		0, UPX_STEP, 4 },
	/* disp32 alone is an absolute address, not RIP-relative. */
	{ "mov 0x1234,%esi",	{ 0x8b, 0x35, 0x34, 0x12, 0, 0 },	0, UPX_STEP, 6 },
	{ "lea 0x1234,%esi",	{ 0x8d, 0x35, 0x34, 0x12, 0, 0 },	0, UPX_STEP, 6 },
	{ "lea 0x8(%ebx),%esi",	{ 0x8d, 0x73, 0x08 },			0, UPX_LEA, 3 },
	{ "mov %esp,%ebp",	{ 0x89, 0xe5 },				0, UPX_MOV, 2 },
	{ "sub $8,%esp",	{ 0x83, 0xec, 0x08 },			0, UPX_STEP, 3 },
	{ "endbr32",		{ 0xf3, 0x0f, 0x1e, 0xfb },		0, UPX_NOP, 4 },
	{ "nop5",		{ 0x0f, 0x1f, 0x44, 0, 0 },		0, UPX_NOP, 5 },
	{ "push %ebp",		{ 0x55 },				0, UPX_PUSH, 1 },
	{ "pop %ebp",		{ 0x5d },				0, UPX_POP, 1 },
	{ "call rel32",		{ 0xe8, 1, 2, 3, 4 },			0, UPX_CALL, 5 },
	{ "ret $4",		{ 0xc2, 0x04, 0x00 },			0, UPX_RET, 3 },
	{ "call *%eax",		{ 0xff, 0xd0 },				0, UPX_CALL_REG, 2 },
	{ "call *0x1234",	{ 0xff, 0x15, 0x34, 0x12, 0, 0 },	0, UPX_STEP, 6 },
	{ "jecxz",		{ 0xe3, 0x02 },				0, UPX_LOOP, 2 },
	{ "pop %ss",		{ 0x17 },				-ENOTSUPP },
	{ "lcall $0x23,$0",	{ 0x9a, 0, 0, 0, 0, 0x23, 0 },		-ENOTSUPP },
	{ "ljmp $0x33,$0",	{ 0xea, 0, 0, 0, 0, 0x33, 0 },		-ENOTSUPP },
	{ "int $0x80",		{ 0xcd, 0x80 },				-ENOTSUPP },
	{ "sysenter",		{ 0x0f, 0x34 },				-ENOTSUPP },
	{ "into",		{ 0xce },				-ENOTSUPP },
};

/*
 * The same bytes mean other things in 32-bit code; nothing there is
 * rewritten (no RIP-relative operand), boosted or optimized.
 */
static void up_test_analysis32(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(insn32_cases); i++) {
		const struct insn_case *c = &insn32_cases[i];
		struct arch_uprobe a;

		if (!check_case(test, c, &a, true))
			continue;
		KUNIT_EXPECT_FALSE_MSG(test, a.fixups & UPX_FIX_SCRATCH, "%s", c->what);
		KUNIT_EXPECT_MEMEQ_MSG(test, a.ixol, a.insn, a.len, "%s", c->what);
		KUNIT_EXPECT_FALSE_MSG(test, arch_uprobe_optimizable(&a), "%s", c->what);
		KUNIT_EXPECT_FALSE_MSG(test, arch_uprobe_boostable(&a, NULL), "%s", c->what);
	}
}

static void analyse32(struct kunit *test, struct arch_uprobe *a, const u8 *b, int n)
{
	analyse_as(test, a, b, n, true);
}

#define VADDR32	0xfffffff0UL

/* 4-byte stack words, ip in 32 bits, registers written zero-extended. */
static void up_test_emulate32(struct kunit *test)
{
	static const u8 call[] = { 0xe8, 0x10, 0, 0, 0 }, ret4[] = { 0xc2, 4, 0 };
	static const u8 callr[] = { 0xff, 0xd0 }, push[] = { 0x53 }, pop[] = { 0x5e };
	static const u8 leave[] = { 0xc9 }, loop[] = { 0xe2, 0x10 };
	unsigned long top;
	struct arch_uprobe a;
	struct pt_regs regs = {};
	u32 w[2];

	top = user_stack(test) + PAGE_SIZE / 2;

	/* The call's target wraps at 4 GiB; it pushes 4 bytes only. */
	analyse32(test, &a, call, sizeof(call));
	KUNIT_ASSERT_EQ(test, put_user(~0UL, (unsigned long __user *)(top - 8)), 0);
	regs.ip = VADDR32;
	regs.sp = top;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, (VADDR32 + 5 + 0x10) & 0xffffffffUL);
	KUNIT_EXPECT_EQ(test, regs.sp, top - 4);
	KUNIT_ASSERT_EQ(test, copy_from_user(w, (void __user *)(top - 8), 8), 0UL);
	KUNIT_EXPECT_EQ(test, w[1], (u32)(VADDR32 + 5));
	KUNIT_EXPECT_EQ(test, w[0], ~0U);

	/* ret $4 pops the word and 4 bytes more. */
	analyse32(test, &a, ret4, sizeof(ret4));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, (unsigned long)(u32)(VADDR32 + 5));
	KUNIT_EXPECT_EQ(test, regs.sp, top + 4);

	/* call *%eax: a target of 32 bits, whatever the upper half holds. */
	analyse32(test, &a, callr, sizeof(callr));
	regs.ip = 0x8048000;
	regs.sp = top;
	regs.ax = 0xdead000008049000UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, 0x8049000UL);
	KUNIT_EXPECT_EQ(test, regs.sp, top - 4);

	/* push %ebx; pop %esi: 4 bytes, zero-extended. */
	analyse32(test, &a, push, sizeof(push));
	regs.sp = top;
	regs.bx = 0xcafe0000feedfaceUL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.sp, top - 4);
	analyse32(test, &a, pop, sizeof(pop));
	regs.si = ~0UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.si, 0xfeedfaceUL);
	KUNIT_EXPECT_EQ(test, regs.sp, top);

	/* leave: %esp = %ebp + 4, %ebp from the stack. */
	analyse32(test, &a, leave, sizeof(leave));
	KUNIT_ASSERT_EQ(test, put_user(0x6060U, (u32 __user *)top), 0);
	regs.bp = top;
	regs.sp = top - 32;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.bp, 0x6060UL);
	KUNIT_EXPECT_EQ(test, regs.sp, top + 4);

	/* loop counts %ecx: 1 in it is the last round, whatever is above. */
	analyse32(test, &a, loop, sizeof(loop));
	regs.ip = 0x8048000;
	regs.cx = 0x100000001UL;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_skip_sstep(&a, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, 0x8048002UL);
	KUNIT_EXPECT_EQ(test, regs.cx, 0UL);
}

/* ---- registration ---------------------------------------------------------- */

/* Optimized sites: the jump, and the stub undone from each of its steps. */
static void up_test_jump(struct kunit *test)
{
	static const u8 nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, nop[] = { 0x90 };
	struct arch_uprobe a;
	u8 buf[UPROBE_JMP_INSN_SIZE];

	analyse(test, &a, nop5, sizeof(nop5));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_optimizable(&a));
	analyse(test, &a, nop, sizeof(nop));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_optimizable(&a));

	arch_uprobe_jmp_insn(buf, VADDR, VADDR - 0x1000);
	KUNIT_EXPECT_EQ(test, buf[0], 0xe9);
	KUNIT_EXPECT_EQ(test, arch_uprobe_jmp_target(buf, VADDR), VADDR - 0x1000);
	buf[0] = 0x0f;
	KUNIT_EXPECT_EQ(test, arch_uprobe_jmp_target(buf, VADDR), 0UL);
	/* rel32 counts from the end of the jump. */
	KUNIT_EXPECT_TRUE(test, arch_uprobe_stub_reaches(VADDR, VADDR + 5 + S32_MAX));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_stub_reaches(VADDR, VADDR + 6 + S32_MAX));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_stub_reaches(VADDR + SZ_4G, VADDR + SZ_4G + 5 - SZ_2G));
}

/*
 * Boosted copies: which stepped instructions may run from a stub and jump
 * back, and the code that does it (a RIP-relative operand still reaching
 * the same address, the jump landing on the next instruction).
 */
static void up_test_boost(struct kunit *test)
{
	static const u8 add[] = { 0x48, 0x01, 0xca };			/* add %rcx,%rdx */
	static const u8 rip[] = { 0x48, 0x03, 0x1d, 0x10, 0, 0, 0 };	/* add 0x10(%rip),%rbx */
	static const u8 callm[] = { 0xff, 0x10 }, jmpm[] = { 0xff, 0x25, 0, 0, 0, 0 };
	static const u8 popf[] = { 0x9d }, nop[] = { 0x90 };
	const unsigned long slot = VADDR + SZ_1M;
	struct pt_regs regs = { .flags = X86_EFLAGS_IF };
	u8 code[UPROBE_STUB_BYTES];
	struct arch_uprobe a;
	unsigned int i;

	analyse(test, &a, add, sizeof(add));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_boostable(&a, &regs));
	KUNIT_EXPECT_TRUE(test, arch_uprobe_boostable(&a, NULL));
	regs.flags |= X86_EFLAGS_TF;	/* a debugger's step stops at the text */
	KUNIT_EXPECT_FALSE(test, arch_uprobe_boostable(&a, &regs));
	KUNIT_ASSERT_EQ(test, arch_uprobe_boost_code(&a, VADDR, slot, code), 0);
	KUNIT_EXPECT_EQ(test, memcmp(code, add, sizeof(add)), 0);
	KUNIT_EXPECT_EQ(test, code[3], 0xe9);
	KUNIT_EXPECT_EQ(test, arch_uprobe_jmp_target(code + 3, slot + 3), VADDR + 3);
	for (i = 3 + UPROBE_JMP_INSN_SIZE; i < sizeof(code); i++)
		KUNIT_EXPECT_EQ(test, code[i], 0xcc);

	/* The operand is the same address seen from the slot. */
	analyse(test, &a, rip, sizeof(rip));
	KUNIT_ASSERT_EQ(test, arch_uprobe_boost_code(&a, VADDR, slot, code), 0);
	KUNIT_EXPECT_EQ(test, slot + 7 + (s32)get_unaligned_le32(code + 3),
			VADDR + 7 + 0x10);
	KUNIT_EXPECT_EQ(test, memcmp(code, rip, 3), 0);
	KUNIT_EXPECT_EQ(test, arch_uprobe_jmp_target(code + 7, slot + 7), VADDR + 7);
	/* Out of a rel32's reach: refused, not truncated. */
	KUNIT_EXPECT_EQ(test, arch_uprobe_boost_code(&a, VADDR, VADDR + SZ_4G, code),
			-ERANGE);

	/* Never boosted: what pushes or jumps by itself, popf, emulated ones. */
	analyse(test, &a, callm, sizeof(callm));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_boostable(&a, NULL));
	analyse(test, &a, jmpm, sizeof(jmpm));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_boostable(&a, NULL));
	analyse(test, &a, popf, sizeof(popf));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_boostable(&a, NULL));
	analyse(test, &a, nop, sizeof(nop));
	KUNIT_EXPECT_FALSE(test, arch_uprobe_boostable(&a, NULL));
}

/* Instruction boundaries of the stub: where a thread can be stopped. */
static const unsigned int stub_steps[] = { 0, 5, 6, 7, 9, 14, 16 };

/*
 * Run the stub on @regs as the CPU would, up to the instruction at @until:
 * red zone, three pushes, the call number, the syscall's clobbers.
 */
static void stub_run(struct kunit *test, struct pt_regs *regs, unsigned int until)
{
	if (until > 0)
		regs->sp -= 128;
	if (until > 5) {
		regs->sp -= 8;
		KUNIT_ASSERT_EQ(test, put_user(regs->ax, (unsigned long __user *)regs->sp), 0);
	}
	if (until > 6) {
		regs->sp -= 8;
		KUNIT_ASSERT_EQ(test, put_user(regs->cx, (unsigned long __user *)regs->sp), 0);
	}
	if (until > 7) {
		regs->sp -= 8;
		KUNIT_ASSERT_EQ(test, put_user(regs->r11, (unsigned long __user *)regs->sp), 0);
	}
	if (until > 9)
		regs->ax = __NR_uretprobe;
	if (until > 14) {
		regs->cx = 0xdead;		/* the return address */
		regs->r11 = 0xbeef;		/* the flags */
	}
}

static void up_test_stub(struct kunit *test)
{
	u8 code[UPROBE_STUB_BYTES];
	unsigned long top;
	struct pt_regs regs;
	struct insn insn;
	unsigned int i, off;

	/* The stub's bytes decode to the boundaries the rewind knows. */
	arch_uprobe_stub_write(code);
	for (i = 0, off = 0; i < ARRAY_SIZE(stub_steps); i++) {
		KUNIT_EXPECT_EQ(test, off, stub_steps[i]);
		KUNIT_ASSERT_EQ(test, insn_decode(&insn, code + off, sizeof(code) - off,
						  INSN_MODE_64), 0);
		off += insn.length;
	}
	KUNIT_EXPECT_EQ(test, code[16], 0x0f);		/* ud2 after the syscall */
	KUNIT_EXPECT_EQ(test, code[17], 0x0b);

	top = user_stack(test) + PAGE_SIZE - 64;

	/* Stopped anywhere in the stub: back at the nop as it was. */
	for (i = 0; i < ARRAY_SIZE(stub_steps); i++) {
		memset(&regs, 0, sizeof(regs));
		regs.sp = top;
		regs.ax = 0xaaaa;
		regs.cx = 0xcccc;
		regs.r11 = 0x1111;
		regs.bx = 0xbbbb;
		stub_run(test, &regs, stub_steps[i]);
		regs.ip = 0x7000 + stub_steps[i];
		arch_uprobe_stub_rewind(&regs, stub_steps[i], VADDR);
		KUNIT_EXPECT_EQ_MSG(test, regs.ip, VADDR, "at %u", stub_steps[i]);
		KUNIT_EXPECT_EQ_MSG(test, regs.sp, top, "at %u", stub_steps[i]);
		KUNIT_EXPECT_EQ_MSG(test, regs.ax, 0xaaaaUL, "at %u", stub_steps[i]);
		KUNIT_EXPECT_EQ_MSG(test, regs.cx, 0xccccUL, "at %u", stub_steps[i]);
		KUNIT_EXPECT_EQ_MSG(test, regs.r11, 0x1111UL, "at %u", stub_steps[i]);
		KUNIT_EXPECT_EQ_MSG(test, regs.bx, 0xbbbbUL, "at %u", stub_steps[i]);
	}
	/* Not an instruction boundary: left alone. */
	regs.ip = 0x7003;
	regs.sp = top;
	arch_uprobe_stub_rewind(&regs, 3, VADDR);
	KUNIT_EXPECT_EQ(test, regs.ip, 0x7003UL);

	/* The system call: registers of the nop, no restart. */
	memset(&regs, 0, sizeof(regs));
	regs.sp = top;
	regs.ax = 0xaaaa;
	regs.cx = 0xcccc;
	regs.r11 = 0x1111;
	stub_run(test, &regs, 16);
	regs.orig_ax = __NR_uretprobe;
	KUNIT_EXPECT_TRUE(test, arch_uprobe_stub_return(&regs, VADDR));
	KUNIT_EXPECT_EQ(test, regs.ip, VADDR);
	KUNIT_EXPECT_EQ(test, regs.sp, top);
	KUNIT_EXPECT_EQ(test, regs.ax, 0xaaaaUL);
	KUNIT_EXPECT_EQ(test, regs.cx, 0xccccUL);
	KUNIT_EXPECT_EQ(test, regs.r11, 0x1111UL);
	KUNIT_EXPECT_EQ(test, regs.orig_ax, -1UL);
	/* A stack that cannot be read: refused. */
	regs.sp = 0x1000;
	KUNIT_EXPECT_FALSE(test, arch_uprobe_stub_return(&regs, VADDR));
}

static int dummy_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	return 0;
}

static struct file *code_file(struct kunit *test)
{
	/* nop; int3; syscall; mov %rsp,%rbp; ret */
	static const u8 code[] = { 0x90, 0xcc, 0x0f, 0x05, 0x48, 0x89, 0xe5, 0xc3 };
	struct file *f = shmem_file_setup("uprobes_kunit", PAGE_SIZE, 0);
	loff_t pos = 0;

	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	KUNIT_ASSERT_EQ(test, kernel_write(f, code, sizeof(code), &pos),
			(ssize_t)sizeof(code));
	return f;
}

static void up_test_register_errors(struct kunit *test)
{
	struct uprobe_consumer uc = { .handler = dummy_handler }, none = {};
	struct uprobe_consumer other = { .handler = dummy_handler };
	struct file *f = code_file(test);
	struct inode *inode = file_inode(f);
	struct uprobe *u;

	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 0, 0, &none)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 1, 0, &uc)), -ENOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 2, 0, &uc)), -ENOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 2 * PAGE_SIZE, 0, &uc)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 0, 3, &uc)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 0, -2, &uc)), -EINVAL);

	u = uprobe_register(inode, 4, 0x100, &uc);
	KUNIT_ASSERT_FALSE(test, IS_ERR(u));
	/* One semaphore per probe. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(uprobe_register(inode, 4, 0x200, &other)), -EINVAL);
	/* Not a consumer of it. */
	KUNIT_EXPECT_EQ(test, uprobe_apply(u, &other, true), -ENOENT);
	KUNIT_EXPECT_EQ(test, uprobe_apply(u, &uc, true), 0);
	/* A second consumer on the same instruction gets the same probe. */
	KUNIT_EXPECT_PTR_EQ(test, uprobe_register(inode, 4, 0x100, &other), u);
	uprobe_unregister_nosync(u, &other);
	uprobe_unregister_nosync(u, &uc);
	uprobe_unregister_sync();
	fput(f);
}

static bool up_filter_yes;

static bool up_filter(struct uprobe_consumer *uc, struct mm_struct *mm)
{
	return READ_ONCE(up_filter_yes);
}

/* The first byte of each mapping at @map, as the process sees it. */
static void expect_bytes(struct kunit *test, unsigned long *map, int n,
			 u8 want, const char *what)
{
	u8 b;
	int i;

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, copy_from_user(&b, (void __user *)map[i], 1), 0UL);
		KUNIT_EXPECT_EQ_MSG(test, b, want, "mapping %d: %s", i, what);
	}
}

/*
 * Six mappings of one page in this process: more than
 * uprobe_collect_mms() keeps on the stack.  A consumer whose filter then
 * says no (uprobe_apply(..., false)) leaves the breakpoints to the hits
 * and to the unregister, which takes each out: in a page it finds
 * mapped, and in one that went meanwhile (MADV_DONTNEED: no int3 left
 * there, and nothing to write).
 */
static void up_test_filtered_removal(struct kunit *test)
{
	struct uprobe_consumer uc = { .handler = dummy_handler,
				      .filter = up_filter };
	struct mm_struct *few[FEW_TARGETS], **t;
	unsigned long map[FEW_TARGETS + 2];
	struct file *f = code_file(test);
	struct inode *inode = file_inode(f);
	struct uprobe *u;
	int i, n;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		map[i] = kunit_vm_mmap(test, f, 0, PAGE_SIZE,
				       PROT_READ | PROT_EXEC, MAP_PRIVATE, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(map[i]));
	}
	t = uprobe_collect_mms(inode, 0, 0, &n, few);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_EXPECT_EQ(test, n, (int)ARRAY_SIZE(map));
	KUNIT_EXPECT_TRUE(test, t != few);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_PTR_EQ(test, t[i], current->mm);
		mmput(t[i]);
	}
	if (t != few)
		kvfree(t);

	WRITE_ONCE(up_filter_yes, true);
	u = uprobe_register(inode, 0, 0, &uc);		/* the nop */
	KUNIT_ASSERT_FALSE(test, IS_ERR(u));
	expect_bytes(test, map, ARRAY_SIZE(map), 0xcc, "armed");

	WRITE_ONCE(up_filter_yes, false);
	KUNIT_EXPECT_EQ(test, uprobe_apply(u, &uc, false), 0);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(u->site->filters_changed));
	expect_bytes(test, map, ARRAY_SIZE(map), 0xcc, "left to the next hit");

	KUNIT_EXPECT_EQ(test, do_madvise(current->mm, map[0], PAGE_SIZE,
					 MADV_DONTNEED), 0);
	uprobe_unregister_nosync(u, &uc);
	uprobe_unregister_sync();
	expect_bytes(test, map, ARRAY_SIZE(map), 0x90, "disarmed");
	fput(f);
}

static bool mm_flag(void)
{
	return test_bit(MMF_HAS_UPROBES, &current->mm->flags);
}

/*
 * What is armed in the process is counted, mapping by mapping: once the
 * last probe is gone the flag is clear (fork, munmap and exit then skip
 * the uprobes work), and the next probe sets it again.  A debugger's int3
 * under a probe is not counted when the probe is armed, yet the probe's
 * removal takes it out: the count then says nothing is armed while
 * another probe is, and the flag must stay until that one goes too.
 */
static void up_test_mm_flag(struct kunit *test)
{
	struct uprobe_consumer a = { .handler = dummy_handler };
	struct uprobe_consumer b = { .handler = dummy_handler };
	struct file *f = code_file(test);
	struct inode *inode = file_inode(f);
	struct mm_struct *mm;
	unsigned long map[2];
	struct uprobe *ua, *ub;
	u8 bp = UPROBE_SWBP_INSN;
	int i;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		map[i] = kunit_vm_mmap(test, f, 0, PAGE_SIZE,
				       PROT_READ | PROT_EXEC, MAP_PRIVATE, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(map[i]));
	}
	mm = current->mm;
	KUNIT_EXPECT_FALSE(test, mm_flag());

	ua = uprobe_register(inode, 0, 0, &a);		/* the nop */
	KUNIT_ASSERT_FALSE(test, IS_ERR(ua));
	KUNIT_EXPECT_TRUE(test, mm_flag());
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 2UL);
	ub = uprobe_register(inode, 4, 0, &b);		/* the mov */
	KUNIT_ASSERT_FALSE(test, IS_ERR(ub));
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 4UL);
	/* Armed once more where it is armed already: counted once. */
	KUNIT_EXPECT_EQ(test, uprobe_apply(ua, &a, true), 0);
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 4UL);

	uprobe_unregister_nosync(ua, &a);
	KUNIT_EXPECT_TRUE(test, mm_flag());
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 2UL);
	uprobe_unregister_nosync(ub, &b);
	uprobe_unregister_sync();
	KUNIT_EXPECT_FALSE(test, mm_flag());
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 0UL);
	expect_bytes(test, map, ARRAY_SIZE(map), 0x90, "disarmed");

	/* A new probe sets it again. */
	ua = uprobe_register(inode, 0, 0, &a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ua));
	KUNIT_EXPECT_TRUE(test, mm_flag());

	/* A debugger's int3 at 4, in both mappings, then a probe there. */
	mmap_write_lock(mm);
	for (i = 0; i < ARRAY_SIZE(map); i++)
		KUNIT_EXPECT_EQ(test, uprobe_access_mm(mm, map[i] + 4, &bp, 1, true), 0);
	mmap_write_unlock(mm);
	ub = uprobe_register(inode, 4, 0, &b);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ub));
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 2UL);
	/* Its removal counts two out: the nop's int3s are found again. */
	uprobe_unregister_nosync(ub, &b);
	KUNIT_EXPECT_TRUE(test, mm_flag());
	KUNIT_EXPECT_EQ(test, mm->uprobes_state.armed, 2UL);
	expect_bytes(test, map, ARRAY_SIZE(map), 0xcc, "still armed");
	uprobe_unregister_nosync(ua, &a);
	uprobe_unregister_sync();
	KUNIT_EXPECT_FALSE(test, mm_flag());
	expect_bytes(test, map, ARRAY_SIZE(map), 0x90, "disarmed again");
	fput(f);
}

struct batch_test {
	loff_t			offset[4];
	loff_t			ref_ctr;
	struct uprobe_consumer	uc[4];
	struct uprobe		*handle[4];
};

static void batch_test_get(void *ctx, unsigned int i,
			   struct uprobe_batch_probe *p)
{
	struct batch_test *b = ctx;

	p->offset = b->offset[i];
	p->ref_ctr_offset = b->ref_ctr;
	p->uc = &b->uc[i];
	p->handle = &b->handle[i];
}

/* How many of @b's first @n offsets have a site. */
static int batch_sites(struct inode *inode, struct batch_test *b, int n)
{
	struct uprobe_site *s;
	int i, found = 0;

	for (i = 0; i < n; i++) {
		s = uprobe_site_find(inode, b->offset[i]);
		if (s) {
			found++;
			uprobe_site_put(s);
		}
	}
	return found;
}

static void up_test_batch(struct kunit *test)
{
	/* nop, mov, ret, and the nop again (a second consumer there) */
	struct batch_test good = { .offset = { 0, 4, 7, 0 } };
	/* the int3 at 1 fails the batch after the site at 0 was made */
	struct batch_test bad = { .offset = { 0, 1, 4 } };
	struct uprobe_consumer uc = { .handler = dummy_handler };
	struct file *f = code_file(test);
	struct inode *inode = file_inode(f);
	struct uprobe *u;
	int i;

	for (i = 0; i < 4; i++) {
		good.uc[i].handler = dummy_handler;
		bad.uc[i].handler = dummy_handler;
	}
	KUNIT_EXPECT_EQ(test, uprobe_register_batch(inode, 0, batch_test_get, &good), 0);
	KUNIT_EXPECT_EQ(test, uprobe_register_batch(inode, 3, batch_test_get, &bad),
			-ENOTSUPP);
	KUNIT_EXPECT_EQ(test, batch_sites(inode, &bad, 3), 0);
	KUNIT_EXPECT_NULL(test, bad.handle[0]);

	KUNIT_ASSERT_EQ(test, uprobe_register_batch(inode, 4, batch_test_get, &good), 0);
	KUNIT_EXPECT_EQ(test, batch_sites(inode, &good, 4), 4);
	KUNIT_EXPECT_PTR_EQ(test, good.handle[0], good.handle[3]);
	KUNIT_EXPECT_PTR_NE(test, good.handle[0], good.handle[1]);
	/* The same probes as one by one: a third consumer at 4 shares it. */
	u = uprobe_register(inode, 4, 0, &uc);
	KUNIT_EXPECT_PTR_EQ(test, u, good.handle[1]);
	/* A semaphore other than the sites' fails it; they stay as they were. */
	bad.offset[1] = 7;
	bad.ref_ctr = 0x100;
	KUNIT_EXPECT_EQ(test, uprobe_register_batch(inode, 3, batch_test_get, &bad),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, batch_sites(inode, &good, 4), 4);

	uprobe_unregister_batch(4, batch_test_get, &good);
	/* Only the site with a consumer of its own is left. */
	KUNIT_EXPECT_EQ(test, batch_sites(inode, &good, 4), 1);
	if (!IS_ERR(u))
		uprobe_unregister_nosync(u, &uc);
	uprobe_unregister_sync();
	KUNIT_EXPECT_EQ(test, batch_sites(inode, &good, 4), 0);
	fput(f);
}

static void seed_handler(struct uprobe *u, struct pt_regs *regs)
{
}

static void up_test_seed_errors(struct kunit *test)
{
	struct uprobe u = { .pid = 1, .vaddr = 0x1000 };

	/* No handler. */
	KUNIT_EXPECT_EQ(test, register_uprobe(&u), -EINVAL);
	KUNIT_EXPECT_EQ(test, register_uprobe(NULL), -EINVAL);
	u.handler = seed_handler;
	/* No such process. */
	u.pid = PID_MAX_LIMIT + 1;
	KUNIT_EXPECT_EQ(test, register_uprobe(&u), -ESRCH);
	/* A kernel thread: ourselves. */
	u.pid = task_pid_nr(current);
	KUNIT_EXPECT_EQ(test, register_uprobe(&u), -EINVAL);
	/* Never registered: a no-op. */
	unregister_uprobe(&u);
}

/*
 * uprobe_sync_consumers() against read sections: one that stays inside
 * holds it up until it leaves.
 */
struct sync_case {
	struct completion	inside;		/* the reader entered */
	struct completion	leave;		/* the reader may leave */
	atomic_t		synced;		/* the waiter returned */
};

static int sync_reader(void *arg)
{
	struct sync_case *c = arg;
	int idx = uprobe_read_lock();

	complete(&c->inside);
	wait_for_completion(&c->leave);
	uprobe_read_unlock(idx);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int sync_waiter(void *arg)
{
	struct sync_case *c = arg;

	uprobe_sync_consumers();
	atomic_set(&c->synced, 1);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static struct task_struct *sync_thread(struct kunit *test,
				       int (*fn)(void *), void *arg)
{
	struct task_struct *t = kthread_run(fn, arg, "up_sync_test");

	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	return t;
}

static void up_test_sync_waits(struct kunit *test)
{
	struct sync_case *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct task_struct *reader, *waiter;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	init_completion(&c->inside);
	init_completion(&c->leave);
	/* No section running: it returns, here and now. */
	uprobe_sync_consumers();

	reader = sync_thread(test, sync_reader, c);
	wait_for_completion(&c->inside);
	waiter = sync_thread(test, sync_waiter, c);
	msleep(200);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->synced), 0);
	complete(&c->leave);
	for (i = 0; i < 500 && !atomic_read(&c->synced); i++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->synced), 1);
	kthread_stop(waiter);
	kthread_stop(reader);
	put_task_struct(waiter);
	put_task_struct(reader);
}

/*
 * What uprobe_unregister_sync() promises, raced: a reader on the other
 * vCPU (when there is one) keeps entering sections and using the object
 * it finds published, while this thread publishes objects, unlinks each,
 * syncs and then marks it dead.  A reader that sees a dead object in its
 * section was let through too early.
 */
#define SYNC_LIVE	0x11feUL
#define SYNC_DEAD	0xdeadUL

struct sync_race {
	unsigned long __rcu	*slot;
	atomic_t		bad;
	atomic_long_t		reads;
};

static int race_reader(void *arg)
{
	struct sync_race *r = arg;
	unsigned long n = 0;

	while (!kthread_should_stop()) {
		int idx = uprobe_read_lock();
		unsigned long *obj = rcu_dereference_raw(r->slot);

		if (obj) {
			if (READ_ONCE(*obj) != SYNC_LIVE)
				atomic_inc(&r->bad);
			/* Stay a while now and then: the waiter must wait. */
			if (!(++n & 7))
				udelay(20);
			if (READ_ONCE(*obj) != SYNC_LIVE)
				atomic_inc(&r->bad);
		}
		uprobe_read_unlock(idx);
		atomic_long_inc(&r->reads);
		/* And outside now and then: the waiter need not wait. */
		if (!(n & 3))
			udelay(20);
		if (!(n & 255))
			cond_resched();
	}
	return 0;
}

static void up_test_sync_race(struct kunit *test)
{
	struct sync_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned long *objs;
	struct task_struct *t;
	long before;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	objs = kunit_kcalloc(test, 500, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	t = kthread_create(race_reader, r, "up_sync_race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	if (num_online_cpus() > 1)
		kthread_bind(t, cpumask_any_but(cpu_online_mask,
						raw_smp_processor_id()));
	wake_up_process(t);
	for (i = 0; i < 500; i++) {
		objs[i] = SYNC_LIVE;
		rcu_assign_pointer(r->slot, &objs[i]);
		/*
		 * Let the reader find it, sometimes inside a section.  The
		 * pause matters under QEMU's TCG, which runs the vCPUs in
		 * turn and moves to the next one at a pause: without it
		 * this loop keeps the reader's vCPU from running for most
		 * of each turn (under -icount, one reader loop per seconds).
		 */
		before = atomic_long_read(&r->reads);
		while (atomic_long_read(&r->reads) == before) {
			cpu_relax();
			cond_resched();
		}
		RCU_INIT_POINTER(r->slot, NULL);
		uprobe_sync_consumers();
		WRITE_ONCE(objs[i], SYNC_DEAD);
		if (!(i & 63))
			cond_resched();
	}
	kthread_stop(t);
	put_task_struct(t);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	KUNIT_EXPECT_GT(test, atomic_long_read(&r->reads), 500L);
}

static struct kunit_case uprobes_cases[] = {
	KUNIT_CASE(up_test_analysis),
	KUNIT_CASE(up_test_undecodable),
	KUNIT_CASE(up_test_riprel),
	KUNIT_CASE(up_test_emulate_branches),
	KUNIT_CASE(up_test_emulate_jcc),
	KUNIT_CASE(up_test_emulate_stack),
	KUNIT_CASE(up_test_emulate_loads),
	KUNIT_CASE(up_test_emulate_regs),
	KUNIT_CASE(up_test_file_mode),
	KUNIT_CASE(up_test_analysis32),
	KUNIT_CASE(up_test_emulate32),
	KUNIT_CASE(up_test_jump),
	KUNIT_CASE(up_test_stub),
	KUNIT_CASE(up_test_boost),
	KUNIT_CASE(up_test_register_errors),
	KUNIT_CASE(up_test_filtered_removal),
	KUNIT_CASE(up_test_mm_flag),
	KUNIT_CASE(up_test_batch),
	KUNIT_CASE(up_test_seed_errors),
	KUNIT_CASE(up_test_sync_waits),
	KUNIT_CASE_SLOW(up_test_sync_race),
	{}
};

static struct kunit_suite uprobes_suite = {
	.name = "uprobes",
	.test_cases = uprobes_cases,
};
kunit_test_suites(&uprobes_suite);

MODULE_DESCRIPTION("KUnit tests for our uprobes");
MODULE_LICENSE("GPL");

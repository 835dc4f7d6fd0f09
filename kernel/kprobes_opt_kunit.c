// SPDX-License-Identifier: GPL-2.0
/*
 * Boot-time KUnit suite kprobes_opt (CONFIG_KPROBES_KUNIT_TEST with
 * CONFIG_OPTPROBES): jump optimization.
 *
 * Probes without a post handler on the assembly targets of this file and
 * of kprobes_kunit.c, whose instructions are known, must become a jump to
 * a detour buffer exactly where the region under the jump allows it; the
 * handlers must see the registers of the probed code; what keeps a probe
 * a breakpoint (a post handler, a probe in the region, disabling) must
 * take the jump out and its going must put the jump back; and both CPUs
 * running the probed code while optimization comes and goes must see
 * every call counted and every result right.  It uses the fixtures of
 * kprobes_kunit.h and the init and exit of suite kprobes_core.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpufeature.h>
#include <linux/cpumask.h>
#include <linux/kprobes.h>
#include <linux/linkage.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <asm/ibt.h>
#include <asm/irqflags.h>
#include <asm/nospec-branch.h>
#include <asm/processor-flags.h>
#include <asm/text-patching.h>

#include "kprobes_kunit.h"
#include "kprobes_kunit_x86.h"

/*
 * Targets whose regions (the instructions a 5-byte jump at the probe point
 * replaces) are known.  kpkunit_opt_point(i) gives probe point i.
 *
 * kpkunit_opt_rip(x)    = x + 0x1234 (+0x100 if x >= 5).  Records %rsp (for
 *			   kpkunit_opt_sp()) and sets CF (x < 5) before the probe
 *			   point; the region is one RIP-relative load and a jb
 *			   right after it reads CF.
 * kpkunit_opt_str(x)    = 2x + 9.  Region: mov, stosq.
 * kpkunit_opt_push(x)   = x + 0x1234.  Region at the entry: push, mov,
 *			   RIP-relative lea.
 * kpkunit_opt_call(x)   = x + 6.  Region: lea, then a call as its last
 *			   instruction, which returns after the region.
 * kpkunit_opt_icall(x)  = x + 8.  The same with a call through a register.
 * kpkunit_opt_ijmp(x)   = x + 2.  The function has an indirect jump past
 *			   the region (taken for x < 0): refused, except with
 *			   kernel IBT, where only a notrack jump could land
 *			   inside a region (no region holds an endbr64).
 *			   objtool refuses notrack jumps in the kernel, so
 *			   that case cannot be built here.
 * kpkunit_opt_target(x) = x + 5 (+3 if x is even).  A branch lands inside
 *			   the region: refused.
 * kpkunit_opt_ac(x)     = x + 1.  The region (mov, add) is inside a
 *			   stac/clac user access section; SMAP CPUs only.
 *
 * kpo_cases[] also probes kpkunit_asm_* points: branches in a region are
 * relocated (rel8 to rel32), loop/jrcxz and popf are refused.
 */
enum kpo_point {
	KPO_rip,
	KPO_str,
	KPO_str_stos,
	KPO_push,
	KPO_call,
	KPO_ijmp,
	KPO_target,
	KPO_ac,
	KPO_icall,
	KPO_NR_POINTS
};

/* The probe points of enum kpo_point, as offsets from kpkunit_opt_rip. */
#define KPO_PT(name)	"	.long .Lkpk_o_" #name " - kpkunit_opt_rip\n"

asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_opt_rip)
	ASM_ENDBR
"	mov %rsp, .Lkpo_sp(%rip)\n"
"	cmp $5, %rdi\n"
".Lkpk_o_rip:\n"
"	mov .Lkpo_word(%rip), %rdx\n"
"	jb 1f\n"
"	add $0x100, %rdx\n"
"1:	lea (%rdx,%rdi), %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_rip)

KPK_ASM_FUNC(kpkunit_opt_str)
	ASM_ENDBR
"	push %rbx\n"
"	mov %rdi, %rbx\n"
"	lea .Lkpo_buf(%rip), %rdi\n"
".Lkpk_o_str:\n"
"	mov %rbx, %rax\n"
".Lkpk_o_str_stos:\n"
"	stosq\n"
"	add $9, %rax\n"
"	add .Lkpo_buf(%rip), %rax\n"
"	pop %rbx\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_str)

KPK_ASM_FUNC(kpkunit_opt_push)
	ASM_ENDBR
".Lkpk_o_push:\n"
"	push %rbp\n"
"	mov %rsp, %rbp\n"
"	lea .Lkpo_word(%rip), %rax\n"
"	mov (%rax), %rax\n"
"	add %rdi, %rax\n"
"	pop %rbp\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_push)

KPK_ASM_FUNC(kpkunit_opt_call)
	ASM_ENDBR
".Lkpk_o_call:\n"
"	lea 1(%rdi), %rdi\n"
"	call kpkunit_asm_add\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_call)

KPK_ASM_FUNC(kpkunit_opt_ijmp)
	ASM_ENDBR
".Lkpk_o_ijmp:\n"
"	mov %rdi, %rax\n"
"	add $2, %rax\n"
"	test %rdi, %rdi\n"
"	jns 1f\n"
"	lea 1f(%rip), %rdx\n"
	ANNOTATE_RETPOLINE_SAFE
"	jmp *%rdx\n"
"1:\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_ijmp)

KPK_ASM_FUNC(kpkunit_opt_target)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	test $1, %dil\n"
"	jnz 1f\n"
".Lkpk_o_target:\n"
"	add $3, %rax\n"
"1:	add $5, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_target)

KPK_ASM_FUNC(kpkunit_opt_ac)
	ASM_ENDBR
"	stac\n"
".Lkpk_o_ac:\n"
"	mov %rdi, %rax\n"
"	add $1, %rax\n"
"	clac\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_ac)

KPK_ASM_FUNC(kpkunit_opt_icall)
	ASM_ENDBR
"	lea kpkunit_asm_add(%rip), %rdx\n"
".Lkpk_o_icall:\n"
"	add $1, %rdi\n"
	ANNOTATE_RETPOLINE_SAFE
"	call *%rdx\n"
"	add $2, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_icall)

KPK_ASM_FUNC(kpkunit_opt_point)
	ASM_ENDBR
"	lea .Lkpo_table(%rip), %rdx\n"
"	movslq (%rdx,%rdi,4), %rax\n"
"	lea kpkunit_opt_rip(%rip), %rdx\n"
"	add %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_point)

KPK_ASM_FUNC(kpkunit_opt_sp)
	ASM_ENDBR
"	mov .Lkpo_sp(%rip), %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_opt_sp)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 8\n"
".Lkpo_word:\n"
"	.quad 0x1234\n"
".Lkpo_table:\n"
KPO_PT(rip) KPO_PT(str) KPO_PT(str_stos) KPO_PT(push)
KPO_PT(call) KPO_PT(ijmp) KPO_PT(target) KPO_PT(ac)
KPO_PT(icall)
"	.popsection\n"

"	.pushsection .data, \"aw\"\n"
"	.balign 8\n"
".Lkpo_buf:\n"
"	.quad 0\n"
".Lkpo_sp:\n"
"	.quad 0\n"
"	.popsection\n"
);

kpk_fn_t kpkunit_opt_rip, kpkunit_opt_str, kpkunit_opt_push;
kpk_fn_t kpkunit_opt_call, kpkunit_opt_ijmp, kpkunit_opt_target;
kpk_fn_t kpkunit_opt_ac, kpkunit_opt_icall;
/* Address of probe point i; %rsp at kpkunit_opt_rip's probe point. */
kpk_fn_t kpkunit_opt_point, kpkunit_opt_sp;

static unsigned long kpo_point(enum kpo_point pt)
{
	return (unsigned long)kpkunit_opt_point(pt);
}

static long kpo_model(kpk_fn_t *fn, long x)
{
	if (fn == kpkunit_opt_rip)
		return x + 0x1234 + (x >= 5 ? 0x100 : 0);
	if (fn == kpkunit_opt_str)
		return 2 * x + 9;
	if (fn == kpkunit_opt_push)
		return x + 0x1234;
	if (fn == kpkunit_opt_call)
		return x + 6;
	if (fn == kpkunit_opt_ijmp)
		return x + 2;
	if (fn == kpkunit_opt_target)
		return x + 5 + (x & 1 ? 0 : 3);
	if (fn == kpkunit_opt_ac)
		return x + 1;
	if (fn == kpkunit_opt_icall)
		return x + 8;
	return kpk_x86_model(fn, x);
}

/* What kpo_pre saw, besides what kpk_pre records. */
static struct {
	unsigned long sp;
	unsigned long flags;
} kpo_seen;

static int kpo_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(kpo_seen.sp, regs->sp);
	WRITE_ONCE(kpo_seen.flags, regs->flags);
	return kpk_pre(p, regs);
}

static struct kprobe *kpo_probe(int i, unsigned long addr, bool post)
{
	struct kprobe *p = kpk_probe(i, (void *)addr, NULL, 0, post, 0);

	p->pre_handler = kpo_pre;
	return p;
}

/* Let the optimizer run; is @p's site a jump to a detour buffer now? */
static bool kpo_optimized(struct kprobe *p)
{
	const u8 *a = (const u8 *)p->addr;
	unsigned long dest;

	wait_for_kprobe_optimizer();
	if (!kprobe_optimized(p) || a[0] != JMP32_INSN_OPCODE)
		return false;
	dest = (unsigned long)a + JMP32_INSN_SIZE + *(const s32 *)&a[1];
	return is_kprobe_optinsn_slot(dest);
}

/*
 * An optimized probe: the text is a jump, handlers see the registers of
 * the probed code (argument, stack pointer, flags, ip as after an int3),
 * the flags survive into the code after the region, and unregistering
 * gives back the original bytes.
 */
static void kpo_test_jump(struct kunit *test)
{
	static const long args[] = { 2, 5, 9 };
	unsigned long addr = kpo_point(KPO_rip);
	u8 orig[JMP32_INSN_SIZE];
	struct kprobe *p;
	int i;

	memcpy(orig, (void *)addr, sizeof(orig));
	p = kpo_probe(0, addr, false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_TRUE(test, kpo_optimized(p));

	for (i = 0; i < ARRAY_SIZE(args); i++) {
		long x = args[i];

		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_rip, x),
				kpo_model(kpkunit_opt_rip, x));
		KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), i + 1);
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], (unsigned long)x);
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0], addr + 1);
		KUNIT_EXPECT_EQ(test, kpo_seen.sp,
				(unsigned long)kpkunit_opt_sp(0));
		KUNIT_EXPECT_EQ(test, !!(kpo_seen.flags & X86_EFLAGS_CF),
				x < 5);
		KUNIT_EXPECT_EQ(test, !!(kpo_seen.flags & X86_EFLAGS_ZF),
				x == 5);
		KUNIT_EXPECT_TRUE(test, kpo_seen.flags & X86_EFLAGS_IF);
	}
	KUNIT_EXPECT_EQ(test, p->nmissed, 0UL);

	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, memcmp((void *)addr, orig, sizeof(orig)), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_rip, 9),
			kpo_model(kpkunit_opt_rip, 9));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), (int)ARRAY_SIZE(args));
}

struct kpo_case {
	const char *desc;
	kpk_fn_t *fn;
	int kpk;		/* enum kpk_point, or -1 */
	int kpo;		/* enum kpo_point, or -1 */
	bool opt;		/* must end up optimized; otherwise must not */
	long (*hits)(long x);	/* hits per call; NULL: one */
};

#define KPO_K(d, f, pt, o, ...)	{ d, f, KPK_##pt, -1, o, __VA_ARGS__ }
#define KPO_O(d, f, pt, o, ...)	{ d, f, -1, KPO_##pt, o, __VA_ARGS__ }

static const struct kpo_case kpo_cases[] = {
	KPO_K("nopl", kpkunit_asm_add, add_nop, true),
	KPO_K("mov reg,reg; add", kpkunit_asm_add, add_mov, true),
	KPO_K("add; ret", kpkunit_asm_add, add_add, true),
	KPO_K("rip-relative load", kpkunit_asm_rip, rip_load, true),
	KPO_K("rip-relative lea", kpkunit_asm_rip, rip_lea, true),
	KPO_K("add (reg); rip-relative store", kpkunit_asm_rip, rip_mem, true),
	KPO_K("rip-relative store", kpkunit_asm_rip, rip_store, true),
	KPO_K("cmp rip-relative,imm32", kpkunit_asm_rip, rip_imm, true),
	KPO_K("call rel32", kpkunit_asm_call, call_direct, true),
	KPO_K("call *%reg; add", kpkunit_asm_call, call_ind, false),
	KPO_K("jb rel8; add", kpkunit_asm_jcc, jcc_short, true),
	KPO_K("jae rel32", kpkunit_asm_jcc, jcc_near, true),
	KPO_K("jmp rel32", kpkunit_asm_jmp, jmp_near, true, kpk_bit1_clear),
	KPO_K("jmp rel8 to a branch target", kpkunit_asm_jmp, jmp_short,
	      false, kpk_even),
	KPO_K("add; jrcxz", kpkunit_asm_loop, loop_insn, false, kpk_x),
	KPO_K("push; mov; push", kpkunit_asm_stack, stk_push, true),
	KPO_K("push imm8; pop; add", kpkunit_asm_stack, stk_pushimm, true),
	KPO_K("pop; leave; ret (and padding)", kpkunit_asm_stack, stk_pop, true),
	KPO_K("xor; pushf; pop; push", kpkunit_asm_flags, flg_xor, true),
	KPO_K("popf", kpkunit_asm_flags, flg_popf, false),
	KPO_O("rip-relative load, jb after", kpkunit_opt_rip, rip, true),
	KPO_O("mov; stosq", kpkunit_opt_str, str, true),
	KPO_O("push; mov; rip-relative lea", kpkunit_opt_push, push, true),
	KPO_O("lea; call", kpkunit_opt_call, call, true),
	KPO_O("add; call *%reg", kpkunit_opt_icall, icall, true),
	KPO_O("function with an indirect jump", kpkunit_opt_ijmp, ijmp,
	      IS_ENABLED(CONFIG_X86_KERNEL_IBT)),
	KPO_O("branch into the region", kpkunit_opt_target, target, false,
	      kpk_even),
};

KUNIT_ARRAY_PARAM_DESC(kpo_kind, kpo_cases, desc);

static unsigned long kpo_case_addr(const struct kpo_case *c)
{
	return c->kpk >= 0 ? kpk_point(c->kpk) : kpo_point(c->kpo);
}

/*
 * Each kind of region, probed without a post handler: optimized or not as
 * expected, and the function computes what it computes unprobed.
 */
static void kpo_test_kinds(struct kunit *test)
{
	const struct kpo_case *c = test->param_value;
	unsigned long addr = kpo_case_addr(c);
	u8 orig[JMP32_INSN_SIZE];
	struct kprobe *p;
	int i, hits = 0;

	memcpy(orig, (void *)addr, sizeof(orig));
	p = kpo_probe(0, addr, false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, kpo_optimized(p), c->opt);
	if (!c->opt)
		KUNIT_EXPECT_EQ(test, *(u8 *)addr, INT3_INSN_OPCODE);

	for (i = 0; i < ARRAY_SIZE(kpk_args); i++) {
		long x = kpk_args[i];

		KUNIT_EXPECT_EQ_MSG(test, kpk_run(c->fn, x), kpo_model(c->fn, x),
				    "argument %ld", x);
		hits += c->hits ? c->hits(x) : 1;
		KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(0), hits,
				    "hits after argument %ld", x);
	}
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, memcmp((void *)addr, orig, sizeof(orig)), 0);
}

/*
 * What keeps a probe a breakpoint comes and goes: a post handler on the
 * same address, a probe inside the region, disabling.  Each time it goes,
 * the probe is optimized again.
 */
static void kpo_test_blockers(struct kunit *test)
{
	unsigned long rip = kpo_point(KPO_rip);
	unsigned long str = kpo_point(KPO_str);
	u8 orig[JMP32_INSN_SIZE];
	struct kprobe *p, *q;

	memcpy(orig, (void *)rip, sizeof(orig));
	p = kpo_probe(0, rip, false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_TRUE(test, kpo_optimized(p));

	/* A post handler arrives: back to int3 at once, both probes run. */
	q = kpo_probe(1, rip, true);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_optimized(p));
	KUNIT_EXPECT_EQ(test, *(u8 *)rip, INT3_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_rip, 7),
			kpo_model(kpkunit_opt_rip, 7));
	kpk_expect_hits(test, (int[]){ 1, 1 }, (int[]){ 0, 1 }, 2);
	KUNIT_EXPECT_FALSE(test, kpo_optimized(p));
	kpk_unregister(test, q);
	KUNIT_EXPECT_TRUE(test, kpo_optimized(p));

	/* Disabled: all of the original text back; enabled: a jump again. */
	KUNIT_ASSERT_EQ(test, disable_kprobe(p), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_optimized(p));
	KUNIT_EXPECT_EQ(test, memcmp((void *)rip, orig, sizeof(orig)), 0);
	KUNIT_ASSERT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_TRUE(test, kpo_optimized(p));
	kpk_unregister(test, p);

	/* A probe inside the region of another. */
	p = kpo_probe(2, str, false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_TRUE(test, kpo_optimized(p));
	q = kpo_probe(3, kpo_point(KPO_str_stos), false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);
	KUNIT_EXPECT_FALSE(test, kpo_optimized(p));
	KUNIT_EXPECT_EQ(test, *(u8 *)str, INT3_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_str, 20),
			kpo_model(kpkunit_opt_str, 20));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(2), 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(3), 1);
	kpk_unregister(test, q);
	KUNIT_EXPECT_TRUE(test, kpo_optimized(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_str, 21),
			kpo_model(kpkunit_opt_str, 21));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(2), 2);
}

/* The flags a handler of an optimized probe runs with, and is handed. */
static struct {
	unsigned long cpu;
	unsigned long regs;
} kpo_ac_seen;

static int kpo_pre_ac(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(kpo_ac_seen.cpu, native_save_fl());
	WRITE_ONCE(kpo_ac_seen.regs, regs->flags);
	return kpk_pre(p, regs);
}

/*
 * A probe inside a user access section: its handlers run with AC clear,
 * as after an exception, and see the probed code's AC set in regs.
 */
static void kpo_test_user_access(struct kunit *test)
{
	struct kprobe *p;

	if (!cpu_feature_enabled(X86_FEATURE_SMAP))
		kunit_skip(test, "the CPU has no SMAP: stac would fault");
	p = kpo_probe(0, kpo_point(KPO_ac), false);
	p->pre_handler = kpo_pre_ac;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_TRUE(test, kpo_optimized(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_ac, 41),
			kpo_model(kpkunit_opt_ac, 41));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_TRUE(test, kpo_ac_seen.regs & X86_EFLAGS_AC);
	KUNIT_EXPECT_FALSE(test, kpo_ac_seen.cpu & X86_EFLAGS_AC);
}

#define KPO_CHURN_ROUNDS	20

/* The nested call kpo_pre_nest() makes, and how many came out wrong. */
static atomic_t kpo_nest_calls, kpo_nest_bad;

/* A handler that runs the optimized function: a re-entered hit there. */
static int kpo_pre_nest(struct kprobe *p, struct pt_regs *regs)
{
	long x = (long)atomic_inc_return(&kpo_nest_calls);

	if (kpk_call(kpkunit_opt_push, x) != kpo_model(kpkunit_opt_push, x))
		atomic_inc(&kpo_nest_bad);
	return 0;
}

struct kpo_churn_case {
	const char *desc;
	kpk_fn_t *fn;		/* holds the optimized probe */
	int kpk;		/* its point: enum kpk_point, or -1 */
	int kpo;		/* or enum kpo_point */
	bool nest;		/* the second CPU reaches @fn from a handler */
};

static const struct kpo_churn_case kpo_churn_cases[] = {
	/*
	 * Not kpkunit_asm_rip: its result reads back a store to a global,
	 * which the other CPU may overwrite in between (seen under -icount).
	 */
	{ "7-byte first instruction", kpkunit_opt_rip, -1, KPO_rip },
	{ "1-byte first instruction (push)", kpkunit_opt_push, -1, KPO_push },
	{ "push, re-entered from a handler on the other CPU",
	  kpkunit_opt_push, -1, KPO_push, true },
	{ "jb rel8 first, relocated to a rel32", kpkunit_asm_jcc, KPK_jcc_short,
	  -1 },
	{ "call as the region's last instruction", kpkunit_opt_call, -1,
	  KPO_call },
};

KUNIT_ARRAY_PARAM_DESC(kpo_churn, kpo_churn_cases, desc);

/*
 * Two CPUs call an optimized probe's function while a post-handler probe
 * comes and goes on the same address: every change unoptimizes, every
 * removal optimizes again.  The steady probe must see every call.  With a
 * short first instruction, a hit that carries that instruction out while
 * the jump is being taken out (the post handler already published, or a
 * re-entered hit) must not resume inside the jump's displacement.
 */
static void kpo_test_churn(struct kunit *test)
{
	const struct kpo_churn_case *c = test->param_value;
	unsigned long addr = c->kpk >= 0 ? kpk_point(c->kpk) :
				kpo_point(c->kpo);
	unsigned long calls, bad, optimized = 0;
	int cpu[2], i, round, err = 0;
	struct kprobe *p, *q, *r;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	kpk_worker_model = kpo_model;
	atomic_set(&kpo_nest_calls, 0);
	atomic_set(&kpo_nest_bad, 0);

	p = kpo_probe(0, addr, false);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_TRUE(test, kpo_optimized(p));
	if (c->nest) {
		r = kpk_probe(2, (void *)kpk_point(KPK_add_mov), NULL, 0,
			      false, 0);
		r->pre_handler = kpo_pre_nest;
		KUNIT_ASSERT_EQ(test, kpk_register(test, r), 0);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);

	/* No ASSERT until the workers are joined. */
	for (i = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i],
				       c->nest && i ? kpkunit_asm_add : c->fn,
				       i << 20, ULONG_MAX, cpu[i]);
	for (round = 0; round < KPO_CHURN_ROUNDS && !err; round++) {
		q = kpo_probe(1, addr, round & 1);
		err = register_kprobe(q);
		if (err)
			break;
		if (round & 2)
			schedule_timeout_uninterruptible(1);
		unregister_kprobe(q);
		optimized += kpo_optimized(p);
	}
	joined = kpk_stop_workers(c->nest ? 1 : 2, &calls, &bad);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "round %d", round);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	KUNIT_EXPECT_GT(test, calls, 0UL);
	KUNIT_EXPECT_EQ(test, bad + kpk_workers[1].bad, 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(0), calls);
	if (c->nest) {
		/* Every nested hit is a miss, through the jump or the int3. */
		KUNIT_EXPECT_GT(test, atomic_read(&kpo_nest_calls), 0);
		KUNIT_EXPECT_EQ(test, p->nmissed,
				(unsigned long)atomic_read(&kpo_nest_calls));
		KUNIT_EXPECT_EQ(test, atomic_read(&kpo_nest_bad), 0);
	} else {
		KUNIT_EXPECT_EQ(test, p->nmissed, 0UL);
	}
	/* Rounds with a post handler leave it a breakpoint till the wait. */
	KUNIT_EXPECT_EQ(test, optimized, (unsigned long)KPO_CHURN_ROUNDS);
}

#ifdef CONFIG_KRETPROBES
static atomic_t kpo_returns;

static int kpo_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs) == kpo_model(kpkunit_opt_push, 30))
		atomic_inc(&kpo_returns);
	return 0;
}

/* A return probe's entry probe is optimized like any other. */
static void kpo_test_kretprobe(struct kunit *test)
{
	struct kretprobe rp = {
		.kp.addr = (kprobe_opcode_t *)kpkunit_opt_push,
		.handler = kpo_ret_handler,
		.maxactive = 4,
	};

	atomic_set(&kpo_returns, 0);
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)rp.kp.addr,
			kpo_point(KPO_push));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, kprobe_optimized(&rp.kp));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_push, 30),
			kpo_model(kpkunit_opt_push, 30));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_opt_push, 30),
			kpo_model(kpkunit_opt_push, 30));
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpo_returns), 2);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
}
#endif

static int kpo_init(struct kunit *test)
{
	memset(&kpo_seen, 0, sizeof(kpo_seen));
	return kpk_core_init(test);
}

static struct kunit_case kpo_cases_list[] = {
	KUNIT_CASE(kpo_test_jump),
	KUNIT_CASE_PARAM(kpo_test_kinds, kpo_kind_gen_params),
	KUNIT_CASE(kpo_test_blockers),
	KUNIT_CASE(kpo_test_user_access),
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(kpo_test_kretprobe),
#endif
	KUNIT_CASE_PARAM_ATTR(kpo_test_churn, kpo_churn_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite kpo_suite = {
	.name = "kprobes_opt",
	.init = kpo_init,
	.exit = kpk_core_exit,
	.test_cases = kpo_cases_list,
};

kunit_test_suites(&kpo_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 assembly targets of the kprobes KUnit suites (what they
 * compute is in kprobes_kunit.h), what the suites need to know of arm64's
 * kprobes (a pre handler sees the pc on the probed instruction itself, and
 * an address that is not 4-byte aligned is refused with -EINVAL), and
 * suite kprobes_opt_arm64: jump optimization of each kind of instruction,
 * registers changed by a handler, a post handler taking the jump out, and
 * optimizing and unoptimizing while two CPUs run the probed code.
 *
 * Every instruction is 4 bytes, so the inside of one is its address + 1
 * or + 2.  The targets mix instructions arm64 simulates (nop, mov, add,
 * ret, b.cond, bl, blr, adr) with ones it steps out of line (cmp, stp,
 * ldp), and they keep x30 in a frame around their calls, so that a return
 * probe on a callee finds its caller's return address there.
 */

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>

#include "kprobes_kunit.h"

/* The landing pad of a function called through a pointer, under BTI. */
#ifdef CONFIG_ARM64_BTI_KERNEL
#define KPK_BTI		"	bti c\n"
#else
#define KPK_BTI		""
#endif

#define KPK_PT(name)	"	.long .Lkpk_" #name " - kpkunit_asm_add\n"

asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_asm_add)
".Lkpk_add_entry:\n"
	KPK_BTI
".Lkpk_add_nop:\n"
"	nop\n"
".Lkpk_add_mov:\n"
"	mov x1, x0\n"
".Lkpk_add_add:\n"
"	add x0, x1, #5\n"
".Lkpk_add_ret:\n"
"	ret\n"
KPK_ASM_END(kpkunit_asm_add)

KPK_ASM_FUNC(kpkunit_asm_jcc)
	KPK_BTI
"	mov x1, x0\n"
"	cmp x0, #10\n"
"	b.lo 1f\n"
"	add x1, x1, #1000\n"
"1:	cmp x0, #20\n"
".Lkpk_jcc_near:\n"
"	b.hs 2f\n"
"	add x1, x1, #3000\n"
"2:	mov x0, x1\n"
"	ret\n"
KPK_ASM_END(kpkunit_asm_jcc)

KPK_ASM_FUNC(kpkunit_asm_call)
	KPK_BTI
"	stp x29, x30, [sp, #-16]!\n"
"	mov x29, sp\n"
"	bl kpkunit_asm_add\n"
".Lkpk_call_ret1:\n"
"	adr x1, kpkunit_asm_add\n"
"	blr x1\n"
".Lkpk_call_ret2:\n"
"	add x0, x0, #1\n"
"	ldp x29, x30, [sp], #16\n"
"	ret\n"
KPK_ASM_END(kpkunit_asm_call)

KPK_ASM_FUNC(kpkunit_flags_ret)
"	cmp x0, #5\n"
"	ret\n"
KPK_ASM_END(kpkunit_flags_ret)

KPK_ASM_FUNC(kpkunit_flags_call)
	KPK_BTI
"	stp x29, x30, [sp, #-16]!\n"
"	mov x29, sp\n"
"	bl kpkunit_flags_ret\n"
"	cset x1, lo\n"
"	cset x2, eq\n"
"	orr x0, x0, x1, lsl #32\n"
"	orr x0, x0, x2, lsl #33\n"
"	ldp x29, x30, [sp], #16\n"
"	ret\n"
KPK_ASM_END(kpkunit_flags_call)

KPK_ASM_FUNC(kpkunit_asm_point)
	KPK_BTI
"	adrp x1, .Lkpk_table\n"
"	add x1, x1, :lo12:.Lkpk_table\n"
"	ldrsw x0, [x1, x0, lsl #2]\n"
"	adr x1, kpkunit_asm_add\n"
"	add x0, x0, x1\n"
"	ret\n"
KPK_ASM_END(kpkunit_asm_point)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
".Lkpk_table:\n"
KPK_PT(add_entry)
KPK_PT(add_nop)
KPK_PT(add_mov)
KPK_PT(add_add)
KPK_PT(add_ret)
KPK_PT(jcc_near)
KPK_PT(call_ret1)
KPK_PT(call_ret2)
"	.popsection\n"
);

const unsigned long kpk_arch_pre_ip_off;
const int kpk_arch_mid_insn_err = -EINVAL;
const char * const kpk_arch_kretprobe_refused;

/* arm64 probes a function's first instruction, even a BTI landing pad. */
unsigned long kpk_arch_entry_skip(void *fn)
{
	return 0;
}

/* After "cmp": C clear means unsigned below, Z means equal. */
unsigned long kpk_arch_ret_flags(const struct pt_regs *regs)
{
	return (regs->pstate & PSR_C_BIT ? 0 : KPK_FLAG_BELOW) |
	       (regs->pstate & PSR_Z_BIT ? KPK_FLAG_EQUAL : 0);
}

bool kpk_arch_irqs_on(const struct pt_regs *regs)
{
	return !(regs->pstate & PSR_I_BIT);
}

#ifdef CONFIG_OPTPROBES
/*
 * Suite kprobes_opt_arm64: jump optimization on arm64.  The region is the
 * probed instruction alone; what decides is whether it can run from the
 * detour buffer (position independent, not blr, not a BTI landing pad).
 */
struct kpko_case {
	int point;
	bool opt;	/* must become a jump */
};

/*
 * The common points: mov and add are simulated but position independent,
 * ret is taken (it never comes back to the buffer), a b.cond and an adr
 * read the pc, the return address after a bl is an adr too.
 */
static const struct kpko_case kpko_cases[] = {
	{ KPK_add_mov,	true },
	{ KPK_add_add,	true },
	{ KPK_add_ret,	true },
	{ KPK_jcc_near,	false },
	{ KPK_call_ret1, false },
};

static kpk_fn_t *kpko_fn(int point)
{
	if (point == KPK_jcc_near)
		return kpkunit_asm_jcc;
	if (point == KPK_call_ret1 || point == KPK_call_ret2)
		return kpkunit_asm_call;
	return kpkunit_asm_add;
}

static long kpko_model(kpk_fn_t *fn, long x)
{
	if (fn == kpkunit_asm_add)
		return x + 5;
	if (fn == kpkunit_asm_call)
		return x + 11;
	return x + (x >= 10 ? 1000 : 0) + (x < 20 ? 3000 : 0);
}

/* Each kind of instruction is optimized, or not, as it must be. */
static void kpko_test_kinds(struct kunit *test)
{
	int c, a, hits;

	for (c = 0; c < ARRAY_SIZE(kpko_cases); c++) {
		const struct kpko_case *k = &kpko_cases[c];
		kpk_fn_t *fn = kpko_fn(k->point);
		struct kprobe *p = kpk_probe(0, (void *)kpk_point(k->point),
					     NULL, 0, false, 0);

		atomic_set(&kpk_seen.pre[0], 0);
		KUNIT_ASSERT_EQ(test, register_kprobe(p), 0);
		wait_for_kprobe_optimizer();
		KUNIT_EXPECT_EQ_MSG(test, kprobe_optimized(p), k->opt,
				    "point %d", k->point);
		for (a = 0; a < KPK_NARGS; a++)
			KUNIT_EXPECT_EQ_MSG(test, kpk_call(fn, kpk_args[a]),
					    kpko_model(fn, kpk_args[a]),
					    "point %d arg %ld", k->point,
					    kpk_args[a]);
		hits = kpk_pre_hits(0);
		unregister_kprobe(p);
		KUNIT_EXPECT_EQ_MSG(test, hits, KPK_NARGS, "point %d",
				    k->point);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpk_seen.bad_ip), 0);
	}
}

/* A pre handler's change of a register reaches the probed code. */
static int kpko_pre_x0(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&kpk_seen.pre[0]);
	regs->regs[0] = 100;
	return 0;
}

static void kpko_test_regs(struct kunit *test)
{
	struct kprobe *p = kpk_probe(0, (void *)kpk_point(KPK_add_mov), NULL,
				     0, false, 0);

	p->pre_handler = kpko_pre_x0;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	wait_for_kprobe_optimizer();
	KUNIT_ASSERT_TRUE(test, kprobe_optimized(p));
	/* mov x1, x0 with x0 = 100, then add x0, x1, #5 */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 7), 105L);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
}

/* A post handler takes the jump out at once; its going puts it back. */
static void kpko_test_post(struct kunit *test)
{
	void *at = (void *)kpk_point(KPK_add_add);
	struct kprobe *p = kpk_probe(0, at, NULL, 0, false, 0);
	struct kprobe *q = kpk_probe(1, at, NULL, 0, true, 0);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	wait_for_kprobe_optimizer();
	KUNIT_ASSERT_TRUE(test, kprobe_optimized(p));
	KUNIT_ASSERT_EQ(test, register_kprobe(q), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_optimized(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 1), 6L);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	unregister_kprobe(q);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, kprobe_optimized(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 2), 7L);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
}

/*
 * Two CPUs call the probed function while its probe is optimized and
 * unoptimized over and over (a post handler probe coming and going): no
 * call computes a wrong result, and every call is hit exactly once.
 */
static void kpko_test_churn(struct kunit *test)
{
	void *at = (void *)kpk_point(KPK_add_add);
	struct kprobe *p = kpk_probe(0, at, NULL, 0, false, 0);
	struct kprobe *q = kpk_probe(1, at, NULL, 0, true, 0);
	unsigned long calls, bad;
	int cpu[2], i, err = 0;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpk_worker_model = kpko_model;

	/* No ASSERT until the workers are joined. */
	for (i = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpkunit_asm_add, i,
				       ULONG_MAX, cpu[i]);
	for (i = 0; i < 20 && !err; i++) {
		wait_for_kprobe_optimizer();
		usleep_range(500, 1000);
		err = register_kprobe(q);
		if (err)
			break;
		usleep_range(500, 1000);
		unregister_kprobe(q);
	}
	joined = kpk_stop_workers(2, &calls, &bad);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "round %d", i);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	KUNIT_EXPECT_GT(test, calls, 0UL);
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(0), calls);
	KUNIT_EXPECT_EQ(test, p->nmissed, 0UL);
}

static struct kunit_case kpko_a64_cases[] = {
	KUNIT_CASE(kpko_test_kinds),
	KUNIT_CASE(kpko_test_regs),
	KUNIT_CASE(kpko_test_post),
	KUNIT_CASE_SLOW(kpko_test_churn),
	{}
};

static struct kunit_suite kpko_a64_suite = {
	.name = "kprobes_opt_arm64",
	.init = kpk_core_init,
	.exit = kpk_core_exit,
	.test_cases = kpko_a64_cases,
};

kunit_test_suites(&kpko_a64_suite);
#endif /* CONFIG_OPTPROBES */

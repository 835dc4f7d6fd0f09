// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 side of the kprobes KUnit suites (CONFIG_KPROBES_KUNIT_TEST on
 * x86_64): the assembly targets all the suites probe (the common ones of
 * kprobes_kunit.h and x86's own, kprobes_kunit_x86.h), what the suites
 * need to know of x86's kprobes (a pre handler sees regs->ip past the
 * int3; an address inside an instruction is refused with -EILSEQ;
 * __switch_to() takes no return probe) and suite kprobes_x86: the x86 rows
 * of the errno table, out-of-line execution of each kind of instruction,
 * boosting, and the emulation of plain instructions for probes with a post
 * handler compared with their stepped copies.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <asm/ibt.h>
#include <asm/insn.h>
#include <asm/nospec-branch.h>
#include <asm/processor-flags.h>
#include <asm/text-patching.h>
#include <asm/vsyscall.h>

#include "kprobes_kunit.h"
#include "kprobes_kunit_x86.h"

/* ---------------------------------------------------------------------- */
/* Hand-written targets                                                    */
/* ---------------------------------------------------------------------- */

/*
 * The probe points of enum kpk_point and enum kpk_x86_point, as offsets
 * from kpkunit_asm_add.
 */
#define KPK_PT(name)	"	.long .Lkpk_" #name " - kpkunit_asm_add\n"

/*
 * kpkunit_asm_add(x)   = x + 5: a 5-byte NOP, mov, add, ret.
 * kpkunit_asm_rip(x)   = x + 2 * 0x1234 + 1: RIP-relative load, lea, store
 *			  and a compare of a RIP-relative operand with imm32.
 * kpkunit_asm_jmp(x)   = x + 7 (+100 if bit 0, +200 if bit 1): jmp rel8
 *			  and rel32, each taken only when the bit is clear.
 * kpkunit_asm_jcc(x)   = x (+1000 if x >= 10) (+3000 if x < 20): jb rel8,
 *			  jae rel32.
 * kpkunit_asm_call(x)  = x + 11: calls kpkunit_asm_add directly, then
 *			  through a register.
 * kpkunit_asm_stack(x) = x + 0x58: push/pop of registers and of an
 *			  immediate, a frame and leave.
 * kpkunit_asm_flags(x) = RFLAGS after "xor %eax,%eax" (low half) and again
 *			  after popf of that value (high half).
 * kpkunit_asm_loop(x)  = 2 * x for x >= 1: loop, then a taken jrcxz.
 * kpkunit_asm_point(i) = address of probe point i (enum kpk_point, then
 *			  enum kpk_x86_point).
 */
asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_asm_add)
".Lkpk_add_entry:\n"
	ASM_ENDBR
".Lkpk_add_nop:\n"
"	nopl 0x8(%rax,%rax,1)\n"
".Lkpk_add_mov:\n"
"	mov %rdi, %rax\n"
".Lkpk_add_add:\n"
"	add $5, %rax\n"
".Lkpk_add_ret:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_add)

KPK_ASM_FUNC(kpkunit_asm_rip)
	ASM_ENDBR
".Lkpk_rip_load:\n"
"	mov .Lkpk_word(%rip), %rax\n"
".Lkpk_rip_lea:\n"
"	lea .Lkpk_word(%rip), %rdx\n"
".Lkpk_rip_mem:\n"
"	add (%rdx), %rax\n"
".Lkpk_rip_store:\n"
"	mov %rdi, .Lkpk_scratch(%rip)\n"
".Lkpk_rip_after_store:\n"
"	add .Lkpk_scratch(%rip), %rax\n"
".Lkpk_rip_imm:\n"
"	cmpq $0x1234, .Lkpk_word(%rip)\n"
".Lkpk_rip_after_imm:\n"
"	sete %dl\n"
"	movzbl %dl, %edx\n"
"	add %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_rip)

KPK_ASM_FUNC(kpkunit_asm_jmp)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	test $1, %dil\n"
"	jnz .Lkpk_jmp_odd\n"
".Lkpk_jmp_short:\n"
"	jmp .Lkpk_jmp_t1\n"
".Lkpk_jmp_odd:\n"
"	add $100, %rax\n"
".Lkpk_jmp_t1:\n"
"	test $2, %dil\n"
"	jnz .Lkpk_jmp_two\n"
".Lkpk_jmp_near:\n"
"	{disp32} jmp .Lkpk_jmp_t2\n"
".Lkpk_jmp_two:\n"
"	add $200, %rax\n"
".Lkpk_jmp_t2:\n"
"	add $7, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_jmp)

KPK_ASM_FUNC(kpkunit_asm_jcc)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	cmp $10, %rdi\n"
".Lkpk_jcc_short:\n"
"	jb .Lkpk_jcc_t1\n"
".Lkpk_jcc_nt1:\n"
"	add $1000, %rax\n"
".Lkpk_jcc_t1:\n"
"	cmp $20, %rdi\n"
".Lkpk_jcc_near:\n"
"	{disp32} jae .Lkpk_jcc_t2\n"
".Lkpk_jcc_nt2:\n"
"	add $3000, %rax\n"
".Lkpk_jcc_t2:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_jcc)

KPK_ASM_FUNC(kpkunit_asm_call)
	ASM_ENDBR
".Lkpk_call_direct:\n"
"	call kpkunit_asm_add\n"
".Lkpk_call_ret1:\n"
"	mov %rax, %rdi\n"
"	lea kpkunit_asm_add(%rip), %rdx\n"
".Lkpk_call_ind:\n"
	ANNOTATE_RETPOLINE_SAFE
"	call *%rdx\n"
".Lkpk_call_ret2:\n"
"	add $1, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_call)

KPK_ASM_FUNC(kpkunit_asm_stack)
	ASM_ENDBR
".Lkpk_stk_push:\n"
"	push %rbp\n"
".Lkpk_stk_after_push:\n"
"	mov %rsp, %rbp\n"
"	push %rbx\n"
"	lea 3(%rdi), %rbx\n"
".Lkpk_stk_pushimm:\n"
"	push $0x55\n"
".Lkpk_stk_after_pushimm:\n"
"	pop %rax\n"
"	add %rbx, %rax\n"
".Lkpk_stk_pop:\n"
"	pop %rbx\n"
".Lkpk_stk_leave:\n"
"	leave\n"
".Lkpk_stk_after_leave:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_stack)

KPK_ASM_FUNC(kpkunit_asm_flags)
	ASM_ENDBR
".Lkpk_flg_xor:\n"
"	xor %eax, %eax\n"
".Lkpk_flg_pushf:\n"
"	pushf\n"
".Lkpk_flg_after_pushf:\n"
"	pop %rax\n"
"	push %rax\n"
".Lkpk_flg_popf:\n"
"	popf\n"
".Lkpk_flg_after_popf:\n"
"	pushf\n"
"	pop %rdx\n"
"	shl $32, %rdx\n"
"	or %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_flags)

KPK_ASM_FUNC(kpkunit_asm_loop)
	ASM_ENDBR
"	xor %eax, %eax\n"
"	mov %rdi, %rcx\n"
".Lkpk_loop_body:\n"
"	add $2, %rax\n"
".Lkpk_loop_insn:\n"
"	loop .Lkpk_loop_body\n"
".Lkpk_loop_jrcxz:\n"
"	jrcxz .Lkpk_loop_end\n"
"	add $500, %rax\n"
".Lkpk_loop_end:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_loop)

KPK_ASM_FUNC(kpkunit_asm_point)
	ASM_ENDBR
"	lea .Lkpk_table(%rip), %rdx\n"
"	movslq (%rdx,%rdi,4), %rax\n"
"	lea kpkunit_asm_add(%rip), %rdx\n"
"	add %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_point)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 8\n"
".Lkpk_word:\n"
"	.quad 0x1234\n"
".Lkpk_table:\n"
KPK_PT(add_entry)
KPK_PT(add_nop)
KPK_PT(add_mov)
KPK_PT(add_add)
KPK_PT(add_ret)
KPK_PT(jcc_near)
KPK_PT(call_ret1)
KPK_PT(call_ret2)
KPK_PT(rip_load)
KPK_PT(rip_lea)
KPK_PT(rip_mem)
KPK_PT(rip_store)
KPK_PT(rip_after_store)
KPK_PT(rip_imm)
KPK_PT(rip_after_imm)
KPK_PT(jmp_short)
KPK_PT(jmp_t1)
KPK_PT(jmp_near)
KPK_PT(jmp_t2)
KPK_PT(jcc_short)
KPK_PT(jcc_nt1)
KPK_PT(jcc_t1)
KPK_PT(jcc_nt2)
KPK_PT(jcc_t2)
KPK_PT(call_direct)
KPK_PT(call_ind)
KPK_PT(stk_push)
KPK_PT(stk_after_push)
KPK_PT(stk_pushimm)
KPK_PT(stk_after_pushimm)
KPK_PT(stk_pop)
KPK_PT(stk_leave)
KPK_PT(stk_after_leave)
KPK_PT(flg_xor)
KPK_PT(flg_pushf)
KPK_PT(flg_after_pushf)
KPK_PT(flg_popf)
KPK_PT(flg_after_popf)
KPK_PT(loop_body)
KPK_PT(loop_insn)
KPK_PT(loop_jrcxz)
KPK_PT(loop_end)
"	.popsection\n"

"	.pushsection .data, \"aw\"\n"
"	.balign 8\n"
".Lkpk_scratch:\n"
"	.quad 0\n"
"	.popsection\n"
);

#define KPK_FLAGS_MASK	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_ZF | \
			 X86_EFLAGS_SF | X86_EFLAGS_TF | X86_EFLAGS_IF | \
			 X86_EFLAGS_DF | X86_EFLAGS_OF)
#define KPK_FLAGS_XOR	(X86_EFLAGS_PF | X86_EFLAGS_ZF | X86_EFLAGS_IF)

/*
 * kpkunit_flags_ret(x) returns x with the flags of "cmp $5, x";
 * kpkunit_flags_call(x) calls it and returns x | CF << 32 | ZF << 33 as
 * it finds them after the return.
 */
asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_flags_ret)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	cmp $5, %rdi\n"
	ASM_RET
KPK_ASM_END(kpkunit_flags_ret)

KPK_ASM_FUNC(kpkunit_flags_call)
	ASM_ENDBR
"	call kpkunit_flags_ret\n"
"	setb %cl\n"
"	sete %dl\n"
"	movzbq %cl, %rcx\n"
"	movzbq %dl, %rdx\n"
"	shl $32, %rcx\n"
"	shl $33, %rdx\n"
"	or %rcx, %rax\n"
"	or %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_flags_call)
"	.popsection\n"
);

const unsigned long kpk_arch_pre_ip_off = INT3_INSN_SIZE;
const int kpk_arch_mid_insn_err = -EILSEQ;
/* It returns on another task's stack. */
const char * const kpk_arch_kretprobe_refused = "__switch_to";

/* A probe asked for at a function's entry goes past its ENDBR. */
unsigned long kpk_arch_entry_skip(void *fn)
{
	return is_endbr(*(u32 *)fn) ? ENDBR_INSN_SIZE : 0;
}

unsigned long kpk_arch_ret_flags(const struct pt_regs *regs)
{
	return (regs->flags & X86_EFLAGS_CF ? KPK_FLAG_BELOW : 0) |
	       (regs->flags & X86_EFLAGS_ZF ? KPK_FLAG_EQUAL : 0);
}

bool kpk_arch_irqs_on(const struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_IF;
}

/* Expected result of each target, x86's own ones too. */
long kpk_x86_model(kpk_fn_t *fn, long x)
{
	if (fn == kpkunit_asm_rip)
		return x + 2 * 0x1234 + 1;
	if (fn == kpkunit_asm_jmp)
		return x + 7 + (x & 1 ? 100 : 0) + (x & 2 ? 200 : 0);
	if (fn == kpkunit_asm_stack)
		return x + 0x58;
	if (fn == kpkunit_asm_flags)
		return KPK_FLAGS_XOR | ((long)KPK_FLAGS_XOR << 32);
	if (fn == kpkunit_asm_loop)
		return 2 * x;
	return kpk_model(fn, x);
}

/* Call a target; for the flags function keep only the bits that matter. */
long kpk_run(kpk_fn_t *fn, long x)
{
	long r = kpk_call(fn, x);

	if (fn == kpkunit_asm_flags)
		r &= KPK_FLAGS_MASK | ((long)KPK_FLAGS_MASK << 32);
	return r;
}

/* ---------------------------------------------------------------------- */
/* Suite kprobes_x86: the cases                                            */
/* ---------------------------------------------------------------------- */

/*
 * The instruction rows of the errno table in Documentation/trace/kprobes.rst:
 * kpkunit_asm_refused() holds one of each.  It is never called, only probed,
 * so objtool is told not to follow it.  __pfx_kpkunit_asm_refused() stands
 * for the padding the compiler puts in front of functions with
 * CONFIG_CALL_PADDING: not code anyone calls.
 */
#define KPK_RF(name)	"	.long .Lkpk_rf_" #name " - kpkunit_asm_refused\n"

asm(
"	.pushsection .text, \"ax\"\n"
"	.balign 16\n"
"	.type __pfx_kpkunit_asm_refused, @function\n"
"__pfx_kpkunit_asm_refused:\n"
"	.rept 16\n"
"	nop\n"
"	.endr\n"
"	.size __pfx_kpkunit_asm_refused, . - __pfx_kpkunit_asm_refused\n"
"	.type kpkunit_asm_refused, @function\n"
"kpkunit_asm_refused:\n"
".Lkpk_rf_movds:\n	mov %eax, %ds\n"
".Lkpk_rf_movss:\n	mov %eax, %ss\n"
".Lkpk_rf_int3:\n	int3\n"
".Lkpk_rf_intn:\n	int $0x80\n"
".Lkpk_rf_int1:\n	.byte 0xf1\n"
".Lkpk_rf_ud2:\n	ud2\n"
".Lkpk_rf_ud1:\n	.byte 0x0f, 0xb9, 0xc0\n"
".Lkpk_rf_iret:\n	iretq\n"
".Lkpk_rf_ljmp:\n	ljmp *(%rax)\n"
".Lkpk_rf_lcall:\n	lcall *(%rax)\n"
".Lkpk_rf_lret:\n	lretq\n"
".Lkpk_rf_hlt:\n	hlt\n"
".Lkpk_rf_syscall:\n	syscall\n"
".Lkpk_rf_swapgs:\n	swapgs\n"
".Lkpk_rf_vmcall:\n	vmcall\n"
".Lkpk_rf_ret:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_refused)
"	.popsection\n"
"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
"kpkunit_refused_off:\n"
KPK_RF(movds) KPK_RF(movss) KPK_RF(int3) KPK_RF(intn) KPK_RF(int1)
KPK_RF(ud2) KPK_RF(ud1) KPK_RF(iret) KPK_RF(ljmp) KPK_RF(lcall)
KPK_RF(lret) KPK_RF(hlt) KPK_RF(syscall) KPK_RF(swapgs) KPK_RF(vmcall)
KPK_RF(ret)
"	.popsection\n"
);

kpk_fn_t kpkunit_asm_refused;
STACK_FRAME_NON_STANDARD(kpkunit_asm_refused);

/* Same order as kpkunit_refused_off[]. */
static const struct {
	const char *insn;
	int err;
} kpk_refused[] = {
	{ "mov %eax,%ds", 0 },		{ "mov %eax,%ss", -EINVAL },
	{ "int3", -EILSEQ },		{ "int $0x80", -EILSEQ },
	{ "int1", -EILSEQ },		{ "ud2", -EILSEQ },
	{ "ud1", -EILSEQ },		{ "iretq", -EOPNOTSUPP },
	{ "ljmp *(%rax)", -EOPNOTSUPP },	{ "lcall *(%rax)", -EOPNOTSUPP },
	{ "lret", -EOPNOTSUPP },	{ "hlt", -EOPNOTSUPP },
	{ "syscall", -EOPNOTSUPP },	{ "swapgs", -EOPNOTSUPP },
	{ "vmcall", -EOPNOTSUPP },	{ "ret", 0 },
};

/* Each row of the errno table that a kprobe can reach. */
static void kpk_test_errno_table(struct kunit *test)
{
	u8 copy[MAX_INSN_SIZE];
	struct kprobe *p;
	struct insn insn;
	int i;

	for (i = 0; i < ARRAY_SIZE(kpk_refused); i++) {
		p = kpk_probe(0, NULL, "kpkunit_asm_refused",
			      kpkunit_refused_off[i], true, 0);
		KUNIT_EXPECT_EQ_MSG(test, kpk_try_register(p),
				    kpk_refused[i].err, "%s",
				    kpk_refused[i].insn);
	}

	/* Inside an instruction with a RIP-relative operand. */
	p = kpk_probe(0, (void *)kpk_point(KPK_rip_load) + 3, NULL, 0,
		      false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EILSEQ);

	/* The padding in front of a function, and anything in it. */
	p = kpk_probe(0, NULL, "__pfx_kpkunit_asm_refused", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);
	p = kpk_probe(0, NULL, "__pfx_kpkunit_asm_refused", 11, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

#ifdef CONFIG_X86_VSYSCALL_EMULATION
	/* The vsyscall page: text user space calls, but not ours. */
	p = kpk_probe(0, (void *)VSYSCALL_ADDR, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);
#endif

	/*
	 * A RIP-relative operand the copy cannot reach: execmem keeps slots
	 * within reach, so the fixup is asked directly.
	 */
	KUNIT_ASSERT_EQ(test, insn_decode_kernel(&insn,
				(void *)kpk_point(KPK_rip_load)), 0);
	KUNIT_EXPECT_EQ(test, kp_copy_insn(copy, (u8 *)kpk_point(KPK_rip_load),
					   &insn, 1L << 40), -EINVAL);
	KUNIT_EXPECT_EQ(test, kp_copy_insn(copy, (u8 *)kpk_point(KPK_rip_load),
					   &insn, 16), 0);
	KUNIT_EXPECT_EQ(test, (long)get_unaligned((s32 *)
				&copy[insn_offset_displacement(&insn)]),
			(long)insn.displacement.value + 16);
}

/*
 * First opcode byte of the instruction at each probe point (0: not
 * checked), so that the point table and the enum cannot drift apart.
 */
static const u8 kpk_point_opcode[KPK_NR_POINTS] = {
	[KPK_add_nop] = 0x0f,		[KPK_add_mov] = 0x89,
	[KPK_add_add] = 0x83,		[KPK_rip_load] = 0x8b,
	[KPK_rip_lea] = 0x8d,		[KPK_rip_mem] = 0x03,
	[KPK_rip_store] = 0x89,		[KPK_rip_imm] = 0x81,
	[KPK_jmp_short] = 0xeb,		[KPK_jmp_t1] = 0xf6,
	[KPK_jmp_near] = 0xe9,		[KPK_jmp_t2] = 0x83,
	[KPK_jcc_short] = 0x72,		[KPK_jcc_t1] = 0x83,
	[KPK_jcc_near] = 0x0f,		[KPK_call_direct] = 0xe8,
	[KPK_call_ret1] = 0x89,		[KPK_call_ind] = 0xff,
	[KPK_call_ret2] = 0x83,		[KPK_stk_push] = 0x55,
	[KPK_stk_pushimm] = 0x6a,	[KPK_stk_pop] = 0x5b,
	[KPK_stk_leave] = 0xc9,		[KPK_flg_xor] = 0x31,
	[KPK_flg_pushf] = 0x9c,		[KPK_flg_popf] = 0x9d,
	[KPK_loop_body] = 0x83,		[KPK_loop_insn] = 0xe2,
	[KPK_loop_jrcxz] = 0xe3,	[KPK_rip_after_store] = 0x03,
	[KPK_rip_after_imm] = 0x0f,	[KPK_jcc_nt1] = 0x05,
	[KPK_jcc_nt2] = 0x05,		[KPK_stk_after_push] = 0x89,
	[KPK_stk_after_pushimm] = 0x58,	[KPK_flg_after_pushf] = 0x58,
	[KPK_flg_after_popf] = 0x9c,
};

/* The assembly targets are what their comments say (no probes yet). */
static void kpk_test_asm_model(struct kunit *test)
{
	static kpk_fn_t * const fns[] = {
		kpkunit_asm_add, kpkunit_asm_rip, kpkunit_asm_jmp,
		kpkunit_asm_jcc, kpkunit_asm_call, kpkunit_asm_stack,
		kpkunit_asm_flags, kpkunit_asm_loop,
	};
	struct insn insn;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(fns); i++)
		for (j = 0; j < ARRAY_SIZE(kpk_args); j++)
			KUNIT_EXPECT_EQ_MSG(test, kpk_run(fns[i], kpk_args[j]),
					    kpk_x86_model(fns[i], kpk_args[j]),
					    "function %d, argument %ld", i,
					    kpk_args[j]);

	KUNIT_EXPECT_EQ(test, kpk_point(KPK_add_entry),
			(unsigned long)kpkunit_asm_add);
	for (i = 0; i < KPK_NR_POINTS; i++) {
		if (!kpk_point_opcode[i])
			continue;
		KUNIT_ASSERT_EQ(test, insn_decode_kernel(&insn,
					(void *)kpk_point(i)), 0);
		KUNIT_EXPECT_EQ_MSG(test, insn.opcode.bytes[0],
				    kpk_point_opcode[i], "probe point %d", i);
	}
}

/*
 * Out-of-line execution of one kind of instruction.  The instruction
 * lengths come from the labels, not from decoding the live text: right
 * after an optimized probe is unregistered its jump may still be there.
 */
#define KPK_NEXT_ANY	-1	/* where it goes is not checked */

struct kpk_insn_case {
	const char *desc;
	kpk_fn_t *owner;		/* function holding the probe point */
	const char *owner_name;
	kpk_fn_t *call;			/* function the test calls */
	int point;
	int next;			/* where execution goes on */
	int fall;			/* for a jcc: where it goes if not taken */
	bool (*taken)(long x);		/* for a jcc: whether it is taken */
	long (*hits)(long x);		/* hits per call; NULL: one */
};

static bool kpk_below_10(long x)
{
	return x < 10;
}

static bool kpk_from_20(long x)
{
	return x >= 20;
}

static long kpk_two(long x)
{
	return 2;
}

#define KPK_CASE_FROM(d, fn, caller, pt, nx, ...)			\
	{ .desc = d, .owner = fn, .owner_name = #fn, .call = caller,	\
	  .point = KPK_##pt, .next = nx, __VA_ARGS__ }
#define KPK_CASE(d, fn, pt, nx, ...)					\
	KPK_CASE_FROM(d, fn, fn, pt, nx, __VA_ARGS__)

static const struct kpk_insn_case kpk_insn_cases[] = {
	KPK_CASE("nopl 5 bytes", kpkunit_asm_add, add_nop, KPK_add_mov),
	KPK_CASE("mov reg,reg", kpkunit_asm_add, add_mov, KPK_add_add),
	KPK_CASE("add imm8", kpkunit_asm_add, add_add, KPK_add_ret),
	KPK_CASE("ret", kpkunit_asm_add, add_ret, KPK_NEXT_ANY),
	KPK_CASE_FROM("ret to asm caller", kpkunit_asm_add, kpkunit_asm_call,
		      add_ret, KPK_call_ret2, .hits = kpk_two),
	KPK_CASE("mov rip-relative load", kpkunit_asm_rip, rip_load,
		 KPK_rip_lea),
	KPK_CASE("lea rip-relative", kpkunit_asm_rip, rip_lea, KPK_rip_mem),
	KPK_CASE("add (reg)", kpkunit_asm_rip, rip_mem, KPK_rip_store),
	KPK_CASE("mov rip-relative store", kpkunit_asm_rip, rip_store,
		 KPK_rip_after_store),
	KPK_CASE("cmp rip-relative,imm32", kpkunit_asm_rip, rip_imm,
		 KPK_rip_after_imm),
	KPK_CASE("jmp rel8", kpkunit_asm_jmp, jmp_short, KPK_jmp_t1,
		 .hits = kpk_even),
	KPK_CASE("jmp rel32", kpkunit_asm_jmp, jmp_near, KPK_jmp_t2,
		 .hits = kpk_bit1_clear),
	KPK_CASE("jb rel8", kpkunit_asm_jcc, jcc_short, KPK_jcc_t1,
		 .fall = KPK_jcc_nt1, .taken = kpk_below_10),
	KPK_CASE("jae rel32", kpkunit_asm_jcc, jcc_near, KPK_jcc_t2,
		 .fall = KPK_jcc_nt2, .taken = kpk_from_20),
	KPK_CASE("call rel32", kpkunit_asm_call, call_direct, KPK_add_entry),
	KPK_CASE("call *reg", kpkunit_asm_call, call_ind, KPK_add_entry),
	KPK_CASE("push reg", kpkunit_asm_stack, stk_push, KPK_stk_after_push),
	KPK_CASE("push imm8", kpkunit_asm_stack, stk_pushimm,
		 KPK_stk_after_pushimm),
	KPK_CASE("pop reg", kpkunit_asm_stack, stk_pop, KPK_stk_leave),
	KPK_CASE("leave", kpkunit_asm_stack, stk_leave, KPK_stk_after_leave),
	KPK_CASE("xor reg,reg", kpkunit_asm_flags, flg_xor, KPK_flg_pushf),
	KPK_CASE("pushf", kpkunit_asm_flags, flg_pushf, KPK_flg_after_pushf),
	KPK_CASE("popf", kpkunit_asm_flags, flg_popf, KPK_flg_after_popf),
	KPK_CASE("add in a loop", kpkunit_asm_loop, loop_body, KPK_loop_insn,
		 .hits = kpk_x),
	/* On its last pass the loop goes on to the jrcxz. */
	KPK_CASE("loop", kpkunit_asm_loop, loop_insn, KPK_loop_jrcxz,
		 .hits = kpk_x),
	KPK_CASE("jrcxz", kpkunit_asm_loop, loop_jrcxz, KPK_loop_end),
};

KUNIT_ARRAY_PARAM_DESC(kpk_insn, kpk_insn_cases, desc);

static void kpk_test_insn(struct kunit *test)
{
	const struct kpk_insn_case *c = test->param_value;
	unsigned long addr = kpk_point(c->point);
	unsigned long off = addr - (unsigned long)c->owner;
	long base[ARRAY_SIZE(kpk_args)];
	int pass, i, hits, want_hits, next;
	struct kprobe *p;

	for (i = 0; i < ARRAY_SIZE(kpk_args); i++) {
		base[i] = kpk_run(c->call, kpk_args[i]);
		KUNIT_ASSERT_EQ(test, base[i], kpk_x86_model(c->call, kpk_args[i]));
	}

	/* Pass 0 with a post handler (single-step), pass 1 without. */
	for (pass = 0; pass < 2; pass++) {
		p = kpk_probe(0, NULL, c->owner_name, off, pass == 0, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
		KUNIT_EXPECT_EQ(test, (unsigned long)p->addr, addr);

		for (i = 0; i < ARRAY_SIZE(kpk_args); i++) {
			long x = kpk_args[i];

			atomic_set(&kpk_seen.pre[0], 0);
			atomic_set(&kpk_seen.post[0], 0);
			KUNIT_EXPECT_EQ_MSG(test, kpk_run(c->call, x), base[i],
					    "probed result, argument %ld", x);
			hits = kpk_pre_hits(0);
			want_hits = c->hits ? c->hits(x) : 1;
			KUNIT_EXPECT_EQ_MSG(test, hits, want_hits,
					    "hits, argument %ld", x);
			if (pass || !hits)
				continue;
			KUNIT_EXPECT_EQ(test, kpk_post_hits(0), hits);

			next = c->next;
			if (c->taken && !c->taken(x))
				next = c->fall;
			if (next == KPK_NEXT_ANY)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, kpk_seen.post_ip[0],
					    kpk_point(next),
					    "regs->ip after the instruction, argument %ld",
					    x);
		}
		kpk_unregister(test, p);
	}
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, 5), kpk_x86_model(c->call, 5));
}

/*
 * Boosting: a plain instruction probed without a post handler runs
 * its boosted copy and jumps back without a second trap; a post handler
 * arriving on the same address sends hits back to single-stepping.
 */
static void kpk_test_boost(struct kunit *test)
{
	const struct kpk_insn_case *c = &kpk_insn_cases[1];	/* mov reg,reg */
	unsigned long addr = kpk_point(c->point);
	unsigned long off = addr - (unsigned long)c->owner;
	struct kprobe *p, *q;
	long x = 41;

	KUNIT_ASSERT_STREQ(test, c->desc, "mov reg,reg");
	p = kpk_probe(0, NULL, c->owner_name, off, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_TRUE(test, p->site->arch.boost);
	atomic_set(&kpk_seen.pre[0], 0);
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, x), kpk_x86_model(c->call, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);

	q = kpk_probe(1, NULL, c->owner_name, off, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);
	atomic_set(&kpk_seen.pre[0], 0);
	atomic_set(&kpk_seen.post[1], 0);
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, x), kpk_x86_model(c->call, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[1], kpk_point(c->next));
}

/* ---------------------------------------------------------------------- */
/* Emulated instructions against stepped ones                              */
/* ---------------------------------------------------------------------- */

/*
 * kpkunit_asm_emu(x): sets every register from x, then runs one instruction
 * of each kind the int3 handler emulates (arch/x86/kernel/kprobes/decode.c)
 * for a probe with a post handler, and returns a sum of all the registers
 * and of the two data words (kpkunit_emu_words).  kpkunit_asm_emu_point(i)
 * is the offset of the i-th probed instruction in the function.
 */
static unsigned long kpkunit_emu_words[2] __used;

#define KPE_PT(name)	"	.long .Lkpe_" #name " - kpkunit_asm_emu\n"

asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_asm_emu)
	ASM_ENDBR
"	push %rbp\n"
"	push %rbx\n"
"	push %r12\n"
"	push %r13\n"
"	push %r14\n"
"	push %r15\n"
"	mov %rdi, %rax\n"
"	lea 0x101(%rdi), %rbx\n"
"	lea 0x202(%rdi), %rcx\n"
"	lea -0x303(%rdi), %rdx\n"
"	lea 0x404(%rdi), %rsi\n"
"	lea 0x505(%rdi), %rbp\n"
"	lea -0x606(%rdi), %r8\n"
"	lea 0x707(%rdi), %r9\n"
"	lea 0x808(%rdi), %r10\n"
"	lea 0x909(%rdi), %r11\n"
"	lea -0xa0a(%rdi), %r12\n"
"	lea 0xb0b(%rdi), %r13\n"
"	lea 0xc0c(%rdi), %r14\n"
"	lea 0xd0d(%rdi), %r15\n"
"	cmp $25, %rdi\n"
".Lkpe_push:		push %rbx\n"
".Lkpe_pop:		pop %r12\n"
".Lkpe_mov_sp:		mov %rsp, %r11\n"
".Lkpe_mov32:		mov %ecx, %r9d\n"
".Lkpe_mov_load:	mov %r14, %rbp\n"
".Lkpe_sub_sp:		sub $0x18, %rsp\n"
".Lkpe_lea_sp:		lea 0x8(%rsp), %rdx\n"
".Lkpe_lea_sib:		lea -0x7(%rax,%r13,4), %r10\n"
".Lkpe_lea_nobase:	lea 0x10(,%rsi,8), %r8d\n"
".Lkpe_lea_rip:		lea kpkunit_emu_words(%rip), %r14\n"
".Lkpe_add_sp:		add $0x18, %rsp\n"
".Lkpe_add_rr:		add %rcx, %rax\n"
".Lkpe_sub_rr32:	sub %edx, %esi\n"
".Lkpe_xor32:		xor %r9d, %r9d\n"
".Lkpe_or_imm32:	or $0x12345, %r15\n"
".Lkpe_and_imm8:	and $0x7f, %rbx\n"
".Lkpe_cmp_rr:		cmp %rbx, %rax\n"
".Lkpe_test_rr:		test %rdi, %rdx\n"
".Lkpe_mov_imm:		movq $-5, %rbp\n"
".Lkpe_inc_r:		inc %r13\n"
".Lkpe_dec_r32:		dec %ecx\n"
".Lkpe_add_load:	add kpkunit_emu_words(%rip), %rdx\n"
".Lkpe_inc_m:		incq kpkunit_emu_words(%rip)\n"
".Lkpe_dec_m32:		decl kpkunit_emu_words+8(%rip)\n"
".Lkpe_add_m_imm:	addq $0x40, kpkunit_emu_words(%rip)\n"
".Lkpe_or_m_r:		or %rdi, kpkunit_emu_words+8(%rip)\n"
".Lkpe_cmp_m:		cmpq $0x41, kpkunit_emu_words(%rip)\n"
".Lkpe_load:		mov kpkunit_emu_words(%rip), %rsi\n"
".Lkpe_store:		mov %rax, kpkunit_emu_words+8(%rip)\n"
".Lkpe_mov_m_imm:	movq $7, kpkunit_emu_words(%rip)\n"
".Lkpe_sub_m_r32:	sub %ecx, kpkunit_emu_words+8(%rip)\n"
".Lkpe_end:\n"
"	add %rbx, %rax\n"
"	add %rcx, %rax\n"
"	add %rdx, %rax\n"
"	add %rsi, %rax\n"
"	add %rbp, %rax\n"
"	add %r8, %rax\n"
"	add %r9, %rax\n"
"	add %r10, %rax\n"
"	sub %r11, %rax\n"
"	add %r12, %rax\n"
"	add %r13, %rax\n"
"	sub %r14, %rax\n"
"	add %r15, %rax\n"
"	add kpkunit_emu_words(%rip), %rax\n"
"	add kpkunit_emu_words+8(%rip), %rax\n"
"	lea (%rsp), %rdx\n"
"	add %rdx, %rax\n"
"	pop %r15\n"
"	pop %r14\n"
"	pop %r13\n"
"	pop %r12\n"
"	pop %rbx\n"
"	pop %rbp\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_emu)

KPK_ASM_FUNC(kpkunit_asm_emu_point)
	ASM_ENDBR
"	lea .Lkpe_table(%rip), %rdx\n"
"	movslq (%rdx,%rdi,4), %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_emu_point)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
".Lkpe_table:\n"
KPE_PT(push) KPE_PT(pop) KPE_PT(mov_sp) KPE_PT(mov32) KPE_PT(mov_load)
KPE_PT(sub_sp) KPE_PT(lea_sp) KPE_PT(lea_sib) KPE_PT(lea_nobase)
KPE_PT(lea_rip) KPE_PT(add_sp) KPE_PT(add_rr) KPE_PT(sub_rr32)
KPE_PT(xor32) KPE_PT(or_imm32) KPE_PT(and_imm8) KPE_PT(cmp_rr)
KPE_PT(test_rr) KPE_PT(mov_imm) KPE_PT(inc_r) KPE_PT(dec_r32)
KPE_PT(add_load) KPE_PT(inc_m) KPE_PT(dec_m32) KPE_PT(add_m_imm)
KPE_PT(or_m_r) KPE_PT(cmp_m) KPE_PT(load) KPE_PT(store) KPE_PT(mov_m_imm)
KPE_PT(sub_m_r32) KPE_PT(end)
"	.popsection\n"
);

kpk_fn_t kpkunit_asm_emu, kpkunit_asm_emu_point;

/* Names of the points, in order; the last is not probed. */
static const char * const kpk_emu_names[] = {
	"push %rbx", "pop %r12", "mov %rsp,%r11", "mov %ecx,%r9d",
	"mov %r14,%rbp", "sub $0x18,%rsp", "lea 0x8(%rsp),%rdx",
	"lea -0x7(%rax,%r13,4),%r10", "lea 0x10(,%rsi,8),%r8d",
	"lea rip,%r14", "add $0x18,%rsp", "add %rcx,%rax", "sub %edx,%esi",
	"xor %r9d,%r9d", "or $0x12345,%r15", "and $0x7f,%rbx",
	"cmp %rbx,%rax", "test %rdi,%rdx", "movq $-5,%rbp", "inc %r13",
	"dec %ecx", "add rip,%rdx", "incq rip", "decl rip", "addq $0x40,rip",
	"or %rdi,rip", "cmpq $0x41,rip", "mov rip,%rsi", "mov %rax,rip",
	"movq $7,rip", "sub %ecx,rip", "end",
};

static struct {
	struct pt_regs pre, post;
	unsigned long words[2];
	int hits;
} kpk_emu_seen;

static int kpk_emu_pre(struct kprobe *p, struct pt_regs *regs)
{
	kpk_emu_seen.pre = *regs;
	return 0;
}

static void kpk_emu_post(struct kprobe *p, struct pt_regs *regs,
			 unsigned long flags)
{
	kpk_emu_seen.post = *regs;
	kpk_emu_seen.words[0] = READ_ONCE(kpkunit_emu_words[0]);
	kpk_emu_seen.words[1] = READ_ONCE(kpkunit_emu_words[1]);
	kpk_emu_seen.hits++;
}

/* Is the site at @addr one the int3 handler emulates instead of stepping? */
static bool kpk_emu_site_emulates(unsigned long addr)
{
	struct kprobe_site *s;
	bool ret;

	rcu_read_lock();
	s = kprobe_site_lookup(addr);
	ret = s && s->arch.op == KPX_STEP && s->arch.emulate;
	rcu_read_unlock();
	return ret;
}

/* One call of kpkunit_asm_emu(@x) with a probe with a post handler at @pt. */
static long kpk_emu_run(struct kunit *test, int pt, long x, bool step)
{
	unsigned long addr = (unsigned long)kpkunit_asm_emu +
			     kpkunit_asm_emu_point(pt);
	struct kprobe *p = kpk_probe(0, (void *)addr, NULL, 0, true, 0);
	long ret;

	p->pre_handler = kpk_emu_pre;
	p->post_handler = kpk_emu_post;
	memset(&kpk_emu_seen, 0, sizeof(kpk_emu_seen));
	WRITE_ONCE(kprobe_x86_emu_off, step);
	ret = kpk_register(test, p);
	WRITE_ONCE(kprobe_x86_emu_off, false);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s", kpk_emu_names[pt]);
	KUNIT_EXPECT_EQ_MSG(test, kpk_emu_site_emulates(addr), !step,
			    "%s: emulated", kpk_emu_names[pt]);

	kpkunit_emu_words[0] = 0x1000 + x;
	kpkunit_emu_words[1] = 0xffffffff00000001UL;
	ret = kpk_call(kpkunit_asm_emu, x);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.hits, 1, "%s: hits",
			    kpk_emu_names[pt]);
	return ret;
}

#define KPK_EMU_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF | \
			 X86_EFLAGS_TF | X86_EFLAGS_IF | X86_EFLAGS_DF)

#define KPK_EMU_REG(r)	{ #r, offsetof(struct pt_regs, r) }

static const struct {
	const char *name;
	unsigned int off;
} kpk_emu_regs[] = {
	KPK_EMU_REG(ax), KPK_EMU_REG(bx), KPK_EMU_REG(cx), KPK_EMU_REG(dx),
	KPK_EMU_REG(si), KPK_EMU_REG(di), KPK_EMU_REG(bp), KPK_EMU_REG(sp),
	KPK_EMU_REG(r8), KPK_EMU_REG(r9), KPK_EMU_REG(r10), KPK_EMU_REG(r11),
	KPK_EMU_REG(r12), KPK_EMU_REG(r13), KPK_EMU_REG(r14), KPK_EMU_REG(r15),
	KPK_EMU_REG(ip), KPK_EMU_REG(cs), KPK_EMU_REG(ss),
};

static unsigned long kpk_emu_reg(const struct pt_regs *regs, unsigned int off)
{
	return *(const unsigned long *)((const u8 *)regs + off);
}

/*
 * For every instruction kind the int3 handler emulates: the post handler
 * sees the same registers (each one, and the flags), and memory holds the
 * same, as when the same probe's instruction is run from the slot (the
 * stepped path, forced with kprobe_x86_emu_off).  Looks at the site itself
 * (kprobe_site_lookup()) to be sure which path each run took.
 */
static void kpk_test_emulate(struct kunit *test)
{
	static const long args[] = { 3, 40 };
	struct pt_regs step_pre, step_post;
	unsigned long step_words[2];
	long want, got;
	int pt, i, r;

	/* The names and the point table go in step (offsets only grow). */
	for (pt = 1; pt < ARRAY_SIZE(kpk_emu_names); pt++)
		KUNIT_ASSERT_GT(test, kpkunit_asm_emu_point(pt),
				kpkunit_asm_emu_point(pt - 1));
	for (pt = 0; pt < ARRAY_SIZE(kpk_emu_names) - 1; pt++) {
		for (i = 0; i < ARRAY_SIZE(args); i++) {
			want = kpk_emu_run(test, pt, args[i], true);
			step_pre = kpk_emu_seen.pre;
			step_post = kpk_emu_seen.post;
			memcpy(step_words, kpk_emu_seen.words,
			       sizeof(step_words));
			got = kpk_emu_run(test, pt, args[i], false);

			KUNIT_EXPECT_EQ_MSG(test, got, want, "%s: result",
					    kpk_emu_names[pt]);
			/* Same call chain: the same stack at the hit. */
			KUNIT_ASSERT_EQ_MSG(test, kpk_emu_seen.pre.sp,
					    step_pre.sp, "%s: stack",
					    kpk_emu_names[pt]);
			for (r = 0; r < ARRAY_SIZE(kpk_emu_regs); r++)
				KUNIT_EXPECT_EQ_MSG(test,
					kpk_emu_reg(&kpk_emu_seen.post,
						    kpk_emu_regs[r].off),
					kpk_emu_reg(&step_post,
						    kpk_emu_regs[r].off),
					"%s, x=%ld: %%%s after emulation",
					kpk_emu_names[pt], args[i],
					kpk_emu_regs[r].name);
			KUNIT_EXPECT_EQ_MSG(test,
					    kpk_emu_seen.post.flags & KPK_EMU_FLAGS,
					    step_post.flags & KPK_EMU_FLAGS,
					    "%s, x=%ld: flags after emulation",
					    kpk_emu_names[pt], args[i]);
			KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.words[0],
					    step_words[0], "%s: word 0",
					    kpk_emu_names[pt]);
			KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.words[1],
					    step_words[1], "%s: word 1",
					    kpk_emu_names[pt]);
			KUNIT_EXPECT_EQ_MSG(test, step_post.ip,
					    (unsigned long)kpkunit_asm_emu +
					    kpkunit_asm_emu_point(pt + 1),
					    "%s: ip after the step",
					    kpk_emu_names[pt]);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Suite kprobes_x86                                                       */
/* ---------------------------------------------------------------------- */

static struct kunit_case kpk_x86_cases[] = {
	KUNIT_CASE(kpk_test_errno_table),
	KUNIT_CASE(kpk_test_asm_model),
	KUNIT_CASE_PARAM(kpk_test_insn, kpk_insn_gen_params),
	KUNIT_CASE(kpk_test_boost),
	KUNIT_CASE(kpk_test_emulate),
	{}
};

static struct kunit_suite kpk_x86_suite = {
	.name = "kprobes_x86",
	.init = kpk_core_init,
	.exit = kpk_core_exit,
	.test_cases = kpk_x86_cases,
};

kunit_test_suites(&kpk_x86_suite);

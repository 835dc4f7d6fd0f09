// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 assembly targets of the kprobes KUnit suites (what they
 * compute is in kprobes_kunit.h), and what the suites need to know of
 * arm64's kprobes: a pre handler sees the pc on the probed instruction
 * itself, and an address that is not 4-byte aligned is refused with
 * -EINVAL by arch_prepare_kprobe().
 *
 * Every instruction is 4 bytes, so the inside of one is its address + 1
 * or + 2.  The targets use the instructions arm64 steps out of line (nop,
 * mov, add, cmp) and those it simulates instead (ret, b.cond, bl, blr,
 * adr), and they keep x30 in a frame around their calls, so that a return
 * probe on a callee finds its caller's return address there.
 */

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

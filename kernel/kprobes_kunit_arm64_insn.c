// SPDX-License-Identifier: GPL-2.0
/*
 * Suite kprobes_arm64: arm64's own kprobes (arch/arm64/kernel/probes/),
 * one kind of A64 instruction at a time, on hand-written targets whose
 * instructions are known exactly.
 *
 * For each simulated and each stepped kind: the class decode.c gives it,
 * the function's result with the probe against its result without, the pc
 * the pre handler sees, and the registers, flags and memory a post handler
 * sees (with a post handler: one trap for a simulated instruction, and
 * for a stepped one the trap and the tail that finishes the step) or the
 * next instruction's probe sees (without one: the
 * boosted copy) against those the next instruction finds when nothing but
 * that second probe is set.  Then the instructions decode.c refuses, a
 * fault in a stepped copy that the exception table fixes up, and the frame
 * a post handler of "stp x29, x30, [sp, #-16]!" sees.
 */

#include <kunit/test.h>
#include <linux/extable.h>
#include <linux/irqflags.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/daifflags.h>
#include <asm/insn.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

#include "kprobes_kunit.h"

/* Landing pads for calls and jumps through registers, under BTI. */
#ifdef CONFIG_ARM64_BTI_KERNEL
#define KPA_BTI_C	"	hint #34\n"
#define KPA_BTI_J	"	hint #36\n"
#else
#define KPA_BTI_C	""
#define KPA_BTI_J	""
#endif

/*
 * Every target starts by setting x1-x17 and the flags from its argument,
 * so that two calls with the same argument have the same registers
 * whatever the caller left in them, and ends by
 * folding them into x0: a register an instruction got wrong shows in the
 * result.  The 32-bit operations below read and write registers whose
 * upper halves are not zero.
 */
#define KPA_SETUP							\
	"	adds x1, x0, #0x111\n"					\
	"	eor x2, x0, #0xff00ff00ff00ff00\n"			\
	"	sub x3, x0, #0x333\n"					\
	"	ror x4, x2, #13\n"					\
	"	mvn x5, x0\n"						\
	"	add x6, x4, #0x666\n"					\
	"	ror x7, x5, #40\n"					\
	"	eor x8, x7, x1\n"					\
	"	add x9, x8, x2\n"					\
	"	eor x10, x9, x3, ror #9\n"				\
	"	add x11, x10, #0xbb\n"					\
	"	ror x12, x11, #33\n"					\
	"	eor x13, x12, x4\n"					\
	"	sub x14, x13, x5\n"					\
	"	ror x15, x14, #50\n"					\
	"	eor x16, x15, x6\n"					\
	"	add x17, x16, x7\n"

#define KPA_FOLD							\
	"	eor x0, x0, x1\n"					\
	"	eor x0, x0, x2, ror #1\n"				\
	"	eor x0, x0, x3, ror #2\n"				\
	"	eor x0, x0, x4, ror #3\n"				\
	"	eor x0, x0, x5, ror #4\n"				\
	"	eor x0, x0, x6, ror #5\n"				\
	"	eor x0, x0, x7, ror #6\n"				\
	"	eor x0, x0, x8, ror #7\n"				\
	"	eor x0, x0, x9, ror #8\n"				\
	"	eor x0, x0, x10, ror #9\n"				\
	"	eor x0, x0, x11, ror #10\n"				\
	"	eor x0, x0, x12, ror #11\n"				\
	"	eor x0, x0, x13, ror #12\n"				\
	"	eor x0, x0, x14, ror #13\n"				\
	"	eor x0, x0, x15, ror #14\n"				\
	"	eor x0, x0, x16, ror #15\n"				\
	"	eor x0, x0, x17, ror #16\n"

/*
 * The probe points, each a label ".Lkpa_<name>" in the targets below;
 * KPA_<name> is its index in kpa_points[] (the same order), its offset
 * from kpa_flow.
 */
enum kpa_point {
	KPA_b, KPA_b_t, KPA_bb, KPA_bb_t, KPA_bl, KPA_leaf_bl, KPA_ret,
	KPA_bl_ret, KPA_blr, KPA_leaf_blr, KPA_blr_ret, KPA_blr30,
	KPA_leaf_blr30, KPA_blr30_ret, KPA_br, KPA_br_t, KPA_adr,
	KPA_adr_back, KPA_adrp, KPA_adrp_back, KPA_nop, KPA_bti,
	KPA_prfm, KPA_ldr_x, KPA_ldr_w, KPA_ldrsw, KPA_ldr_back,
	KPA_flow_end, KPA_beq, KPA_beq_f, KPA_beq_t, KPA_bne, KPA_bne_f,
	KPA_bne_t, KPA_blt, KPA_blt_f, KPA_blt_t, KPA_bge, KPA_bge_f,
	KPA_bge_t, KPA_bgt, KPA_bgt_f, KPA_bgt_t, KPA_ble, KPA_ble_f,
	KPA_ble_t, KPA_blo, KPA_blo_f, KPA_blo_t, KPA_bhs, KPA_bhs_f,
	KPA_bhs_t, KPA_bhi, KPA_bhi_f, KPA_bhi_t, KPA_bls, KPA_bls_f,
	KPA_bls_t, KPA_bmi, KPA_bmi_f, KPA_bmi_t, KPA_bvs, KPA_bvs_f,
	KPA_bvs_t, KPA_bal, KPA_bal_f, KPA_bal_t, KPA_cbz_x,
	KPA_cbz_x_f, KPA_cbz_x_t, KPA_cbz_w, KPA_cbz_w_f, KPA_cbz_w_t,
	KPA_cbnz_x, KPA_cbnz_x_f, KPA_cbnz_x_t, KPA_cbnz_w,
	KPA_cbnz_w_f, KPA_cbnz_w_t, KPA_tbz_hi, KPA_tbz_hi_f,
	KPA_tbz_hi_t, KPA_tbnz_hi, KPA_tbnz_hi_f, KPA_tbnz_hi_t,
	KPA_tbz_lo, KPA_tbz_lo_f, KPA_tbz_lo_t, KPA_tbnz_lo,
	KPA_tbnz_lo_f, KPA_tbnz_lo_t, KPA_tbnz_63, KPA_tbnz_63_f,
	KPA_tbnz_63_t, KPA_mrs_nzcv, KPA_mrs_daif, KPA_cond_end,
	KPA_add_x, KPA_add_w, KPA_add_lsl, KPA_sub_x, KPA_sub_w,
	KPA_sub_lsl, KPA_add_sp, KPA_mov_sp, KPA_sub_wsp, KPA_mov_x,
	KPA_mov_w, KPA_mov_zr, KPA_orr_lsl, KPA_madd, KPA_cmp, KPA_csel,
	KPA_adds_w, KPA_add_reg, KPA_sub_sp, KPA_str_sp, KPA_ldr_sp,
	KPA_add_sp_sp, KPA_arith_end, KPA_stp_pre, KPA_stp_next,
	KPA_ldr_off, KPA_str_off, KPA_ldr_reg, KPA_ldrb, KPA_str_post,
	KPA_stp, KPA_ldp, KPA_ldr_pre, KPA_ldar, KPA_stlr,
	KPA_mrs_sp_el0, KPA_paciasp, KPA_pac_next, KPA_ldp_post,
	KPA_mem_ret, KPA_tpidr, KPA_tpidr_next,
	KPA_NR_POINTS
};

#define KPA_PT(name)	"	.long .Lkpa_" #name " - kpa_flow\n"

/* One block per condition: x9 gets a bit when the branch is not taken. */
#define KPA_BCOND(cc, name, bit)					\
	"	cmp x0, #20\n"						\
	".Lkpa_" #name ":	b." #cc " .Lkpa_" #name "_t\n"		\
	".Lkpa_" #name "_f:	orr x9, x9, #" #bit "\n"		\
	".Lkpa_" #name "_t:\n"

/* The same for compare-and-branch and test-and-branch, in x10. */
#define KPA_CB(insn, name, bit)						\
	".Lkpa_" #name ":	" insn ", .Lkpa_" #name "_t\n"		\
	".Lkpa_" #name "_f:	orr x10, x10, #" #bit "\n"		\
	".Lkpa_" #name "_t:\n"

/*
 * kpa_flow(x):    branches, calls and returns, adr/adrp, literal loads,
 *                 nop, bti and a literal prefetch.
 * kpa_cond(x):    b.cond on "cmp x, #20" for each condition, cbz/cbnz and
 *                 tbz/tbnz on x, then mrs of NZCV and DAIF.
 * kpa_arith(x):   add/sub immediate and register moves (simulated), and
 *                 the ALU instructions and sp updates that are stepped.
 * kpa_mem(x):     its frame built and taken down by stepped stp/ldp of sp,
 *                 loads and stores on kpa_data and the stack, acquire and
 *                 release, mrs sp_el0, paciasp.
 * kpa_percpu(x):  mrs of tpidr_el1 twice; their difference.  Called with
 *                 interrupts masked.
 */
asm(
"	.pushsection .text, \"ax\"\n"
"	.balign 8\n"
".Lkpa_lit_before:\n"
"	.quad 0x0123456789abcdef\n"
KPK_ASM_FUNC(kpa_flow)
	KPA_BTI_C
"	stp x29, x30, [sp, #-16]!\n"
"	mov x29, sp\n"
	KPA_SETUP
".Lkpa_b:	b .Lkpa_b_t\n"
"	add x1, x1, #1\n"
".Lkpa_b_t:	add x2, x2, #2\n"
"	b 1f\n"
".Lkpa_bb_t:	add x3, x3, #3\n"
"	b 2f\n"
"1:\n"
".Lkpa_bb:	b .Lkpa_bb_t\n"
"2:\n"
".Lkpa_bl:	bl kpa_leaf_bl\n"
".Lkpa_bl_ret:	add x4, x4, #4\n"
"	adr x9, kpa_leaf_blr\n"
".Lkpa_blr:	blr x9\n"
".Lkpa_blr_ret:	add x5, x5, #5\n"
"	adr x30, kpa_leaf_blr30\n"
".Lkpa_blr30:	blr x30\n"
".Lkpa_blr30_ret:	add x6, x6, #6\n"
"	adr x10, .Lkpa_br_t\n"
".Lkpa_br:	br x10\n"
"	add x7, x7, #7\n"
".Lkpa_br_t:\n"
	KPA_BTI_J
"	add x8, x8, #8\n"
".Lkpa_adr:	adr x11, .Lkpa_lit64\n"
".Lkpa_adr_back:	adr x12, kpa_flow\n"
".Lkpa_adrp:	adrp x13, kpa_data\n"
".Lkpa_adrp_back:	adrp x14, kpa_flow\n"
".Lkpa_nop:	nop\n"
".Lkpa_bti:	hint #34\n"
".Lkpa_prfm:	prfm pldl1keep, .Lkpa_lit64\n"
".Lkpa_ldr_x:	ldr x15, .Lkpa_lit64\n"
".Lkpa_ldr_w:	ldr w16, .Lkpa_lit32\n"
".Lkpa_ldrsw:	ldrsw x17, .Lkpa_litneg\n"
".Lkpa_ldr_back:	ldr x1, .Lkpa_lit_before\n"
".Lkpa_flow_end:\n"
	KPA_FOLD
"	ldp x29, x30, [sp], #16\n"
"	ret\n"
"	.balign 8\n"
".Lkpa_lit64:	.quad 0x8877665544332211\n"
".Lkpa_lit32:	.long 0x89abcdef\n"
".Lkpa_litneg:	.long -5\n"
KPK_ASM_END(kpa_flow)

KPK_ASM_FUNC(kpa_leaf_bl)
".Lkpa_leaf_bl:	add x0, x0, #0x10\n"
".Lkpa_ret:	ret\n"
KPK_ASM_END(kpa_leaf_bl)

KPK_ASM_FUNC(kpa_leaf_blr)
".Lkpa_leaf_blr:\n"
	KPA_BTI_C
"	add x0, x0, #0x20\n"
"	ret\n"
KPK_ASM_END(kpa_leaf_blr)

KPK_ASM_FUNC(kpa_leaf_blr30)
".Lkpa_leaf_blr30:\n"
	KPA_BTI_C
"	add x0, x0, #0x30\n"
"	ret\n"
KPK_ASM_END(kpa_leaf_blr30)

KPK_ASM_FUNC(kpa_cond)
	KPA_BTI_C
	KPA_SETUP
	KPA_BCOND(eq, beq, 0x1)
	KPA_BCOND(ne, bne, 0x2)
	KPA_BCOND(lt, blt, 0x4)
	KPA_BCOND(ge, bge, 0x8)
	KPA_BCOND(gt, bgt, 0x10)
	KPA_BCOND(le, ble, 0x20)
	KPA_BCOND(lo, blo, 0x40)
	KPA_BCOND(hs, bhs, 0x80)
	KPA_BCOND(hi, bhi, 0x100)
	KPA_BCOND(ls, bls, 0x200)
	KPA_BCOND(mi, bmi, 0x400)
	KPA_BCOND(vs, bvs, 0x800)
	KPA_BCOND(al, bal, 0x1000)
	KPA_CB("cbz x0", cbz_x, 0x1)
	KPA_CB("cbz w0", cbz_w, 0x2)
	KPA_CB("cbnz x0", cbnz_x, 0x4)
	KPA_CB("cbnz w0", cbnz_w, 0x8)
	KPA_CB("tbz x0, #40", tbz_hi, 0x10)
	KPA_CB("tbnz x0, #40", tbnz_hi, 0x20)
	KPA_CB("tbz w0, #3", tbz_lo, 0x40)
	KPA_CB("tbnz x0, #3", tbnz_lo, 0x80)
	KPA_CB("tbnz x0, #63", tbnz_63, 0x100)
"	cmp x0, #20\n"
".Lkpa_mrs_nzcv:	mrs x11, nzcv\n"
".Lkpa_mrs_daif:	mrs x12, daif\n"
".Lkpa_cond_end:\n"
	KPA_FOLD
"	ret\n"
KPK_ASM_END(kpa_cond)

KPK_ASM_FUNC(kpa_arith)
	KPA_BTI_C
	KPA_SETUP
".Lkpa_add_x:	add x1, x2, #0x123\n"
".Lkpa_add_w:	add w3, w5, #0xfff\n"
".Lkpa_add_lsl:	add x4, x6, #0xabc, lsl #12\n"
".Lkpa_sub_x:	sub x7, x8, #0x77\n"
".Lkpa_sub_w:	sub w8, w0, #0x10\n"
".Lkpa_sub_lsl:	sub w9, w2, #0x1, lsl #12\n"
".Lkpa_add_sp:	add x10, sp, #0x20\n"
".Lkpa_mov_sp:	mov x11, sp\n"
".Lkpa_sub_wsp:	sub w12, wsp, #8\n"
".Lkpa_mov_x:	mov x13, x2\n"
".Lkpa_mov_w:	mov w14, w2\n"
".Lkpa_mov_zr:	mov x15, xzr\n"
".Lkpa_orr_lsl:	orr x16, xzr, x2, lsl #4\n"
".Lkpa_madd:	madd x1, x2, x3, x4\n"
".Lkpa_cmp:	cmp x0, #20\n"
".Lkpa_csel:	csel x5, x6, x7, lt\n"
".Lkpa_adds_w:	adds w6, w5, #1\n"
".Lkpa_add_reg:	add x7, x8, x9, lsl #2\n"
".Lkpa_sub_sp:	sub sp, sp, #32\n"
".Lkpa_str_sp:	str x2, [sp, #8]\n"
".Lkpa_ldr_sp:	ldr x17, [sp, #8]\n"
".Lkpa_add_sp_sp:	add sp, sp, #32\n"
".Lkpa_arith_end:\n"
"	sub x10, x10, x11\n"
"	sub x12, x12, w11, uxtw\n"
"	mov x11, xzr\n"
	KPA_FOLD
"	ret\n"
KPK_ASM_END(kpa_arith)

KPK_ASM_FUNC(kpa_mem)
	KPA_BTI_C
	KPA_SETUP
".Lkpa_stp_pre:	stp x29, x30, [sp, #-16]!\n"
".Lkpa_stp_next:	mov x29, sp\n"
"	adrp x9, kpa_data\n"
"	add x9, x9, :lo12:kpa_data\n"
"	and x10, x0, #3\n"
"	add x11, x9, #32\n"
".Lkpa_ldr_off:	ldr x1, [x9, #8]\n"
".Lkpa_str_off:	str x2, [x9, #16]\n"
".Lkpa_ldr_reg:	ldr x3, [x9, x10, lsl #3]\n"
".Lkpa_ldrb:	ldrb w4, [x9, #3]\n"
".Lkpa_str_post:	str w5, [x11], #4\n"
".Lkpa_stp:	stp x6, x7, [x9, #40]\n"
".Lkpa_ldp:	ldp x12, x13, [x9, #40]\n"
".Lkpa_ldr_pre:	ldr x14, [x11, #-4]!\n"
".Lkpa_ldar:	ldar x15, [x9]\n"
".Lkpa_stlr:	stlr x8, [x9, #0]\n"
".Lkpa_mrs_sp_el0:	mrs x16, sp_el0\n"
".Lkpa_paciasp:	hint #25\n"
".Lkpa_pac_next:	mov x17, x30\n"
"	hint #29\n"
"	sub x9, x9, x11\n"
"	sub x11, x11, x11\n"
"	mov x16, xzr\n"
	KPA_FOLD
".Lkpa_ldp_post:	ldp x29, x30, [sp], #16\n"
".Lkpa_mem_ret:	ret\n"
KPK_ASM_END(kpa_mem)

KPK_ASM_FUNC(kpa_percpu)
	KPA_BTI_C
	KPA_SETUP
".Lkpa_tpidr:	mrs x17, tpidr_el1\n"
".Lkpa_tpidr_next:	mrs x10, tpidr_el1\n"
"	sub x17, x17, x10\n"
"	mov x10, xzr\n"
	KPA_FOLD
"	ret\n"
KPK_ASM_END(kpa_percpu)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
"kpa_points:\n"
KPA_PT(b)
KPA_PT(b_t)
KPA_PT(bb)
KPA_PT(bb_t)
KPA_PT(bl)
KPA_PT(leaf_bl)
KPA_PT(ret)
KPA_PT(bl_ret)
KPA_PT(blr)
KPA_PT(leaf_blr)
KPA_PT(blr_ret)
KPA_PT(blr30)
KPA_PT(leaf_blr30)
KPA_PT(blr30_ret)
KPA_PT(br)
KPA_PT(br_t)
KPA_PT(adr)
KPA_PT(adr_back)
KPA_PT(adrp)
KPA_PT(adrp_back)
KPA_PT(nop)
KPA_PT(bti)
KPA_PT(prfm)
KPA_PT(ldr_x)
KPA_PT(ldr_w)
KPA_PT(ldrsw)
KPA_PT(ldr_back)
KPA_PT(flow_end)
KPA_PT(beq)
KPA_PT(beq_f)
KPA_PT(beq_t)
KPA_PT(bne)
KPA_PT(bne_f)
KPA_PT(bne_t)
KPA_PT(blt)
KPA_PT(blt_f)
KPA_PT(blt_t)
KPA_PT(bge)
KPA_PT(bge_f)
KPA_PT(bge_t)
KPA_PT(bgt)
KPA_PT(bgt_f)
KPA_PT(bgt_t)
KPA_PT(ble)
KPA_PT(ble_f)
KPA_PT(ble_t)
KPA_PT(blo)
KPA_PT(blo_f)
KPA_PT(blo_t)
KPA_PT(bhs)
KPA_PT(bhs_f)
KPA_PT(bhs_t)
KPA_PT(bhi)
KPA_PT(bhi_f)
KPA_PT(bhi_t)
KPA_PT(bls)
KPA_PT(bls_f)
KPA_PT(bls_t)
KPA_PT(bmi)
KPA_PT(bmi_f)
KPA_PT(bmi_t)
KPA_PT(bvs)
KPA_PT(bvs_f)
KPA_PT(bvs_t)
KPA_PT(bal)
KPA_PT(bal_f)
KPA_PT(bal_t)
KPA_PT(cbz_x)
KPA_PT(cbz_x_f)
KPA_PT(cbz_x_t)
KPA_PT(cbz_w)
KPA_PT(cbz_w_f)
KPA_PT(cbz_w_t)
KPA_PT(cbnz_x)
KPA_PT(cbnz_x_f)
KPA_PT(cbnz_x_t)
KPA_PT(cbnz_w)
KPA_PT(cbnz_w_f)
KPA_PT(cbnz_w_t)
KPA_PT(tbz_hi)
KPA_PT(tbz_hi_f)
KPA_PT(tbz_hi_t)
KPA_PT(tbnz_hi)
KPA_PT(tbnz_hi_f)
KPA_PT(tbnz_hi_t)
KPA_PT(tbz_lo)
KPA_PT(tbz_lo_f)
KPA_PT(tbz_lo_t)
KPA_PT(tbnz_lo)
KPA_PT(tbnz_lo_f)
KPA_PT(tbnz_lo_t)
KPA_PT(tbnz_63)
KPA_PT(tbnz_63_f)
KPA_PT(tbnz_63_t)
KPA_PT(mrs_nzcv)
KPA_PT(mrs_daif)
KPA_PT(cond_end)
KPA_PT(add_x)
KPA_PT(add_w)
KPA_PT(add_lsl)
KPA_PT(sub_x)
KPA_PT(sub_w)
KPA_PT(sub_lsl)
KPA_PT(add_sp)
KPA_PT(mov_sp)
KPA_PT(sub_wsp)
KPA_PT(mov_x)
KPA_PT(mov_w)
KPA_PT(mov_zr)
KPA_PT(orr_lsl)
KPA_PT(madd)
KPA_PT(cmp)
KPA_PT(csel)
KPA_PT(adds_w)
KPA_PT(add_reg)
KPA_PT(sub_sp)
KPA_PT(str_sp)
KPA_PT(ldr_sp)
KPA_PT(add_sp_sp)
KPA_PT(arith_end)
KPA_PT(stp_pre)
KPA_PT(stp_next)
KPA_PT(ldr_off)
KPA_PT(str_off)
KPA_PT(ldr_reg)
KPA_PT(ldrb)
KPA_PT(str_post)
KPA_PT(stp)
KPA_PT(ldp)
KPA_PT(ldr_pre)
KPA_PT(ldar)
KPA_PT(stlr)
KPA_PT(mrs_sp_el0)
KPA_PT(paciasp)
KPA_PT(pac_next)
KPA_PT(ldp_post)
KPA_PT(mem_ret)
KPA_PT(tpidr)
KPA_PT(tpidr_next)
"	.popsection\n"
);

/*
 * kpa_refused() is never called, only probed: one instruction of each
 * kind decode.c refuses, the inside of an exclusive pair, and instructions
 * next to those that must still be accepted (after a store-exclusive, and
 * after a load-acquire or an atomic, which are no exclusives); kpa_refused_rows[i] is its
 * i-th instruction, with its encoding (checked before it is probed).
 * Encodings the assembler may not take without extensions are .inst.
 */
asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpa_refused)
"	svc #0\n"
"	hvc #0\n"
"	smc #0\n"
"	brk #0x123\n"
"	hlt #0x1\n"
"	eret\n"
"	.inst 0xd69f0bff\n"
"	msr daifset, #2\n"
"	msr daif, x0\n"
"	msr tpidr_el1, x0\n"
"	.inst 0xd65f0bff\n"
"	.inst 0xd71f0801\n"
"	.inst 0xd73f0801\n"
"	hint #29\n"
"	wfi\n"
"	wfe\n"
"	yield\n"
"	sev\n"
"	.inst 0x1c000000\n"
"	.inst 0x5c000000\n"
"	.inst 0x9c000000\n"
"	.inst 0x19020420\n"
"	ldxr x1, [x0]\n"
"	add x1, x1, #1\n"
"	nop\n"
"	stxr w2, x1, [x0]\n"
"	add x3, x3, #3\n"
"	ldaxr w1, [x0]\n"
"	stlxr w2, w1, [x0]\n"
"	ldxp x1, x2, [x0]\n"
"	stxp w3, x1, x2, [x0]\n"
"	ldar x1, [x0]\n"
"	add x4, x4, #4\n"
"	.inst 0xc8e1fc02\n"
"	add x5, x5, #5\n"
"	ret\n"
KPK_ASM_END(kpa_refused)
"	.popsection\n"
);

static const struct {
	const char *insn;
	u32 word;
	int err;
} kpa_refused_rows[] = {
	{ "svc #0", 0xd4000001, -EINVAL },
	{ "hvc #0", 0xd4000002, -EINVAL },
	{ "smc #0", 0xd4000003, -EINVAL },
	{ "brk #0x123", 0xd4202460, -EINVAL },
	{ "hlt #0x1", 0xd4400020, -EINVAL },
	{ "eret", 0xd69f03e0, -EINVAL },
	{ "eretaa", 0xd69f0bff, -EINVAL },
	{ "msr daifset, #2", 0xd50342df, -EINVAL },
	{ "msr daif, x0", 0xd51b4220, -EINVAL },
	{ "msr tpidr_el1, x0", 0xd518d080, -EINVAL },
	{ "retaa", 0xd65f0bff, -EINVAL },
	{ "braa x0, x1", 0xd71f0801, -EINVAL },
	{ "blraa x0, x1", 0xd73f0801, -EINVAL },
	{ "autiasp", 0xd50323bf, -EINVAL },
	{ "wfi", 0xd503207f, -EINVAL },
	{ "wfe", 0xd503205f, -EINVAL },
	{ "yield", 0xd503203f, -EINVAL },
	{ "sev", 0xd503209f, -EINVAL },
	{ "ldr s0, (literal)", 0x1c000000, -EINVAL },
	{ "ldr d0, (literal)", 0x5c000000, -EINVAL },
	{ "ldr q0, (literal)", 0x9c000000, -EINVAL },
	{ "cpyfp (FEAT_MOPS)", 0x19020420, -EINVAL },
	{ "ldxr x1, [x0]", 0xc85f7c01, -EINVAL },
	{ "add after ldxr", 0x91000421, -EINVAL },
	{ "nop after ldxr", 0xd503201f, -EINVAL },
	{ "stxr w2, x1, [x0]", 0xc8027c01, -EINVAL },
	{ "add after stxr", 0x91000c63, 0 },
	{ "ldaxr w1, [x0]", 0x885ffc01, -EINVAL },
	{ "stlxr w2, w1, [x0]", 0x8802fc01, -EINVAL },
	{ "ldxp x1, x2, [x0]", 0xc87f0801, -EINVAL },
	{ "stxp w3, x1, x2, [x0]", 0xc8230801, -EINVAL },
	{ "ldar x1, [x0]", 0xc8dffc01, 0 },
	{ "add after ldar", 0x91001084, 0 },
	{ "casal x1, x2, [x0]", 0xc8e1fc02, 0 },
	{ "add after casal", 0x910014a5, 0 },
	{ "ret", 0xd65f03c0, 0 },
};

kpk_fn_t kpa_flow, kpa_cond, kpa_arith, kpa_mem, kpa_percpu, kpa_refused;
extern const s32 kpa_points[KPA_NR_POINTS];

/* What kpa_mem() loads from and stores to; reset before every call. */
#define KPA_DATA_WORDS	8
static u64 kpa_data[KPA_DATA_WORDS] __aligned(64) __used;

static unsigned long kpa_pt(int pt)
{
	return (unsigned long)kpa_flow + kpa_points[pt];
}

/* ---------------------------------------------------------------------- */
/* What the handlers see                                                   */
/* ---------------------------------------------------------------------- */

/* Registers and memory at one moment, as a handler sees them. */
struct kpa_snap {
	struct pt_regs regs;
	u64 data[KPA_DATA_WORDS];
	u64 stack[4];		/* at regs->sp */
	u64 tpidr;		/* this CPU's, read in the handler */
	int where;		/* which probe took it */
	bool valid;
};

#define KPA_NARGS	8

/*
 * The probe under test, and those on the instructions that may follow;
 * the fault test uses up to KPA_MAXKP.
 */
enum { KPA_KP_POINT, KPA_KP_NEXT, KPA_KP_FALL };
#define KPA_MAXKP	8

static struct {
	struct task_struct *task;	/* only the test's own hits count */
	struct kprobe kp[KPA_MAXKP];
	struct kprobe *batch[KPA_MAXKP];
	int nr_batch;
	struct kpa_snap pre, post, after;
	int pre_hits, post_hits;
	int upper_seen;		/* kpa_chk_upper(): upper half was set */
	/* A case's registers and results without the probe under test. */
	struct kpa_snap truth[KPA_NARGS];
	long base[KPA_NARGS];
} kpa;

static bool kpa_mine(void)
{
	return current == READ_ONCE(kpa.task);
}

static void kpa_snap(struct kpa_snap *s, const struct pt_regs *regs,
		     int where)
{
	s->regs = *regs;
	memcpy(s->data, kpa_data, sizeof(s->data));
	memcpy(s->stack, (void *)regs->sp, sizeof(s->stack));
	s->tpidr = read_sysreg(tpidr_el1);
	s->where = where;
	s->valid = true;
}

static int kpa_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (kpa_mine()) {
		kpa_snap(&kpa.pre, regs, KPA_KP_POINT);
		kpa.pre_hits++;
	}
	return 0;
}

static void kpa_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	if (kpa_mine()) {
		kpa_snap(&kpa.post, regs, KPA_KP_POINT);
		kpa.post_hits++;
	}
}

/* The first of the following instructions reached takes the snapshot. */
static int kpa_pre_after(struct kprobe *p, struct pt_regs *regs)
{
	if (kpa_mine() && !kpa.after.valid)
		kpa_snap(&kpa.after, regs, p - kpa.kp);
	return 0;
}

static void kpa_unregister_batch(void *unused)
{
	unregister_kprobes(kpa.batch, kpa.nr_batch);
	kpa.nr_batch = 0;
}

/* Register the probes in kpa.batch[] at once, unregistered at the end. */
static int kpa_register_batch(struct kunit *test, int n)
{
	int ret;

	kpa.nr_batch = n;
	ret = register_kprobes(kpa.batch, n);
	if (ret) {
		kpa.nr_batch = 0;
		return ret;
	}
	return kunit_add_action_or_reset(test, kpa_unregister_batch, NULL);
}

static void kpa_unregister(struct kunit *test)
{
	kunit_release_action(test, kpa_unregister_batch, NULL);
}

static struct kprobe *kpa_kprobe(int i, unsigned long addr, bool post)
{
	struct kprobe *p = &kpa.kp[i];

	memset(p, 0, sizeof(*p));
	p->addr = (kprobe_opcode_t *)addr;
	p->pre_handler = i == KPA_KP_POINT ? kpa_pre : kpa_pre_after;
	p->post_handler = post ? kpa_post : NULL;
	return p;
}

static int kpa_init(struct kunit *test)
{
	memset(&kpa, 0, sizeof(kpa));
	WRITE_ONCE(kpa.task, current);
	return 0;
}

static void kpa_exit(struct kunit *test)
{
	WRITE_ONCE(kpa.task, NULL);
}

/* ---------------------------------------------------------------------- */
/* One kind of instruction at a time                                       */
/* ---------------------------------------------------------------------- */

/*
 * Arguments: zero, small, equal to the compared 20, above it, negative,
 * one that makes "cmp x, #20" overflow, and two that differ from zero in
 * one half only (bit 40 and bit 31).
 */
static const long kpa_args[KPA_NARGS] = {
	0, 3, 20, 25, -7, LONG_MIN + 3, 0x10000000000L, 0x80000000L,
};

#define KPA_NONE	-1
#define KPA_X(n)	BIT(n)

struct kpa_case {
	const char *desc;
	kpk_fn_t *fn;
	int point;
	int next;		/* where it goes on (a branch: when taken) */
	int fall;		/* a branch not taken, or KPA_NONE */
	bool simulated;		/* else stepped */
	u8 op;			/* enum a64_probe_op decode.c gives it */
	bool irqs_off;		/* call with interrupts masked */
	u32 skip;		/* x registers not compared with the truth */
	u8 stack;		/* words at sp compared (bit i: word i) */
	int rd;			/* for check() */
	void (*check)(struct kunit *test, const struct kpa_case *c,
		      const struct kpa_snap *pre, const struct kpa_snap *post,
		      long x);
};

/*
 * A 32-bit result clears the upper half of its (64-bit) register; the
 * case checks that some argument had it set before.
 */
static void kpa_chk_upper(struct kunit *test, const struct kpa_case *c,
			  const struct kpa_snap *pre,
			  const struct kpa_snap *post, long x)
{
	if (pre->regs.regs[c->rd] >> 32)
		kpa.upper_seen++;
	KUNIT_EXPECT_EQ_MSG(test, post->regs.regs[c->rd] >> 32, 0,
			    "%s: x%d's upper half after", c->desc, c->rd);
}

static void kpa_chk_ldrsw(struct kunit *test, const struct kpa_case *c,
			  const struct kpa_snap *pre,
			  const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ_MSG(test, (long)post->regs.regs[c->rd], -5L, "%s",
			    c->desc);
}

/* blr x30: the target is x30 before the link overwrites it. */
static void kpa_chk_blr30(struct kunit *test, const struct kpa_case *c,
			  const struct kpa_snap *pre,
			  const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ(test, pre->regs.regs[30], kpa_pt(KPA_leaf_blr30));
	KUNIT_EXPECT_EQ(test, post->regs.regs[30], kpa_pt(KPA_blr30_ret));
}

static void kpa_chk_nzcv(struct kunit *test, const struct kpa_case *c,
			 const struct kpa_snap *pre,
			 const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ_MSG(test, post->regs.regs[c->rd],
			    pre->regs.pstate & (PSR_N_BIT | PSR_Z_BIT |
						PSR_C_BIT | PSR_V_BIT),
			    "%s, x=%ld", c->desc, x);
}

/* The DAIF bits of the probed code, not those of the trap. */
static void kpa_chk_daif(struct kunit *test, const struct kpa_case *c,
			 const struct kpa_snap *pre,
			 const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ_MSG(test, post->regs.regs[c->rd],
			    pre->regs.pstate & DAIF_MASK, "%s", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, !!(post->regs.regs[c->rd] & PSR_I_BIT),
			    c->irqs_off, "%s", c->desc);
}

static void kpa_chk_sp_el0(struct kunit *test, const struct kpa_case *c,
			   const struct kpa_snap *pre,
			   const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_PTR_EQ(test, (void *)post->regs.regs[c->rd],
			    (void *)current);
}

static void kpa_chk_tpidr(struct kunit *test, const struct kpa_case *c,
			  const struct kpa_snap *pre,
			  const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ(test, post->regs.regs[c->rd], post->tpidr);
}

/* The frame record is pushed: sp 16 lower, x29 and x30 stored there. */
static void kpa_chk_push(struct kunit *test, const struct kpa_case *c,
			 const struct kpa_snap *pre,
			 const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ(test, post->regs.sp, pre->regs.sp - 16);
	KUNIT_EXPECT_EQ(test, post->stack[0], pre->regs.regs[29]);
	KUNIT_EXPECT_EQ(test, post->stack[1], pre->regs.regs[30]);
}

/* ... and popped: sp 16 higher, x29 and x30 loaded from there. */
static void kpa_chk_pop(struct kunit *test, const struct kpa_case *c,
			const struct kpa_snap *pre,
			const struct kpa_snap *post, long x)
{
	KUNIT_EXPECT_EQ(test, post->regs.sp, pre->regs.sp + 16);
	KUNIT_EXPECT_EQ(test, post->regs.regs[29], pre->stack[0]);
	KUNIT_EXPECT_EQ(test, post->regs.regs[30], pre->stack[1]);
}

#define KPA_CASE(d, f, pt, nx, sim, ...)				\
	{ .desc = d, .fn = f, .point = KPA_##pt, .next = KPA_##nx,	\
	  .fall = KPA_NONE, .simulated = sim, __VA_ARGS__ }
#define KPA_SIM(d, o, f, pt, nx, ...)					\
	KPA_CASE(d, f, pt, nx, true, .op = A64P_##o, __VA_ARGS__)
#define KPA_STEP(d, f, pt, nx, ...)					\
	KPA_CASE(d, f, pt, nx, false, .op = A64P_STEP, __VA_ARGS__)
#define KPA_COND(d, o, f, pt)						\
	KPA_SIM(d, o, f, pt, pt##_t, .fall = KPA_##pt##_f)

static const struct kpa_case kpa_cases[] = {
	KPA_SIM("b forward", B, kpa_flow, b, b_t),
	KPA_SIM("b backward", B, kpa_flow, bb, bb_t),
	KPA_SIM("bl", B, kpa_flow, bl, leaf_bl),
	KPA_SIM("ret", BR, kpa_flow, ret, bl_ret),
	KPA_SIM("blr x9", BR, kpa_flow, blr, leaf_blr),
	KPA_SIM("blr x30", BR, kpa_flow, blr30, leaf_blr30,
		.check = kpa_chk_blr30),
	KPA_SIM("br x10", BR, kpa_flow, br, br_t),
	KPA_SIM("adr forward", ADR, kpa_flow, adr, adr_back),
	KPA_SIM("adr backward", ADR, kpa_flow, adr_back, adrp),
	KPA_SIM("adrp", ADR, kpa_flow, adrp, adrp_back),
	KPA_SIM("adrp own page", ADR, kpa_flow, adrp_back, nop),
	KPA_SIM("nop", NOP, kpa_flow, nop, bti),
	KPA_SIM("bti c", NOP, kpa_flow, bti, prfm),
	KPA_SIM("prfm literal", NOP, kpa_flow, prfm, ldr_x),
	KPA_SIM("ldr x literal", LDR_LIT, kpa_flow, ldr_x, ldr_w),
	KPA_SIM("ldr w literal", LDR_LIT, kpa_flow, ldr_w, ldrsw, .rd = 16,
		.check = kpa_chk_upper),
	KPA_SIM("ldrsw literal, negative", LDR_LIT, kpa_flow, ldrsw, ldr_back,
		.rd = 17, .check = kpa_chk_ldrsw),
	KPA_SIM("ldr x literal backward", LDR_LIT, kpa_flow, ldr_back,
		flow_end),

	KPA_COND("b.eq", BCOND, kpa_cond, beq),
	KPA_COND("b.ne", BCOND, kpa_cond, bne),
	KPA_COND("b.lt", BCOND, kpa_cond, blt),
	KPA_COND("b.ge", BCOND, kpa_cond, bge),
	KPA_COND("b.gt", BCOND, kpa_cond, bgt),
	KPA_COND("b.le", BCOND, kpa_cond, ble),
	KPA_COND("b.lo", BCOND, kpa_cond, blo),
	KPA_COND("b.hs", BCOND, kpa_cond, bhs),
	KPA_COND("b.hi", BCOND, kpa_cond, bhi),
	KPA_COND("b.ls", BCOND, kpa_cond, bls),
	KPA_COND("b.mi", BCOND, kpa_cond, bmi),
	KPA_COND("b.vs", BCOND, kpa_cond, bvs),
	KPA_SIM("b.al", BCOND, kpa_cond, bal, bal_t),
	KPA_COND("cbz x", CBZ, kpa_cond, cbz_x),
	KPA_COND("cbz w", CBZ, kpa_cond, cbz_w),
	KPA_COND("cbnz x", CBZ, kpa_cond, cbnz_x),
	KPA_COND("cbnz w", CBZ, kpa_cond, cbnz_w),
	KPA_COND("tbz bit 40", TBZ, kpa_cond, tbz_hi),
	KPA_COND("tbnz bit 40", TBZ, kpa_cond, tbnz_hi),
	KPA_COND("tbz w bit 3", TBZ, kpa_cond, tbz_lo),
	KPA_COND("tbnz bit 3", TBZ, kpa_cond, tbnz_lo),
	KPA_COND("tbnz bit 63", TBZ, kpa_cond, tbnz_63),
	KPA_SIM("mrs nzcv", MRS_PSTATE, kpa_cond, mrs_nzcv, mrs_daif, .rd = 11,
		.check = kpa_chk_nzcv),
	KPA_SIM("mrs daif", MRS_PSTATE, kpa_cond, mrs_daif, cond_end, .rd = 12,
		.check = kpa_chk_daif),
	KPA_SIM("mrs daif, interrupts masked", MRS_PSTATE, kpa_cond, mrs_daif,
		cond_end, .irqs_off = true, .rd = 12, .check = kpa_chk_daif),

	KPA_SIM("add x, #imm", ADDSUB_IMM, kpa_arith, add_x, add_w),
	KPA_SIM("add w, #imm", ADDSUB_IMM, kpa_arith, add_w, add_lsl, .rd = 3,
		.check = kpa_chk_upper),
	KPA_SIM("add x, #imm, lsl #12", ADDSUB_IMM, kpa_arith, add_lsl, sub_x),
	KPA_SIM("sub x, #imm", ADDSUB_IMM, kpa_arith, sub_x, sub_w),
	KPA_SIM("sub w, #imm", ADDSUB_IMM, kpa_arith, sub_w, sub_lsl, .rd = 8,
		.check = kpa_chk_upper),
	KPA_SIM("sub w, #imm, lsl #12", ADDSUB_IMM, kpa_arith, sub_lsl, add_sp,
		.rd = 9, .check = kpa_chk_upper),
	KPA_SIM("add x, sp, #imm", ADDSUB_IMM, kpa_arith, add_sp, mov_sp),
	KPA_SIM("mov x, sp", ADDSUB_IMM, kpa_arith, mov_sp, sub_wsp),
	KPA_SIM("sub w, wsp, #imm", ADDSUB_IMM, kpa_arith, sub_wsp, mov_x,
		.rd = 12, .check = kpa_chk_upper),
	KPA_SIM("mov x, x", MOV_REG, kpa_arith, mov_x, mov_w),
	KPA_SIM("mov w, w", MOV_REG, kpa_arith, mov_w, mov_zr, .rd = 14,
		.check = kpa_chk_upper),
	KPA_SIM("mov x, xzr", MOV_REG, kpa_arith, mov_zr, orr_lsl),
	KPA_STEP("orr x, xzr, x, lsl #4", kpa_arith, orr_lsl, madd),
	KPA_STEP("madd", kpa_arith, madd, cmp),
	KPA_STEP("cmp x, #imm", kpa_arith, cmp, csel),
	KPA_STEP("csel", kpa_arith, csel, adds_w),
	KPA_STEP("adds w, #imm", kpa_arith, adds_w, add_reg),
	KPA_STEP("add x, x, x, lsl #2", kpa_arith, add_reg, sub_sp),
	KPA_STEP("sub sp, sp, #imm", kpa_arith, sub_sp, str_sp),
	KPA_STEP("str x, [sp, #8]", kpa_arith, str_sp, ldr_sp, .stack = 2),
	KPA_STEP("ldr x, [sp, #8]", kpa_arith, ldr_sp, add_sp_sp),
	KPA_STEP("add sp, sp, #imm", kpa_arith, add_sp_sp, arith_end),

	KPA_STEP("stp x29, x30, [sp, #-16]!", kpa_mem, stp_pre, stp_next,
		 .stack = 3, .check = kpa_chk_push),
	KPA_STEP("ldr x, [x, #imm]", kpa_mem, ldr_off, str_off),
	KPA_STEP("str x, [x, #imm]", kpa_mem, str_off, ldr_reg),
	KPA_STEP("ldr x, [x, x, lsl #3]", kpa_mem, ldr_reg, ldrb),
	KPA_STEP("ldrb", kpa_mem, ldrb, str_post),
	KPA_STEP("str w, [x], #4", kpa_mem, str_post, stp),
	KPA_STEP("stp x, x, [x, #imm]", kpa_mem, stp, ldp),
	KPA_STEP("ldp x, x, [x, #imm]", kpa_mem, ldp, ldr_pre),
	KPA_STEP("ldr x, [x, #-4]!", kpa_mem, ldr_pre, ldar),
	KPA_STEP("ldar", kpa_mem, ldar, stlr),
	KPA_STEP("stlr", kpa_mem, stlr, mrs_sp_el0),
	KPA_STEP("mrs sp_el0", kpa_mem, mrs_sp_el0, paciasp, .rd = 16,
		 .check = kpa_chk_sp_el0),
	KPA_STEP("paciasp", kpa_mem, paciasp, pac_next),
	KPA_STEP("ldp x29, x30, [sp], #16", kpa_mem, ldp_post, mem_ret,
		 .check = kpa_chk_pop),
	KPA_STEP("mrs tpidr_el1", kpa_percpu, tpidr, tpidr_next,
		 .irqs_off = true, .skip = KPA_X(17), .rd = 17,
		 .check = kpa_chk_tpidr),
};

KUNIT_ARRAY_PARAM_DESC(kpa_insn, kpa_cases, desc);

/*
 * Call the case's function.  Every call goes through here, from one call
 * site, so that sp, x29 and x30 in the target are the same on every call
 * of a case.
 */
static noinline long kpa_run(const struct kpa_case *c, long x)
{
	unsigned long flags = 0;
	long ret;

	memset(kpa_data, 0, sizeof(kpa_data));
	kpa_data[0] = 0x1111111111111111UL;
	kpa_data[1] = 0x2222222222222222UL;
	kpa_data[3] = 0x8877665544332211UL;
	kpa.pre.valid = kpa.post.valid = kpa.after.valid = false;
	kpa.pre_hits = kpa.post_hits = 0;
	if (c->irqs_off)
		local_irq_save(flags);
	ret = kpk_call(c->fn, x);
	if (c->irqs_off)
		local_irq_restore(flags);
	return ret;
}

/* PSTATE bits compared: all but the BTI branch type of the trap. */
#define KPA_PSTATE(s)	((s)->regs.pstate & ~PSR_BTYPE_MASK)

/*
 * @got (post handler, or the next instruction's probe) against @want (the
 * next instruction, with no probe on this one), and against @pre (the
 * registers no instruction in between writes: x18-x28, from the caller).
 */
static void kpa_compare(struct kunit *test, const struct kpa_case *c,
			const char *what, long x, const struct kpa_snap *pre,
			const struct kpa_snap *got,
			const struct kpa_snap *want)
{
	int r, w;

	KUNIT_EXPECT_TRUE_MSG(test, got->valid, "%s, x=%ld: %s never ran",
			      c->desc, x, what);
	if (!got->valid || !want->valid)
		return;
	KUNIT_EXPECT_EQ_MSG(test, got->where, want->where,
			    "%s, x=%ld: %s: where it went", c->desc, x, what);
	KUNIT_EXPECT_EQ_MSG(test, got->regs.pc, want->regs.pc,
			    "%s, x=%ld: %s: pc", c->desc, x, what);
	for (r = 0; r < 31; r++) {
		const struct kpa_snap *ref = r >= 18 && r <= 28 ? pre : want;

		if (c->skip & KPA_X(r))
			continue;
		KUNIT_EXPECT_EQ_MSG(test, got->regs.regs[r], ref->regs.regs[r],
				    "%s, x=%ld: %s: x%d", c->desc, x, what, r);
	}
	KUNIT_EXPECT_EQ_MSG(test, got->regs.sp, want->regs.sp,
			    "%s, x=%ld: %s: sp", c->desc, x, what);
	KUNIT_EXPECT_EQ_MSG(test, KPA_PSTATE(got), KPA_PSTATE(want),
			    "%s, x=%ld: %s: pstate", c->desc, x, what);
	for (w = 0; w < KPA_DATA_WORDS; w++)
		KUNIT_EXPECT_EQ_MSG(test, got->data[w], want->data[w],
				    "%s, x=%ld: %s: kpa_data[%d]", c->desc, x,
				    what, w);
	for (w = 0; w < ARRAY_SIZE(got->stack); w++)
		if (c->stack & BIT(w))
			KUNIT_EXPECT_EQ_MSG(test, got->stack[w],
					    want->stack[w],
					    "%s, x=%ld: %s: stack word %d",
					    c->desc, x, what, w);
}

/* Can a boosted copy in @slot branch back to the instruction after @addr? */
static bool kpa_in_reach(unsigned long slot, unsigned long addr)
{
	long d = (long)(addr + 4) - (long)(slot + 4 * KPROBE_SLOT_BOOST_B);

	return d >= -SZ_128M && d < SZ_128M;
}

static void kpa_test_insn(struct kunit *test)
{
	const struct kpa_case *c = test->param_value;
	unsigned long addr = kpa_pt(c->point);
	bool taken = false, fell = false;
	struct kprobe *p;
	int i, n, pass;

	for (i = 0; i < KPA_NARGS; i++)
		kpa.base[i] = kpa_run(c, kpa_args[i]);

	/* What the next instruction finds when only it has a probe. */
	n = 0;
	kpa.batch[n++] = kpa_kprobe(KPA_KP_NEXT, kpa_pt(c->next), false);
	if (c->fall != KPA_NONE)
		kpa.batch[n++] = kpa_kprobe(KPA_KP_FALL, kpa_pt(c->fall),
					    false);
	KUNIT_ASSERT_EQ(test, kpa_register_batch(test, n), 0);
	for (i = 0; i < KPA_NARGS; i++) {
		KUNIT_EXPECT_EQ(test, kpa_run(c, kpa_args[i]), kpa.base[i]);
		KUNIT_ASSERT_TRUE_MSG(test, kpa.after.valid,
				      "x=%ld: the next instruction never ran",
				      kpa_args[i]);
		kpa.truth[i] = kpa.after;
		taken |= kpa.after.where == KPA_KP_NEXT;
		fell |= kpa.after.where == KPA_KP_FALL;
	}
	kpa_unregister(test);
	if (c->fall != KPA_NONE)
		KUNIT_EXPECT_TRUE_MSG(test, taken && fell,
				      "branch taken (%d) and not (%d)",
				      taken, fell);

	/* Pass 0 with a post handler, pass 1 without (boosted if stepped). */
	for (pass = 0; pass < 2; pass++) {
		bool post = pass == 0;

		n = 0;
		p = kpa_kprobe(KPA_KP_POINT, addr, post);
		kpa.batch[n++] = p;
		/* Without a post handler, the next instruction looks. */
		if (!post) {
			kpa.batch[n++] = kpa_kprobe(KPA_KP_NEXT,
						    kpa_pt(c->next), false);
			if (c->fall != KPA_NONE)
				kpa.batch[n++] = kpa_kprobe(KPA_KP_FALL,
							    kpa_pt(c->fall),
							    false);
		}
		KUNIT_ASSERT_EQ(test, kpa_register_batch(test, n), 0);
		KUNIT_EXPECT_EQ_MSG(test, p->site->arch.simulate, c->simulated,
				    "simulated");
		KUNIT_EXPECT_EQ_MSG(test, p->site->arch.insn.op, c->op,
				    "decoded as");
		if (c->simulated) {
			KUNIT_EXPECT_NULL(test, p->site->arch.slot);
		} else {
			KUNIT_ASSERT_NOT_NULL(test, p->site->arch.slot);
			KUNIT_EXPECT_EQ_MSG(test, p->site->arch.boost != NULL,
				kpa_in_reach((unsigned long)p->site->arch.slot,
					     addr), "boosted copy");
			/* The tail is kernel text, as the probed code is. */
			if (p->site->arch.boost)
				KUNIT_EXPECT_TRUE_MSG(test, p->site->arch.tail,
						      "step ends in the tail");
		}

		for (i = 0; i < KPA_NARGS; i++) {
			long x = kpa_args[i];

			KUNIT_EXPECT_EQ_MSG(test, kpa_run(c, x), kpa.base[i],
					    "result, x=%ld, post handler %d",
					    x, post);
			KUNIT_EXPECT_EQ_MSG(test, kpa.pre_hits, 1,
					    "pre handler, x=%ld", x);
			KUNIT_EXPECT_EQ_MSG(test, kpa.post_hits, post,
					    "post handler, x=%ld", x);
			if (kpa.pre.valid)
				KUNIT_EXPECT_EQ_MSG(test, kpa.pre.regs.pc, addr,
						    "pc at the pre handler, x=%ld",
						    x);
			if (post) {
				/* It stands for the next probe. */
				kpa.post.where = kpa.post.regs.pc ==
					kpa_pt(c->next) ? KPA_KP_NEXT :
					KPA_KP_FALL;
				kpa_compare(test, c, "post handler", x,
					    &kpa.pre, &kpa.post, &kpa.truth[i]);
				if (c->check && kpa.post.valid)
					c->check(test, c, &kpa.pre, &kpa.post,
						 x);
			} else {
				kpa_compare(test, c, "next instruction", x,
					    &kpa.pre, &kpa.after,
					    &kpa.truth[i]);
				if (c->check && kpa.after.valid)
					c->check(test, c, &kpa.pre,
						 &kpa.after, x);
			}
		}
		kpa_unregister(test);
	}
	if (c->check == kpa_chk_upper)
		KUNIT_EXPECT_GT_MSG(test, kpa.upper_seen, 0,
				    "x%d's upper half was never set before",
				    c->rd);
}

/* ---------------------------------------------------------------------- */
/* Refused instructions                                                    */
/* ---------------------------------------------------------------------- */


static void kpa_test_refused(struct kunit *test)
{
	struct kprobe *p;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(kpa_refused_rows); i++) {
		unsigned long addr = (unsigned long)kpa_refused + 4 * i;

		KUNIT_ASSERT_EQ_MSG(test, le32_to_cpu(*(__le32 *)addr),
				    kpa_refused_rows[i].word, "%s",
				    kpa_refused_rows[i].insn);
		p = kpa_kprobe(KPA_KP_POINT, addr, true);
		ret = register_kprobe(p);
		if (!ret)
			unregister_kprobe(p);
		KUNIT_EXPECT_EQ_MSG(test, ret, kpa_refused_rows[i].err, "%s",
				    kpa_refused_rows[i].insn);
	}

	/* Not a multiple of 4, on code that is fine otherwise. */
	for (i = 1; i < 4; i++) {
		p = kpa_kprobe(KPA_KP_POINT, kpa_pt(KPA_nop) + i, false);
		ret = register_kprobe(p);
		if (!ret)
			unregister_kprobe(p);
		KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "nop + %d", i);
	}
}

/* ---------------------------------------------------------------------- */
/* A fault in a stepped copy                                               */
/* ---------------------------------------------------------------------- */

#define KPA_NFAULT	KPA_MAXKP

static int kpa_fault_hits;

static int kpa_fault_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (kpa_mine())
		kpa_fault_hits++;
	return 0;
}

static void kpa_fault_post(struct kprobe *p, struct pt_regs *regs,
			   unsigned long flags)
{
	if (kpa_mine())
		kpa.post_hits++;
}

/*
 * copy_from_kernel_nofault() reads through loads that have an exception
 * table entry.  With a probe on each of them (stepped, never boosted), a
 * read of an unmapped address must fault in the copy, be fixed up as if
 * the load had faulted where it is, and return -EFAULT; the probe fired
 * and stays armed.  Two bad addresses: one below the kernel's half (a
 * fault taken through do_page_fault()) and a vmalloc guard page (through
 * do_bad_area()).
 */
static void kpa_test_fault(struct kunit *test)
{
	unsigned long start = (unsigned long)copy_from_kernel_nofault;
	unsigned long size, off, a, loads[KPA_NFAULT];
	u64 src = 0x0123456789abcdefULL, dst;
	void *bad[2];
	u8 *area;
	int n = 0, pass, b, round;

	KUNIT_ASSERT_TRUE(test, kallsyms_lookup_size_offset(start, &size,
							    &off));
	KUNIT_ASSERT_EQ(test, off, 0UL);
	for (a = start; a < start + size && n < KPA_NFAULT; a += 4) {
		if (search_exception_tables(a))
			loads[n++] = a;
	}
	KUNIT_ASSERT_GT_MSG(test, n, 0,
			    "no load with an exception table entry in %ps",
			    (void *)start);

	area = vmalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, area);
	bad[0] = (void *)16;
	bad[1] = area + PAGE_SIZE;	/* the guard page */

	for (b = 0; b < 2; b++)
		KUNIT_EXPECT_EQ_MSG(test, copy_from_kernel_nofault(&dst, bad[b],
								   8),
				    -EFAULT, "unprobed, address %d", b);

	for (pass = 0; pass < 2; pass++) {
		for (b = 0; b < n; b++) {
			memset(&kpa.kp[b], 0, sizeof(kpa.kp[b]));
			kpa.kp[b].addr = (kprobe_opcode_t *)loads[b];
			kpa.kp[b].pre_handler = kpa_fault_pre;
			kpa.kp[b].post_handler = pass ? NULL : kpa_fault_post;
			kpa.batch[b] = &kpa.kp[b];
		}
		if (kpa_register_batch(test, n)) {
			vfree(area);
			KUNIT_FAIL(test, "register_kprobes() failed");
			return;
		}
		for (b = 0; b < n; b++) {
			KUNIT_EXPECT_FALSE(test, kpa.kp[b].site->arch.simulate);
			KUNIT_EXPECT_NULL(test, kpa.kp[b].site->arch.boost);
		}

		kpa_fault_hits = 0;
		kpa.post_hits = 0;
		dst = 0;
		KUNIT_EXPECT_EQ(test, copy_from_kernel_nofault(&dst, &src, 8),
				0);
		KUNIT_EXPECT_EQ(test, dst, src);
		KUNIT_EXPECT_EQ(test, kpa_fault_hits, 1);
		KUNIT_EXPECT_EQ(test, kpa.post_hits, pass ? 0 : 1);

		for (round = 0; round < 2; round++) {
			for (b = 0; b < 2; b++) {
				kpa_fault_hits = 0;
				kpa.post_hits = 0;
				KUNIT_EXPECT_EQ_MSG(test,
					copy_from_kernel_nofault(&dst, bad[b],
								 8),
					-EFAULT, "address %d, pass %d", b,
					pass);
				KUNIT_EXPECT_EQ_MSG(test, kpa_fault_hits, 1,
						    "address %d, pass %d", b,
						    pass);
				KUNIT_EXPECT_EQ_MSG(test, kpa.post_hits, 0,
						    "address %d, pass %d", b,
						    pass);
			}
		}
		kpa_unregister(test);
	}
	vfree(area);
}

/* ---------------------------------------------------------------------- */
/* The frame a post handler sees                                           */
/* ---------------------------------------------------------------------- */

static struct {
	struct pt_regs regs;
	u64 record[2];
	unsigned long trace[8];
	unsigned int nr_trace;
	unsigned long own[16];	/* from the post handler's own frame */
	unsigned int nr_own;
	u64 tpidr;
	bool irqs_off;
} kpa_frame;

static void kpa_frame_post(struct kprobe *p, struct pt_regs *regs,
			   unsigned long flags)
{
	if (!kpa_mine())
		return;
	kpa_frame.regs = *regs;
	memcpy(kpa_frame.record, (void *)regs->sp, sizeof(kpa_frame.record));
	kpa_frame.nr_trace = stack_trace_save_regs(regs, kpa_frame.trace,
						   ARRAY_SIZE(kpa_frame.trace),
						   0);
	kpa_frame.nr_own = stack_trace_save(kpa_frame.own,
					    ARRAY_SIZE(kpa_frame.own), 0);
	kpa_frame.tpidr = read_sysreg(tpidr_el1);
	kpa_frame.irqs_off = irqs_disabled();
	kpa.post_hits++;
}

/* Is @addr in @n entries of @trace? */
static bool kpa_traced(const unsigned long *trace, unsigned int n,
		       unsigned long addr)
{
	while (n--)
		if (trace[n] == addr)
			return true;
	return false;
}

/*
 * A post handler of the stepped "stp x29, x30, [sp, #-16]!" in kpa_mem():
 * sp 16 lower than at the pre handler, the frame record written
 * there, and a stack trace from its registers that starts at the next
 * instruction.  The copy ended in the tail (no second trap): the post
 * handler ran on the pre handler's CPU with interrupts masked, as in a
 * trap, and an unwind from its own frame goes through the tail's frame
 * record to the probed code.
 */
static void kpa_test_frame(struct kunit *test)
{
	const struct kpa_case *c = NULL;
	struct kprobe *p;
	int i;

	for (i = 0; i < ARRAY_SIZE(kpa_cases); i++)
		if (kpa_cases[i].point == KPA_stp_pre)
			c = &kpa_cases[i];
	KUNIT_ASSERT_NOT_NULL(test, c);

	p = kpa_kprobe(KPA_KP_POINT, kpa_pt(KPA_stp_pre), true);
	p->post_handler = kpa_frame_post;
	kpa.batch[0] = p;
	KUNIT_ASSERT_EQ(test, kpa_register_batch(test, 1), 0);
	KUNIT_EXPECT_FALSE(test, p->site->arch.simulate);
	KUNIT_EXPECT_TRUE(test, p->site->arch.tail);
	memset(&kpa_frame, 0, sizeof(kpa_frame));
	kpa_run(c, 42);
	kpa_unregister(test);

	KUNIT_ASSERT_EQ(test, kpa.pre_hits, 1);
	KUNIT_ASSERT_EQ(test, kpa.post_hits, 1);
	KUNIT_EXPECT_EQ(test, kpa_frame.regs.pc, kpa_pt(KPA_stp_next));
	KUNIT_EXPECT_EQ(test, kpa_frame.regs.sp, kpa.pre.regs.sp - 16);
	KUNIT_EXPECT_EQ(test, kpa_frame.record[0], kpa.pre.regs.regs[29]);
	KUNIT_EXPECT_EQ(test, kpa_frame.record[1], kpa.pre.regs.regs[30]);
	KUNIT_EXPECT_EQ(test, kpa_frame.regs.regs[29], kpa.pre.regs.regs[29]);
	KUNIT_EXPECT_EQ(test, kpa_frame.regs.regs[30], kpa.pre.regs.regs[30]);
	KUNIT_EXPECT_GE(test, kpa_frame.nr_trace, 2U);
	KUNIT_EXPECT_EQ(test, kpa_frame.trace[0], kpa_pt(KPA_stp_next));
	KUNIT_EXPECT_EQ(test, kpa_frame.tpidr, kpa.pre.tpidr);
	KUNIT_EXPECT_TRUE(test, kpa_frame.irqs_off);
	KUNIT_EXPECT_TRUE(test, kpa_traced(kpa_frame.own, kpa_frame.nr_own,
					   kpa_pt(KPA_stp_next)));
}

static struct kunit_case kpa_test_cases[] = {
	KUNIT_CASE_PARAM(kpa_test_insn, kpa_insn_gen_params),
	KUNIT_CASE(kpa_test_refused),
	KUNIT_CASE(kpa_test_fault),
	KUNIT_CASE(kpa_test_frame),
	{}
};

static struct kunit_suite kpa_suite = {
	.name = "kprobes_arm64",
	.init = kpa_init,
	.exit = kpa_exit,
	.test_cases = kpa_test_cases,
};

kunit_test_suites(&kpa_suite);

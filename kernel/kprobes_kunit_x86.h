/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What x86's kprobes KUnit suites (kprobes_x86 in kprobes_kunit_x86.c,
 * kprobes_opt in kprobes_opt_kunit.c) share beyond kprobes_kunit.h: x86's
 * own assembly targets and their probe points.
 */
#ifndef _KERNEL_KPROBES_KUNIT_X86_H
#define _KERNEL_KPROBES_KUNIT_X86_H

#include "kprobes_kunit.h"

/* Probe points of x86's own, after the common ones of enum kpk_point. */
enum kpk_x86_point {
	KPK_rip_load = KPK_NR_COMMON_POINTS,
	KPK_rip_lea,
	KPK_rip_mem,
	KPK_rip_store,
	KPK_rip_after_store,
	KPK_rip_imm,
	KPK_rip_after_imm,
	KPK_jmp_short,
	KPK_jmp_t1,
	KPK_jmp_near,
	KPK_jmp_t2,
	KPK_jcc_short,
	KPK_jcc_nt1,
	KPK_jcc_t1,
	KPK_jcc_nt2,
	KPK_jcc_t2,
	KPK_call_direct,
	KPK_call_ind,
	KPK_stk_push,
	KPK_stk_after_push,
	KPK_stk_pushimm,
	KPK_stk_after_pushimm,
	KPK_stk_pop,
	KPK_stk_leave,
	KPK_stk_after_leave,
	KPK_flg_xor,
	KPK_flg_pushf,
	KPK_flg_after_pushf,
	KPK_flg_popf,
	KPK_flg_after_popf,
	KPK_loop_body,
	KPK_loop_insn,
	KPK_loop_jrcxz,
	KPK_loop_end,
	KPK_NR_POINTS
};

/* x86's own assembly targets; kprobes_kunit_x86.c says what each computes. */
kpk_fn_t kpkunit_asm_rip, kpkunit_asm_jmp, kpkunit_asm_stack;
kpk_fn_t kpkunit_asm_flags, kpkunit_asm_loop;

/* kpk_model(), knowing x86's own targets too. */
long kpk_x86_model(kpk_fn_t *fn, long x);
/* Call a target; of kpkunit_asm_flags' result keep the bits that matter. */
long kpk_run(kpk_fn_t *fn, long x);

#endif /* _KERNEL_KPROBES_KUNIT_X86_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A struct pt_regs made in code, for the kretprobe trampoline and the
 * detour buffers of optimized kprobes: both are reached by an ordinary
 * branch, not an exception, and give their handlers the registers as a
 * BRK would.
 */
#ifndef _ARM64_KERNEL_PROBES_REGS_ASM_H
#define _ARM64_KERNEL_PROBES_REGS_ASM_H

#include <asm/asm-offsets.h>
#include <asm/ptrace.h>

/*
 * Push a pt_regs below sp with x0-x30 and sp as they were; leave in x1 the
 * pstate to store: the condition flags, the DAIF bits, EL1h.  pc, pstate
 * and the frame record are the caller's to fill in.
 */
	.macro	kp_a64_save_regs
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]
	stp	x10, x11, [sp, #S_X10]
	stp	x12, x13, [sp, #S_X12]
	stp	x14, x15, [sp, #S_X14]
	stp	x16, x17, [sp, #S_X16]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	stp	x28, x29, [sp, #S_X28]
	add	x0, sp, #PT_REGS_SIZE
	stp	x30, x0, [sp, #S_LR]		/* lr, sp */
	mrs	x1, nzcv
	mrs	x2, daif
	orr	x1, x1, x2
	mov	x2, #PSR_MODE_EL1h
	orr	x1, x1, x2
	.endm

/*
 * Fill in the pc (@pc, a register) and the pstate kp_a64_save_regs left
 * in x1, and a frame record that makes @pc the next frame of an unwind;
 * x29 points at it.
 */
	.macro	kp_a64_save_frame pc
	stp	\pc, x1, [sp, #S_PC]
	stp	x29, \pc, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME
	.endm

/*
 * Take every register but sp back from the pt_regs (a handler may have
 * changed them), with the condition flags, and with the DAIF bits when
 * @daif is 1, and drop it.
 */
	.macro	kp_a64_restore_regs daif
	ldr	x0, [sp, #S_PSTATE]
	.if	\daif
	and	x1, x0, #(PSR_D_BIT | PSR_A_BIT | PSR_I_BIT | PSR_F_BIT)
	msr	daif, x1
	.endif
	and	x0, x0, #(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)
	msr	nzcv, x0
	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldp	x8, x9, [sp, #S_X8]
	ldp	x10, x11, [sp, #S_X10]
	ldp	x12, x13, [sp, #S_X12]
	ldp	x14, x15, [sp, #S_X14]
	ldp	x16, x17, [sp, #S_X16]
	ldp	x18, x19, [sp, #S_X18]
	ldp	x20, x21, [sp, #S_X20]
	ldp	x22, x23, [sp, #S_X22]
	ldp	x24, x25, [sp, #S_X24]
	ldp	x26, x27, [sp, #S_X26]
	ldp	x28, x29, [sp, #S_X28]
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE
	.endm

#endif /* _ARM64_KERNEL_PROBES_REGS_ASM_H */

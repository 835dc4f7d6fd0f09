/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a function whose return a kretprobe took over returns to.
 *
 * The trampoline lays out a struct pt_regs below the stack pointer the
 * function returned with, as an exception from EL1 would: x0-x30, sp,
 * pc (its own address: C puts the real return address there before any
 * handler runs) and a pstate with the condition flags and DAIF bits of
 * the return.  Its frame record holds the caller's frame pointer and the
 * trampoline's address, which the unwinder translates into the real
 * return address (kretprobe_find_ret_addr(), keyed by that frame
 * pointer).  The way back restores every register and the condition
 * flags: a caller may test flags a function set before returning.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/ptrace.h>

	.text

SYM_CODE_START(__kretprobe_trampoline)
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
	adr	x2, __kretprobe_trampoline
	stp	x2, x1, [sp, #S_PC]		/* pc, pstate */
	stp	x29, x2, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	mov	x0, sp
	bl	kprobe_arm64_kretprobe_return

	ldr	x0, [sp, #S_PSTATE]
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
	ldr	x30, [sp, #S_LR]		/* the real return address */
	add	sp, sp, #PT_REGS_SIZE
	ret
SYM_CODE_END(__kretprobe_trampoline)

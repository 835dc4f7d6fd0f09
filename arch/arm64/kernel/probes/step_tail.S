/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a stepped copy goes when it is done, instead of a second BRK.
 *
 * The copy in the slot (KPROBE_SLOT_TAIL) ran with every DAIF exception
 * masked, as kp_step() left it, and branched here.  The tail lays out a
 * struct pt_regs below the stack pointer the copy left, as a trap would,
 * with a frame record that makes the probed code the next frame of an
 * unwind, has kp_a64_step_tail_done() finish the probe on it (pc, pstate,
 * post handlers), and leaves with an exception return from it: elr and spsr
 * can be written and used without a register to spare, and the return
 * puts back the probed code's whole pstate (DAIF, condition flags, PAN)
 * at once.  Nothing can take an exception between the writes of elr and
 * spsr and the eret: DAIF is masked, and the loads in between read the
 * stack this code has just written.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/ptrace.h>

#include "regs-asm.h"

	.pushsection ".kprobes.text", "ax"

SYM_CODE_START(kp_a64_step_tail)
	kp_a64_save_regs
	kp_a64_save_frame xzr			/* C fills in pc and pstate */
	mov	x0, sp
	bl	kp_a64_step_tail_done

	/* A handler that unmasked must not get an interrupt in here. */
	msr	daifset, #0xf
	ldp	x0, x1, [sp, #S_PC]		/* pc, pstate */
	msr	elr_el1, x0
	msr	spsr_el1, x1
	kp_a64_restore_regs 0
	eret
	sb
SYM_CODE_END(kp_a64_step_tail)

	.popsection

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The detour buffer of a jump-optimized kprobe, as a template that opt.c
 * copies into each buffer: never executed here.
 *
 * Entered by the "b" that replaced the probed instruction, with the
 * probed code's registers.  It lays out a struct pt_regs below the stack
 * pointer as a BRK would (pc at the probed instruction, pstate with the
 * condition flags and DAIF bits), with a frame record that makes the
 * probed instruction the next frame of an unwind, masks every DAIF
 * exception as a BRK would, calls the callback with the site and the
 * registers, restores every register but sp from them, with the DAIF
 * bits, runs the copy of the probed instruction and branches back to the
 * instruction after it.  The callback's "bl", the copy and the branch
 * back are filled in per buffer; so are the two literals, which the
 * template reads pc-relative and so finds in its own copy.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/ptrace.h>

#include "regs-asm.h"

	.section .rodata, "a"
	.balign 8
	.globl	kp_a64_opt_tmpl, kp_a64_opt_tmpl_call, kp_a64_opt_tmpl_copy
	.globl	kp_a64_opt_tmpl_back, kp_a64_opt_tmpl_site, kp_a64_opt_tmpl_pc
	.globl	kp_a64_opt_tmpl_end
kp_a64_opt_tmpl:
	kp_a64_save_regs
	ldr	x2, kp_a64_opt_tmpl_pc
	kp_a64_save_frame x2
	ldr	x0, kp_a64_opt_tmpl_site
	mov	x1, sp
	msr	daifset, #0xf
kp_a64_opt_tmpl_call:
	bl	.				/* the callback */
	kp_a64_restore_regs 1
kp_a64_opt_tmpl_copy:
	nop					/* the probed instruction */
kp_a64_opt_tmpl_back:
	b	.				/* to the next one */
	.balign 8
kp_a64_opt_tmpl_site:
	.quad	0				/* struct kprobe_site * */
kp_a64_opt_tmpl_pc:
	.quad	0				/* the probed address */
kp_a64_opt_tmpl_end:

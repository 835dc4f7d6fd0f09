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

#include "regs-asm.h"

	.text

SYM_CODE_START(__kretprobe_trampoline)
	kp_a64_save_regs
	adr	x2, __kretprobe_trampoline
	kp_a64_save_frame x2

	mov	x0, sp
	bl	kprobe_arm64_kretprobe_return

	kp_a64_restore_regs 0
	ret
SYM_CODE_END(__kretprobe_trampoline)

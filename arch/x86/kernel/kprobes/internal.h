/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Declarations shared by the files of the x86 kprobes code and nobody else.
 */
#ifndef _X86_KERNEL_KPROBES_INTERNAL_H
#define _X86_KERNEL_KPROBES_INTERNAL_H

#include <linux/kprobes.h>

/* emulate.c: carry out an emulated instruction on the saved registers. */
void kprobe_x86_emulate(struct kprobe_site *s, struct pt_regs *regs);

/* emulate.c: fix the registers after the slot copy ran; sets regs->ip. */
void kprobe_x86_step_fixup(struct kprobe_site *s, struct pt_regs *regs,
			   unsigned long flags_at_hit);

static nokprobe_inline bool kprobe_x86_op_steps(u8 op)
{
	return op <= KPX_STEP_CALL_MEM;
}

#endif /* _X86_KERNEL_KPROBES_INTERNAL_H */

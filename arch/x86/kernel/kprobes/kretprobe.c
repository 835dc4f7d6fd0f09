// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86 return probes: taking over a function's return address when its
 * entry probe fires, and the trampoline that the hijacked return lands in.
 * Pending returns themselves are the kprobes core's business.
 */
#include <linux/kprobes.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>

#include "common.h"

__visible void kprobe_x86_kretprobe_return(struct pt_regs *regs);

/*
 * Reached by the probed function's RET, with the stack pointer one word
 * above the slot that held the return address.  The trampoline first writes its own
 * address back into that slot, so that while it runs the stack looks like
 * an ordinary call whose return address the unwinders know how to
 * translate (asm/unwind.h).  Below that it lays out a complete pt_regs:
 * ss and sp are left for the C side, flags are pushed, then cs, ip and
 * orig_ax (also for C) and the registers.  The C side runs the handlers and
 * puts the real return address into the slot; the way back restores the
 * registers and the flags, then returns through the slot.  The same on
 * both widths: common.h saves the registers pt_regs has on each, and the
 * C side takes @regs as its first argument either way.
 */
asm(
	"	.pushsection .text, \"ax\"\n"
	"	.globl __kretprobe_trampoline\n"
	"	.type __kretprobe_trampoline, @function\n"
	"__kretprobe_trampoline:\n"
	ANNOTATE_NOENDBR	/* only ever entered by RET */
	"	push $__kretprobe_trampoline\n"
	UNWIND_HINT_FUNC
	/* lea, not sub: the flags are the function's return flags. */
	"	lea -(2 * " KP_WORD ")(%" _ASM_SP "), %" _ASM_SP "\n" /* ss, sp */
	"	pushf\n"
	SAVE_REGS_STRING
	"	mov %" _ASM_SP ", %" _ASM_ARG1 "\n"
	"	call kprobe_x86_kretprobe_return\n"
	RESTORE_REGS_STRING
	"	popf\n"
	/* Drop sp and ss with lea: an add would clobber the flags. */
	"	lea (2 * " KP_WORD ")(%" _ASM_SP "), %" _ASM_SP "\n"
	ASM_RET
	"	.size __kretprobe_trampoline, . - __kretprobe_trampoline\n"
	"	.popsection\n"
);
NOKPROBE_SYMBOL(__kretprobe_trampoline);
/* It keeps the caller's %rbp and builds no frame of its own. */
STACK_FRAME_NON_STANDARD_FP(__kretprobe_trampoline);

/* @regs sits right below the return slot; fill in what the asm left out. */
__visible void kprobe_x86_kretprobe_return(struct pt_regs *regs)
{
	unsigned long *ret_slot = (unsigned long *)(regs + 1);

	regs->ss = __KERNEL_DS;
	regs->sp = (unsigned long)(ret_slot + 1);	/* as after the RET */
	regs->cs = __KERNEL_CS;
	regs->orig_ax = ~0UL;
#ifdef CONFIG_X86_32
	regs->gs = 0;		/* as an exception entry leaves it */
#endif
	/*
	 * Where the CPU is; the core sets the real return address before
	 * the handlers run, so stack_trace_save_regs() starts from there.
	 */
	regs->ip = (unsigned long)kretprobe_trampoline_addr();

	*ret_slot = kretprobe_trampoline_handler(regs, ret_slot);
}
NOKPROBE_SYMBOL(kprobe_x86_kretprobe_return);

/* Called by the core from the entry probe, before the function runs. */
void arch_prepare_kretprobe(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long *ret_slot = (unsigned long *)regs->sp;

	ri->ret_addr = (kprobe_opcode_t *)*ret_slot;
	ri->fp = ret_slot;
	*ret_slot = (unsigned long)kretprobe_trampoline_addr();
}
NOKPROBE_SYMBOL(arch_prepare_kretprobe);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 return probes: taking over a function's return address when its
 * entry probe fires, and the C side of the trampoline the hijacked return
 * lands in (kretprobe_trampoline.S).  Pending returns themselves are the
 * kprobes core's business.
 */
#include <linux/kprobes.h>
#include <linux/linkage.h>

asmlinkage void kprobe_arm64_kretprobe_return(struct pt_regs *regs);

/*
 * Called by the trampoline with the registers of the return.  The
 * instance is found by the frame pointer the function returned with,
 * which is the one it was entered with: its caller's.
 */
asmlinkage void kprobe_arm64_kretprobe_return(struct pt_regs *regs)
{
	regs->regs[30] = kretprobe_trampoline_handler(regs,
						      (void *)regs->regs[29]);
}
NOKPROBE_SYMBOL(kprobe_arm64_kretprobe_return);

/* Called by the core from the entry probe, before the function runs. */
void arch_prepare_kretprobe(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	ri->ret_addr = (kprobe_opcode_t *)regs->regs[30];
	ri->fp = (void *)regs->regs[29];
	regs->regs[30] = (unsigned long)kretprobe_trampoline_addr();
}
NOKPROBE_SYMBOL(arch_prepare_kretprobe);

/*
 * Called by the core once it knows where the function really returns,
 * before the handlers run: their stack traces start from the real return
 * address, and unwinding through the trampoline's frame record finds it
 * there too.
 */
void arch_kretprobe_fixup_return(struct pt_regs *regs,
				 kprobe_opcode_t *correct_ret_addr)
{
	regs->regs[30] = (unsigned long)correct_ret_addr;
	regs->stackframe[1] = (unsigned long)correct_ret_addr;
}
NOKPROBE_SYMBOL(arch_kretprobe_fixup_return);

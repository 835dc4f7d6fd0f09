// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 uprobes: the breakpoint is a BRK #UPROBES_BRK_IMM, which leaves
 * the pc on itself.  The probed instruction is carried out as kprobes
 * does (decode.c): simulated on the task's registers when it reads or
 * writes the pc, else run in the task's out-of-line slot under the
 * hardware single step, whose exception brings the task back to the
 * core.  32-bit tasks are not probed.
 */
#include <linux/highmem.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/uprobes.h>
#include <asm/cacheflush.h>

/* thread.fault_code while a slot runs: a fault there replaces it. */
#define UPROBE_NO_FAULT		UINT_MAX

int arch_uprobe_analyze_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			     unsigned long addr)
{
	if (!IS_ALIGNED(addr, AARCH64_INSN_SIZE))
		return -EINVAL;
	switch (a64_probe_decode(le32_to_cpu(aup->insn), &aup->d)) {
	case A64P_REFUSED:
		return -EINVAL;
	case A64P_SIMULATED:
		aup->simulate = true;
		break;
	case A64P_STEPPED:
		aup->simulate = false;
		break;
	}
	return 0;
}

/* The sites hold A64 code: a 32-bit process cannot be running it. */
bool arch_uprobe_mm_supported(struct arch_uprobe *aup, struct mm_struct *mm)
{
	return !(mm->context.flags & MMCF_AARCH32);
}

bool arch_uprobe_emulated(struct arch_uprobe *aup)
{
	return aup->simulate;
}

/* The BRK does not advance the pc. */
unsigned long uprobe_get_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs);
}

/* The slot's page is mapped already: its instruction cache needs syncing. */
void arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
			   void *src, unsigned long len)
{
	void *kaddr = kmap_local_page(page);
	void *dst = kaddr + offset_in_page(vaddr);

	memcpy(dst, src, len);
	sync_icache_aliases((unsigned long)dst, (unsigned long)dst + len);
	kunmap_local(kaddr);
}

bool arch_uprobe_skip_sstep(struct arch_uprobe *aup, struct pt_regs *regs)
{
	if (!aup->simulate)
		return false;
	if (!a64_probe_simulate(&aup->d, regs)) {
		/* The literal load faulted: as the instruction itself would. */
		force_sig_fault(SIGSEGV, SEGV_MAPERR, (void __user *)
				(instruction_pointer(regs) + aup->d.imm));
	}
	return true;
}

int arch_uprobe_pre_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	current->thread.fault_code = UPROBE_NO_FAULT;
	instruction_pointer_set(regs, current->utask->xol_vaddr);
	user_enable_single_step(current);
	return 0;
}

int arch_uprobe_post_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	instruction_pointer_set(regs, current->utask->vaddr + AARCH64_INSN_SIZE);
	user_disable_single_step(current);
	return 0;
}

bool arch_uprobe_xol_was_trapped(struct task_struct *t)
{
	return t->thread.fault_code != UPROBE_NO_FAULT;
}

/* A fatal signal or a fault in the slot: back to the probed instruction. */
void arch_uprobe_abort_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	instruction_pointer_set(regs, current->utask->vaddr);
	user_disable_single_step(current);
}

unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs)
{
	unsigned long ret = procedure_link_pointer(regs);

	procedure_link_pointer_set(regs, trampoline_vaddr);
	return ret;
}

/*
 * A pending return is live while its frame is: the stack pointer then is
 * below the one recorded at the call.  Entering another probed function by
 * a plain branch from a probed one (a tail call) reaches it with the same
 * stack pointer, and the caller's return is still to come.
 */
bool arch_uretprobe_is_alive(struct return_instance *ret, enum rp_check ctx,
			     struct pt_regs *regs)
{
	if (ctx == RP_CHECK_CHAIN_CALL)
		return regs->sp <= ret->stack;
	return regs->sp < ret->stack;
}

int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data)
{
	return NOTIFY_DONE;	/* the BRK and step hooks call us directly */
}

/* do_el0_brk64(), for BRK #UPROBES_BRK_IMM. */
int uprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	return uprobe_pre_sstep_notifier(regs) ? DBG_HOOK_HANDLED :
						 DBG_HOOK_ERROR;
}

/* do_el0_softstep(): the slot's instruction has run. */
int uprobe_single_step_handler(struct pt_regs *regs, unsigned long esr)
{
	return uprobe_post_sstep_notifier(regs) ? DBG_HOOK_HANDLED :
						  DBG_HOOK_ERROR;
}

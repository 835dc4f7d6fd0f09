// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 kprobes: the BRK traps of a probe, the hooks that let the core's
 * hit path (kernel/kprobes_hit.h) carry an instruction out on arm64, faults
 * in the middle of a probe, arming and disarming, and the arm64 blacklist.
 *
 * The probed instruction is simulated on the saved registers
 * (simulate.c), or its copy runs from the site's slot with every DAIF
 * exception masked until the branch behind it reaches kp_a64_step_tail()
 * (or the BRK behind it traps back here, kprobe_ss_brk_handler()).
 *
 * The BRK handlers run as debug exceptions from EL1: interrupts masked,
 * on the interrupted task's stack, in NMI context as far as lockdep and
 * RCU are concerned.
 */
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <asm/daifflags.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/sections.h>

#include "internal.h"

#define KP_PSR_NZCV	(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)

/*
 * The trap leaves for code that is not the probed instruction, or for the
 * instruction after it: nothing there was branched to, so no BTI check may
 * apply to it.  Only a kernel built for BTI has guarded pages; elsewhere
 * BTYPE is never looked at.
 */
static __always_inline void kp_clear_btype(struct pt_regs *regs)
{
	if (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL))
		regs->pstate &= ~PSR_BTYPE_MASK;
}

static __always_inline void arch_kprobe_set_pc(struct pt_regs *regs,
					       unsigned long pc)
{
	regs->pc = pc;
	kp_clear_btype(regs);
}

/*
 * The instructions decode.c chose for it; a simulated kernel instruction
 * cannot fail (only user memory faults).  The pc it leaves was not
 * branched to, as for arch_kprobe_set_pc().
 */
static __always_inline bool arch_kprobe_emulate(struct kprobe_site *s,
						struct pt_regs *regs)
{
	if (!s->arch.simulate)
		return false;
	a64_probe_simulate(&s->arch.insn, regs);
	kp_clear_btype(regs);
	return true;
}

/* The boosted copy, with a "b" back behind it. */
static __always_inline kprobe_opcode_t *
arch_kprobe_boost_copy(struct kprobe_site *s)
{
	return s->arch.boost;
}

/*
 * The copy that ends in kp_a64_step_tail() or, when that is out of the
 * slot's reach, in a BRK for kprobe_ss_brk_handler().
 */
static __always_inline kprobe_opcode_t *
arch_kprobe_step_copy(struct kprobe_site *s)
{
	return s->arch.slot + (s->arch.tail ? KPROBE_SLOT_TAIL :
					      KPROBE_SLOT_STEP);
}

/* Every DAIF exception stays masked until the copy is done. */
static __always_inline void arch_kprobe_step(struct pt_regs *regs,
					     struct arch_kprobe_step *st)
{
	st->pstate = regs->pstate;
	regs->pstate |= DAIF_MASK;
}

/*
 * Back to the instruction after the probe with the pstate of the hit, but
 * for the condition flags the copy left.
 */
static __always_inline void
arch_kprobe_step_done(struct kprobe_site *s, struct pt_regs *regs,
		      const struct arch_kprobe_step *st)
{
	regs->pstate = (regs->pstate & KP_PSR_NZCV) |
		       (st->pstate & ~KP_PSR_NZCV);
	arch_kprobe_set_pc(regs, (unsigned long)s->addr + AARCH64_INSN_SIZE);
}

static __always_inline void
arch_kprobe_fault_fixup(struct kprobe_site *s, struct pt_regs *regs,
			const struct arch_kprobe_step *st)
{
	regs->pstate = (regs->pstate & ~DAIF_MASK) | (st->pstate & DAIF_MASK);
	arch_kprobe_set_pc(regs, (unsigned long)s->addr);
}

/* kernel/kprobes_hit.h, by the include path this file gets (Makefile) */
#include <kprobes_hit.h>

/*
 * A kprobes BRK at @addr that is not in the table: removed between this
 * CPU's trap and the lookup, so the original instruction is back: run it.
 * Anything else there is a BRK that is nobody's.
 */
static int kp_brk_unknown(unsigned long addr)
{
	if (le32_to_cpu(*(__le32 *)addr) == BRK64_OPCODE_KPROBES)
		return DBG_HOOK_ERROR;
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kp_brk_unknown);

/* Called by do_el1_brk64() for BRK #KPROBES_BRK_IMM. */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long addr = instruction_pointer(regs);
	unsigned long off = kprobe_cpu_off();
	struct kprobe_site *s;

	s = kp_site_find(addr);
	if (unlikely(!s))
		return kp_brk_unknown(addr);
	if (unlikely(kprobe_cpu_read(current_kprobe, off)))
		return kp_reenter(s, regs, kprobe_cpu_ptr(kprobe_ctlblk, off)) ?
			DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
	kp_hit(s, regs, off);
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_brk_handler);

/* Called by do_el1_brk64() for BRK #KPROBES_BRK_SS_IMM, behind a copy. */
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kp_stepping(kcb);

	if (!s || instruction_pointer(regs) !=
		  (unsigned long)(s->arch.slot + KPROBE_SLOT_STEP_BRK))
		return DBG_HOOK_ERROR;

	kp_step_done(s, regs, kcb);
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_ss_brk_handler);

/*
 * Called by kp_a64_step_tail() behind a copy, with the registers it saved
 * and every DAIF exception still masked since the BRK: the step cannot
 * have been interrupted, and this CPU's step state is the copy's.  The
 * tail returns with an exception return from @regs, as a trap would.
 *
 * The BRK's exit told lockdep that interrupts are back on; they are not
 * until the tail's return (kp_a64_lockdep_irqs_off()).
 */
asmlinkage void kp_a64_step_tail_done(struct pt_regs *regs)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kcb->step.site;
	bool lockdep_irqs = kp_a64_lockdep_irqs_off();

	/* The frame record the tail made: the code it returns to. */
	regs->stackframe[1] = (unsigned long)s->addr + AARCH64_INSN_SIZE;
	kp_step_done(s, regs, kcb);
	kp_a64_lockdep_irqs_restore(lockdep_irqs);
}
NOKPROBE_SYMBOL(kp_a64_step_tail_done);

/*
 * A fault while a copy runs out of line (kp_fault_unwind()).  The abort's
 * entry gave this CPU the DAIF bits of the copy, all masked; the rest of
 * the fault is handled with the probed code's, as it would have been
 * without the probe: a fault on a user page may sleep, and take the mm's
 * locks, with interrupts on.
 */
int kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr)
{
	if (kp_fault_unwind(regs, get_kprobe_ctlblk()))
		local_daif_inherit(regs);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/*
 * Arming and disarming.  Replacing an arbitrary instruction with a BRK is
 * not one of the changes the architecture allows while another CPU may be
 * running it, so the writes happen in stop_machine() with every other CPU
 * spinning outside the text: aarch64_insn_patch_text() does that, for any
 * number of instructions at once.  A batch is one stop_machine() for every
 * KP_POKE_MAX sites.  The queue is text_mutex's.
 */
#define KP_POKE_MAX	256

static void *kp_poke_addrs[KP_POKE_MAX];
static u32 kp_poke_insns[KP_POKE_MAX];
static unsigned int kp_poke_n;

bool arch_kprobe_poke_queue(struct kprobe_site *s, bool arm)
{
	lockdep_assert_held(&text_mutex);
	if (kp_poke_n == KP_POKE_MAX)
		return false;
	kp_poke_addrs[kp_poke_n] = s->addr;
	kp_poke_insns[kp_poke_n++] = arm ? KPROBE_BREAKPOINT_INSN :
					   s->arch.opcode;
	return true;
}

void arch_kprobe_poke_apply(void)
{
	int ret;

	lockdep_assert_held(&text_mutex);
	if (!kp_poke_n)
		return;
	ret = aarch64_insn_patch_text(kp_poke_addrs, kp_poke_insns, kp_poke_n);
	/* The addresses were checked at prepare: this cannot fail. */
	WARN_ONCE(ret, "kprobes: writing %u probe sites failed (%d)\n",
		  kp_poke_n, ret);
	kp_poke_n = 0;
}

void arch_kprobe_site_describe(struct kprobe_site *s, struct kprobe *p)
{
	p->opcode = s->arch.opcode;
	p->ainsn.insn = s->arch.slot;
}

/*
 * Text no probe may go into, besides the kprobes and noinstr sections the
 * core refuses itself: the exception entry code (runs before the kernel's
 * state is set up), code that runs with the MMU off or at EL2, and the
 * hibernation exit code.
 */
static const struct kprobe_text_area kp_forbidden_text[] = {
	{ __entry_text_start,		__entry_text_end },
	{ __irqentry_text_start,	__irqentry_text_end },
	{ __idmap_text_start,		__idmap_text_end },
	{ __hyp_idmap_text_start,	__hyp_idmap_text_end },
	{ __hyp_text_start,		__hyp_text_end },
#ifdef CONFIG_HIBERNATION
	{ __hibernate_exit_text_start,	__hibernate_exit_text_end },
#endif
};

bool arch_within_kprobe_blacklist(unsigned long addr)
{
	return kprobe_in_text_areas(addr, kp_forbidden_text,
				    ARRAY_SIZE(kp_forbidden_text));
}

/*
 * The same areas, listed in debugfs' blacklist: those in the kernel's text
 * (the idmap and hibernation code live in the read-only data segment,
 * where kallsyms has no functions to list; they are refused all the same).
 */
int __init arch_populate_kprobe_blacklist(void)
{
	unsigned long start, end;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(kp_forbidden_text); i++) {
		start = (unsigned long)kp_forbidden_text[i].start;
		end = (unsigned long)kp_forbidden_text[i].end;
		if (start == end || !core_kernel_text(start))
			continue;
		ret = kprobe_add_area_blacklist(start, end);
		if (ret)
			return ret;
	}
	return 0;
}

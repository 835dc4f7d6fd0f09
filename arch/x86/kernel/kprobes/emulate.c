// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probed instructions that cannot run from an out-of-line slot, carried out
 * on the saved registers instead, and the register fixups after a slot run.
 *
 * Everything here runs inside the int3 handler (interrupts off, NMI-like
 * context) and is therefore excluded from probing.  Writes below regs->sp
 * are safe: the int3 entry leaves a gap under the interrupted stack for
 * exactly this kind of emulated push.
 */
#include <linux/kprobes.h>
#include <asm/probe-insn.h>
#include <asm/text-patching.h>

#include "internal.h"

/* Flags a POPF may change in ring 0 (VM, VIF and VIP stay as they are). */
#define KP_POPF_MASK	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_TF | \
			 X86_EFLAGS_IF | X86_EFLAGS_DF | X86_EFLAGS_OF | \
			 X86_EFLAGS_IOPL | X86_EFLAGS_NT | X86_EFLAGS_AC | \
			 X86_EFLAGS_ID)

/*
 * arch_kprobe_site.cond of the 0xe0..0xe3 family holds the variant as
 * <asm/probe-insn.h> numbers them.
 */

/*
 * Where the CPU goes on after the probed instruction.
 *
 * While a site is queued for, carries or is losing a jump, the bytes after
 * its first instruction may be the jump's displacement: being written, in
 * place, or not yet restored (unoptimizing writes the int3, waits for every
 * CPU, then restores them).  A hit in that window that carried out the first
 * instruction here (a re-entered hit, or one with a post handler attached
 * meanwhile) must not continue in place, so it continues in the detour
 * buffer's copy of the region instead: the copy has the same instructions
 * at the same offsets and jumps back to the end of the region.  The state
 * is read at this point, after the instruction: it only goes back to NONE
 * once every CPU has seen the original bytes again, which cannot happen
 * while this one is inside the trap with interrupts off.  The buffer
 * outlives any task that can be running in it (kprobe_opt_reap()).
 */
static nokprobe_inline unsigned long kp_next_ip(struct kprobe_site *s)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(s->opt) != KPROBE_OPT_NONE && s->arch.len < s->opt_len)
		return (unsigned long)kp_opt_region_copy(s) + s->arch.len;
#endif
	return (unsigned long)s->addr + s->arch.len;
}

static nokprobe_inline void kp_emulate_popf(struct pt_regs *regs)
{
	unsigned long val = int3_emulate_pop(regs);

	regs->flags &= ~(KP_POPF_MASK | X86_EFLAGS_RF);
	regs->flags |= val & KP_POPF_MASK;
}

/* A call to @target that returns to the instruction after the probe. */
static nokprobe_inline void kp_emulate_call(struct kprobe_site *s,
					    struct pt_regs *regs,
					    unsigned long target)
{
	/* Never a region's first instruction: the return is in place. */
	int3_emulate_push(regs, (unsigned long)s->addr + s->arch.len);
	int3_emulate_jmp(regs, target);
}

void kprobe_x86_emulate(struct kprobe_site *s, struct pt_regs *regs)
{
	struct arch_kprobe_site *a = &s->arch;
	unsigned long next = kp_next_ip(s);

	switch (a->op) {
	case KPX_JMP:
		int3_emulate_jmp(regs, a->target);
		return;
	case KPX_CALL:
		kp_emulate_call(s, regs, a->target);
		return;
	case KPX_JCC:
		int3_emulate_jcc(regs, a->cond, next, a->target - next);
		return;
	case KPX_LOOP:
		int3_emulate_jmp(regs, probe_insn_loop_taken(a->cond, regs) ?
				 a->target : next);
		return;
	case KPX_RET:
		int3_emulate_ret(regs);
		regs->sp += a->imm;
		return;
	case KPX_JMP_REG:
		int3_emulate_jmp(regs, regs_get_register(regs, a->imm));
		return;
	case KPX_CALL_REG:
		/* Read the register first: it may be %rsp itself. */
		kp_emulate_call(s, regs, regs_get_register(regs, a->imm));
		return;
	case KPX_CLI:
		regs->flags &= ~X86_EFLAGS_IF;
		break;
	case KPX_STI:
		regs->flags |= X86_EFLAGS_IF;
		break;
	case KPX_POPF:
		kp_emulate_popf(regs);
		break;
	case KPX_NOP:
		break;
	default:
		/* arch_prepare_kprobe_site() hands out no other kind. */
		BUG();
	}
	int3_emulate_jmp(regs, next);
}
NOKPROBE_SYMBOL(kprobe_x86_emulate);

void kprobe_x86_step_fixup(struct kprobe_site *s, struct pt_regs *regs,
			   unsigned long flags_at_hit)
{
	unsigned long if_bit = flags_at_hit & X86_EFLAGS_IF;
	unsigned long *top;

	/* The copy ran with interrupts off; hand back the caller's IF. */
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | if_bit;

	switch (s->arch.op) {
	case KPX_STEP_PUSHF:
		top = (unsigned long *)regs->sp;
		*top = (*top & ~X86_EFLAGS_IF) | if_bit;
		break;
	case KPX_STEP_JMP_MEM:
		/* The copy pushed the branch target instead of jumping. */
		int3_emulate_jmp(regs, int3_emulate_pop(regs));
		return;
	case KPX_STEP_CALL_MEM:
		kp_emulate_call(s, regs, int3_emulate_pop(regs));
		return;
	default:
		break;
	}
	int3_emulate_jmp(regs, kp_next_ip(s));
}
NOKPROBE_SYMBOL(kprobe_x86_step_fixup);

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
 * buffer's copy of the region instead, at the copy of the second
 * instruction (a relocated branch may be longer than the original), which
 * goes on to the end of the region and jumps back.  The state
 * is read at this point, after the instruction: it only goes back to NONE
 * once every CPU has seen the original bytes again, which cannot happen
 * while this one is inside the trap with interrupts off.  The buffer
 * outlives any task that can be running in it (kprobe_opt_reap()).
 */
static nokprobe_inline unsigned long kp_next_ip(struct kprobe_site *s)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(s->opt) != KPROBE_OPT_NONE && s->arch.len < s->opt_len)
		return (unsigned long)kp_opt_region_copy(s) +
		       s->arch.copy_next;
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
		/*
		 * arch_prepare_kprobe_site() hands out no other kind, so the
		 * site is corrupt.  There is no copy to run instead: say so
		 * and go on after the instruction rather than stop the machine.
		 */
		WARN_ONCE(1, "kprobes: site at %pS has kind %u, not emulated\n",
			  s->addr, a->op);
		break;
	}
	int3_emulate_jmp(regs, next);
}
NOKPROBE_SYMBOL(kprobe_x86_emulate);

/* The arithmetic flags; inc and dec leave CF as it was. */
#define KP_ALU_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF)

/*
 * One ALU operation, run by the CPU itself on @d and @s so that the result
 * and every flag (also the ones the manuals leave undefined, like AF after
 * a logical operation) are what the probed instruction would have produced.
 * The flags come back in *@fl.
 */
#define KP_ALU_OP(op, sfx, d, s, fl)					\
	({								\
		asm volatile(op sfx " %[src], %[dst]\n\t"		\
			     "pushf\n\tpop %[flg]"			\
			     : [dst] "+r" (d), [flg] "=r" (fl)		\
			     : [src] "r" (s) : "cc");			\
	})

#define KP_ALU_OP1(op, sfx, d, fl)					\
	({								\
		asm volatile(op sfx " %[dst]\n\tpushf\n\tpop %[flg]"	\
			     : [dst] "+r" (d), [flg] "=r" (fl) : : "cc");	\
	})

#define KP_ALU_SWITCH(alu, sfx, d, s, fl)				\
	do {								\
		switch (alu) {						\
		case KPE_ADD:						\
			KP_ALU_OP("add", sfx, d, s, fl);		\
			break;						\
		case KPE_OR:						\
			KP_ALU_OP("or", sfx, d, s, fl);			\
			break;						\
		case KPE_AND:						\
			KP_ALU_OP("and", sfx, d, s, fl);		\
			break;						\
		case KPE_SUB:						\
			KP_ALU_OP("sub", sfx, d, s, fl);		\
			break;						\
		case KPE_XOR:						\
			KP_ALU_OP("xor", sfx, d, s, fl);		\
			break;						\
		case KPE_CMP:						\
			KP_ALU_OP("cmp", sfx, d, s, fl);		\
			break;						\
		case KPE_TEST:						\
			KP_ALU_OP("test", sfx, d, s, fl);		\
			break;						\
		case KPE_INC:						\
			KP_ALU_OP1("inc", sfx, d, fl);			\
			break;						\
		case KPE_DEC:						\
			KP_ALU_OP1("dec", sfx, d, fl);			\
			break;						\
		default:	/* KPE_MOV: no flags */			\
			d = s;						\
			fl = 0;						\
			break;						\
		}							\
	} while (0)

static nokprobe_inline u64 kp_alu(u8 alu, u8 size, u64 d, u64 s,
				  unsigned long *fl)
{
	u32 dl = d, sl = s;

	if (size == 8) {
		KP_ALU_SWITCH(alu, "q", d, s, *fl);
		return d;
	}
	KP_ALU_SWITCH(alu, "l", dl, sl, *fl);
	return dl;	/* a 32-bit result clears the upper half */
}

/*
 * The memory operands are RIP-relative, in data that decode.c made sure the
 * probed code's own image keeps mapped and writable while the code exists
 * (kp_emu_data_ok()).  The accesses still go through the exception table:
 * if one faults anyway, nothing has been changed yet, and the caller runs
 * the copy in the slot instead, which faults as the original would.  These
 * are inline asm, so no sanitizer call can sneak into the trap handler.
 */
static nokprobe_inline bool kp_emu_load(unsigned long addr, u8 size, u64 *v)
{
	u32 v32;

	if (size == 8) {
		__get_kernel_nofault(v, (u64 *)addr, u64, fault);
		return true;
	}
	__get_kernel_nofault(&v32, (u32 *)addr, u32, fault);
	*v = v32;
	return true;
fault:
	return false;
}

static nokprobe_inline bool kp_emu_store(unsigned long addr, u8 size, u64 v)
{
	u32 v32 = v;

	if (size == 8) {
		__put_kernel_nofault((u64 *)addr, &v, u64, fault);
		return true;
	}
	__put_kernel_nofault((u32 *)addr, &v32, u32, fault);
	return true;
fault:
	return false;
}

/*
 * Registers by pt_regs offset (decode.c only hands out valid ones).  A
 * 32-bit result reaches here already zero-extended, as the CPU writes it.
 */
static nokprobe_inline unsigned long kp_emu_get_reg(struct pt_regs *regs,
						    u8 reg)
{
	return *(unsigned long *)((u8 *)regs + reg);
}

static nokprobe_inline void kp_emu_set_reg(struct pt_regs *regs, u8 reg,
					   unsigned long v)
{
	*(unsigned long *)((u8 *)regs + reg) = v;
}

static nokprobe_inline bool kp_emu_read(struct pt_regs *regs,
					const struct kprobe_x86_emu *e,
					u8 opd, u8 reg, u64 *v)
{
	switch (opd) {
	case KPE_OPD_REG:
		*v = kp_emu_get_reg(regs, reg);
		return true;
	case KPE_OPD_IMM:
		*v = (s64)e->imm;
		return true;
	case KPE_OPD_MEM:
		return kp_emu_load(e->addr, e->size, v);
	}
	*v = 0;
	return true;
}

static nokprobe_inline unsigned long kp_emu_lea(struct pt_regs *regs,
						const struct kprobe_x86_emu *e)
{
	unsigned long ea = e->addr;

	if (e->base != KPE_NOREG)
		ea += kp_emu_get_reg(regs, e->base);
	if (e->index != KPE_NOREG)
		ea += kp_emu_get_reg(regs, e->index) << e->scale;
	return e->size == 8 ? ea : (u32)ea;
}


static nokprobe_inline bool kp_emu_alu(struct pt_regs *regs,
				       const struct kprobe_x86_emu *e)
{
	unsigned long fl = 0, mask = KP_ALU_FLAGS;
	u64 d = 0, s, r;

	if (!kp_emu_read(regs, e, e->src_opd, e->src, &s))
		return false;
	if (e->alu != KPE_MOV && !kp_emu_read(regs, e, e->dst_opd, e->dst, &d))
		return false;
	r = kp_alu(e->alu, e->size, d, s, &fl);

	/* Memory first: when the store faults, no register has changed. */
	if (e->alu != KPE_CMP && e->alu != KPE_TEST) {
		if (e->dst_opd == KPE_OPD_MEM) {
			if (!kp_emu_store(e->addr, e->size, r))
				return false;
		} else {
			kp_emu_set_reg(regs, e->dst, r);
		}
	}
	if (e->alu == KPE_MOV)
		return true;
	if (e->alu == KPE_INC || e->alu == KPE_DEC)
		mask &= ~X86_EFLAGS_CF;
	regs->flags = (regs->flags & ~mask) | (fl & mask);
	return true;
}

/**
 * kprobe_x86_emulate_step() - carry out a KPX_STEP instruction in the trap
 * @s: the site; s->arch.emu.kind is not KPE_NONE
 * @regs: the registers at the hit; on success, as after the instruction
 *
 * Leaves the registers (and memory) exactly as running the slot's copy and
 * kprobe_x86_step_fixup() would, without the second trap.  The decoding in
 * s->arch.emu is written before the site is armed and stays until after it
 * is gone, like the slot, so it cannot change under a CPU in here.
 *
 * Return: true when done; false when a memory access faulted and nothing
 * was changed, so that the caller runs the copy instead.
 */
bool kprobe_x86_emulate_step(struct kprobe_site *s, struct pt_regs *regs)
{
	const struct kprobe_x86_emu *e = &s->arch.emu;
	unsigned long v;

	switch (e->kind) {
	case KPE_PUSH:
		/* push %rsp pushes the value from before the push. */
		int3_emulate_push(regs, kp_emu_get_reg(regs, e->src));
		break;
	case KPE_POP:
		/* pop %rsp loads %rsp last, overriding the increment. */
		v = int3_emulate_pop(regs);
		kp_emu_set_reg(regs, e->dst, v);
		break;
	case KPE_LEA:
		kp_emu_set_reg(regs, e->dst, kp_emu_lea(regs, e));
		break;
	case KPE_ALU:
		if (!kp_emu_alu(regs, e))
			return false;
		break;
	default:
		return false;
	}
	int3_emulate_jmp(regs, kp_next_ip(s));
	return true;
}
NOKPROBE_SYMBOL(kprobe_x86_emulate_step);

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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Carrying out a probed A64 instruction on the registers saved by the
 * trap, for the instructions decode.c marks A64P_SIMULATED.  Shared by
 * kprobes (kernel registers) and uprobes (a task's user registers); the
 * instruction's address is regs->pc on entry, and regs->pc is where the
 * task goes on afterwards.
 */
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <asm/probes.h>
#include <asm/ptrace.h>

/* Register @r as an operand: 31 reads as zero or as sp. */
static nokprobe_inline u64 a64p_reg(const struct pt_regs *regs,
				    unsigned int r, bool sp)
{
	if (r == 31)
		return sp ? regs->sp : 0;
	return regs->regs[r];
}

/* Write register @r (31 is the zero register: nothing is written). */
static nokprobe_inline void a64p_set(struct pt_regs *regs, unsigned int r,
				     u64 val, bool wide)
{
	if (r != 31)
		regs->regs[r] = wide ? val : (u32)val;
}

/* Does condition @cond hold for the flags in @pstate? */
static nokprobe_inline bool a64p_cond(unsigned int cond, u64 pstate)
{
	bool n = pstate & PSR_N_BIT, z = pstate & PSR_Z_BIT;
	bool c = pstate & PSR_C_BIT, v = pstate & PSR_V_BIT;
	bool holds;

	switch (cond >> 1) {
	case 0:			/* eq */
		holds = z;
		break;
	case 1:			/* hs */
		holds = c;
		break;
	case 2:			/* mi */
		holds = n;
		break;
	case 3:			/* vs */
		holds = v;
		break;
	case 4:			/* hi */
		holds = c && !z;
		break;
	case 5:			/* ge */
		holds = n == v;
		break;
	case 6:			/* gt */
		holds = n == v && !z;
		break;
	default:		/* al, nv */
		return true;
	}
	return (cond & 1) ? !holds : holds;
}

/* ldr/ldrsw (literal): false when the load faults (user memory). */
static bool a64p_load_literal(const struct a64_probe_insn *d,
			      struct pt_regs *regs, unsigned long addr)
{
	u64 val;

	if (user_mode(regs)) {
		if (d->wide && !d->sign) {
			if (get_user(val, (u64 __user *)addr))
				return false;
		} else {
			u32 w;

			if (get_user(w, (u32 __user *)addr))
				return false;
			val = d->sign ? (u64)(s64)(s32)w : w;
		}
	} else if (d->wide && !d->sign) {
		val = *(u64 *)addr;	/* the kernel's own literal pool */
	} else {
		u32 w = *(u32 *)addr;

		val = d->sign ? (u64)(s64)(s32)w : w;
	}
	a64p_set(regs, d->rd, val, d->wide);
	return true;
}
NOKPROBE_SYMBOL(a64p_load_literal);

/**
 * a64_probe_simulate() - carry out a simulated instruction on @regs
 * @d: the instruction, as a64_probe_decode() described it
 * @regs: the registers at the probe; regs->pc is the instruction's address
 *
 * Return: false when a literal load from user memory faulted; @regs are
 * then unchanged.
 */
bool a64_probe_simulate(const struct a64_probe_insn *d, struct pt_regs *regs)
{
	unsigned long pc = regs->pc, next = pc + 4, target = pc + d->imm;
	u64 val;

	switch (d->op) {
	case A64P_B:
		if (d->link)
			regs->regs[30] = next;
		next = target;
		break;
	case A64P_BCOND:
		if (a64p_cond(d->cond, regs->pstate))
			next = target;
		break;
	case A64P_CBZ:
		val = a64p_reg(regs, d->rd, false);
		if (!d->wide)
			val = (u32)val;
		if ((val == 0) != d->neg)
			next = target;
		break;
	case A64P_TBZ:
		val = a64p_reg(regs, d->rd, false);
		if (!(val & BIT_ULL(d->bit)) != d->neg)
			next = target;
		break;
	case A64P_ADR:
		/* adrp counts in 4K pages, whatever PAGE_SIZE is. */
		a64p_set(regs, d->rd, (d->page ? pc & ~0xfffUL : pc) + d->imm,
			 true);
		break;
	case A64P_BR:
		/* blr x30: the target is read before the link is written. */
		next = a64p_reg(regs, d->rn, false);
		if (d->link)
			regs->regs[30] = pc + 4;
		break;
	case A64P_LDR_LIT:
		if (!a64p_load_literal(d, regs, target))
			return false;
		break;
	case A64P_MRS_PSTATE:
		a64p_set(regs, d->rd, regs->pstate & d->mask, true);
		break;
	case A64P_ADDSUB_IMM:
		val = a64p_reg(regs, d->rn, true);
		val = d->neg ? val - d->imm : val + d->imm;
		a64p_set(regs, d->rd, val, d->wide);
		break;
	case A64P_MOV_REG:
		a64p_set(regs, d->rd, a64p_reg(regs, d->rn, false), d->wide);
		break;
	case A64P_NOP:
	default:
		break;
	}
	regs->pc = next;
	return true;
}
NOKPROBE_SYMBOL(a64_probe_simulate);

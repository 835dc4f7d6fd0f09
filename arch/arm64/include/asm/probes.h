/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kprobes and uprobes on arm64 know of a probed A64 instruction
 * (arch/arm64/kernel/probes/decode.c): whether it may be probed at all,
 * and if so whether its copy can run out of line or it must be carried
 * out on the saved registers instead (simulate.c), because it reads or
 * writes the pc, or because it reads PSTATE bits the trap changes.
 */
#ifndef _ASM_ARM64_PROBES_H
#define _ASM_ARM64_PROBES_H

#include <linux/types.h>

struct pt_regs;

typedef u32 probe_opcode_t;

enum a64_probe_op {
	A64P_STEP,		/* position independent: run a copy */
	/* Carried out on pt_regs, never copied. */
	A64P_NOP,		/* nop, bti, prfm (literal) */
	A64P_B,			/* b, bl (.link) */
	A64P_BCOND,		/* b.cond, condition in .cond */
	A64P_CBZ,		/* cbz/cbnz (.neg), 32 or 64 bit (.wide) */
	A64P_TBZ,		/* tbz/tbnz (.neg), bit number in .bit */
	A64P_ADR,		/* adr, adrp (.page) */
	A64P_BR,		/* br, blr (.link), ret: to register .rn */
	A64P_LDR_LIT,		/* ldr w/x (.wide), ldrsw (.sign) literal */
	A64P_MRS_PSTATE,	/* mrs of daif or nzcv: bits in .mask */
	/*
	 * Position independent, but cheap to carry out on pt_regs: no copy
	 * to run, so one trap even when a post handler follows.
	 */
	A64P_ADDSUB_IMM,	/* add/sub (.neg) #.imm, no flags; rn 31 is sp */
	A64P_MOV_REG,		/* mov (orr with xzr) */
};

/**
 * struct a64_probe_insn - a decoded probed instruction
 * @op: enum a64_probe_op
 * @rd: destination register (rt of loads, tests and mrs)
 * @rn: source register
 * @cond: b.cond condition
 * @bit: tbz/tbnz bit
 * @wide: 64-bit operation
 * @link: the branch writes x30
 * @neg: cbnz, tbnz, sub
 * @page: adrp
 * @sign: ldrsw
 * @mask: the PSTATE bits an mrs reads
 * @imm: pc-relative offset of branches, adr and literals; add/sub's value
 */
struct a64_probe_insn {
	u8	op;
	u8	rd, rn;
	u8	cond, bit;
	bool	wide, link, neg, page, sign;
	u32	mask;
	s64	imm;
};

enum a64_probe_decoded {
	A64P_REFUSED,
	A64P_SIMULATED,		/* no copy is needed */
	A64P_STEPPED,		/* a copy runs out of line */
};

enum a64_probe_decoded a64_probe_decode(u32 insn, struct a64_probe_insn *d);
bool a64_probe_simulate(const struct a64_probe_insn *d, struct pt_regs *regs);

#endif /* _ASM_ARM64_PROBES_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction helpers that kprobes (arch/x86/kernel/kprobes/) and uprobes
 * (arch/x86/kernel/uprobes.c) share, so that both decode and emulate the
 * same things the same way.  All __always_inline: kprobes uses them in the
 * int3 handler, where no out-of-line function may be probed.
 */
#ifndef _ASM_X86_PROBE_INSN_H
#define _ASM_X86_PROBE_INSN_H

#include <linux/array_size.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/insn.h>
#include <asm/ptrace.h>

#define PROBE_PREFIX_OPSIZE	0x66
#define PROBE_PREFIX_ADDRSIZE	0x67
#define PROBE_PREFIX_LOCK	0xf0
#define PROBE_PREFIX_REPNE	0xf2
#define PROBE_PREFIX_REP	0xf3

/* Does @insn carry the legacy prefix @which? */
static __always_inline bool probe_insn_has_prefix(struct insn *insn, u8 which)
{
	insn_byte_t p;
	int i;

	for_each_insn_prefix(insn, i, p)
		if (p == which)
			return true;
	return false;
}

/*
 * The pt_regs offset of general purpose register @n (0 %rax .. 15 %r15;
 * a 32-bit kernel has the first 8, and no REX prefix to name the others).
 */
static __always_inline unsigned int probe_insn_gpr_offset(unsigned int n)
{
	static const u8 off[] = {
		offsetof(struct pt_regs, ax),	offsetof(struct pt_regs, cx),
		offsetof(struct pt_regs, dx),	offsetof(struct pt_regs, bx),
		offsetof(struct pt_regs, sp),	offsetof(struct pt_regs, bp),
		offsetof(struct pt_regs, si),	offsetof(struct pt_regs, di),
#ifdef CONFIG_X86_64
		offsetof(struct pt_regs, r8),	offsetof(struct pt_regs, r9),
		offsetof(struct pt_regs, r10),	offsetof(struct pt_regs, r11),
		offsetof(struct pt_regs, r12),	offsetof(struct pt_regs, r13),
		offsetof(struct pt_regs, r14),	offsetof(struct pt_regs, r15),
#endif
	};

	return off[n & (ARRAY_SIZE(off) - 1)];
}

/* The variants of 0xe0..0xe3, as opcode - 0xe0. */
enum { PROBE_LOOPNE, PROBE_LOOPE, PROBE_LOOP, PROBE_JRCXZ };

/* Is a loopne/loope/loop/jrcxz taken?  The loop forms count %rcx down. */
static __always_inline bool probe_insn_loop_taken(u8 variant,
						  struct pt_regs *regs)
{
	bool zf = regs->flags & X86_EFLAGS_ZF;

	if (variant == PROBE_JRCXZ)
		return !regs->cx;
	if (--regs->cx == 0)
		return false;
	if (variant == PROBE_LOOPNE)
		return !zf;
	if (variant == PROBE_LOOPE)
		return zf;
	return true;
}

#endif /* _ASM_X86_PROBE_INSN_H */

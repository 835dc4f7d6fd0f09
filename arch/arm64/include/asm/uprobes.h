/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arm64 side of uprobes: a BRK #UPROBES_BRK_IMM is the breakpoint, one
 * instruction is the out-of-line slot, and the probed instruction is
 * either simulated on the task's registers or stepped in the slot with the
 * hardware single step (arch/arm64/kernel/probes/uprobes.c).
 */
#ifndef _ASM_ARM64_UPROBES_H
#define _ASM_ARM64_UPROBES_H

#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/probes.h>

#define UPROBE_SWBP_INSN	cpu_to_le32(BRK64_OPCODE_UPROBES)
#define UPROBE_SWBP_INSN_SIZE	AARCH64_INSN_SIZE
#define UPROBE_XOL_SLOT_BYTES	AARCH64_INSN_SIZE

typedef __le32 uprobe_opcode_t;

struct arch_uprobe_task {
};

/*
 * @insn: the probed instruction, as the core read it from the file;
 * @ixol: what goes into the slot (the same instruction);
 * @d: how it is carried out when @simulate.
 */
struct arch_uprobe {
	union {
		__le32	insn;
		__le32	ixol;
	};
	struct a64_probe_insn d;
	bool	simulate;
};

int uprobe_brk_handler(struct pt_regs *regs, unsigned long esr);
#ifdef CONFIG_UPROBES
int uprobe_single_step_handler(struct pt_regs *regs, unsigned long esr);
#else
static inline int uprobe_single_step_handler(struct pt_regs *regs,
					     unsigned long esr)
{
	return DBG_HOOK_ERROR;
}
#endif

#endif /* _ASM_ARM64_UPROBES_H */

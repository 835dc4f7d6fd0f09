// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 side of boosted copies: the code of a copy in a stub entry
 * (kernel/events/uprobes_boost.c), and which hits may take it.
 */
#include <linux/jhash.h>
#include <linux/ptrace.h>
#include <linux/unaligned.h>
#include <linux/uprobes.h>
#include <asm/insn.h>

/*
 * A stepped instruction may instead run once from a stub entry near the
 * text, followed by a jump back to the next instruction: one trap per hit
 * instead of two.  Not while TF is set: a debugger's (or the program's)
 * step must stop right after the instruction, at its real address.  Not
 * for a call through memory (it would push the stub's address) nor an
 * indirect jump (no way back needed, nor wanted: stepping it costs the
 * same), nor popf (UPX_NO_BOOST), nor 32-bit code (a copy is made for
 * 64-bit code).  @regs is NULL for the question in general (debugfs).
 */
bool arch_uprobe_boostable(struct arch_uprobe *a, struct pt_regs *regs)
{
	if (a->ia32 || (regs && (regs->flags & X86_EFLAGS_TF)))
		return false;
	return (a->fixups & (UPX_FIX_IP | UPX_FIX_CALL | UPX_NO_BOOST)) ==
	       UPX_FIX_IP;
}

/*
 * The thread goes to its boosted copy: a trap there (the copy's own fault)
 * will show in thread.trap_nr, which no trap of ours sets.
 */
void arch_uprobe_boost_enter(struct arch_uprobe_task *autask)
{
	autask->saved_trap_nr = current->thread.trap_nr;
	current->thread.trap_nr = UPROBE_TRAP_NR;
}

/*
 * A signal finds the thread at the start of its boosted copy: did the copy
 * fault, or has it not run yet?  Then the trap number a signal frame shows
 * is put back as it was.
 */
bool arch_uprobe_boost_trapped(struct arch_uprobe_task *autask)
{
	if (current->thread.trap_nr != UPROBE_TRAP_NR)
		return true;
	current->thread.trap_nr = autask->saved_trap_nr;
	return false;
}

/*
 * What a signal frame gives back exactly, ip aside: the general registers
 * and sp (the flags come back filtered).
 */
unsigned long arch_uprobe_regs_hash(struct pt_regs *regs)
{
	return jhash2((u32 *)regs, offsetof(struct pt_regs, orig_ax) / sizeof(u32),
		      (u32)regs->sp);
}

/**
 * arch_uprobe_boost_code() - the code of a boosted copy
 * @a: the probe
 * @vaddr: the probed address in this process
 * @slot: where the copy goes, within a rel32 of @vaddr
 * @buf: UPROBE_STUB_BYTES to fill
 *
 * The instruction as in the file, a RIP-relative displacement moved so that
 * it reaches the same address from @slot, then jmp to the next instruction;
 * int3 after that.  Registers and flags are the program's throughout, and
 * nothing is written below its stack pointer (the red zone is safe).
 *
 * Return: 0, or -ERANGE when an operand or the way back is out of reach.
 */
int arch_uprobe_boost_code(struct arch_uprobe *a, unsigned long vaddr,
			   unsigned long slot, u8 *buf)
{
	unsigned long next = vaddr + a->len, back = slot + a->len;
	struct insn insn;

	if (insn_decode(&insn, a->insn, MAX_UINSN_BYTES, INSN_MODE_64) ||
	    insn.length != a->len)
		return -EINVAL;
	memset(buf, UPROBE_SWBP_INSN, UPROBE_STUB_BYTES);
	memcpy(buf, a->insn, a->len);
	if (insn_rip_relative(&insn)) {
		long disp = insn.displacement.value + (long)(vaddr - slot);

		if (disp != (s32)disp)
			return -ERANGE;
		put_unaligned_le32((s32)disp, buf + insn_offset_displacement(&insn));
	}
	if (!arch_uprobe_stub_reaches(back, next))
		return -ERANGE;
	arch_uprobe_jmp_insn(buf + a->len, back, next);
	return 0;
}

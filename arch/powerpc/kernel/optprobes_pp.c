// SPDX-License-Identifier: GPL-2.0-only
/*
 * powerpc's detour buffers (optprobes.c, unmodified) on the per-probe
 * layer of kprobes (kernel/kprobes_per_probe_opt.c).  Its template takes
 * two things for granted that do not hold under preemption and nesting;
 * arch_pp_opt_adjust() fixes the one it can in each buffer it prepares
 * and keeps the breakpoint where it cannot.
 */
#include <linux/kprobes.h>
#include <linux/string.h>
#include <asm/code-patching.h>
#include <asm/inst.h>
#include <asm/ppc-opcode.h>
#include <asm/sstep.h>

#ifdef CONFIG_PPC64
/*
 * The buffer loads every register it saved back before it jumps home,
 * r13 (the CPU's paca) among them, and its callback ends with
 * preempt_enable().  A task preempted there and moved to another CPU went
 * back into the probed function with the first CPU's paca, and two CPUs
 * then shared one (each changing the other's current task and preempt
 * count: oopses and spinlock deadlocks).  r13 is the same for a CPU from
 * boot on, so the buffer's load of it is made a nop: the task keeps the
 * paca of the CPU it runs on.
 */
static int pp_opt_keep_r13(struct optimized_kprobe *op)
{
	kprobe_opcode_t *buf = op->optinsn.insn;
	long i, from = optprobe_template_call_emulate - optprobe_template_entry;
	long to = optprobe_template_ret - optprobe_template_entry;
	int found = 0;

	for (i = from; i < to; i++) {
		/* ld r13,d(r1): opcode 58, RT 13, RA 1, DS form, XO 0 */
		if ((buf[i] & 0xffff0003) != 0xe9a10000)
			continue;
		if (patch_instruction(buf + i, ppc_inst(PPC_RAW_NOP())))
			return -EFAULT;
		found++;
	}
	return found == 1 ? 0 : -EINVAL;
}
#else
static int pp_opt_keep_r13(struct optimized_kprobe *op)
{
	return 0;
}
#endif

/* @insn emulated at @nip on registers that are all zero. */
static bool pp_opt_emulate(struct pt_regs *regs, ppc_inst_t insn,
			   unsigned long nip)
{
	struct instruction_op op;

	memset(regs, 0, sizeof(*regs));
	regs->msr = MSR_KERNEL;
	regs->nip = nip;
	if (analyse_instr(&op, regs, insn) != 1)
		return false;
	emulate_update_regs(regs, &op);
	return true;
}

/*
 * The buffer's pt_regs has no address of the instruction unless the
 * callback runs the handlers: on a hit while another probe runs (a
 * handler's own printing reaches a probed vsnprintf()) or while the site
 * is disabled, optimized_callback() leaves regs->nip as the stack had it,
 * and emulate_step() then works from that.  A "bl" there set the link
 * register to a random address (make stress: vsnprintf's "bl
 * _savegpr0_24" came back to _savegpr0_24 itself, a loop on both CPUs).
 * So an instruction whose effect on any register but the pc depends on
 * its own address (bl, bla, addpcis) is not optimized: the trap's pt_regs
 * always has the address.  The pc itself does not matter, the buffer
 * jumps back to where the instruction goes from its real address.
 */
static bool pp_opt_reads_nip(struct optimized_kprobe *op)
{
	ppc_inst_t insn = ppc_inst_read(op->kp.ainsn.insn);
	unsigned long addr = (unsigned long)op->kp.addr;
	struct pt_regs here, there;

	if (!pp_opt_emulate(&here, insn, addr) ||
	    !pp_opt_emulate(&there, insn, addr + 0x100))
		return true;
	there.nip = here.nip;
	return memcmp(&here, &there, sizeof(here)) != 0;
}

/**
 * arch_pp_opt_adjust() - fit a prepared detour buffer to the per-probe layer
 * @op: the site's optimized_kprobe, its buffer just prepared
 *
 * Return: 0, or -EINVAL when the site must keep its breakpoint (then the
 * caller removes the buffer).
 */
int arch_pp_opt_adjust(struct optimized_kprobe *op)
{
	if (pp_opt_reads_nip(op))
		return -EINVAL;
	return pp_opt_keep_r13(op);
}

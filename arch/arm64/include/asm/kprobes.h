/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arm64 side of kprobes: the opcode type, the per-site data the hit path
 * needs and the architecture's part of the per-CPU stepping state.
 *
 * A probe site is armed by replacing its instruction with a BRK.  On a hit
 * the instruction is either simulated on the saved registers (everything
 * that reads or writes the pc, and a few cheap others: asm/probes.h), or a
 * copy of it runs from an out-of-line slot with interrupts masked, followed
 * by a branch to code that finishes the probe and returns as a trap would
 * (or, when the slot is out of that branch's reach, by a second BRK).
 * When the slot is within a branch's reach of the probed code it also
 * holds a boosted copy followed by a "b" back: with no post handler to
 * run, the CPU leaves the trap straight for that copy.
 */
#ifndef _ASM_ARM64_KPROBES_H
#define _ASM_ARM64_KPROBES_H

#include <asm-generic/kprobes.h>
#include <asm/debug-monitors.h>

#ifdef CONFIG_KPROBES
#include <linux/types.h>
#include <linux/ptrace.h>
#include <linux/percpu.h>
#include <asm/insn.h>
#include <asm/probes.h>

/* The generic core allocates out-of-line slots for us. */
#define __ARCH_WANT_KPROBES_INSN_SLOT

typedef u32 kprobe_opcode_t;

/* What arming writes over the probed instruction. */
#define KPROBE_BREAKPOINT_INSN	BRK64_OPCODE_KPROBES

/*
 * A slot, in instructions: the stepped copy and the BRK behind it, the
 * boosted copy and the branch back, and the stepped copy again with a
 * branch to kp_a64_step_tail() behind it, which finishes the step
 * without a second trap (step_tail.S).
 */
#define KPROBE_SLOT_STEP	0
#define KPROBE_SLOT_STEP_BRK	1
#define KPROBE_SLOT_BOOST	2
#define KPROBE_SLOT_BOOST_B	3
#define KPROBE_SLOT_TAIL	4
#define KPROBE_SLOT_TAIL_B	5
#define KPROBE_SLOT_INSNS	6
#define KPROBE_INSN_SLOT_SIZE	(KPROBE_SLOT_INSNS * sizeof(kprobe_opcode_t))

/*
 * Jump optimization replaces the probed instruction alone with a "b" to a
 * detour buffer (arch/arm64/kernel/probes/opt.c), which holds the
 * register-saving code, a copy of the instruction and a branch back.
 */
#define KPROBE_OPT_MAX_LEN		AARCH64_INSN_SIZE
#define KPROBE_OPTINSN_SLOT_SIZE	256

/* Slots are written through the text patching code, which syncs caches. */
#define flush_insn_slot(p)	((void)(p))

struct kprobe;
struct kprobe_site;
struct pt_regs;

/* Per probe site, filled by arch_prepare_kprobe_site(). */
struct arch_kprobe_site {
	struct a64_probe_insn	insn;	/* how the instruction is carried out */
	bool			simulate;	/* no slot: simulate.c does it */
	bool			tail;	/* the slot's copy ends in the tail */
	kprobe_opcode_t		*slot;	/* copies, or NULL */
	kprobe_opcode_t		*boost;	/* the boosted copy in it, or NULL */
	kprobe_opcode_t		opcode;	/* the instruction the BRK replaces */
#ifdef CONFIG_OPTPROBES
	kprobe_opcode_t		*detour;	/* detour buffer, or NULL */
#endif
};

/*
 * A hit's per-CPU accesses through one read of this CPU's offset
 * (<linux/kprobes.h>): a this-CPU access reads tpidr_el1 again after any
 * store, through an out-of-line call in a size-optimised build.
 */
#define kprobe_cpu_off()		__my_cpu_offset
#define kprobe_cpu_var(var, off)	(*SHIFT_PERCPU_PTR(&(var), (off)))
#define kprobe_cpu_read(var, off)	kprobe_cpu_var(var, off)
#define kprobe_cpu_write(var, off, val)	(kprobe_cpu_var(var, off) = (val))
#define kprobe_cpu_inc(ptr, off)	((*SHIFT_PERCPU_PTR(ptr, (off)))++)
#define kprobe_cpu_ptr(var, off)	SHIFT_PERCPU_PTR(&(var), (off))

/* Of a copy stepped out of line (struct kprobe_step): DAIF at the hit. */
struct arch_kprobe_step {
	unsigned long		pstate;	/* pstate at the hit */
};

int kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr);
void __kretprobe_trampoline(void);

#endif /* CONFIG_KPROBES */

/* The BRK hooks that debug-monitors.c calls. */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr);
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr);

/*
 * Return probes come back through a trampoline that saves the registers
 * itself (kretprobe_trampoline.S), never through a BRK: a
 * KRETPROBES_BRK_IMM break is nobody's.
 */
static inline int kretprobe_brk_handler(struct pt_regs *regs,
					unsigned long esr)
{
	return DBG_HOOK_ERROR;
}

#endif /* _ASM_ARM64_KPROBES_H */

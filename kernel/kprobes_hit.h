/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The breakpoint hit of a site-native architecture (HAVE_KPROBE_SITES),
 * written once: what a hit does between the architecture's trap entry and
 * its return, and how a fault in the middle of it is undone.  Included by
 * the one architecture file that handles the trap, after it has defined
 * the hooks declared below; everything here is that file's own (static).
 *
 * A hit goes through these per-CPU states (kprobe_ctlblk.kprobe_status):
 *
 *   HIT_ACTIVE  the pre handlers run (kprobe_site_pre(), kprobe_pre_one_at());
 *   HIT_SS      the probed instruction is carried out: emulated on the
 *               saved registers by the trap (arch_kprobe_emulate()), or its
 *               copy runs out of line (arch_kprobe_step()) with interrupts
 *               masked until the architecture's end of the copy calls
 *               kp_step_done();
 *   HIT_SSDONE  the post handlers run (kprobe_site_post());
 *
 * and current_kprobe is cleared at the end.  With no post handler to run,
 * a hit may instead leave the trap for a copy of the instruction that
 * goes back to the probed code by itself (arch_kprobe_boost_copy()).
 *
 * A probe hit while this CPU is in any of those states only counts as
 * missed and has its instruction carried out in the REENTER state, with
 * the interrupted state parked in kprobe_ctlblk.prev: one level of
 * nesting, which is all that can happen, since nothing a re-entered probe
 * does can hit a probe again (when it does anyway, see
 * kp_reenter_nested()).
 *
 * The helpers run in the trap, with interrupts masked: nothing here may
 * sleep or be probed.  The small ones are always inlined into the trap
 * handler; the others are NOKPROBE_SYMBOL() functions of the including
 * file.
 */
#ifndef _KERNEL_KPROBES_HIT_H
#define _KERNEL_KPROBES_HIT_H

#include <linux/kprobes.h>
#include <linux/ptrace.h>

#include "kprobes_internal.h"

/*
 * The architecture's hooks, defined by the including file.  Each is
 * called in the trap, with interrupts masked, and must be inlinable and
 * free of anything that can be probed.
 */

/**
 * arch_kprobe_set_pc() - send the trap's return to @pc
 * @regs: the registers the trap returns with
 * @pc: where it is to return: a copy, or the probed code
 *
 * Also clears what must not follow the trap to code that was not branched
 * to (arm64: BTYPE).
 */
static __always_inline void arch_kprobe_set_pc(struct pt_regs *regs,
					       unsigned long pc);

/**
 * arch_kprobe_emulate() - carry the probed instruction out in the trap
 * @s: the site hit
 * @regs: the registers at the hit; left as after the instruction, the
 *	program counter included
 *
 * Return: false, having changed nothing, when the instruction cannot be
 * carried out on @regs (it is then stepped in its copy).
 */
static __always_inline bool arch_kprobe_emulate(struct kprobe_site *s,
						struct pt_regs *regs);

/**
 * arch_kprobe_boost_copy() - a copy that goes back to the probed code itself
 * @s: the site hit
 *
 * A copy of the instruction that runs as ordinary code, interrupts as the
 * probed code had them, and jumps back behind it: a boosted copy, or one
 * that must be used instead of the probed text (x86: the detour buffer's
 * copy once the site is queued for a jump).
 *
 * Return: the copy, or NULL when the site has none.
 */
static __always_inline kprobe_opcode_t *
arch_kprobe_boost_copy(struct kprobe_site *s);

/**
 * arch_kprobe_step_copy() - where the copy stepped out of line starts
 * @s: the site hit
 *
 * The copy is followed by whatever brings the CPU back to kp_step_done():
 * a breakpoint, or a branch to code that calls it.  A fault at this
 * address is the probed instruction's (kp_fault_unwind()).
 */
static __always_inline kprobe_opcode_t *
arch_kprobe_step_copy(struct kprobe_site *s);

/**
 * arch_kprobe_step() - mask interrupts for a step out of line
 * @regs: the registers the trap returns with
 * @st: where to keep what arch_kprobe_step_done() and
 *	arch_kprobe_fault_fixup() give back
 *
 * Nothing may run on this CPU from the trap's return until the copy is
 * done: the per-CPU state says a copy runs, and the task must not move.
 */
static __always_inline void arch_kprobe_step(struct pt_regs *regs,
					     struct arch_kprobe_step *st);

/**
 * arch_kprobe_step_done() - the registers after a stepped copy
 * @s: the site whose copy ran
 * @regs: the registers the copy left
 * @st: what arch_kprobe_step() kept
 *
 * Puts back the interrupt mask of the hit, fixes up what the copy could
 * not do in place of the probed instruction, and sets the program counter
 * to where the probed code goes on.
 */
static __always_inline void
arch_kprobe_step_done(struct kprobe_site *s, struct pt_regs *regs,
		      const struct arch_kprobe_step *st);

/**
 * arch_kprobe_fault_fixup() - make a fault in the copy the probed code's
 * @s: the site whose copy faulted
 * @regs: the registers of the fault
 * @st: what arch_kprobe_step() kept
 *
 * Sets the program counter to the probed instruction and the interrupt
 * mask to the one of the hit, so that exception fixups and oops reports
 * see the real code.
 */
static __always_inline void
arch_kprobe_fault_fixup(struct kprobe_site *s, struct pt_regs *regs,
			const struct arch_kprobe_step *st);

/* Park the interrupted probe while a re-entered one is carried out. */
static __always_inline void kp_save_prev(struct kprobe_ctlblk *kcb)
{
	kcb->prev.kp = kprobe_running();
	kcb->prev.status = kcb->kprobe_status;
	kcb->prev.step = kcb->step;
}

static __always_inline void kp_restore_prev(struct kprobe_ctlblk *kcb)
{
	__this_cpu_write(current_kprobe, kcb->prev.kp);
	kcb->kprobe_status = kcb->prev.status;
	kcb->step = kcb->prev.step;
}

/*
 * The site whose copy this CPU runs out of line, or NULL.  Only a stepped
 * hit sets step.site, and its end clears it.
 */
static __always_inline struct kprobe_site *
kp_stepping(struct kprobe_ctlblk *kcb)
{
	struct kprobe_site *s = kcb->step.site;

	if (!s || !(kcb->kprobe_status & (KPROBE_HIT_SS | KPROBE_REENTER)))
		return NULL;
	return s;
}

/*
 * The probed instruction has been carried out: the post handlers of the
 * probes whose pre handler ran (kcb->step.probe), then idle; or back to the
 * interrupted probe if @reenter.  Inline: @reenter is a constant in most
 * callers.
 */
static __always_inline void kp_finish(struct kprobe_site *s,
				      struct pt_regs *regs,
				      struct kprobe_ctlblk *kcb, bool reenter)
{
	struct kprobe *p = kcb->step.probe;

	if (reenter) {
		kp_restore_prev(kcb);
		return;
	}
	if (kprobe_site_owes_post(s, p)) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		kprobe_site_post_owed(s, p, regs);
	}
	__this_cpu_write(current_kprobe, NULL);
}

/*
 * Send the CPU to the copy out of line.  current_kprobe becomes
 * kprobe_busy, which belongs to no site and so cannot go away under the
 * copy: non-NULL is what routes faults to kp_fault_unwind() and hits to
 * re-entry meanwhile.
 */
static void kp_step(struct kprobe_site *s, struct pt_regs *regs,
		    struct kprobe_ctlblk *kcb)
{
	kcb->step.site = s;
	arch_kprobe_step(regs, &kcb->step.arch);
	__this_cpu_write(current_kprobe, &kprobe_busy);
	arch_kprobe_set_pc(regs, (unsigned long)arch_kprobe_step_copy(s));
}
NOKPROBE_SYMBOL(kp_step);

/*
 * The copy of @s has run, and the architecture's end of it caught the CPU:
 * back to the probed code, and finish the probe.
 */
static void kp_step_done(struct kprobe_site *s, struct pt_regs *regs,
			 struct kprobe_ctlblk *kcb)
{
	kcb->step.site = NULL;
	arch_kprobe_step_done(s, regs, &kcb->step.arch);
	kp_finish(s, regs, kcb, kcb->kprobe_status == KPROBE_REENTER);
}
NOKPROBE_SYMBOL(kp_step_done);

/*
 * Carry out the probed instruction in state HIT_SS, or REENTER if
 * @reenter: emulate it and finish now (one trap instead of two), or step
 * the copy.
 */
static __always_inline void kp_execute(struct kprobe_site *s,
				       struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb, bool reenter)
{
	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	if (arch_kprobe_emulate(s, regs))
		kp_finish(s, regs, kcb, reenter);
	else
		kp_step(s, regs, kcb);
}

/*
 * With nothing left to do after the instruction, leave the trap for a copy
 * that goes back by itself.  Return: false when the site has none.
 */
static __always_inline bool kp_leave_by_copy(struct kprobe_site *s,
					     struct pt_regs *regs,
					     unsigned long off)
{
	kprobe_opcode_t *copy = arch_kprobe_boost_copy(s);

	if (!copy)
		return false;
	kprobe_cpu_write(current_kprobe, off, NULL);
	arch_kprobe_set_pc(regs, (unsigned long)copy);
	return true;
}

/* A hit on a site with several probes, or a disabled one, or none left. */
static void kp_hit_many(struct kprobe_site *s, struct pt_regs *regs,
			struct kprobe_ctlblk *kcb)
{
	kcb->step.probe = NULL;		/* the post handlers: the list's */
	if (kprobe_site_pre(s, regs)) {
		/* A handler moved the pc: no instruction, no post handler. */
		__this_cpu_write(current_kprobe, NULL);
		return;
	}
	if (!kprobe_site_has_post(s) &&
	    kp_leave_by_copy(s, regs, kprobe_cpu_off()))
		return;
	kp_execute(s, regs, kcb, false);
}
NOKPROBE_SYMBOL(kp_hit_many);

/*
 * Carry out the instruction of a hit that ran @p alone, in state HIT_SS.
 * Return: true when it was emulated; else its copy is stepped, and
 * kp_step_done() runs @p's post handler, as kcb->step.probe says.
 */
static __always_inline bool kp_execute_one(struct kprobe_site *s,
					   struct kprobe *p,
					   struct pt_regs *regs,
					   struct kprobe_ctlblk *kcb)
{
	kcb->kprobe_status = KPROBE_HIT_SS;
	if (likely(arch_kprobe_emulate(s, regs)))
		return true;
	kcb->step.probe = p;
	kp_step(s, regs, kcb);
	return false;
}

/*
 * The usual hit: one enabled probe, @p.  Its post handler is the one it
 * had at the pre handler's time, run after an emulated instruction without
 * looking at the site again: a probe registered meanwhile has not seen the
 * pre either, and @p cannot go away before the trap ends (unregistering
 * waits for a grace period, which this CPU holds off with interrupts
 * masked).  With a post handler and without, the paths are written apart:
 * each tests it once.
 */
static __always_inline void kp_hit_one(struct kprobe_site *s,
				       struct kprobe *p, struct pt_regs *regs,
				       unsigned long off)
{
	struct kprobe_ctlblk *kcb = kprobe_cpu_ptr(kprobe_ctlblk, off);
	kprobe_post_handler_t post;

	if (kprobe_pre_one_at(p, regs, off))
		goto idle;	/* the pc moved: no instruction, no post */
	post = p->post_handler;
	if (post) {
		if (!kp_execute_one(s, p, regs, kcb))
			return;
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		post(p, regs, 0);
	} else if (kp_leave_by_copy(s, regs, off) ||
		   !kp_execute_one(s, p, regs, kcb)) {
		return;
	}
idle:
	kprobe_cpu_write(current_kprobe, off, NULL);
}

/**
 * kp_hit() - a hit on @s while this CPU runs no probe
 * @s: the site, found by kp_site_find()
 * @regs: the registers at the hit
 * @off: kprobe_cpu_off()
 */
static __always_inline void kp_hit(struct kprobe_site *s,
				   struct pt_regs *regs, unsigned long off)
{
	struct kprobe *p = kprobe_site_fast(s);

	if (likely(p))
		kp_hit_one(s, p, regs, off);
	else
		kp_hit_many(s, regs, kprobe_cpu_ptr(kprobe_ctlblk, off));
}

/*
 * A probe hit while a re-entered one is carried out.  Carrying out a
 * re-entered probe calls nothing that may be probed, so this means the
 * kernel's protection of its own hit path is broken.  The per-CPU state
 * holds the outer probes', so the instruction is carried out only where
 * that needs none of it: emulated, or in a copy that goes back by itself.
 * Return: false when neither can be done; the breakpoint is then reported
 * as not ours, and the kernel's breakpoint path oopses.
 */
static bool kp_reenter_nested(struct kprobe_site *s, struct pt_regs *regs)
{
	kprobe_opcode_t *copy;

	WARN_ONCE(1, "kprobes: probe at %pS hit while a re-entered probe was being carried out on this CPU\n",
		  s->addr);
	if (arch_kprobe_emulate(s, regs))
		return true;
	copy = arch_kprobe_boost_copy(s);
	if (!copy)
		return false;
	arch_kprobe_set_pc(regs, (unsigned long)copy);
	return true;
}
NOKPROBE_SYMBOL(kp_reenter_nested);

/*
 * A hit on @s while this CPU runs a probe already: missed, and the
 * instruction carried out.  Return: whether the hit was dealt with (see
 * kp_reenter_nested()).
 */
static bool kp_reenter(struct kprobe_site *s, struct pt_regs *regs,
		       struct kprobe_ctlblk *kcb)
{
	kprobe_site_missed(s);
	if (kcb->kprobe_status == KPROBE_REENTER)
		return kp_reenter_nested(s, regs);

	kp_save_prev(kcb);
	kp_execute(s, regs, kcb, true);
	return true;
}
NOKPROBE_SYMBOL(kp_reenter);

/*
 * For the architecture's fault handler: a fault at the start of the copy
 * this CPU steps is the probed instruction's.  Make it look so
 * (arch_kprobe_fault_fixup()) and drop the probe, back to idle or to the
 * interrupted probe of a re-entered one: when the fault is resolved or
 * fixed up and the code resumes at the probe, the probe simply fires
 * again.  The state is unwound before the fault is handled, so that an
 * interrupt meanwhile finds this CPU as the trap found it.  Faults in
 * handlers, or in an NMI meanwhile, are not ours to handle.
 *
 * Return: whether the fault was the copy's.
 */
static __always_inline bool kp_fault_unwind(struct pt_regs *regs,
					    struct kprobe_ctlblk *kcb)
{
	struct kprobe_site *s = kp_stepping(kcb);

	if (!s || instruction_pointer(regs) !=
		  (unsigned long)arch_kprobe_step_copy(s))
		return false;

	arch_kprobe_fault_fixup(s, regs, &kcb->step.arch);
	if (kcb->kprobe_status == KPROBE_REENTER) {
		kp_restore_prev(kcb);
	} else {
		kcb->step.site = NULL;
		__this_cpu_write(current_kprobe, NULL);
	}
	return true;
}

#endif /* _KERNEL_KPROBES_HIT_H */

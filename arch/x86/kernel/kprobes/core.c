// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86 kprobes (both widths): what happens when a probe's int3 fires, arming and
 * disarming, faults in the middle of a probe, and the x86 blacklist.
 *
 * A hit goes through these per-CPU states (kprobe_ctlblk.kprobe_status):
 *
 *   HIT_ACTIVE  the pre handlers run (kprobe_site_pre());
 *   HIT_SS      the probed instruction is carried out: emulated on the spot
 *               (branches and the like always, plain register, stack and
 *               RIP-relative data instructions when decode.c could describe
 *               them), or its copy runs from the site's slot with interrupts
 *               off until the int3 behind the copy traps back here;
 *   HIT_SSDONE  the post handlers run (kprobe_site_post());
 *
 * and current_kprobe is cleared at the end.  A probe hit while this CPU is
 * in any of those states only counts as missed and has its instruction
 * carried out in the REENTER state, with the interrupted state parked in
 * kprobe_ctlblk.prev: one level of nesting, which is all that can happen,
 * since nothing a re-entered probe does can hit a probe again (when it does
 * anyway, see kp_reenter_nested()).
 */
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/uprobes.h>
#include <asm/extable.h>
#include <asm/sections.h>
#include <asm/switch_to.h>
#include <asm/text-patching.h>
#include <asm/traps.h>

#include "internal.h"
/* kernel/kprobes_internal.h, by the include path this file gets (Makefile) */
#include <kprobes_internal.h>

/*
 * current_kprobe while a copy runs out of line.  Any non-NULL value makes
 * the generic kprobe_running() true, which is what routes faults to
 * kprobe_fault_handler() and nested hits to re-entry; this one belongs to
 * no site, so it cannot go away under us.
 */
static struct kprobe kp_copy_running;

static nokprobe_inline void kp_save_prev(struct kprobe_ctlblk *kcb)
{
	kcb->prev.kp = kprobe_running();
	kcb->prev.status = kcb->kprobe_status;
	kcb->prev.step = kcb->step;
}

static nokprobe_inline void kp_restore_prev(struct kprobe_ctlblk *kcb)
{
	__this_cpu_write(current_kprobe, kcb->prev.kp);
	kcb->kprobe_status = kcb->prev.status;
	kcb->step = kcb->prev.step;
}

/*
 * The probed instruction has been carried out: post handlers, then idle.
 * Inline, like kp_execute(): @reenter is a constant in the callers of the
 * hit path, and a hit with a post handler goes through both.
 */
static nokprobe_inline void kp_finish(struct kprobe_site *s,
				      struct pt_regs *regs,
				      struct kprobe_ctlblk *kcb, bool reenter)
{
	struct kprobe *p = kcb->step.probe;

	if (reenter) {
		kp_restore_prev(kcb);
		return;
	}
	/* Only the probes whose pre handler ran (kcb->step.probe). */
	if (kprobe_site_owes_post(s, p)) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		kprobe_site_post_owed(s, p, regs);
	}
	__this_cpu_write(current_kprobe, NULL);
}

/* Send the CPU to the copy in the slot; kp_copy_returned() takes over. */
static void kp_step(struct kprobe_site *s, struct pt_regs *regs,
		    struct kprobe_ctlblk *kcb)
{
	kcb->step.site = s;
	kcb->step.flags = regs->flags;
	__this_cpu_write(current_kprobe, &kp_copy_running);
	/* No interrupt, and so no preemption, before the copy traps back. */
	regs->flags &= ~X86_EFLAGS_IF;
	regs->ip = (unsigned long)s->arch.slot;
}
NOKPROBE_SYMBOL(kp_step);

/*
 * Carry out the probed instruction in state HIT_SS, or REENTER if
 * @reenter: emulate it and finish now (one trap instead of two), or step
 * the copy.
 */
static nokprobe_inline void kp_execute(struct kprobe_site *s,
				       struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb, bool reenter)
{
	kprobe_x86_emulate_t *emulate = s->arch.emulate;

	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	if (emulate && emulate(s, regs))
		kp_finish(s, regs, kcb, reenter);
	else
		kp_step(s, regs, kcb);
}

/* Is the int3 at @addr the one behind the copy this CPU is running? */
static bool kp_copy_returned(unsigned long addr, struct pt_regs *regs,
			     struct kprobe_ctlblk *kcb)
{
	struct kprobe_site *s = kcb->step.site;

	if (!s || !(kcb->kprobe_status & (KPROBE_HIT_SS | KPROBE_REENTER)))
		return false;
	if (addr != (unsigned long)s->arch.slot + s->arch.len)
		return false;

	/* Only a stepping hit sets step.site: the emulated ones need none. */
	kcb->step.site = NULL;
	kprobe_x86_step_fixup(s, regs, kcb->step.flags);
	kp_finish(s, regs, kcb, kcb->kprobe_status == KPROBE_REENTER);
	return true;
}
NOKPROBE_SYMBOL(kp_copy_returned);

/*
 * A copy that runs as ordinary code and jumps back by itself: the region's
 * copy in the detour buffer once the site is queued for optimization (no
 * task may enter the region in place from then on), else the boosted
 * copy.  NULL when the instruction needs the trap to finish it.
 */
static nokprobe_inline kprobe_opcode_t *
kp_jumping_copy(struct kprobe_site *s)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(s->opt) != KPROBE_OPT_NONE)
		return kp_opt_region_copy(s);
#endif
	return s->arch.boost ? s->arch.slot + KPROBE_BOOST_OFF : NULL;
}

/*
 * With nothing left to do after the instruction, leave the trap for a copy
 * that jumps back by itself.  Return: false when the site has none.
 */
static nokprobe_inline bool kp_leave_by_copy(struct kprobe_site *s,
					     struct pt_regs *regs)
{
	kprobe_opcode_t *copy = kp_jumping_copy(s);

	if (!copy)
		return false;
	__this_cpu_write(current_kprobe, NULL);
	regs->ip = (unsigned long)copy;
	return true;
}

/* A hit on a site with several probes, or a disabled one, or none left. */
static void kp_hit_many(struct kprobe_site *s, struct pt_regs *regs,
			struct kprobe_ctlblk *kcb)
{
	kcb->step.probe = NULL;		/* the post handlers: the list's */
	if (kprobe_site_pre(s, regs)) {
		/* A handler moved regs->ip: no instruction, no post handler. */
		__this_cpu_write(current_kprobe, NULL);
		return;
	}
	if (!kprobe_site_has_post(s) && kp_leave_by_copy(s, regs))
		return;
	kp_execute(s, regs, kcb, false);
}
NOKPROBE_SYMBOL(kp_hit_many);

/*
 * The usual hit: one enabled probe, @p.  Its post handler is the one it
 * had at the pre handler's time, run after an emulated instruction without
 * looking at the site again: a probe registered meanwhile has not seen the
 * pre either, and @p cannot go away before the trap ends (unregistering
 * waits for a grace period, which this CPU holds off with interrupts off).
 * An instruction finished by kp_finish() (stepped, or emulated without a
 * post handler) gets @p's post handler alone there, as kcb->step.probe
 * says.
 */
static nokprobe_inline void kp_hit_one(struct kprobe_site *s,
				       struct kprobe *p, struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb)
{
	kprobe_x86_emulate_t *emulate;
	kprobe_post_handler_t post;

	if (kprobe_pre_one(p, regs))
		goto idle;	/* regs->ip moved: no instruction, no post */
	post = p->post_handler;
	if (!post) {
		if (!kp_leave_by_copy(s, regs)) {
			kcb->step.probe = p;
			kp_execute(s, regs, kcb, false);
		}
		return;
	}
	kcb->kprobe_status = KPROBE_HIT_SS;
	emulate = s->arch.emulate;
	if (unlikely(!emulate || !emulate(s, regs))) {
		kcb->step.probe = p;
		kp_step(s, regs, kcb);
		return;
	}
	kcb->kprobe_status = KPROBE_HIT_SSDONE;
	post(p, regs, 0);
idle:
	__this_cpu_write(current_kprobe, NULL);
}

/*
 * A probe hit while a re-entered one is carried out.  Carrying out a
 * re-entered probe calls nothing that may be probed, so this means the
 * kernel's protection of its own hit path is broken.  The per-CPU state
 * holds the outer probes', so the instruction is carried out only where
 * that needs none of it: emulated, or in a copy that jumps back by itself.
 * Return: false when neither can be done; the int3 is then reported as not
 * ours, and the kernel's int3 path oopses this task.
 */
static bool kp_reenter_nested(struct kprobe_site *s, struct pt_regs *regs)
{
	kprobe_opcode_t *copy;

	WARN_ONCE(1, "kprobes: probe at %pS hit while a re-entered probe was being carried out on this CPU\n",
		  s->addr);
	if (s->arch.emulate && s->arch.emulate(s, regs))
		return true;
	copy = kp_jumping_copy(s);
	if (!copy)
		return false;
	regs->ip = (unsigned long)copy;
	return true;
}
NOKPROBE_SYMBOL(kp_reenter_nested);

/* Return: whether the hit was dealt with (see kp_reenter_nested()). */
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
 * An int3 at @addr that is not in the table: another subsystem's, or ours
 * but removed between this CPU's trap and the lookup, in which case the
 * original instruction is back: run it.
 */
static int kp_int3_unknown(unsigned long addr, struct pt_regs *regs)
{
	if (*(kprobe_opcode_t *)addr == INT3_INSN_OPCODE)
		return 0;
	regs->ip = addr;
	return 1;
}
NOKPROBE_SYMBOL(kp_int3_unknown);

/* An int3 while this CPU is inside kprobes already. */
static int kp_int3_busy(unsigned long addr, struct pt_regs *regs)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s;

	if (kp_copy_returned(addr, regs, kcb))
		return 1;
	s = kp_site_find(addr);
	if (!s)
		return kp_int3_unknown(addr, regs);
	return kp_reenter(s, regs, kcb);
}
NOKPROBE_SYMBOL(kp_int3_busy);

/* Called from do_int3() with interrupts off; 1 when the int3 was ours. */
int kprobe_int3_handler(struct pt_regs *regs)
{
	unsigned long addr = regs->ip - INT3_INSN_SIZE;
	struct kprobe_site *s;
	struct kprobe *p;

	/*
	 * In user space the only probes are uprobes.  Their die notifier
	 * would see this trap only after do_int3() walked the whole die
	 * chain (most of a uprobe hit's trap cost); hand it over directly.
	 * A trap that is not theirs still goes down the chain.
	 */
	if (user_mode(regs))
		return uprobe_pre_sstep_notifier(regs);
	if (unlikely(kprobe_running()))
		return kp_int3_busy(addr, regs);

	s = kp_site_find(addr);
	if (unlikely(!s))
		return kp_int3_unknown(addr, regs);
	p = kprobe_site_fast(s);
	if (likely(p))
		kp_hit_one(s, p, regs, get_kprobe_ctlblk());
	else
		kp_hit_many(s, regs, get_kprobe_ctlblk());
	return 1;
}
NOKPROBE_SYMBOL(kprobe_int3_handler);

/*
 * A fault while a copy runs out of line.  Make it look as if the original
 * instruction faulted at the probe address, so that exception-table fixups
 * and oops reports see the real code, and drop the probe: if the fixup
 * resumes there, the probe simply fires again.  Faults in handlers are not
 * ours to handle.
 */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kcb->step.site;

	if (!s || !(kcb->kprobe_status & (KPROBE_HIT_SS | KPROBE_REENTER)))
		return 0;
	if (regs->ip != (unsigned long)s->arch.slot)
		return 0;	/* e.g. an NMI handler's fault meanwhile */

	regs->ip = (unsigned long)s->addr;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) |
		      (kcb->step.flags & X86_EFLAGS_IF);

	if (kcb->kprobe_status == KPROBE_REENTER) {
		kp_restore_prev(kcb);
	} else {
		kcb->step.site = NULL;
		__this_cpu_write(current_kprobe, NULL);
	}

	/*
	 * The #GP path looked for a fixup before asking us, with the slot's
	 * address, and found none; look again at the probed address.  The
	 * page fault path does its own lookup after we return.
	 */
	if (trapnr == X86_TRAP_GP &&
	    fixup_exception(regs, trapnr, current->thread.error_code, 0))
		return 1;
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/* Replace the first byte of the probed instruction, on all CPUs. */
static void kp_poke_first_byte(struct kprobe_site *s, const u8 *new,
			       const u8 *old)
{
	mutex_lock(&text_mutex);
	text_poke(s->addr, new, 1);
	text_poke_sync();
	mutex_unlock(&text_mutex);
	perf_event_text_poke(s->addr, old, 1, new, 1);
}

void arch_arm_kprobe_site(struct kprobe_site *s)
{
	static const u8 int3 = INT3_INSN_OPCODE;

	kp_poke_first_byte(s, &int3, &s->arch.opcode);
}

void arch_disarm_kprobe_site(struct kprobe_site *s)
{
	static const u8 int3 = INT3_INSN_OPCODE;

	kp_poke_first_byte(s, &s->arch.opcode, &int3);
}

/*
 * Many sites at once: every first byte is written, then a single
 * text_poke_sync() makes every CPU see all of them.  Each write is one
 * byte, which a CPU fetches whole: until the sync, a CPU running one of
 * these instructions sees the old byte or the new one, and both are valid
 * (the int3 of a site whose copy and handlers are in place, or the
 * original instruction), so no CPU can be caught between two steps.  This
 * is the first and the last step of text_poke_bp_batch(), which has
 * nothing to do in between for a one-byte change.  text_poke_queue()
 * itself wants each new instruction whole, which the first byte of the
 * original one is not.
 */
static void kp_poke_sites(struct list_head *sites, bool arm)
{
	static const u8 int3 = INT3_INSN_OPCODE;
	struct kprobe_site *s;

	mutex_lock(&text_mutex);
	list_for_each_entry(s, sites, poke)
		text_poke(s->addr, arm ? &int3 : &s->arch.opcode, 1);
	text_poke_sync();
	mutex_unlock(&text_mutex);
	list_for_each_entry(s, sites, poke) {
		if (arm)
			perf_event_text_poke(s->addr, &s->arch.opcode, 1,
					     &int3, 1);
		else
			perf_event_text_poke(s->addr, &int3, 1,
					     &s->arch.opcode, 1);
	}
}

void arch_arm_kprobe_sites(struct list_head *sites)
{
	kp_poke_sites(sites, true);
}

void arch_disarm_kprobe_sites(struct list_head *sites)
{
	kp_poke_sites(sites, false);
}

/*
 * Text no probe may go into: the entry code (runs before the kernel's state
 * is set up), noinstr code (also the idle loop; runs where RCU may not be
 * watching) and anything placed in the kprobes section.
 */
static const struct {
	const char *start, *end;
} kp_forbidden_text[] = {
	{ __entry_text_start,	__entry_text_end },
	{ __noinstr_text_start,	__noinstr_text_end },
	{ __kprobes_text_start,	__kprobes_text_end },
};

bool arch_within_kprobe_blacklist(unsigned long addr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kp_forbidden_text); i++)
		if (addr >= (unsigned long)kp_forbidden_text[i].start &&
		    addr < (unsigned long)kp_forbidden_text[i].end)
			return true;
	return false;
}

void arch_kprobe_site_describe(struct kprobe_site *s, struct kprobe *p)
{
	p->opcode = s->arch.opcode;
	p->ainsn.insn = s->arch.slot;
}

/* int3 throughout: anything that runs into an unused slot traps. */
void arch_kprobe_fill_slot_page(void *page)
{
	memset(page, INT3_INSN_OPCODE, PAGE_SIZE);
}

/* The core lists the kprobes and noinstr sections itself. */
int __init arch_populate_kprobe_blacklist(void)
{
	int ret;

	ret = kprobe_add_area_blacklist((unsigned long)__entry_text_start,
					(unsigned long)__entry_text_end);
	if (ret)
		return ret;
#ifdef CONFIG_PREEMPTION
	/*
	 * The jump detour's callback (opt.c) and the ftrace handler end with
	 * preempt_enable_notrace(), which calls this when a reschedule is
	 * due.  A probe on it would run the same callback again, which calls
	 * it again before it can schedule: the stack overflowed that way
	 * with a probe on every function entry.  (preempt_schedule(), which
	 * preempt_enable() calls, is NOKPROBE_SYMBOL upstream already.)
	 */
	ret = kprobe_add_ksym_blacklist((unsigned long)preempt_schedule_notrace);
	if (ret < 0)
		return ret;
#endif
	return 0;
}

/*
 * __switch_to() is entered on the old task's stack and returns on the new
 * one, so the return would find the other task's pending instances.  A
 * plain probe there is fine.
 */
bool arch_kretprobe_refused(unsigned long func)
{
	return func == (unsigned long)__switch_to;
}

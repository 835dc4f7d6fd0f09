// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 kprobes: what happens when a probe's BRK fires, arming and
 * disarming, faults in the middle of a probe, and the arm64 blacklist.
 *
 * A hit goes through these per-CPU states (kprobe_ctlblk.kprobe_status):
 *
 *   HIT_ACTIVE  the pre handlers run (kprobe_site_pre());
 *   HIT_SS      the probed instruction is carried out: simulated on the
 *               saved registers (simulate.c), or its copy runs from the
 *               site's slot with every DAIF exception masked until the
 *               branch behind it reaches kp_a64_step_tail() (or the BRK
 *               behind it traps back here, kprobe_ss_brk_handler());
 *   HIT_SSDONE  the post handlers run (kprobe_site_post());
 *
 * and current_kprobe is cleared at the end.  A probe hit while this CPU is
 * in any of those states only counts as missed and has its instruction
 * carried out in the REENTER state, with the interrupted state parked in
 * kprobe_ctlblk.prev: one level of nesting, which is all that can happen,
 * since nothing a re-entered probe does can hit a probe again (when it does
 * anyway, see kp_reenter_nested()).
 *
 * The BRK handlers run as debug exceptions from EL1: interrupts masked,
 * on the interrupted task's stack, in NMI context as far as lockdep and
 * RCU are concerned.
 */
#include <linux/cpu.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <asm/daifflags.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/sections.h>

/* kernel/kprobes_internal.h, by the include path this file gets (Makefile) */
#include <kprobes_internal.h>

#include "internal.h"

/*
 * current_kprobe while a copy runs out of line.  Any non-NULL value makes
 * the generic kprobe_running() true, which is what routes faults to
 * kprobe_fault_handler() and nested hits to re-entry; this one belongs to
 * no site, so it cannot go away under us.
 */
static struct kprobe kp_copy_running;

#define KP_PSR_NZCV	(PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT)

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
 * The trap leaves for code that is not the probed instruction: nothing
 * there was branched to, so no BTI check may apply to it.  Only a kernel
 * built for BTI has guarded pages; elsewhere BTYPE is never looked at.
 */
static nokprobe_inline void kp_clear_btype(struct pt_regs *regs)
{
	if (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL))
		regs->pstate &= ~PSR_BTYPE_MASK;
}

static nokprobe_inline void kp_set_pc(struct pt_regs *regs, unsigned long pc)
{
	regs->pc = pc;
	kp_clear_btype(regs);
}

/*
 * Carry the probed instruction out on @regs (decode.c chose it for that);
 * the pc it leaves was not branched to, as for kp_set_pc().
 */
static nokprobe_inline void kp_simulate(struct kprobe_site *s,
					struct pt_regs *regs)
{
	a64_probe_simulate(&s->arch.insn, regs);
	kp_clear_btype(regs);
}

/*
 * The probed instruction has been carried out: the post handlers of the
 * probes whose pre handler ran (kcb->step.probe), then idle.
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
	if (kprobe_site_owes_post(s, p)) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		kprobe_site_post_owed(s, p, regs);
	}
	__this_cpu_write(current_kprobe, NULL);
}

/*
 * Send the CPU to a copy in the slot, which ends in kp_a64_step_tail() or,
 * when that is out of the slot's reach, in a BRK for
 * kprobe_ss_brk_handler().  Every DAIF exception stays masked until then:
 * nothing may run on this CPU, and so move the task, while the per-CPU
 * state says a copy runs.
 */
static void kp_step(struct kprobe_site *s, struct pt_regs *regs,
		    struct kprobe_ctlblk *kcb)
{
	kcb->step.site = s;
	kcb->step.pstate = regs->pstate;
	__this_cpu_write(current_kprobe, &kp_copy_running);
	regs->pstate |= DAIF_MASK;
	kp_set_pc(regs, (unsigned long)(s->arch.slot + (s->arch.tail ?
							 KPROBE_SLOT_TAIL :
							 KPROBE_SLOT_STEP)));
}
NOKPROBE_SYMBOL(kp_step);

/*
 * Carry out the probed instruction in state HIT_SS, or REENTER if
 * @reenter: simulate it and finish now (one trap instead of two), or step
 * the copy.  A simulated kernel instruction cannot fail: only user
 * memory faults.
 */
static nokprobe_inline void kp_execute(struct kprobe_site *s,
				       struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb, bool reenter)
{
	kcb->kprobe_status = reenter ? KPROBE_REENTER : KPROBE_HIT_SS;
	if (s->arch.simulate) {
		kp_simulate(s, regs);
		kp_finish(s, regs, kcb, reenter);
	} else {
		kp_step(s, regs, kcb);
	}
}

/*
 * With nothing left to do after the instruction, leave the trap for the
 * boosted copy, which branches back by itself.  Return: false when the
 * site has none.
 */
static nokprobe_inline bool kp_leave_by_copy(struct kprobe_site *s,
					     struct pt_regs *regs,
					     unsigned long off)
{
	if (!s->arch.boost)
		return false;
	kprobe_cpu_var(current_kprobe, off) = NULL;
	kp_set_pc(regs, (unsigned long)s->arch.boost);
	return true;
}

/* A hit on a site with several probes, or with a disabled one. */
static void kp_hit_many(struct kprobe_site *s, struct pt_regs *regs,
			struct kprobe_ctlblk *kcb)
{
	kcb->step.probe = NULL;		/* the post handlers: the list's */
	if (kprobe_site_pre(s, regs)) {
		/* A handler moved regs->pc: no instruction, no post handler. */
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
 * A hit of one enabled probe, @p, that kp_hit_boosted() does not take: @p
 * has a post handler, or the site no boosted copy.  The post handler is
 * the one @p had at the pre handler's time, run after a simulated
 * instruction without looking at the site again: a probe registered
 * meanwhile has not seen the pre either, and @p cannot go away before the
 * trap ends (unregistering waits for a grace period, which this CPU holds
 * off with interrupts masked).  A stepped instruction ends in
 * kp_a64_step_tail_done() (or kprobe_ss_brk_handler()), with @p's post
 * handler alone, as kcb->step.probe says.
 */
static nokprobe_inline void kp_hit_one(struct kprobe_site *s,
				       struct kprobe *p, struct pt_regs *regs,
				       unsigned long off)
{
	struct kprobe_ctlblk *kcb = &kprobe_cpu_var(kprobe_ctlblk, off);
	kprobe_post_handler_t post;

	if (kprobe_pre_one_at(p, regs, off))
		goto idle;	/* regs->pc moved: no instruction, no post */
	post = p->post_handler;
	if (!s->arch.simulate) {
		kcb->kprobe_status = KPROBE_HIT_SS;
		kcb->step.probe = p;
		kp_step(s, regs, kcb);
		return;
	}
	kp_simulate(s, regs);
	if (post) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		post(p, regs, 0);
	}
idle:
	kprobe_cpu_var(current_kprobe, off) = NULL;
}

/*
 * The usual hit: one enabled probe with no post handler, on a site with a
 * boosted copy: the pre handler, and the trap leaves for the copy.
 */
static nokprobe_inline void kp_hit_boosted(struct kprobe_site *s,
					   struct kprobe *p,
					   struct pt_regs *regs,
					   unsigned long off)
{
	if (kprobe_pre_one_at(p, regs, off)) {
		/* regs->pc moved: no instruction */
		kprobe_cpu_var(current_kprobe, off) = NULL;
		return;
	}
	kp_leave_by_copy(s, regs, off);
}

/*
 * A probe hit while a re-entered one is carried out.  Carrying out a
 * re-entered probe calls nothing that may be probed, so this means the
 * kernel's protection of its own hit path is broken.  The per-CPU state
 * holds the outer probes', so the instruction is carried out only where
 * that needs none of it: simulated, or in a copy that branches back by
 * itself.  Return: false when neither can be done; the BRK is then
 * reported as not ours, and the kernel dies on it.
 */
static bool kp_reenter_nested(struct kprobe_site *s, struct pt_regs *regs)
{
	WARN_ONCE(1, "kprobes: probe at %pS hit while a re-entered probe was being carried out on this CPU\n",
		  s->addr);
	if (s->arch.simulate) {
		kp_simulate(s, regs);
		return true;
	}
	if (!s->arch.boost)
		return false;
	kp_set_pc(regs, (unsigned long)s->arch.boost);
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
 * A kprobes BRK at @addr that is not in the table: removed between this
 * CPU's trap and the lookup, so the original instruction is back: run it.
 * Anything else there is a BRK that is nobody's.
 */
static int kp_brk_unknown(unsigned long addr)
{
	if (le32_to_cpu(*(__le32 *)addr) == BRK64_OPCODE_KPROBES)
		return DBG_HOOK_ERROR;
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kp_brk_unknown);

/* Called by do_el1_brk64() for BRK #KPROBES_BRK_IMM. */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long addr = instruction_pointer(regs);
	unsigned long off = kprobe_cpu_off();
	struct kprobe_site *s;
	struct kprobe *p;

	s = kp_site_find(addr);
	if (unlikely(!s))
		return kp_brk_unknown(addr);
	if (unlikely(kprobe_cpu_var(current_kprobe, off)))
		return kp_reenter(s, regs,
				  &kprobe_cpu_var(kprobe_ctlblk, off)) ?
			DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
	p = kprobe_site_fast(s);
	if (likely(p)) {
		if (!p->post_handler && s->arch.boost)
			kp_hit_boosted(s, p, regs, off);
		else
			kp_hit_one(s, p, regs, off);
	} else
		kp_hit_many(s, regs, &kprobe_cpu_var(kprobe_ctlblk, off));
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_brk_handler);

/*
 * The copy of @s has run: back to the instruction after the probe with the
 * DAIF bits of the hit, and finish the probe.  pstate keeps what the copy
 * left in the condition flags.
 */
static void kp_step_done(struct kprobe_site *s, struct pt_regs *regs,
			 struct kprobe_ctlblk *kcb)
{
	regs->pstate = (regs->pstate & KP_PSR_NZCV) |
		       (kcb->step.pstate & ~KP_PSR_NZCV);
	kp_set_pc(regs, (unsigned long)s->addr + AARCH64_INSN_SIZE);
	kcb->step.site = NULL;
	kp_finish(s, regs, kcb, kcb->kprobe_status == KPROBE_REENTER);
}
NOKPROBE_SYMBOL(kp_step_done);

/* Called by do_el1_brk64() for BRK #KPROBES_BRK_SS_IMM, behind a copy. */
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kcb->step.site;

	if (!s || !(kcb->kprobe_status & (KPROBE_HIT_SS | KPROBE_REENTER)))
		return DBG_HOOK_ERROR;
	if (instruction_pointer(regs) !=
	    (unsigned long)(s->arch.slot + KPROBE_SLOT_STEP_BRK))
		return DBG_HOOK_ERROR;

	kp_step_done(s, regs, kcb);
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_ss_brk_handler);

/*
 * Called by kp_a64_step_tail() behind a copy, with the registers it saved
 * and every DAIF exception still masked since the BRK: the step cannot
 * have been interrupted, and this CPU's step state is the copy's.  The
 * tail returns with an exception return from @regs, as a trap would.
 *
 * The BRK's exit told lockdep that interrupts are back on; they are not
 * until the tail's return (kp_a64_lockdep_irqs_off()).
 */
asmlinkage void kp_a64_step_tail_done(struct pt_regs *regs)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kcb->step.site;
	bool lockdep_irqs = kp_a64_lockdep_irqs_off();

	/* The frame record the tail made: the code it returns to. */
	regs->stackframe[1] = (unsigned long)s->addr + AARCH64_INSN_SIZE;
	kp_step_done(s, regs, kcb);
	kp_a64_lockdep_irqs_restore(lockdep_irqs);
}
NOKPROBE_SYMBOL(kp_a64_step_tail_done);

/*
 * A fault while a copy runs out of line.  Make it look as if the original
 * instruction faulted at the probe address, with the DAIF bits it had, so
 * that the exception table fixup and oops reports see the real code, and
 * drop the probe: when the fault is resolved or fixed up and the code
 * resumes there, the probe simply fires again.  Faults in handlers are not
 * ours to handle.
 *
 * The abort's entry gave this CPU the DAIF bits of the copy, all masked;
 * the rest of the fault is handled with the probed code's, as it would
 * have been without the probe: a fault on a user page may sleep, and take
 * the mm's locks, with interrupts on.  The probe's state is unwound first,
 * so that an interrupt meanwhile finds this CPU idle (or back in the
 * interrupted probe of a re-entered one, which masked everything itself).
 */
int kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe_site *s = kcb->step.site;

	if (!s || !(kcb->kprobe_status & (KPROBE_HIT_SS | KPROBE_REENTER)))
		return 0;
	if (instruction_pointer(regs) != (unsigned long)(s->arch.slot +
		(s->arch.tail ? KPROBE_SLOT_TAIL : KPROBE_SLOT_STEP)))
		return 0;

	regs->pstate = (regs->pstate & ~DAIF_MASK) |
		       (kcb->step.pstate & DAIF_MASK);
	kp_set_pc(regs, (unsigned long)s->addr);
	if (kcb->kprobe_status == KPROBE_REENTER) {
		kp_restore_prev(kcb);
	} else {
		kcb->step.site = NULL;
		__this_cpu_write(current_kprobe, NULL);
	}
	local_daif_inherit(regs);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/*
 * Arming and disarming.  Replacing an arbitrary instruction with a BRK is
 * not one of the changes the architecture allows while another CPU may be
 * running it, so the writes happen in stop_machine() with every other CPU
 * spinning outside the text: aarch64_insn_patch_text() does that, for any
 * number of instructions at once.  A batch is one stop_machine() however
 * many sites it has.
 */
#define KP_POKE_CHUNK	16

static void kp_poke(void **addrs, u32 *insns, int n)
{
	int ret;

	if (!n)
		return;
	ret = aarch64_insn_patch_text(addrs, insns, n);
	/* The addresses were checked at prepare: this cannot fail. */
	WARN_ONCE(ret, "kprobes: writing %d probe sites failed (%d)\n", n, ret);
}

static u32 kp_site_insn(struct kprobe_site *s, bool arm)
{
	return arm ? BRK64_OPCODE_KPROBES : s->arch.opcode;
}

static void kp_poke_report(struct kprobe_site *s, bool arm)
{
	u32 brk = BRK64_OPCODE_KPROBES;

	if (arm)
		perf_event_text_poke(s->addr, &s->arch.opcode, 4, &brk, 4);
	else
		perf_event_text_poke(s->addr, &brk, 4, &s->arch.opcode, 4);
}

static void kp_text_lock(void)
{
	cpus_read_lock();
	mutex_lock(&text_mutex);
}

static void kp_text_unlock(void)
{
	mutex_unlock(&text_mutex);
	cpus_read_unlock();
}

/*
 * Every site on @sites in one stop_machine() when the arrays for them can
 * be had, else KP_POKE_CHUNK sites at a time: the batch must not fail.
 */
static void kp_poke_sites(struct list_head *sites, bool arm)
{
	void *addrs_chunk[KP_POKE_CHUNK];
	u32 insns_chunk[KP_POKE_CHUNK];
	struct kprobe_site *s;
	void **addrs = addrs_chunk;
	u32 *insns = insns_chunk;
	int n = 0, max = KP_POKE_CHUNK;
	size_t count = list_count_nodes(sites);

	if (count > KP_POKE_CHUNK) {
		void **a = kvmalloc_array(count, sizeof(*a), GFP_KERNEL);
		u32 *i = kvmalloc_array(count, sizeof(*i), GFP_KERNEL);

		if (a && i) {
			addrs = a;
			insns = i;
			max = count;
		} else {
			kvfree(a);
			kvfree(i);
		}
	}

	kp_text_lock();
	list_for_each_entry(s, sites, poke) {
		addrs[n] = s->addr;
		insns[n] = kp_site_insn(s, arm);
		if (++n == max) {
			kp_poke(addrs, insns, n);
			n = 0;
		}
	}
	kp_poke(addrs, insns, n);
	kp_text_unlock();

	list_for_each_entry(s, sites, poke)
		kp_poke_report(s, arm);
	if (addrs != addrs_chunk) {
		kvfree(addrs);
		kvfree(insns);
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

static void kp_poke_one(struct kprobe_site *s, bool arm)
{
	void *addr = s->addr;
	u32 insn = kp_site_insn(s, arm);

	kp_text_lock();
	kp_poke(&addr, &insn, 1);
	kp_text_unlock();
	kp_poke_report(s, arm);
}

void arch_arm_kprobe_site(struct kprobe_site *s)
{
	kp_poke_one(s, true);
}

void arch_disarm_kprobe_site(struct kprobe_site *s)
{
	kp_poke_one(s, false);
}

void arch_kprobe_site_describe(struct kprobe_site *s, struct kprobe *p)
{
	p->opcode = s->arch.opcode;
	p->ainsn.insn = s->arch.slot;
}

/*
 * Text no probe may go into, besides the kprobes and noinstr sections the
 * core refuses itself: the exception entry code (runs before the kernel's
 * state is set up), code that runs with the MMU off or at EL2, and the
 * hibernation exit code.
 */
static const struct {
	const char *start, *end;
} kp_forbidden_text[] = {
	{ __entry_text_start,		__entry_text_end },
	{ __irqentry_text_start,	__irqentry_text_end },
	{ __idmap_text_start,		__idmap_text_end },
	{ __hyp_idmap_text_start,	__hyp_idmap_text_end },
	{ __hyp_text_start,		__hyp_text_end },
#ifdef CONFIG_HIBERNATION
	{ __hibernate_exit_text_start,	__hibernate_exit_text_end },
#endif
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

/*
 * The same areas, listed in debugfs' blacklist: those in the kernel's text
 * (the idmap and hibernation code live in the read-only data segment,
 * where kallsyms has no functions to list; they are refused all the same).
 */
int __init arch_populate_kprobe_blacklist(void)
{
	unsigned long start, end;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(kp_forbidden_text); i++) {
		start = (unsigned long)kp_forbidden_text[i].start;
		end = (unsigned long)kp_forbidden_text[i].end;
		if (start == end || !core_kernel_text(start))
			continue;
		ret = kprobe_add_area_blacklist(start, end);
		if (ret)
			return ret;
	}
	return 0;
}

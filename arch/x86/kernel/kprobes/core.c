// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86 kprobes (both widths): the int3 trap of a probe, the hooks that let
 * the core's hit path (kernel/kprobes_hit.h) carry an instruction out on
 * x86, faults in the middle of a probe, arming and disarming, and the x86
 * blacklist.
 *
 * The probed instruction is emulated in the trap (branches and the like
 * always, plain register, stack and RIP-relative data instructions when
 * decode.c could describe them), or its copy runs from the site's slot with
 * interrupts off until the int3 behind the copy traps back here.
 */
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/uprobes.h>
#include <asm/extable.h>
#include <asm/sections.h>
#include <asm/switch_to.h>
#include <asm/text-patching.h>
#include <asm/traps.h>

#include "internal.h"

static __always_inline void arch_kprobe_set_pc(struct pt_regs *regs,
					       unsigned long pc)
{
	regs->ip = pc;
}

static __always_inline bool arch_kprobe_emulate(struct kprobe_site *s,
						struct pt_regs *regs)
{
	kprobe_x86_emulate_t *emulate = s->arch.emulate;

	return emulate && emulate(s, regs);
}

/*
 * The region's copy in the detour buffer once the site is queued for
 * optimization (no task may enter the region in place from then on), else
 * the boosted copy.
 */
static __always_inline kprobe_opcode_t *
arch_kprobe_boost_copy(struct kprobe_site *s)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(s->opt) != KPROBE_OPT_NONE)
		return kp_opt_region_copy(s);
#endif
	return s->arch.boost ? s->arch.slot + KPROBE_BOOST_OFF : NULL;
}

/* The copy at the start of the slot, with an int3 behind it. */
static __always_inline kprobe_opcode_t *
arch_kprobe_step_copy(struct kprobe_site *s)
{
	return s->arch.slot;
}

/* No interrupt, and so no preemption, before the copy traps back. */
static __always_inline void arch_kprobe_step(struct pt_regs *regs,
					     struct arch_kprobe_step *st)
{
	st->flags = regs->flags;
	regs->flags &= ~X86_EFLAGS_IF;
}

static __always_inline void
arch_kprobe_step_done(struct kprobe_site *s, struct pt_regs *regs,
		      const struct arch_kprobe_step *st)
{
	kprobe_x86_step_fixup(s, regs, st->flags);
}

static __always_inline void
arch_kprobe_fault_fixup(struct kprobe_site *s, struct pt_regs *regs,
			const struct arch_kprobe_step *st)
{
	regs->ip = (unsigned long)s->addr;
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) |
		      (st->flags & X86_EFLAGS_IF);
}

/* kernel/kprobes_hit.h, by the include path this file gets (Makefile) */
#include <kprobes_hit.h>

/* Is the int3 at @addr the one behind the copy this CPU is running? */
static bool kp_copy_returned(unsigned long addr, struct pt_regs *regs,
			     struct kprobe_ctlblk *kcb)
{
	struct kprobe_site *s = kp_stepping(kcb);

	if (!s || addr != (unsigned long)s->arch.slot + s->arch.len)
		return false;
	kp_step_done(s, regs, kcb);
	return true;
}
NOKPROBE_SYMBOL(kp_copy_returned);

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
	kp_hit(s, regs, kprobe_cpu_off());
	return 1;
}
NOKPROBE_SYMBOL(kprobe_int3_handler);

/*
 * A fault while a copy runs out of line (kp_fault_unwind()).  The #GP path
 * looked for a fixup before asking us, with the slot's address, and found
 * none; look again at the probed address.  The page fault path does its
 * own lookup after we return.
 */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	if (!kp_fault_unwind(regs, get_kprobe_ctlblk()))
		return 0;
	return trapnr == X86_TRAP_GP &&
	       fixup_exception(regs, trapnr, current->thread.error_code, 0);
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/*
 * The first byte of the probed instruction is written at once: a CPU
 * fetches a byte whole, so until the sync a CPU running one of these
 * instructions sees the old byte or the new one, and both are valid (the
 * int3 of a site whose copy and handlers are in place, or the original
 * instruction); no CPU can be caught between two steps.  This is the first
 * and the last step of text_poke_bp_batch(), which has nothing to do in
 * between for a one-byte change.  text_poke_queue() itself wants each new
 * instruction whole, which the first byte of the original one is not.
 */
bool arch_kprobe_poke_queue(struct kprobe_site *s, bool arm)
{
	static const u8 int3 = INT3_INSN_OPCODE;

	text_poke(s->addr, arm ? &int3 : &s->arch.opcode, 1);
	return true;
}

/* One serialisation of every CPU makes them all see every byte. */
void arch_kprobe_poke_apply(void)
{
	text_poke_sync();
}

/*
 * Text no probe may go into: the entry code (runs before the kernel's state
 * is set up), noinstr code (also the idle loop; runs where RCU may not be
 * watching) and anything placed in the kprobes section.
 */
static const struct kprobe_text_area kp_forbidden_text[] = {
	{ __entry_text_start,	__entry_text_end },
	{ __noinstr_text_start,	__noinstr_text_end },
	{ __kprobes_text_start,	__kprobes_text_end },
};

bool arch_within_kprobe_blacklist(unsigned long addr)
{
	return kprobe_in_text_areas(addr, kp_forbidden_text,
				    ARRAY_SIZE(kp_forbidden_text));
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86 probes on ftrace call sites.
 *
 * With the function tracer built in, a function's entry (after any endbr64)
 * is a 5-byte call to __fentry__ that ftrace patches at will, so no
 * breakpoint may go there.  The kprobes core puts such a site into its
 * ftrace_ops filter instead, and ftrace calls this handler with a full
 * pt_regs.  Handlers must not be able to tell the difference: they see
 * regs->ip as after an int3 at the site, the "instruction" carried out is
 * the call (a no-op as far as the function is concerned), post handlers see
 * regs->ip after it, and a pre handler may send the CPU elsewhere.
 */
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <asm/text-patching.h>

/* kernel/kprobes_internal.h, by the include path this file gets (Makefile) */
#include <kprobes_internal.h>

/* Several probes, a disabled one, or none left: the core's loops, aside. */
static noinline void kp_ftrace_fire_all(struct kprobe_site *s,
					unsigned long ip, struct pt_regs *regs,
					unsigned long orig_ip)
{
	if (kprobe_site_pre(s, regs))
		return;		/* moved: ftrace goes back to regs->ip */
	instruction_pointer_set(regs, ip + MCOUNT_INSN_SIZE);
	if (kprobe_site_has_post(s)) {
		__this_cpu_write(kprobe_ctlblk.kprobe_status,
				 KPROBE_HIT_SSDONE);
		kprobe_site_post(s, regs);
	}
	instruction_pointer_set(regs, orig_ip);
}
NOKPROBE_SYMBOL(kp_ftrace_fire_all);

/*
 * The probes at @ip fire: as if int3 trapped there, then the call ran.
 * The one-probe case is written out here rather than taken from
 * kprobe_site_post_owed(): knowing the probe once, it tests its post
 * handler directly and writes regs->ip after the call only when one will
 * see it, a handful of instructions less per hit.
 */
static nokprobe_inline void kp_ftrace_fire(struct kprobe_site *s,
					   unsigned long ip,
					   struct pt_regs *regs)
{
	unsigned long orig_ip = instruction_pointer(regs);
	struct kprobe *p = kprobe_site_fast(s);

	instruction_pointer_set(regs, ip + INT3_INSN_SIZE);
	if (unlikely(!p)) {
		kp_ftrace_fire_all(s, ip, regs, orig_ip);
		return;
	}
	if (kprobe_pre_one(p, regs))
		return;		/* moved: ftrace goes back to regs->ip */
	if (p->post_handler) {
		/*
		 * Right after the call is also where ftrace resumes the
		 * function, so this is all the "single step" there is.
		 */
		instruction_pointer_set(regs, ip + MCOUNT_INSN_SIZE);
		__this_cpu_write(kprobe_ctlblk.kprobe_status,
				 KPROBE_HIT_SSDONE);
		p->post_handler(p, regs, 0);
	}
	/*
	 * Back to where ftrace was going: another ops on this function (a
	 * livepatch, called before us) may have sent it to a new function.
	 */
	instruction_pointer_set(regs, orig_ip);
}

/* notrace: one instruction less per hit, and no tracer in front of us. */
notrace void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *ops,
				   struct ftrace_regs *fregs)
{
	/*
	 * Our ops save regs, so cs is set (arch_ftrace_get_regs()'s test,
	 * without the NULL test of its result that the compiler keeps).
	 */
	struct pt_regs *regs = &arch_ftrace_regs(fregs)->regs;
	struct kprobe_site *s;

	if (unlikely(kprobe_ftrace_disabled || !regs->cs))
		return;
	/*
	 * No ftrace_test_recursion_trylock(): kprobe_running() is the
	 * recursion guard, as in the int3 and jump paths.  Our ops only
	 * call us at probed sites, and no probe can be on what runs here
	 * before current_kprobe is set (inlined, or NOKPROBE_SYMBOL); from
	 * then on a nested hit, in a handler or an interrupt, only counts
	 * as missed, which is what the trylock let through anyway (its
	 * transition bit admits the first nesting).  Preemption off keeps
	 * the per-CPU state ours and is the RCU-sched read side the site
	 * lookup needs; an interrupt that comes before current_kprobe is
	 * set leaves it NULL again (see kprobe_opt_run()).
	 */
	preempt_disable_notrace();
	s = kp_site_find(ip);
	/* While a site moves between our two ops, both call us. */
	if (s && !kp_ftrace_ops_acts(s, ops))
		s = NULL;
	if (s && kprobe_running()) {
		kprobe_site_missed(s);
	} else if (s) {
		kp_ftrace_fire(s, ip, regs);
		__this_cpu_write(current_kprobe, NULL);
	}
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(kprobe_ftrace_handler);

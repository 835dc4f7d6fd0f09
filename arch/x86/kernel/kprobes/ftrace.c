// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86_64 probes on ftrace call sites.
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

/*
 * Should this call of the handler fire @s?  Only when @ops is the one of
 * our two (kernel/kprobes.c) that @s is hooked on: while a site moves from
 * one to the other, both call us for it.
 */
static nokprobe_inline bool kp_ftrace_ops_acts(struct kprobe_site *s,
					       struct ftrace_ops *ops)
{
	return READ_ONCE(s->ftrace_ipmodify) ==
	       !!(ops->flags & FTRACE_OPS_FL_IPMODIFY);
}

/*
 * The probes at @ip fire: as if int3 trapped there, then the call ran.
 * Inlined: a probe on ftrace costs little else than calls.
 */
static nokprobe_inline void kp_ftrace_fire(struct kprobe_site *s,
					   unsigned long ip,
					   struct pt_regs *regs)
{
	unsigned long orig_ip = instruction_pointer(regs);

	instruction_pointer_set(regs, ip + INT3_INSN_SIZE);
	if (kprobe_site_pre_fast(s, regs))
		return;		/* moved: ftrace goes back to regs->ip */

	/*
	 * Right after the call is also where ftrace resumes the function,
	 * so this is all the "single step" there is to do.
	 */
	instruction_pointer_set(regs, ip + MCOUNT_INSN_SIZE);
	if (kprobe_site_has_post(s)) {
		__this_cpu_write(kprobe_ctlblk.kprobe_status,
				 KPROBE_HIT_SSDONE);
		kprobe_site_post_fast(s, regs);
	}
	/*
	 * Back to where ftrace was going: another ops on this function (a
	 * livepatch, called before us) may have sent it to a new function.
	 */
	instruction_pointer_set(regs, orig_ip);
}

void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	struct kprobe_site *s;

	if (unlikely(kprobe_ftrace_disabled || !regs))
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
	 * set leaves it NULL again (see kp_opt_callback() in opt.c).
	 */
	preempt_disable_notrace();
	s = kprobe_site_lookup(ip);
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jump optimization on architectures served per probe that have their own
 * optprobes code (powerpc, 32-bit arm), on the generic optimizer of
 * kprobes_opt.c: it decides when a site may be optimized (no post
 * handler, nothing else inside the region, the sysctl), waits for the
 * RCU-tasks grace period before the jump goes in, and takes the jump out
 * before anything changes the site.  This file only translates its site
 * calls into the architecture's per-probe ones.
 *
 * The kprobe a site hands the architecture (kprobes_per_probe.c) is the
 * kprobe of an optimized_kprobe, s->arch.op: the architecture prepares its
 * detour buffer when the site is prepared, writes its jump, and calls
 * opt_pre_handler() from the buffer, which runs the site's probes as the
 * trap's pre handler does.  A site whose buffer cannot be had (out of a
 * branch's reach, an instruction the buffer cannot carry out) keeps its
 * breakpoint: s->opt_len stays 0 and the optimizer never queues it.
 *
 * The architecture's optimize writes the jump over the breakpoint and its
 * unoptimize puts the breakpoint back (arch_arm_kprobe()), both with the
 * CPUs held and the text lock taken, as around its other text writes.
 */
#include <linux/kprobes.h>

#include "kprobes_internal.h"

/*
 * What the architecture's buffer needs beyond its own preparation on this
 * layer (powerpc: arch/powerpc/kernel/optprobes_pp.c).  Non-zero keeps
 * the site's breakpoint.
 */
int __weak arch_pp_opt_adjust(struct optimized_kprobe *op)
{
	return 0;
}

void kp_pp_opt_prepare(struct kprobe_site *s)
{
	struct optimized_kprobe *op = &s->arch.op;

	INIT_LIST_HEAD(&op->list);
	op->optinsn.insn = NULL;
	s->opt_len = 0;
	if (arch_prepare_optimized_kprobe(op, &op->kp) ||
	    !arch_prepared_optinsn(&op->optinsn))
		return;
	if (arch_pp_opt_adjust(op) || arch_check_optimized_kprobe(op)) {
		arch_remove_optimized_kprobe(op);
		return;
	}
	s->opt_len = MAX_OPTIMIZED_LENGTH;
}

/* The core calls this only once no task can be inside the buffer. */
void kp_pp_opt_release(struct kprobe_site *s)
{
	if (!s->opt_len)
		return;
	arch_remove_optimized_kprobe(&s->arch.op);
	s->opt_len = 0;
}

/*
 * What the architecture's detour callback runs, with current_kprobe set
 * to the site's kprobe: the site's pre handler, which runs its probes and
 * gives current_kprobe back.  A handler cannot move the pc here.
 */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	p->pre_handler(p, regs);
}
NOKPROBE_SYMBOL(opt_pre_handler);

/* The architecture's lists, of the optimized_kprobes of @sites. */
static void kp_pp_opt_list(struct list_head *sites, struct list_head *ops)
{
	struct kprobe_site *s;

	list_for_each_entry(s, sites, opt_list)
		list_add_tail(&s->arch.op.list, ops);
}

/* Whatever the architecture left on @ops goes back to being on none. */
static void kp_pp_opt_unlist(struct list_head *ops)
{
	struct optimized_kprobe *op, *tmp;

	list_for_each_entry_safe(op, tmp, ops, list)
		list_del_init(&op->list);
}

void arch_optimize_kprobe_sites(struct list_head *sites)
{
	LIST_HEAD(ops);

	kp_pp_opt_list(sites, &ops);
	kprobe_text_lock();
	arch_optimize_kprobes(&ops);
	kprobe_text_unlock();
	/* It takes each one off as it writes its jump: all of them. */
	WARN_ON_ONCE(!list_empty(&ops));
	kp_pp_opt_unlist(&ops);
}

void arch_unoptimize_kprobe_sites(struct list_head *sites)
{
	LIST_HEAD(ops);
	LIST_HEAD(done);

	kp_pp_opt_list(sites, &ops);
	kprobe_text_lock();
	arch_unoptimize_kprobes(&ops, &done);
	kprobe_text_unlock();
	kp_pp_opt_unlist(&ops);
	kp_pp_opt_unlist(&done);
}

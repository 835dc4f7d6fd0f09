// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe sites on architectures whose kprobes code is upstream's, written
 * for one struct kprobe at a time (arch_prepare_kprobe(), arch_arm_kprobe()
 * and a trap that finds its kprobe with get_kprobe()).  Each site gives
 * the architecture a kprobe of its own, s->arch.kp, standing for every
 * probe registered there: the architecture decodes, arms and steps that
 * one, and its handlers run the site's probes.  The architecture defines
 * current_kprobe and kprobe_ctlblk itself, as upstream.
 *
 * What the architecture's trap sees of current_kprobe: its own kprobe
 * before the pre handler (it sets it), the probe whose handler runs
 * during a handler (kprobe_site_pre() sets it, for the handler's
 * kprobe_running()), and its own kprobe again once the handler returns,
 * since the trap goes on with it (the copy of the instruction, the
 * reentry checks and the post handler are found through it).
 */
#include <linux/execmem.h>
#include <linux/hash.h>
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/slab.h>
#ifdef CONFIG_ARM
#include <asm/proc-fns.h>
#include <asm/system_misc.h>
#endif

#include "kprobes_internal.h"

static struct kprobe_site *kp_pp_site(struct kprobe *kp)
{
	return container_of(kp, struct kprobe_site, arch.kp);
}

static int kp_pp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	int ret = kprobe_site_pre(kp_pp_site(kp), regs);

	__this_cpu_write(current_kprobe, kp);
	return ret;
}
NOKPROBE_SYMBOL(kp_pp_pre);

static void kp_pp_post(struct kprobe *kp, struct pt_regs *regs,
		       unsigned long flags)
{
	struct kprobe_site *s = kp_pp_site(kp);

	if (kprobe_site_has_post(s)) {
		kprobe_site_post(s, regs);
		__this_cpu_write(current_kprobe, kp);
	}
}
NOKPROBE_SYMBOL(kp_pp_post);

void kprobes_inc_nmissed_count(struct kprobe *p)
{
	kprobe_site_missed(kp_pp_site(p));
}
NOKPROBE_SYMBOL(kprobes_inc_nmissed_count);

/* @s's kprobe, with the handlers that run the site's probes. */
static struct kprobe *kp_pp_setup(struct kprobe_site *s)
{
	struct kprobe *kp = &s->arch.kp;

	kp->addr = s->addr;
	kp->pre_handler = kp_pp_pre;
	kp->post_handler = kp_pp_post;
	INIT_LIST_HEAD(&kp->list);
	return kp;
}

/*
 * The architecture may write its slot here: prepared, as upstream's core
 * prepares, with the CPUs held and text_mutex taken.
 */
int arch_prepare_kprobe_site(struct kprobe_site *s)
{
	struct kprobe *kp = kp_pp_setup(s);
	int ret;

	kprobe_text_lock();
	ret = arch_prepare_kprobe(kp);
	if (!ret)
		kp_pp_opt_prepare(s);
	kprobe_text_unlock();
	return ret;
}

void arch_release_kprobe_site(struct kprobe_site *s)
{
	kp_pp_opt_release(s);
	arch_remove_kprobe(&s->arch.kp);
}

void arch_kprobe_site_describe(struct kprobe_site *s, struct kprobe *p)
{
	p->opcode = s->arch.kp.opcode;
	p->ainsn = s->arch.kp.ainsn;
}

#ifdef CONFIG_S390
/*
 * s390's program check handler gives the interrupted context its interrupt
 * mask back before the breakpoint reaches kprobe_handler(), so a task that
 * ran into a breakpoint may be preempted before it looks up the site.  If
 * the breakpoint is taken out and its site unhashed meanwhile, the lookup
 * finds nothing and upstream's handler reports an illegal operation (an
 * oops), where x86 would run the instruction now back at the address.
 *
 * So every breakpoint taken out leaves a tombstone at its address for an
 * RCU-tasks grace period, which no task preempted in that window ends
 * before it has gone on: a breakpoint trap in the kernel that no site
 * claims but a tombstone marks goes back to the address and runs what is
 * there now.  A genuinely illegal instruction has no tombstone and still
 * oopses.
 */
struct kp_pp_tomb {
	struct hlist_node node;
	unsigned long addr;
	struct rcu_head rcu;
};

#define KP_PP_TOMB_BITS	6
static struct hlist_head kp_pp_tombs[1 << KP_PP_TOMB_BITS];
static DEFINE_SPINLOCK(kp_pp_tomb_lock);

static struct hlist_head *kp_pp_tomb_bucket(unsigned long addr)
{
	return &kp_pp_tombs[hash_long(addr, KP_PP_TOMB_BITS)];
}

static void kp_pp_tomb_expire(struct rcu_head *head)
{
	struct kp_pp_tomb *t = container_of(head, struct kp_pp_tomb, rcu);

	spin_lock_bh(&kp_pp_tomb_lock);
	hlist_del_rcu(&t->node);
	spin_unlock_bh(&kp_pp_tomb_lock);
	/* Readers under rcu_read_lock() may still be looking at it. */
	kfree_rcu(t, rcu);
}

/* Before @s's breakpoint is taken out. */
static void kp_pp_tomb_add(struct kprobe_site *s)
{
	struct kp_pp_tomb *t = kmalloc(sizeof(*t), GFP_KERNEL);

	/* Without memory: the race stays as upstream has it. */
	if (!t)
		return;
	t->addr = (unsigned long)s->addr;
	spin_lock_bh(&kp_pp_tomb_lock);
	hlist_add_head_rcu(&t->node, kp_pp_tomb_bucket(t->addr));
	spin_unlock_bh(&kp_pp_tomb_lock);
	call_rcu_tasks(&t->rcu, kp_pp_tomb_expire);
}

static bool kp_pp_tomb_at(unsigned long addr)
{
	struct kp_pp_tomb *t;
	bool found = false;

	rcu_read_lock();
	hlist_for_each_entry_rcu(t, kp_pp_tomb_bucket(addr), node) {
		if (t->addr == addr) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}
NOKPROBE_SYMBOL(kp_pp_tomb_at);

/*
 * A breakpoint trap in the kernel that upstream's handler did not claim:
 * restart at the address if a breakpoint of ours was taken out there.  The
 * trap's address is the PSW's less the instruction length it reports.
 */
static bool kp_pp_bpt_gone(struct pt_regs *regs)
{
	unsigned long addr = regs->psw.addr - (regs->int_code >> 16);

	if (user_mode(regs) || !kp_pp_tomb_at(addr))
		return false;
	regs->psw.addr = addr;
	return true;
}
NOKPROBE_SYMBOL(kp_pp_bpt_gone);

/* The die notifier: upstream's handler, then the tombstones. */
static int kp_pp_exceptions_notify(struct notifier_block *self,
				   unsigned long val, void *data)
{
	struct die_args *args = data;
	int ret = kprobe_exceptions_notify(self, val, data);

	if (ret == NOTIFY_DONE && val == DIE_BPT && kp_pp_bpt_gone(args->regs))
		ret = NOTIFY_STOP;
	return ret;
}
NOKPROBE_SYMBOL(kp_pp_exceptions_notify);
#define KP_PP_DIE_NOTIFY	kp_pp_exceptions_notify
#else
static void kp_pp_tomb_add(struct kprobe_site *s)
{
}

#define KP_PP_DIE_NOTIFY	kprobe_exceptions_notify
#endif

/*
 * The architecture has no queue: each site is written as it comes, with
 * the CPUs held and text_mutex taken by the core, as upstream's core calls
 * arch_arm_kprobe().
 */
bool arch_kprobe_poke_queue(struct kprobe_site *s, bool arm)
{
	if (arm) {
		arch_arm_kprobe(&s->arch.kp);
	} else {
		kp_pp_tomb_add(s);
		arch_disarm_kprobe(&s->arch.kp);
	}
	return true;
}

void arch_kprobe_poke_apply(void)
{
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Probes on ftrace call sites.  The architecture's kprobe_ftrace_handler()
 * finds its kprobe with get_kprobe() at the address ftrace passes and runs
 * its handlers as the trap does, so an ftrace site has a kprobe of its own
 * too.  It is marked KPROBE_FLAG_FTRACE (powerpc's arch_prepare_kprobe()
 * looks at the flag of the probe before it) and prepared by
 * arch_prepare_kprobe_ftrace(): there is no instruction to copy, the call
 * ftrace patched in is all that runs there, so no slot is taken and
 * nothing is released with the site.  kprobes_ftrace.c arms it through
 * our ftrace_ops' filters, never with arch_arm_kprobe().
 */
int kprobe_ftrace_prepare(struct kprobe_site *s)
{
	struct kprobe *kp = kp_pp_setup(s);

	kp->flags = KPROBE_FLAG_FTRACE;
	return arch_prepare_kprobe_ftrace(kp);
}

/*
 * What our two ftrace_ops call.  While a site moves from one to the other
 * both call for it, and upstream's handler would fire it twice: only the
 * ops the site is hooked on goes through.  csky's handler also takes the
 * site one call back (MCOUNT_INSN_SIZE before @ip), so that is looked at
 * too.  No site, or only a breakpoint one: nothing of ours to run.
 *
 * The handler ends without a reschedule (preempt_enable_no_resched): it
 * runs inside the architecture's ftrace caller, which on 64-bit powerpc
 * saves r13 (the CPU's paca) with the other registers and loads it back
 * on the way out.  A task preempted here and moved to another CPU came
 * back to the function with the first CPU's paca, and two CPUs then
 * shared one paca: each changed the other's current task, preempt count
 * and interrupt mask.  A reschedule asked for meanwhile stays pending
 * (TIF_NEED_RESCHED) for the next preempt_enable(), interrupt exit or
 * return to user space.
 */
notrace void kprobe_pp_ftrace_entry(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct ftrace_regs *fregs)
{
	struct kprobe_site *s;

	/* The RCU-sched read side of the lookup, the handler's too. */
	preempt_disable_notrace();
	s = kp_site_find(ip);
	if (!s)
		s = kp_site_find(ip - MCOUNT_INSN_SIZE);
	if (s && s->ftrace && kp_ftrace_ops_acts(s, ops))
		kprobe_ftrace_handler(ip, parent_ip, ops, fregs);
	preempt_enable_no_resched_notrace();
}
NOKPROBE_SYMBOL(kprobe_pp_ftrace_entry);
#endif

/*
 * A page for instruction slots, for architectures that have no
 * alloc_insn_page() of their own: near the kernel text, mapped as execmem
 * maps it (writable where the architecture stores to its slots).
 */
void *__weak alloc_insn_page(void)
{
	return execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
}

#ifdef CONFIG_ARM
/*
 * 32-bit arm idles in plain text: default_idle_call() (noinstr) stops RCU
 * watching the CPU (ct_cpuidle_enter()), then calls arch_cpu_idle(), and
 * that the processor's cpu_do_idle() or a platform's arm_pm_idle().  x86
 * and arm64 keep theirs in .cpuidle.text, inside the noinstr range that no
 * probe may enter; arm's are ordinary functions.  A probe there is hit
 * with RCU not watching, and arm's undefined instruction trap takes its
 * hook lock: lockdep's lock tracepoints warn, the unlock's with the lock
 * held.  Printing that made lockdep save a stack trace, and the unwinder,
 * at the bottom of a secondary CPU's stack (a pc outside kernel text),
 * called in_gate_area_no_mm(): probed as well (ftracetest's
 * multiple_kprobes.tc), it took the CPU back into the trap and onto the
 * lock it held, and the guest hung, stock 6.12 alike.  Nor does the trap
 * hold off a grace period there, which the site lookup and the handlers
 * rely on.  These functions are refused.
 */
int __init arch_populate_kprobe_blacklist(void)
{
	unsigned long idle[] = {
		(unsigned long)arch_cpu_idle,
#ifdef MULTI_CPU
		(unsigned long)PROC_TABLE(_do_idle),
#else
		(unsigned long)cpu_do_idle,
#endif
		(unsigned long)arm_pm_idle,
	};
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(idle); i++) {
		if (!idle[i])
			continue;
		ret = kprobe_add_ksym_blacklist(idle[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}
#endif

/*
 * Some architectures (s390, 32-bit arm) take their breakpoint, step and
 * fault events through the die notifier chain rather than calling into
 * kprobes from their trap code: kprobe_exceptions_notify() is theirs.
 */
int __weak kprobe_exceptions_notify(struct notifier_block *self,
				    unsigned long val, void *data)
{
	return NOTIFY_DONE;
}
NOKPROBE_SYMBOL(kprobe_exceptions_notify);

static struct notifier_block kp_pp_die_nb = {
	.notifier_call = KP_PP_DIE_NOTIFY,
	/* Before anyone else on the chain: the event may be a probe's. */
	.priority = INT_MAX,
};

static int __init kp_pp_init(void)
{
	return register_die_notifier(&kp_pp_die_nb);
}
early_initcall(kp_pp_init);

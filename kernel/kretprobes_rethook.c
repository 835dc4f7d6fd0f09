// SPDX-License-Identifier: GPL-2.0-only
/*
 * Return probes on rethook, for the architectures whose only return
 * trampoline is rethook's (riscv, loongarch, s390, powerpc: they select
 * HAVE_RETHOOK and have no arch_prepare_kretprobe()).  Never on x86, which
 * keeps the core's own trampoline (kretprobes.c, which also has the
 * registration API that calls in here).
 *
 * Each kretprobe owns one struct rethook whose data is the kretprobe and
 * whose maxactive nodes are the kretprobe's instances (the rethook_node
 * is embedded at the start of struct kretprobe_instance, the kretprobe's
 * per-call data after it).  The entry probe takes a node and lets rethook
 * hijack the return; rethook's trampoline calls back here with the node,
 * and the return handler runs.  rethook keeps the task's list of pending
 * returns, finds the real return addresses for the unwinders and retires
 * what a dead task left behind.
 *
 * Unregistering stops the rethook under kprobe_mutex (no node is handed
 * out and no return handler starts from then on) and, after the core's
 * grace period, frees it: rethook frees the nodes still out as their
 * calls return, and the rethook itself after the last of them.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/rethook.h>

#include "kprobes_internal.h"

static int kp_rh_entry(struct kprobe *p, struct pt_regs *regs);

bool kprobe_is_kretprobe(struct kprobe *p)
{
	return p->pre_handler == kp_rh_entry;
}

/*
 * The entry probe of every kretprobe here: a node for this call, the
 * entry handler's word on it, then the return hijacked.  Runs as a kprobe
 * handler: preemption off, this CPU marked as inside kprobes.
 */
static int kp_rh_entry(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct rethook *rh = READ_ONCE(rp->rh);
	struct kretprobe_instance *ri;
	struct rethook_node *node;

	if (unlikely(!rh))
		return 0;
	node = rethook_try_get(rh);
	if (unlikely(!node)) {
		/* All maxactive calls followed, or rethook is being stopped. */
		BUILD_BUG_ON(sizeof(rp->nmissed) != sizeof(atomic_t));
		atomic_inc((atomic_t *)&rp->nmissed);
		return 0;
	}
	ri = container_of(node, struct kretprobe_instance, node);
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		/* Not this call: the node goes back unused. */
		rethook_recycle(node);
		return 0;
	}
	/* Through ftrace, the return address is where ftrace's caller left it. */
	rethook_hook(node, regs, kprobe_ftrace(p));
	return 0;
}
NOKPROBE_SYMBOL(kp_rh_entry);

/*
 * rethook's trampoline found one of our nodes on the returning frame:
 * regs->ip already holds the real return address.  The return handler
 * runs as a kprobe handler would, with this probe as current_kprobe, so
 * that probes hit inside it are counted as missed instead of recursing.
 */
static void kp_rh_return(struct rethook_node *node, void *data,
			 unsigned long ret_addr, struct pt_regs *regs)
{
	struct kretprobe_instance *ri;
	struct kretprobe *rp = data;
	struct kprobe_ctlblk *kcb;
	struct kprobe *prev;
	unsigned long status;

	if (WARN_ON_ONCE(!rp) || !rp->handler)
		return;
	ri = container_of(node, struct kretprobe_instance, node);
	kcb = get_kprobe_ctlblk();
	prev = kprobe_running();
	status = kcb->kprobe_status;
	__this_cpu_write(current_kprobe, &rp->kp);
	kcb->kprobe_status = KPROBE_HIT_ACTIVE;
	rp->handler(ri, regs);
	kcb->kprobe_status = status;
	__this_cpu_write(current_kprobe, prev);
}
NOKPROBE_SYMBOL(kp_rh_return);

int kretprobe_alloc_instances(struct kretprobe *rp)
{
	struct rethook *rh;

	rh = rethook_alloc(rp, kp_rh_return,
			   sizeof(struct kretprobe_instance) + rp->data_size,
			   rp->maxactive);
	if (IS_ERR(rh))
		return PTR_ERR(rh);
	rp->rh = rh;
	rp->kp.pre_handler = kp_rh_entry;
	return 0;
}

/* Never registered, so no node is out: rethook frees it all. */
void kretprobe_free_instances(struct kretprobe *rp)
{
	rethook_free(rp->rh);
	rp->rh = NULL;
}

/*
 * Under kprobe_mutex, before the grace period: no node is handed out and
 * no return handler of @p starts once rethook is stopped.  Those running
 * finish within the grace period (rethook calls them with preemption off).
 */
void kretprobe_detach(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	if (kprobe_is_kretprobe(p) && rp->rh)
		rethook_stop(rp->rh);
}

/*
 * After the grace period: nothing of @p runs any more.  The nodes still
 * on tasks' lists are freed by rethook as their calls return (or their
 * tasks die), and the rethook after them.
 */
void kretprobe_retire(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	if (!kprobe_is_kretprobe(p) || !rp->rh)
		return;
	rethook_free(rp->rh);
	rp->rh = NULL;
}

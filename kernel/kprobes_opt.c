// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jump optimization of kprobes: the generic half.
 *
 * A site starts as a breakpoint.  When nothing forbids it (see
 * kp_opt_eligible()) it is queued, and from then on a hit leaves the trap
 * through the detour buffer's copy of the region the jump will replace,
 * never through the region itself.  The optimizer, a delayed work that
 * batches the sites queued close together, waits for an RCU-tasks grace
 * period, after which no task can still be inside one of those regions
 * (preempted there, or back from an earlier single step), and has the
 * architecture write the jumps.
 *
 * Whatever makes a site ineligible (a post handler, a probe inside its
 * region, disabling, unregistering, the sysctl) takes the jump out at once,
 * under kprobe_mutex, or drops the site from the queue if it was waiting.
 *
 * States (kprobe_site.opt) and lists (kprobe_site.opt_list):
 *   NONE    on no list;
 *   QUEUED  on kp_opt_queue, or on kp_opt_batch while the optimizer waits;
 *   DONE    on kp_opt_done.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/workqueue.h>

#include "kprobes_internal.h"

/* Batch what is registered within this many jiffies. */
#define KP_OPT_DELAY	5

/* debug.kprobes-optimization */
static int kp_opt_enabled = 1;

static LIST_HEAD(kp_opt_queue);
static LIST_HEAD(kp_opt_batch);
static LIST_HEAD(kp_opt_done);

/* Sites to free after the next RCU-tasks grace period. */
static LIST_HEAD(kp_opt_reap_list);
static DEFINE_SPINLOCK(kp_opt_reap_lock);

static void kp_optimizer(struct work_struct *work);
static DECLARE_DELAYED_WORK(kp_opt_work, kp_optimizer);

/* Is another site inside the region a jump at @s would cover? */
static bool kp_opt_region_busy(struct kprobe_site *s)
{
	unsigned long a, addr = (unsigned long)s->addr;

	for (a = addr + 1; a < addr + s->opt_len; a++)
		if (kprobe_site_lookup(a))
			return true;
	return false;
}

static bool kp_opt_eligible(struct kprobe_site *s)
{
	return kp_opt_enabled && s->opt_len && s->armed && !s->gone &&
	       !s->ftrace && !kprobe_site_has_post(s) &&
	       !kp_opt_region_busy(s);
}

static void kp_opt_flag(struct kprobe_site *s, bool optimized)
{
	struct kprobe *p;

	list_for_each_entry(p, &s->probes, list) {
		if (optimized)
			p->flags |= KPROBE_FLAG_OPTIMIZED;
		else
			p->flags &= ~KPROBE_FLAG_OPTIMIZED;
	}
}

/*
 * [OPTIMIZED] shows from the moment a site is queued, as upstream's does:
 * its hits already skip the single step, and tools (ftrace's selftests)
 * look for the flag right after enabling a probe.
 */
static void kp_opt_set(struct kprobe_site *s, u8 state)
{
	/* The hit path reads it without the mutex. */
	WRITE_ONCE(s->opt, state);
	kp_opt_flag(s, state != KPROBE_OPT_NONE);
}

/* Unoptimize the DONE sites on @list, then forget them. */
static void kp_opt_undo(struct list_head *list)
{
	struct kprobe_site *s, *tmp;

	if (list_empty(list))
		return;
	arch_unoptimize_kprobe_sites(list);
	list_for_each_entry_safe(s, tmp, list, opt_list) {
		list_del_init(&s->opt_list);
		kp_opt_set(s, KPROBE_OPT_NONE);
	}
}

void kprobe_opt_stop(struct kprobe_site *s)
{
	LIST_HEAD(one);

	lockdep_assert_held(&kprobe_mutex);
	switch (s->opt) {
	case KPROBE_OPT_QUEUED:
		list_del_init(&s->opt_list);
		kp_opt_set(s, KPROBE_OPT_NONE);
		break;
	case KPROBE_OPT_DONE:
		list_move(&s->opt_list, &one);
		kp_opt_undo(&one);
		break;
	}
}

void kprobe_opt_forget(struct kprobe_site *s)
{
	lockdep_assert_held(&kprobe_mutex);
	list_del_init(&s->opt_list);
	kp_opt_set(s, KPROBE_OPT_NONE);
}

void kprobe_opt_sync(struct kprobe_site *s)
{
	lockdep_assert_held(&kprobe_mutex);
	if (!kp_opt_eligible(s)) {
		kprobe_opt_stop(s);
		return;
	}
	switch (s->opt) {
	case KPROBE_OPT_NONE:
		s->opt_used = true;
		list_add_tail(&s->opt_list, &kp_opt_queue);
		kp_opt_set(s, KPROBE_OPT_QUEUED);
		schedule_delayed_work(&kp_opt_work, KP_OPT_DELAY);
		break;
	default:
		kp_opt_flag(s, true);	/* for a probe that just joined */
		break;
	}
}

void kprobe_opt_neighbours(unsigned long addr)
{
	struct kprobe_site *s;
	unsigned long a;

	lockdep_assert_held(&kprobe_mutex);
	for (a = addr - (KPROBE_OPT_MAX_LEN - 1); a < addr; a++) {
		s = kprobe_site_lookup(a);
		if (s && a + s->opt_len > addr)
			kprobe_opt_sync(s);
	}
}

void kprobe_opt_reap(struct kprobe_site *s)
{
	spin_lock(&kp_opt_reap_lock);
	list_add_tail(&s->reap, &kp_opt_reap_list);
	spin_unlock(&kp_opt_reap_lock);
	schedule_delayed_work(&kp_opt_work, KP_OPT_DELAY);
}

/* The work item never runs twice at once, so one batch list will do. */
static void kp_optimizer(struct work_struct *work)
{
	struct kprobe_site *s, *tmp;
	LIST_HEAD(reap);
	bool idle;

	/*
	 * The batch stays QUEUED: whoever changes one of its sites meanwhile
	 * takes it off the batch under the mutex, as from the queue.
	 */
	mutex_lock(&kprobe_mutex);
	list_splice_init(&kp_opt_queue, &kp_opt_batch);
	idle = list_empty(&kp_opt_batch);
	mutex_unlock(&kprobe_mutex);
	spin_lock(&kp_opt_reap_lock);
	list_splice_init(&kp_opt_reap_list, &reap);
	spin_unlock(&kp_opt_reap_lock);
	if (idle && list_empty(&reap))
		return;

	/* Every task inside a region, or a detour, before now has left. */
	synchronize_rcu_tasks();

	mutex_lock(&kprobe_mutex);
	if (!list_empty(&kp_opt_batch)) {
		arch_optimize_kprobe_sites(&kp_opt_batch);
		list_for_each_entry_safe(s, tmp, &kp_opt_batch, opt_list) {
			list_move_tail(&s->opt_list, &kp_opt_done);
			kp_opt_set(s, KPROBE_OPT_DONE);
		}
	}
	mutex_unlock(&kprobe_mutex);

	list_for_each_entry_safe(s, tmp, &reap, reap)
		kprobe_site_destroy(s);
}

/**
 * wait_for_kprobe_optimizer() - wait until every queued probe is optimized
 *
 * Sites queued before the call have their jumps written (or were taken out
 * of the queue) when it returns.  May sleep; call without kprobe locks.
 */
void wait_for_kprobe_optimizer(void)
{
	bool more;

	do {
		flush_delayed_work(&kp_opt_work);
		mutex_lock(&kprobe_mutex);
		more = !list_empty(&kp_opt_queue) || !list_empty(&kp_opt_batch);
		mutex_unlock(&kprobe_mutex);
	} while (more);
}
EXPORT_SYMBOL_GPL(wait_for_kprobe_optimizer);

/* The sysctl changed: queue every eligible site, or undo every jump. */
static void kp_opt_apply(void)
{
	struct kprobe_site *s, *tmp;
	unsigned int b;

	lockdep_assert_held(&kprobe_mutex);
	if (!kp_opt_enabled) {
		list_for_each_entry_safe(s, tmp, &kp_opt_queue, opt_list)
			kprobe_opt_stop(s);
		list_for_each_entry_safe(s, tmp, &kp_opt_batch, opt_list)
			kprobe_opt_stop(s);
		kp_opt_undo(&kp_opt_done);	/* one text_poke pass for all */
		return;
	}
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++)
		hlist_for_each_entry(s, &kprobe_sites[b], hash)
			kprobe_opt_sync(s);
}

static int kp_opt_sysctl(const struct ctl_table *table, int write,
			 void *buffer, size_t *lenp, loff_t *ppos)
{
	int ret;

	mutex_lock(&kprobe_mutex);
	ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);
	if (!ret && write)
		kp_opt_apply();
	mutex_unlock(&kprobe_mutex);
	return ret;
}

static struct ctl_table kp_opt_sysctls[] = {
	{
		.procname	= "kprobes-optimization",
		.data		= &kp_opt_enabled,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= kp_opt_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static int __init kp_opt_init(void)
{
	register_sysctl_init("debug", kp_opt_sysctls);
	return 0;
}
late_initcall(kp_opt_init);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Return probes.  A kretprobe is a kprobe on a function's entry whose
 * handler takes an instance from the probe's pool and replaces the return
 * address with a trampoline, which runs the return handlers.
 *
 * The registration API at the end of this file serves both backends.  The
 * core's own (here): the architecture's trampoline calls
 * kretprobe_trampoline_handler(), which runs the return handlers and
 * answers where to return to.  Pending instances are kept on a per-task
 * list, newest first, so that the unwinders can find the real return
 * addresses (kretprobe_find_ret_addr()).  An unregistered kretprobe's
 * instances still out retire themselves as their calls return.  With
 * CONFIG_KRETPROBE_ON_RETHOOK the instances, the trampoline and the
 * per-task list are rethook's instead (kretprobes_rethook.c).
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "kprobes_internal.h"

#ifndef CONFIG_KRETPROBE_ON_RETHOOK

static notrace int pre_handler_kretprobe(struct kprobe *p,
					 struct pt_regs *regs);

bool kprobe_is_kretprobe(struct kprobe *p)
{
	return p->pre_handler == pre_handler_kretprobe;
}

static void kp_holder_free(struct rcu_head *head)
{
	struct kretprobe_holder *rph = container_of(head,
						    struct kretprobe_holder,
						    rcu);

	objpool_free(&rph->pool);
	free_percpu(rph->cache);
	kfree(rph);
}

/*
 * Drop @n references to the holder.  The last one may go in the return
 * trampoline, so the memory goes back after a grace period, not here.
 */
static void kp_holder_put(struct kretprobe_holder *rph, unsigned int n)
{
	if (refcount_sub_and_test(n, &rph->ref))
		call_rcu(&rph->rcu, kp_holder_free);
}
NOKPROBE_SYMBOL(kp_holder_put);

/*
 * Free instances are kept in a per-CPU cache of one, then in the objpool.
 * A cache slot only ever changes by an atomic exchange: from its own CPU
 * on the hit path, from any CPU that finds the rest empty
 * (kp_cache_steal()), and at retirement; so an instance is never handed
 * out twice, and never stranded on one CPU while another misses for want
 * of it (maxactive holds as with the pool alone).  The slot spares the
 * common entry and return the pool's interrupt masking and ring indices.
 * Callers hold preemption off.
 */
static noinline struct kretprobe_instance *
kp_cache_steal(struct kretprobe_holder *rph)
{
	struct kretprobe_instance *ri;
	int cpu;

	for_each_possible_cpu(cpu) {
		ri = xchg(per_cpu_ptr(rph->cache, cpu), NULL);
		if (ri)
			return ri;
	}
	return NULL;
}
NOKPROBE_SYMBOL(kp_cache_steal);

/*
 * The pool's part tries this CPU's objpool slot first without masking
 * interrupts: taking from a slot is safe against whatever an interrupt
 * does to it meanwhile, as it is for the other CPUs, which take from it
 * the same way when theirs are empty.
 */
static nokprobe_inline struct kretprobe_instance *
kp_pool_get(struct kretprobe_holder *rph)
{
	struct kretprobe_instance *ri = xchg(this_cpu_ptr(rph->cache), NULL);

	if (likely(ri))
		return ri;
	ri = __objpool_try_get_slot(&rph->pool, raw_smp_processor_id());
	if (!ri)
		ri = objpool_pop(&rph->pool);
	return ri ? ri : kp_cache_steal(rph);
}

static nokprobe_inline void kp_pool_put(struct kretprobe_holder *rph,
					struct kretprobe_instance *ri)
{
	if (cmpxchg(this_cpu_ptr(rph->cache), NULL, ri))
		objpool_push(ri, &rph->pool);
}

/* An instance is done with: back to the pool, or retired with its probe. */
static void kp_instance_recycle(struct kretprobe_instance *ri)
{
	struct kretprobe_holder *rph = ri->rph;

	ri->task = NULL;
	rcu_read_lock_sched_notrace();
	if (likely(!READ_ONCE(rph->dead)))
		kp_pool_put(rph, ri);
	else
		kp_holder_put(rph, 1);
	rcu_read_unlock_sched_notrace();
}
NOKPROBE_SYMBOL(kp_instance_recycle);

static nokprobe_inline void kp_count_rp_miss(struct kretprobe *rp)
{
	BUILD_BUG_ON(sizeof(rp->nmissed) != sizeof(atomic_t));
	atomic_inc((atomic_t *)&rp->nmissed);
}

/*
 * The entry handler said no: the instance goes back.  Out of line, so that
 * the usual entry (no entry handler) saves fewer registers.
 */
static noinline bool kp_kretprobe_entry(struct kretprobe *rp,
					struct kretprobe_instance *ri,
					struct pt_regs *regs)
{
	if (!rp->entry_handler(ri, regs))
		return true;
	ri->task = NULL;
	kp_pool_put(ri->rph, ri);
	return false;
}
NOKPROBE_SYMBOL(kp_kretprobe_entry);

/*
 * The entry probe of every kretprobe: take an instance, hijack the return.
 * notrace, as the rest of the hit path: an instruction less per hit.
 */
static notrace int pre_handler_kretprobe(struct kprobe *p,
					 struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_holder *rph = READ_ONCE(rp->rph);
	struct kretprobe_instance *ri;

	if (unlikely(!rph))
		return 0;
	ri = kp_pool_get(rph);
	if (unlikely(!ri)) {
		kp_count_rp_miss(rp);
		return 0;
	}

	ri->task = current;
	if (unlikely(rp->entry_handler) && !kp_kretprobe_entry(rp, ri, regs))
		return 0;
	arch_prepare_kretprobe(ri, regs);
	/* Only this task touches its list: no atomics needed. */
	__llist_add(&ri->llist, &current->kretprobe_instances);
	return 0;
}
NOKPROBE_SYMBOL(pre_handler_kretprobe);

static nokprobe_inline struct kretprobe_instance *kp_ri(struct llist_node *n)
{
	return container_of(n, struct kretprobe_instance, llist);
}

/*
 * The first instance at or after @n that knows a real return address (the
 * others on the same frame hold the trampoline's, having been stacked on
 * top of another kretprobe of the same function).
 */
static struct llist_node *kp_next_real(struct llist_node *n)
{
	for (; n; n = n->next)
		if (!is_kretprobe_trampoline((unsigned long)kp_ri(n)->ret_addr))
			return n;
	return NULL;
}
NOKPROBE_SYMBOL(kp_next_real);

/**
 * kretprobe_find_ret_addr() - the real return address behind a trampoline
 * @tsk: the task whose stack is being walked (current, or not running)
 * @fp: the stack slot that holds the trampoline's address
 * @cur: the walker's cursor; set to the instance found, not needed to search
 *
 * Return: the address, or 0 when no pending return of @tsk is at @fp.
 */
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	struct llist_node *n;

	/* Pending returns are few: search from the newest every time. */
	for (n = kp_next_real(tsk->kretprobe_instances.first); n;
	     n = kp_next_real(n->next)) {
		if (kp_ri(n)->fp == fp) {
			*cur = n;
			return (unsigned long)kp_ri(n)->ret_addr;
		}
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kretprobe_find_ret_addr);
NOKPROBE_SYMBOL(kretprobe_find_ret_addr);

/*
 * Instances above @fp belong to frames that are gone without returning
 * through us: the "call count does not match return count" case.
 */
static void kp_drop_stale(void *fp)
{
	struct llist_head *head = &current->kretprobe_instances;
	struct kretprobe_instance *ri;

	while (head->first && kp_ri(head->first)->fp != fp &&
	       (unsigned long)kp_ri(head->first)->fp < (unsigned long)fp) {
		ri = kp_ri(head->first);
		pr_err("kretprobe BUG!: Processing kretprobe %p @ %pS\n",
		       ri, ri->ret_addr);
		head->first = head->first->next;
		kp_instance_recycle(ri);
	}
}
NOKPROBE_SYMBOL(kp_drop_stale);

/*
 * The trampoline was reached from a frame no instance knows: there is no
 * address to return to.  This task cannot go on, but the kernel can, as
 * after an oops: the task dies instead of the machine.
 */
static void __noreturn kp_lost_return(void)
{
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
	make_task_dead(SIGKILL);
}
NOKPROBE_SYMBOL(kp_lost_return);

static unsigned long kp_trampoline(struct pt_regs *regs, void *fp)
{
	struct llist_head *head = &current->kretprobe_instances;
	struct llist_node *n, *last, *next;
	kprobe_opcode_t *ret_addr;
	struct kretprobe *rp;

	kp_drop_stale(fp);
	last = kp_next_real(head->first);
	if (WARN_ONCE(!last || kp_ri(last)->fp != fp,
		      "kretprobe: no pending return at %p for %s/%d\n",
		      fp, current->comm, task_pid_nr(current)))
		kp_lost_return();
	ret_addr = kp_ri(last)->ret_addr;

	/* Handlers and unwinders see where the function really returns. */
	instruction_pointer_set(regs, (unsigned long)ret_addr);
	arch_kretprobe_fixup_return(regs, ret_addr);

	for (n = head->first; ; n = n->next) {
		struct kretprobe_instance *ri = kp_ri(n);

		rp = get_kretprobe(ri);
		ri->ret_addr = ret_addr;
		/*
		 * Disabling stops new entries, not calls in flight: their
		 * return handlers still run, since users pair them with
		 * entry handlers.
		 */
		if (rp && rp->handler && !READ_ONCE(ri->rph->dead)) {
			__this_cpu_write(current_kprobe, &rp->kp);
			rp->handler(ri, regs);
			__this_cpu_write(current_kprobe, &kprobe_busy);
		}
		if (n == last)
			break;
	}

	/* Unlink this frame's instances, then give them back. */
	n = head->first;
	head->first = last->next;
	for (; ; n = next) {
		next = n->next;
		kp_instance_recycle(kp_ri(n));
		if (n == last)
			break;
	}
	return (unsigned long)ret_addr;
}
NOKPROBE_SYMBOL(kp_trampoline);

/*
 * The usual return: one instance on the frame, the newest of the task's,
 * holding the real return address (no stale ones above it, no second
 * kretprobe of the same function stacked on it).  What kp_trampoline()
 * does for that case, without its searches.  Preemption is off, so the
 * instance goes back to the pool without a read-side section of its own.
 */
static nokprobe_inline unsigned long
kp_trampoline_one(struct pt_regs *regs, struct kretprobe_instance *ri)
{
	struct kretprobe_holder *rph = ri->rph;
	unsigned long ret_addr = (unsigned long)ri->ret_addr;
	struct kretprobe *rp;

	instruction_pointer_set(regs, ret_addr);
	arch_kretprobe_fixup_return(regs, (kprobe_opcode_t *)ret_addr);
	rp = get_kretprobe(ri);
	if (rp && rp->handler && !READ_ONCE(rph->dead)) {
		__this_cpu_write(current_kprobe, &rp->kp);
		rp->handler(ri, regs);
	}
	current->kretprobe_instances.first = ri->llist.next;
	ri->task = NULL;
	if (likely(!READ_ONCE(rph->dead)))
		kp_pool_put(rph, ri);
	else
		kp_holder_put(rph, 1);
	return ret_addr;
}

/* The newest instance alone when it is this frame's, else the search. */
static nokprobe_inline unsigned long
kp_trampoline_dispatch(struct pt_regs *regs, void *frame_pointer)
{
	struct llist_node *n = current->kretprobe_instances.first;

	if (likely(n && kp_ri(n)->fp == frame_pointer &&
		   !is_kretprobe_trampoline((unsigned long)kp_ri(n)->ret_addr)))
		return kp_trampoline_one(regs, kp_ri(n));
	return kp_trampoline(regs, frame_pointer);
}

/**
 * kretprobe_trampoline_handler() - a probed function returned
 * @regs: the registers at the return, as the trampoline saved them
 * @frame_pointer: the stack slot the return address was in
 *
 * Runs the return handlers of every kretprobe that caught this call.
 * Return: the address to return to.
 */
notrace unsigned long kretprobe_trampoline_handler(struct pt_regs *regs,
						   void *frame_pointer)
{
	unsigned long ret;

	/* kprobe_busy_begin(), inlined: probes hit from here on are missed. */
	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	ret = kp_trampoline_dispatch(regs, frame_pointer);
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
	return ret;
}
NOKPROBE_SYMBOL(kretprobe_trampoline_handler);

/**
 * __kretprobe_trampoline_handler() - the same, from a kprobe's handler
 * @regs: the registers at the return
 * @frame_pointer: the stack slot the return address was in, or NULL
 *
 * For the architectures whose trampoline is itself a kprobe (upstream's
 * mips, sparc, parisc, sh, arc): they call this from that probe's pre
 * handler, in the middle of its hit.  The probe being handled stays this
 * CPU's current one when the return handlers are done, so that the
 * architecture's hit path finishes it as it began it.
 * Return: the address to return to.
 */
notrace unsigned long __kretprobe_trampoline_handler(struct pt_regs *regs,
						     void *frame_pointer)
{
	struct kprobe *cur = __this_cpu_read(current_kprobe);
	unsigned long status = __this_cpu_read(kprobe_ctlblk.kprobe_status);
	unsigned long ret;

	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	ret = kp_trampoline_dispatch(regs, frame_pointer);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, status);
	__this_cpu_write(current_kprobe, cur);
	preempt_enable();
	return ret;
}
NOKPROBE_SYMBOL(__kretprobe_trampoline_handler);

/**
 * kprobe_flush_task() - a task is freed: retire its pending instances
 * @tk: the task
 */
void kprobe_flush_task(struct task_struct *tk)
{
	struct llist_node *n = tk->kretprobe_instances.first, *next;

	/*
	 * No handler runs here, so this CPU need not be marked busy: that
	 * would also clobber current_kprobe of a trampoline this RCU
	 * callback may have interrupted.
	 */
	tk->kretprobe_instances.first = NULL;
	for (; n; n = next) {
		next = n->next;
		kp_instance_recycle(kp_ri(n));
	}
}
NOKPROBE_SYMBOL(kprobe_flush_task);

static int kp_instance_init(void *obj, void *context)
{
	struct kretprobe_instance *ri = obj;

	ri->rph = context;
	return 0;
}

#ifndef arch_kretprobe_fixup_return
/*
 * After the trampoline: put @correct_ret_addr where the architecture's
 * trampoline returns from, when ip alone does not say it.  An
 * architecture may define it inline in asm/kprobes.h instead.
 */
void __weak arch_kretprobe_fixup_return(struct pt_regs *regs,
					kprobe_opcode_t *correct_ret_addr)
{
}
NOKPROBE_SYMBOL(arch_kretprobe_fixup_return);
#endif

/* The instances of @rp, with the entry handler that hands them out. */
int kretprobe_alloc_instances(struct kretprobe *rp)
{
	struct kretprobe_holder *rph;
	int ret;

	rph = kzalloc(sizeof(*rph), GFP_KERNEL);
	if (!rph)
		return -ENOMEM;
	rph->cache = alloc_percpu(struct kretprobe_instance *);
	if (!rph->cache) {
		kfree(rph);
		return -ENOMEM;
	}
	ret = objpool_init(&rph->pool, rp->maxactive,
			   sizeof(struct kretprobe_instance) + rp->data_size,
			   GFP_KERNEL, rph, kp_instance_init, NULL);
	if (ret) {
		/* Too many instances or too little memory: -ENOMEM, as upstream. */
		free_percpu(rph->cache);
		kfree(rph);
		return -ENOMEM;
	}
	refcount_set(&rph->ref, rp->maxactive + 1);
	rcu_assign_pointer(rph->rp, rp);
	rp->rph = rph;
	rp->kp.pre_handler = pre_handler_kretprobe;
	return 0;
}

/* @rp never got registered: free what kretprobe_alloc_instances() gave it. */
void kretprobe_free_instances(struct kretprobe *rp)
{
	struct kretprobe_holder *rph = rp->rph;

	rp->rph = NULL;
	objpool_free(&rph->pool);
	free_percpu(rph->cache);
	kfree(rph);
}

/*
 * Stop the kretprobe's return handlers from starting; under kprobe_mutex,
 * before the grace period.
 */
void kretprobe_detach(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	if (kprobe_is_kretprobe(p) && rp->rph)
		WRITE_ONCE(rp->rph->dead, true);
}

/*
 * After the grace period nobody pushes into the pool any more: free what
 * is in it, and let the pending instances retire the rest as they return.
 */
void kretprobe_retire(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_holder *rph;
	unsigned int n = 1;
	int cpu;

	if (!kprobe_is_kretprobe(p) || !rp->rph)
		return;
	rph = rp->rph;
	rp->rph = NULL;
	/* No handler of @rp runs any more: calls still out find nothing. */
	RCU_INIT_POINTER(rph->rp, NULL);
	while (objpool_pop(&rph->pool))
		n++;
	for_each_possible_cpu(cpu)
		if (xchg(per_cpu_ptr(rph->cache, cpu), NULL))
			n++;
	kp_holder_put(rph, n);
}

#endif /* !CONFIG_KRETPROBE_ON_RETHOOK */

/*
 * Functions whose return cannot be taken over (x86: __switch_to(), which
 * returns on another task's stack).  Most architectures have none.
 */
bool __weak arch_kretprobe_refused(unsigned long func)
{
	return false;
}

/* A return probe goes on the entry of a function that allows it. */
static int kp_kretprobe_check_func(struct kprobe *p)
{
	unsigned long size, offset;
	bool on_entry = false;
	kprobe_opcode_t *at;

	at = kprobe_resolve(p->addr, p->symbol_name, p->offset, &on_entry);
	if (IS_ERR(at))
		return PTR_ERR(at);
	if (!on_entry)
		return -EINVAL;
	if (kallsyms_lookup_size_offset((unsigned long)at, &size, &offset) &&
	    arch_kretprobe_refused((unsigned long)at - offset))
		return -EINVAL;
	return 0;
}

static int kp_kretprobe_prepare(struct kretprobe *rp)
{
	int ret;

	ret = kp_kretprobe_check_func(&rp->kp);
	if (ret)
		return ret;
	if (rp->data_size > KRETPROBE_MAX_DATA_SIZE)
		return -E2BIG;
	if (rp->maxactive <= 0)
		rp->maxactive = max_t(int, 10, 2 * num_possible_cpus());

	ret = kretprobe_alloc_instances(rp);
	if (ret)
		return ret;
	rp->nmissed = 0;
	rp->kp.post_handler = NULL;
	return 0;
}

/**
 * register_kretprobe() - probe a function's returns
 * @rp: the return probe; set rp->kp.symbol_name or rp->kp.addr (a
 *	function's entry), the handlers, maxactive and data_size
 *
 * Return: 0, or the errors of register_kprobe(), -EINVAL when the address
 * is not a function's entry, -E2BIG when data_size is too large.
 */
int register_kretprobe(struct kretprobe *rp)
{
	bool registered;
	int ret;

	/* Preparing a registered one would take its instances from it. */
	mutex_lock(&kprobe_mutex);
	registered = kretprobe_instances(rp) && kprobe_site_of(&rp->kp);
	mutex_unlock(&kprobe_mutex);
	if (registered)
		return -EINVAL;

	ret = kp_kretprobe_prepare(rp);
	if (ret)
		return ret;
	ret = register_kprobe(&rp->kp);
	if (ret)
		kretprobe_free_instances(rp);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobe);

/**
 * register_kretprobes() - register several return probes, all or none
 * @rps: the return probes
 * @num: how many
 *
 * Return: 0, or the first error (the ones before it are unregistered).
 */
int register_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	bool registered = false;
	int i, ret = 0;

	if (num <= 0)
		return -EINVAL;
	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;

	/* Preparing a registered one would take its instances from it. */
	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num && !registered; i++)
		registered = kretprobe_instances(rps[i]) &&
			     kprobe_site_of(&rps[i]->kp);
	mutex_unlock(&kprobe_mutex);
	if (registered) {
		ret = -EINVAL;
		goto out;
	}

	for (i = 0; i < num; i++)
		kretprobe_instances(rps[i]) = NULL;	/* none is registered */
	for (i = 0; i < num; i++) {
		/* Prepared already: it is in the array twice. */
		ret = kretprobe_instances(rps[i]) ? -EINVAL :
			kp_kretprobe_prepare(rps[i]);
		if (ret)
			break;
		kps[i] = &rps[i]->kp;
	}
	if (!ret)
		ret = kprobe_register_many(kps, num);
	/*
	 * On failure the registered ones were retired (their instances
	 * cleared); the
	 * others still hold what kp_kretprobe_prepare() gave them.
	 */
	if (ret)
		for (i = 0; i < num; i++)
			if (kretprobe_instances(rps[i]))
				kretprobe_free_instances(rps[i]);
out:
	kvfree(kps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobes);

/**
 * unregister_kretprobe() - remove a return probe
 * @rp: the return probe
 *
 * Calls still pending return to their callers as if never probed; the
 * instances are freed after the last of them has returned.
 */
void unregister_kretprobe(struct kretprobe *rp)
{
	struct kprobe *p = &rp->kp;

	kprobe_unregister_many(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kretprobe);

/**
 * unregister_kretprobes() - remove several return probes, waiting once
 * @rps: the return probes
 * @num: how many
 */
void unregister_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	int i;

	if (num <= 0)
		return;
	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL);
	if (!kps) {
		for (i = 0; i < num; i++)
			unregister_kretprobe(rps[i]);
		return;
	}
	for (i = 0; i < num; i++)
		kps[i] = &rps[i]->kp;
	kprobe_unregister_many(kps, num);
	kvfree(kps);
}
EXPORT_SYMBOL_GPL(unregister_kretprobes);

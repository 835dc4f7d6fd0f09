// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-process probes: register_uprobe() puts a probe on an address of one
 * process.  It is a consumer of the file's site like any other, whose
 * filter accepts that process alone; with handler_in_interrupt its handler
 * runs in the trap itself, with interrupts off, so the probes are read
 * under RCU there.  The process's exit or exec ends them, and a worker
 * (the reaper) takes them off their sites where the caller could not wait
 * for that.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uprobes.h>
#include <linux/workqueue.h>

#include "uprobes_internal.h"

/* A per-process probe: the consumer register_uprobe() puts on a site. */
struct uprobe_seed {
	struct uprobe_consumer	uc;
	struct uprobe		*u;		/* the caller's */
	struct uprobe_site	*site;
	struct mm_struct	*mm;		/* mmgrab()bed */
	unsigned long		vaddr;
	bool			gone;		/* exec, exit or unregistered */
	bool			in_irq;		/* u->handler_in_interrupt */
	atomic_long_t		hits;		/* handler calls */
	struct list_head	node;		/* seeds, RCU */
	struct list_head	reap;		/* reap_list */
};

LIST_HEAD(uprobe_seeds);
static DEFINE_SPINLOCK(seed_lock);
static LIST_HEAD(reap_list);
static void seed_reap_fn(struct work_struct *work);
static DECLARE_WORK(seed_reap_work, seed_reap_fn);

static bool seed_filter(struct uprobe_consumer *uc, struct mm_struct *mm)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	return mm == seed->mm && !READ_ONCE(seed->gone);
}

static int seed_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	if (!seed_filter(uc, current->mm))
		return UPROBE_HANDLER_REMOVE;
	/*
	 * The site is armed wherever the process maps the file: a second
	 * mapping of the same text is not the address asked for.
	 */
	if (current->utask->bp_vaddr != seed->vaddr)
		return 0;
	/* Ran in the trap already (uprobe_pre_sstep_notifier()). */
	if (!seed->in_irq) {
		atomic_long_inc(&seed->hits);
		seed->u->handler(seed->u, regs);
	}
	return 0;
}

static int seed_ret_handler(struct uprobe_consumer *uc, unsigned long func,
			    struct pt_regs *regs)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	if (seed_filter(uc, current->mm) && func == seed->vaddr)
		seed->u->ret_handler(seed->u, func, regs);
	return 0;
}

/*
 * Take @seed off its site (unless its registration failed) and free it;
 * may sleep.
 */
static void seed_detach(struct uprobe_seed *seed)
{
	if (seed->site)
		uprobe_unregister_nosync(&seed->site->handle, &seed->uc);
	uprobe_sync_consumers();
	/* The trap looks at the seeds list under RCU. */
	synchronize_rcu();
	mmdrop(seed->mm);
	kfree(seed);
}

static void seed_reap_fn(struct work_struct *work)
{
	struct uprobe_seed *seed;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&seed_lock, flags);
		seed = list_first_entry_or_null(&reap_list, struct uprobe_seed,
						reap);
		if (seed)
			list_del(&seed->reap);
		spin_unlock_irqrestore(&seed_lock, flags);
		if (!seed)
			break;
		seed_detach(seed);
	}
}

/* Unlink @seed from the caller's struct uprobe; seed_lock held. */
static void seed_unlink(struct uprobe_seed *seed)
{
	WRITE_ONCE(seed->gone, true);
	list_del_rcu(&seed->node);
	seed->u->seed = NULL;
}

static struct uprobe_seed *seed_of(struct uprobe *u)
{
	struct uprobe_seed *seed;

	list_for_each_entry(seed, &uprobe_seeds, node)
		if (seed->u == u)
			return seed;
	return NULL;
}

/**
 * register_uprobe() - probe an address in one process
 * @u: pid, vaddr and handler set, ret_handler and handler_in_interrupt
 *	optional, the rest zero
 *
 * Every thread of the process hits it, threads created later too; forked
 * children do not.  exec and exit end the probe.
 *
 * May sleep.  When called from a handler of another probe and it fails,
 * other threads may still be running @u's handler: call unregister_uprobe()
 * outside any handler before freeing @u (it then waits for them).
 *
 * Return: 0; -EINVAL for no handler, @u already registered, a kernel
 * thread, an address not in an executable mapping or in one that is
 * writable or shared; -ESRCH when there is no such process;
 * -EOPNOTSUPP for anonymous code; -EEXIST when someone else's breakpoint
 * is already there; or an error of uprobe_register() (-ENOEXEC,
 * -ENOTSUPP for an instruction that cannot be probed, -ENOMEM).
 */
int register_uprobe(struct uprobe *u)
{
	struct uprobe_site *existing;
	struct uprobe_seed *seed;
	struct task_struct *task;
	struct vm_area_struct *vma;
	struct inode *inode = NULL;
	struct mm_struct *mm;
	struct uprobe *h;
	unsigned long flags;
	loff_t offset = 0;
	bool reap;
	int ret = 0;
	uprobe_opcode_t bp = 0;

	might_sleep();
	if (!u || !u->handler)
		return -EINVAL;
	spin_lock_irqsave(&seed_lock, flags);
	if (seed_of(u))
		ret = -EINVAL;
	spin_unlock_irqrestore(&seed_lock, flags);
	if (ret)
		return ret;

	task = find_get_task_by_vpid(u->pid);
	if (!task)
		return -ESRCH;
	if (task->flags & PF_KTHREAD) {
		put_task_struct(task);
		return -EINVAL;
	}
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return -ESRCH;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, u->vaddr);
	if (!vma || !(vma->vm_flags & VM_EXEC))
		ret = -EINVAL;
	else if (!vma->vm_file)
		ret = -EOPNOTSUPP;
	else if (!valid_vma(vma, true))
		ret = -EINVAL;
	else
		ret = uprobe_access_mm(mm, u->vaddr, &bp, UPROBE_SWBP_INSN_SIZE,
				       false);
	if (!ret) {
		inode = igrab(file_inode(vma->vm_file));
		offset = vma_offset(vma, u->vaddr);
	}
	mmap_read_unlock(mm);
	if (!ret && !inode)
		ret = -ESRCH;
	if (ret)
		goto out_mm;

	/* A breakpoint that is not ours: a debugger's, say. */
	existing = uprobe_site_find(inode, offset);
	if (existing)
		uprobe_site_put(existing);
	else if (is_swbp_insn(&bp)) {
		ret = -EEXIST;
		goto out_inode;
	}

	seed = kzalloc(sizeof(*seed), GFP_KERNEL);
	if (!seed) {
		ret = -ENOMEM;
		goto out_inode;
	}
	seed->u = u;
	seed->mm = mm;
	mmgrab(mm);
	seed->vaddr = u->vaddr;
	seed->in_irq = u->handler_in_interrupt;
	seed->uc.handler = seed_handler;
	seed->uc.filter = seed_filter;
	if (u->ret_handler)
		seed->uc.ret_handler = seed_ret_handler;
	INIT_LIST_HEAD(&seed->reap);

	/* On the list first, so the trap finds it from the first hit on. */
	spin_lock_irqsave(&seed_lock, flags);
	if (seed_of(u)) {
		ret = -EINVAL;
	} else {
		list_add_rcu(&seed->node, &uprobe_seeds);
		u->seed = seed;
	}
	spin_unlock_irqrestore(&seed_lock, flags);
	if (ret) {
		mmdrop(mm);
		kfree(seed);
		goto out_inode;
	}

	h = uprobe_register(inode, offset, 0, &seed->uc);
	if (IS_ERR(h)) {
		ret = PTR_ERR(h);
		/*
		 * From a handler, threads may still be in seed_handler()
		 * (uprobe_register() could not wait): the reaper frees it,
		 * and unregister_uprobe() waits for the reaper.
		 */
		reap = in_uprobe_handler();
		spin_lock_irqsave(&seed_lock, flags);
		if (u->seed == seed)
			seed_unlink(seed);
		if (reap)
			list_add_tail(&seed->reap, &reap_list);
		spin_unlock_irqrestore(&seed_lock, flags);
		if (reap) {
			schedule_work(&seed_reap_work);
		} else {
			synchronize_rcu();
			mmdrop(mm);
			kfree(seed);
		}
		goto out_inode;
	}
	/*
	 * exit, exec or unregister_uprobe() may have come meanwhile and left
	 * the reaping to us: they only queue seeds that have their site.
	 */
	spin_lock_irqsave(&seed_lock, flags);
	seed->site = h->site;
	reap = seed->gone;
	if (reap)
		list_add_tail(&seed->reap, &reap_list);
	spin_unlock_irqrestore(&seed_lock, flags);
	/* Not seed->reap: once queued, the reaper may free it. */
	if (reap)
		schedule_work(&seed_reap_work);
out_inode:
	iput(inode);
out_mm:
	mmput(mm);
	return ret;
}
EXPORT_SYMBOL_GPL(register_uprobe);

/**
 * unregister_uprobe() - remove a probe of register_uprobe()
 * @u: the probe
 *
 * May be called from the probe's handler, in either context: the probe is
 * off at once, but other threads may still be running the handler when it
 * returns.  Elsewhere it sleeps until no handler of @u runs, also when the
 * probe was already off (exit, exec, or from the handler), so @u may be
 * freed when it returns; the kernel may write to @u until then.
 */
void unregister_uprobe(struct uprobe *u)
{
	struct uprobe_seed *seed;
	unsigned long flags;
	bool deferred;

	spin_lock_irqsave(&seed_lock, flags);
	seed = seed_of(u);
	if (seed)
		seed_unlink(seed);
	/* Registration still in progress: register_uprobe() reaps it. */
	if (seed && !seed->site)
		seed = NULL;
	/* From a handler we may neither sleep nor wait for ourselves. */
	deferred = seed && (irqs_disabled_flags(flags) || in_atomic() ||
			    in_uprobe_handler());
	if (deferred)
		list_add_tail(&seed->reap, &reap_list);
	spin_unlock_irqrestore(&seed_lock, flags);
	if (deferred) {
		schedule_work(&seed_reap_work);
	} else if (seed) {
		seed_detach(seed);
	} else if (!irqs_disabled_flags(flags) && !in_atomic() &&
		   !in_uprobe_handler()) {
		/*
		 * Already off (from its handler, or by exit or exec): its
		 * handlers may still be running on other threads until the
		 * reaper is through.  Reap here and wait, so that the caller
		 * may free @u and its module when this returns.
		 */
		seed_reap_fn(NULL);
		flush_work(&seed_reap_work);
	}
}
EXPORT_SYMBOL_GPL(unregister_uprobe);

/* The process is gone (exit, or exec replaced its mm): its probes end. */
void uprobe_seeds_exit(struct mm_struct *mm)
{
	struct uprobe_seed *seed, *tmp;
	unsigned long flags;
	bool reap = false;

	spin_lock_irqsave(&seed_lock, flags);
	list_for_each_entry_safe(seed, tmp, &uprobe_seeds, node) {
		if (seed->mm != mm)
			continue;
		seed_unlink(seed);
		if (seed->site) {
			list_add_tail(&seed->reap, &reap_list);
			reap = true;
		}
	}
	spin_unlock_irqrestore(&seed_lock, flags);
	if (reap)
		schedule_work(&seed_reap_work);
}

/* Run the handlers of per-process probes that want the trap's context. */
bool uprobe_seed_irq_handlers(struct pt_regs *regs, unsigned long bp_vaddr)
{
	struct mm_struct *mm = current->mm;
	struct uprobe_seed *seed;
	bool any = false;

	rcu_read_lock();
	list_for_each_entry_rcu(seed, &uprobe_seeds, node) {
		if (seed->mm != mm || seed->vaddr != bp_vaddr || !seed->in_irq ||
		    READ_ONCE(seed->gone))
			continue;
		atomic_long_inc(&seed->hits);
		seed->u->handler(seed->u, regs);
		any = true;
	}
	rcu_read_unlock();
	return any;
}

/* Return: true when a handler sent the thread elsewhere: nothing more. */
bool uprobe_seed_trap_handlers(struct pt_regs *regs)
{
	unsigned long bp_vaddr = uprobe_get_swbp_addr(regs), trap_ip;

	if (uprobe_boost_again(current->utask, regs, bp_vaddr))
		return false;
	/* The handlers see ip at the probe; the trap's own ip goes back after. */
	trap_ip = instruction_pointer(regs);
	instruction_pointer_set(regs, bp_vaddr);
	uprobe_seed_irq_handlers(regs, bp_vaddr);
	if (instruction_pointer(regs) != bp_vaddr)
		return true;
	instruction_pointer_set(regs, trap_ip);
	return false;
}

/* debugfs uprobes/list: the per-process probes, after the sites. */
void uprobe_seeds_show(struct seq_file *m)
{
	struct uprobe_seed *seed;

	spin_lock_irq(&seed_lock);
	list_for_each_entry(seed, &uprobe_seeds, node)
		seq_printf(m, "pid %d %#lx %s%s hits=%ld\n",
			   seed->u->pid, seed->vaddr,
			   seed->in_irq ? "irq" : "task",
			   seed->u->ret_handler ? " ret" : "",
			   atomic_long_read(&seed->hits));
	spin_unlock_irq(&seed_lock);
}

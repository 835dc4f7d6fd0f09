// SPDX-License-Identifier: GPL-2.0
/*
 * Registering uprobes from a uprobe handler (79-uprobe-nest.sh).
 *
 * A per-process probe on pid:vaddr whose task-context handler, at its
 * first hit, registers
 *   - a file probe at nest_off with its USDT semaphore at ref_off, which
 *     the test puts where the process cannot access it: arming fails
 *     after the consumer was published, and the failing call must not
 *     wait for the SRCU read section its own caller is in (nest_ret);
 *   - a second per-process probe on the same address, which must work and
 *     count the following hits (inner_ret, inner_hits).
 * Module exit removes both probes and waits for the failed consumer.
 *
 * With selfoff=N instead (nest_off=0), the handler takes its own probe
 * off at its N-th hit, in task context or, with irq=1, in the trap; the
 * process's threads keep running into the address meanwhile.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/uprobes.h>

static int pid;
module_param(pid, int, 0444);
static unsigned long vaddr;
module_param(vaddr, ulong, 0444);
static unsigned long nest_off;
module_param(nest_off, ulong, 0444);
static unsigned long ref_off;
module_param(ref_off, ulong, 0444);
static int selfoff;
module_param(selfoff, int, 0444);
static bool irq;
module_param(irq, bool, 0444);

static int nest_ret = 1;
module_param(nest_ret, int, 0444);
static int inner_ret = 1;
module_param(inner_ret, int, 0444);
static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
static atomic_t inner_hits = ATOMIC_INIT(0);
module_param_named(inner_hits, inner_hits.counter, int, 0444);

static struct uprobe outer, inner;
static struct uprobe *nested;
static atomic_t first = ATOMIC_INIT(0);

static int nest_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	return 0;
}

static struct uprobe_consumer nest_uc = { .handler = nest_handler };

static void inner_handler(struct uprobe *u, struct pt_regs *regs)
{
	atomic_inc(&inner_hits);
}

static void register_nested(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct inode *inode = NULL;
	struct uprobe *h;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, instruction_pointer(regs));
	if (vma && vma->vm_file)
		inode = igrab(file_inode(vma->vm_file));
	mmap_read_unlock(mm);
	if (!inode) {
		nest_ret = -ENOENT;
	} else {
		h = uprobe_register(inode, nest_off, ref_off, &nest_uc);
		nest_ret = PTR_ERR_OR_ZERO(h);
		if (!IS_ERR(h))
			nested = h;
		iput(inode);
	}

	inner.pid = task_tgid_vnr(current);
	inner.vaddr = vaddr;
	inner.handler = inner_handler;
	inner_ret = register_uprobe(&inner);
	pr_info("up_nest: from the handler: uprobe_register %d, register_uprobe %d\n",
		nest_ret, inner_ret);
}

static void outer_handler(struct uprobe *u, struct pt_regs *regs)
{
	int n = atomic_inc_return(&hits);

	if (selfoff && n == selfoff)
		unregister_uprobe(u);
	if (nest_off && atomic_xchg(&first, 1) == 0)
		register_nested(regs);
}

static int __init up_nest_init(void)
{
	outer.pid = pid;
	outer.vaddr = vaddr;
	outer.handler = outer_handler;
	outer.handler_in_interrupt = irq;
	if (irq && nest_off)
		return -EINVAL;	/* registering sleeps */
	return register_uprobe(&outer);
}

static void __exit up_nest_exit(void)
{
	unregister_uprobe(&outer);
	/* The handler is done: both below are settled. */
	if (inner_ret == 0)
		unregister_uprobe(&inner);
	if (nested)
		uprobe_unregister_nosync(nested, &nest_uc);
	uprobe_unregister_sync();
}

module_init(up_nest_init);
module_exit(up_nest_exit);
MODULE_DESCRIPTION("uprobes registered from a uprobe handler");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe one instruction of one running process with register_uprobe().
 *
 *   insmod uprobe_example.ko pid=<pid> vaddr=<address> [irq=1] [ret=1]
 *				[nprobes=N]
 *
 * Every hit is counted, and the first few are logged with the registers
 * the handler sees.  irq=1 runs the handler in the breakpoint trap itself;
 * ret=1 also counts the returns of the function that starts at vaddr;
 * nprobes=N (up to 4) puts N probes on the same address, each with its
 * own count.  The counts are in /sys/module/uprobe_example/parameters/:
 * hits and ret_hits in all, probes_hit (how many of the probes were hit).
 * When the process exits or execs, the probe ends by itself: rmmod then
 * has nothing to remove.
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/uprobes.h>

static int pid;
module_param(pid, int, 0444);
MODULE_PARM_DESC(pid, "process to probe");

static unsigned long vaddr;
module_param(vaddr, ulong, 0444);
MODULE_PARM_DESC(vaddr, "address of the instruction to probe");

static bool irq;
module_param(irq, bool, 0444);
MODULE_PARM_DESC(irq, "run the handler in the trap, interrupts off");

static bool ret;
module_param(ret, bool, 0444);
MODULE_PARM_DESC(ret, "also count the returns of the function at vaddr");

static int nprobes = 1;
module_param(nprobes, int, 0444);
MODULE_PARM_DESC(nprobes, "probes on the address (1 to 4)");

#define MAX_PROBES	4

static atomic_t hit_count = ATOMIC_INIT(0);
static atomic_t ret_count = ATOMIC_INIT(0);
static atomic_t each_count[MAX_PROBES];
static struct uprobe probes[MAX_PROBES];

static int get_probes_hit(char *buf, const struct kernel_param *kp)
{
	int i, n = 0;

	for (i = 0; i < MAX_PROBES; i++)
		n += atomic_read(&each_count[i]) > 0;
	return sysfs_emit(buf, "%d\n", n);
}

static const struct kernel_param_ops probes_hit_ops = { .get = get_probes_hit };
module_param_cb(probes_hit, &probes_hit_ops, NULL, 0444);
MODULE_PARM_DESC(probes_hit, "how many of the probes were hit");

static int get_hits(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops count_ops = { .get = get_hits };
module_param_cb(hits, &count_ops, &hit_count, 0444);
MODULE_PARM_DESC(hits, "hits so far");
module_param_cb(ret_hits, &count_ops, &ret_count, 0444);
MODULE_PARM_DESC(ret_hits, "returns so far");

static void sample_handler(struct uprobe *u, struct pt_regs *regs)
{
	atomic_inc(&each_count[u - probes]);
	/* Only the first few: a busy probe would flood the log. */
	if (atomic_inc_return(&hit_count) <= 3)
		pr_info("hit at %#lx in pid %d (%s): sp=%#lx\n",
			instruction_pointer(regs), current->pid,
			in_task() && !irqs_disabled() ? "task" : "trap",
			user_stack_pointer(regs));
}

static void sample_ret_handler(struct uprobe *u, unsigned long func,
			       struct pt_regs *regs)
{
	if (atomic_inc_return(&ret_count) <= 3)
		pr_info("function %#lx returned %#lx to %#lx\n",
			func, regs_return_value(regs), instruction_pointer(regs));
}

static int __init uprobe_example_init(void)
{
	int err, i;

	if (nprobes < 1 || nprobes > MAX_PROBES)
		return -EINVAL;
	for (i = 0; i < nprobes; i++) {
		probes[i].pid = pid;
		probes[i].vaddr = vaddr;
		probes[i].handler = sample_handler;
		probes[i].handler_in_interrupt = irq;
		/* One return handler is enough to count the returns. */
		if (ret && !i)
			probes[i].ret_handler = sample_ret_handler;
		err = register_uprobe(&probes[i]);
		if (err) {
			pr_err("register_uprobe(pid %d, %#lx) failed: %d\n",
			       pid, vaddr, err);
			while (i--)
				unregister_uprobe(&probes[i]);
			return err;
		}
	}
	pr_info("%d probe(s) on %#lx in pid %d\n", nprobes, vaddr, pid);
	return 0;
}

static void __exit uprobe_example_exit(void)
{
	int i;

	for (i = 0; i < nprobes; i++)
		unregister_uprobe(&probes[i]);
	pr_info("%d hits, %d returns\n", atomic_read(&hit_count),
		atomic_read(&ret_count));
}

module_init(uprobe_example_init);
module_exit(uprobe_example_exit);
MODULE_DESCRIPTION("Sample: a uprobe on one address of one process");
MODULE_LICENSE("GPL");

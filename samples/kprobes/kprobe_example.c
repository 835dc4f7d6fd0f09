// SPDX-License-Identifier: GPL-2.0-only
/*
 * A minimal kprobe user.
 *
 * Loading this module plants a kprobe on one kernel function (kernel_clone
 * unless told otherwise) and logs a line from each of its two handlers
 * every time the function is entered:
 *
 *   pre_handler   runs on the breakpoint, before the probed instruction;
 *   post_handler  runs once that instruction has been carried out.
 *
 * Try it with, for example:
 *
 *   insmod kprobe_example.ko symbol=do_sys_open offset=0
 *   ls > /dev/null; dmesg | tail
 *   rmmod kprobe_example
 *
 * Both handlers are called with preemption and interrupts disabled, from the
 * breakpoint trap: they must not sleep, take mutexes or allocate with
 * GFP_KERNEL.  printk is fine.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>

static char *symbol = "kernel_clone";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function to probe (default: kernel_clone)");

static unsigned int offset;
module_param(offset, uint, 0444);
MODULE_PARM_DESC(offset, "byte offset of the probe inside the function (default: 0)");

static int sample_pre(struct kprobe *p, struct pt_regs *regs)
{
	pr_info("pre_handler: hit %s+%#x at %p (%pS), sp %#lx\n",
		p->symbol_name, p->offset, p->addr, p->addr,
		kernel_stack_pointer(regs));

	/*
	 * Zero: let kprobes carry out the probed instruction and call
	 * sample_post() afterwards.  A handler that redirects regs->ip
	 * itself would return 1 instead.
	 */
	return 0;
}

static void sample_post(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
	pr_info("post_handler: done with %s+%#x at %p (%pS), flags argument %#lx, next %pS\n",
		p->symbol_name, p->offset, p->addr, p->addr, flags,
		(void *)instruction_pointer(regs));
}

static struct kprobe sample_probe = {
	.pre_handler	= sample_pre,
	.post_handler	= sample_post,
};

static int __init kprobe_sample_init(void)
{
	int err;

	/* charp parameters are only known at load time: fill the name now. */
	sample_probe.symbol_name = symbol;
	sample_probe.offset = offset;

	err = register_kprobe(&sample_probe);
	if (err) {
		pr_err("cannot put a kprobe on %s+%#x: error %d\n",
		       symbol, offset, err);
		return err;
	}

	pr_info("kprobe armed on %s+%#x at %p (%pS)\n", symbol, offset,
		sample_probe.addr, sample_probe.addr);
	return 0;
}

static void __exit kprobe_sample_exit(void)
{
	unregister_kprobe(&sample_probe);
	pr_info("kprobe on %s removed; hits missed: %lu\n", symbol,
		sample_probe.nmissed);
}

module_init(kprobe_sample_init);
module_exit(kprobe_sample_exit);
MODULE_DESCRIPTION("Sample kprobe with pre and post handlers");
MODULE_LICENSE("GPL");

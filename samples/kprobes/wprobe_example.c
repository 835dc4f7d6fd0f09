// SPDX-License-Identifier: GPL-2.0-only
/*
 * A minimal watchpoint probe (wprobe) user.
 *
 * Loading this module watches a kernel variable, given by name, and logs
 * one line for every store to it: which code stored (the instruction after
 * the store, as the debug trap reports it), which task on which CPU, and
 * the value before and after.  For example, the panic timeout, which
 * writing /proc/sys/kernel/panic stores:
 *
 *   insmod wprobe_example.ko symbol=panic_timeout len=4
 *   echo 5 > /proc/sys/kernel/panic; dmesg | tail -1
 *   rmmod wprobe_example
 *
 * "kind=rw" also logs loads, "changed=1" only the stores that change the
 * value.  A variable of a module is named "module:variable"; the probe
 * goes [GONE] in /sys/kernel/debug/kprobes/list if that module is unloaded
 * first.
 *
 * The handler runs in the debug exception with interrupts off: it must not
 * sleep nor take locks.  printk is fine.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/wprobes.h>

static char *symbol = "panic_timeout";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "variable to watch (default: panic_timeout)");

static unsigned int offset;
module_param(offset, uint, 0444);
MODULE_PARM_DESC(offset, "byte offset inside the variable (default: 0)");

static unsigned int len = 4;
module_param(len, uint, 0444);
MODULE_PARM_DESC(len, "bytes to watch: 1, 2, 4 or 8 (default: 4)");

static char *kind = "w";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "w for stores, rw for loads and stores (default: w)");

static bool changed;
module_param(changed, bool, 0444);
MODULE_PARM_DESC(changed, "log only the stores that change the value");

static void sample_handler(struct wprobe *wp, struct pt_regs *regs)
{
	pr_info("%s+%#x: %pS (%s/%d, CPU %d) %s %#llx, was %#llx\n",
		wp->symbol_name, wp->offset, (void *)instruction_pointer(regs),
		current->comm, task_pid_nr(current), smp_processor_id(),
		wprobe_old_value() == wprobe_new_value() ? "left" : "wrote",
		wprobe_new_value(), wprobe_old_value());
}

static struct wprobe sample_wprobe = {
	.handler	= sample_handler,
};

static int __init wprobe_example_init(void)
{
	int ret;

	if (!strcmp(kind, "rw")) {
		sample_wprobe.kind = WPROBE_RW;
	} else if (strcmp(kind, "w")) {
		pr_err("kind=%s: w or rw\n", kind);
		return -EINVAL;
	}
	sample_wprobe.symbol_name = symbol;
	sample_wprobe.offset = offset;
	sample_wprobe.len = len;
	if (changed)
		sample_wprobe.flags |= WPROBE_FLAG_CHANGED;

	ret = register_wprobe(&sample_wprobe);
	if (ret < 0) {
		pr_err("register_wprobe on %s+%#x failed: %d\n", symbol, offset,
		       ret);
		return ret;
	}
	pr_info("watching %s+%#x (%u bytes at %p) for %s\n", symbol, offset,
		len, sample_wprobe.addr,
		sample_wprobe.kind == WPROBE_RW ? "loads and stores" : "stores");
	return 0;
}

static void __exit wprobe_example_exit(void)
{
	pr_info("%s+%#x: %lu hits, %lu missed\n", symbol, offset,
		wprobe_hits(&sample_wprobe), wprobe_missed(&sample_wprobe));
	unregister_wprobe(&sample_wprobe);
}

module_init(wprobe_example_init);
module_exit(wprobe_example_exit);
MODULE_DESCRIPTION("watch a kernel variable and log its stores");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/*
 * An out-of-tree module using kprobes: it counts the calls of one kernel
 * function and shows the count in /sys/module/extra_probe/parameters/hits.
 *
 *   insmod extra_probe.ko [symbol=<function>]
 *   cat /sys/module/extra_probe/parameters/hits
 *
 * run.sh next to this file drives it inside the test guest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static char *symbol = "kernel_clone";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function whose calls are counted (default: kernel_clone)");

static atomic_t hit_count = ATOMIC_INIT(0);

/* The count is read live from the atomic; it cannot be written. */
static int hits_show(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n", atomic_read(&hit_count));
}

static int hits_store(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops hits_ops = {
	.get	= hits_show,
	.set	= hits_store,
};
module_param_cb(hits, &hits_ops, NULL, 0444);
MODULE_PARM_DESC(hits, "how many times the probe fired (read-only)");

/* Runs from the breakpoint with preemption off: just count. */
static int count_hit(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&hit_count);
	return 0;
}

static struct kprobe counter = {
	.pre_handler = count_hit,
};

static int __init extra_probe_init(void)
{
	int err;

	counter.symbol_name = symbol;
	err = register_kprobe(&counter);
	if (err) {
		pr_err("register_kprobe(%s) failed: %d\n", symbol, err);
		return err;
	}
	pr_info("counting calls of %s (%pS)\n", symbol, counter.addr);
	return 0;
}

static void __exit extra_probe_exit(void)
{
	unregister_kprobe(&counter);
	pr_info("%s was called %d times, %lu hits missed\n", symbol,
		atomic_read(&hit_count), counter.nmissed);
}

module_init(extra_probe_init);
module_exit(extra_probe_exit);
MODULE_DESCRIPTION("Out-of-tree kprobe example: count calls of a function");
MODULE_LICENSE("GPL");

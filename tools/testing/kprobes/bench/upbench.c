// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel side of the uprobe benchmark: one probe through the inode API
 * (the same on stock 6.12 and on ours) with an empty handler, for as long
 * as the module is loaded.
 *
 *   insmod upbench.ko path=/kptest/bin/upbench_loop offset=0x1234 [ret=1]
 *
 * ret=1 makes it a return probe (an empty ret_handler) instead.
 * /sys/module/upbench/parameters/hits counts the handler's calls, so the
 * script can check that every call was a hit.  The count is per CPU, so
 * that threads hitting the probe on several CPUs measure the kernel's
 * sharing, not this module's.
 */
#include <linux/err.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/uprobes.h>

static char *path;
module_param(path, charp, 0444);
static unsigned long offset;
module_param(offset, ulong, 0444);
static bool ret;
module_param(ret, bool, 0444);
static DEFINE_PER_CPU(long, hits_count);
static long hits;

static int hits_get(char *buf, const struct kernel_param *kp)
{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(hits_count, cpu);
	return sysfs_emit(buf, "%ld\n", sum);
}

static const struct kernel_param_ops hits_ops = { .get = hits_get };
module_param_cb(hits, &hits_ops, &hits, 0444);

static int ub_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	this_cpu_inc(hits_count);
	return 0;
}

static int ub_ret_handler(struct uprobe_consumer *uc, unsigned long func,
			  struct pt_regs *regs)
{
	this_cpu_inc(hits_count);
	return 0;
}

static struct uprobe_consumer ub_consumer;
static struct uprobe *ub_probe;
/* Held while probed: stock's uprobes expect the caller to pin the inode. */
static struct path ub_path;

static int __init upbench_init(void)
{
	int err;

	if (!path)
		return -EINVAL;
	err = kern_path(path, LOOKUP_FOLLOW, &ub_path);
	if (err)
		return err;
	if (ret)
		ub_consumer.ret_handler = ub_ret_handler;
	else
		ub_consumer.handler = ub_handler;
	ub_probe = uprobe_register(d_real_inode(ub_path.dentry), offset, 0,
				   &ub_consumer);
	if (IS_ERR(ub_probe)) {
		path_put(&ub_path);
		return PTR_ERR(ub_probe);
	}
	return 0;
}

static void __exit upbench_exit(void)
{
	uprobe_unregister_nosync(ub_probe, &ub_consumer);
	uprobe_unregister_sync();
	path_put(&ub_path);
}

module_init(upbench_init);
module_exit(upbench_exit);
MODULE_DESCRIPTION("uprobe hit cost benchmark: one probe, empty handler");
MODULE_LICENSE("GPL");

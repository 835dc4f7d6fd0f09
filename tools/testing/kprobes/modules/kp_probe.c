// SPDX-License-Identifier: GPL-2.0
/*
 * kp_probe: one kprobe, or one kretprobe, on a symbol chosen at load time,
 * for the guest shell tests.  Only the public kprobes API is used.
 *
 *   insmod kp_probe.ko sym=kernel_clone [offset=N] [ret=1] [disabled=1]
 *                      [post=0] [maxactive=N]
 *
 * sym may name a module's symbol as "module:symbol" or plainly.  The probe
 * stays registered until rmmod.  When registration fails, init returns the
 * error, so insmod fails, and the kernel log says which error it was:
 *
 *   kp_probe: register kprobe kernel_clone+0x1 failed: error -84
 *
 * debugfs, /sys/kernel/debug/kp_probe/ (all read-only):
 *   hits        pre-handler calls (kprobe) or return-handler calls (kretprobe)
 *   post_hits   post-handler calls (kprobe with post=1)
 *   entry_hits  entry-handler calls (kretprobe)
 *   nmissed     the probe's nmissed (kretprobe: the kretprobe's and its kprobe's)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kprobes.h>
#include <linux/module.h>

static char *sym = "kernel_clone";
module_param(sym, charp, 0444);
MODULE_PARM_DESC(sym, "symbol to probe, \"symbol\" or \"module:symbol\"");

static uint offset;
module_param(offset, uint, 0444);
MODULE_PARM_DESC(offset, "offset of the probe from the symbol");

static bool use_kretprobe;
module_param_named(ret, use_kretprobe, bool, 0444);
MODULE_PARM_DESC(ret, "register a kretprobe instead of a kprobe");

static bool disabled;
module_param(disabled, bool, 0444);
MODULE_PARM_DESC(disabled, "register with KPROBE_FLAG_DISABLED");

static bool post = true;
module_param(post, bool, 0444);
MODULE_PARM_DESC(post, "kprobe: give it a post_handler too");

static int maxactive;
module_param(maxactive, int, 0444);
MODULE_PARM_DESC(maxactive, "kretprobe: maxactive (0: the default)");

static atomic_t hits = ATOMIC_INIT(0);
static atomic_t post_hits = ATOMIC_INIT(0);
static atomic_t entry_hits = ATOMIC_INIT(0);

static struct kprobe kpp_kp;
static struct kretprobe kpp_rp;
static struct dentry *kpp_dir;

static int kpp_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&hits);
	return 0;
}

static void kpp_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	atomic_inc(&post_hits);
}

static int kpp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&entry_hits);
	return 0;
}

static int kpp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&hits);
	return 0;
}

static int kpp_nmissed_get(void *data, u64 *val)
{
	if (use_kretprobe)
		*val = (u64)READ_ONCE(kpp_rp.nmissed) + READ_ONCE(kpp_rp.kp.nmissed);
	else
		*val = READ_ONCE(kpp_kp.nmissed);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kpp_nmissed_fops, kpp_nmissed_get, NULL, "%llu\n");

static int __init kpp_init(void)
{
	const char *kind = use_kretprobe ? "kretprobe" : "kprobe";
	struct kprobe *kp = use_kretprobe ? &kpp_rp.kp : &kpp_kp;
	int err;

	kp->symbol_name = sym;
	kp->offset = offset;
	if (disabled)
		kp->flags = KPROBE_FLAG_DISABLED;

	if (use_kretprobe) {
		kpp_rp.handler = kpp_ret;
		kpp_rp.entry_handler = kpp_entry;
		kpp_rp.maxactive = maxactive;
		err = register_kretprobe(&kpp_rp);
	} else {
		kpp_kp.pre_handler = kpp_pre;
		if (post)
			kpp_kp.post_handler = kpp_post;
		err = register_kprobe(&kpp_kp);
	}
	if (err) {
		pr_info("register %s %s+0x%x failed: error %d\n",
			kind, sym, offset, err);
		return err;
	}
	pr_info("registered %s %s+0x%x at %pS%s\n", kind, sym, offset,
		kp->addr, disabled ? " (disabled)" : "");

	kpp_dir = debugfs_create_dir("kp_probe", NULL);
	debugfs_create_atomic_t("hits", 0400, kpp_dir, &hits);
	debugfs_create_atomic_t("post_hits", 0400, kpp_dir, &post_hits);
	debugfs_create_atomic_t("entry_hits", 0400, kpp_dir, &entry_hits);
	debugfs_create_file_unsafe("nmissed", 0400, kpp_dir, NULL,
				   &kpp_nmissed_fops);
	return 0;
}

static void __exit kpp_exit(void)
{
	debugfs_remove_recursive(kpp_dir);
	if (use_kretprobe)
		unregister_kretprobe(&kpp_rp);
	else
		unregister_kprobe(&kpp_kp);
	pr_info("unregistered %s %s+0x%x: %d hits, %d post, %d entries\n",
		use_kretprobe ? "kretprobe" : "kprobe", sym, offset,
		atomic_read(&hits), atomic_read(&post_hits),
		atomic_read(&entry_hits));
}

module_init(kpp_init);
module_exit(kpp_exit);
MODULE_DESCRIPTION("One kprobe or kretprobe on a symbol given at load time");
MODULE_LICENSE("GPL");

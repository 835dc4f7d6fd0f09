// SPDX-License-Identifier: GPL-2.0
/*
 * kp_target: code in a module's text for the guest shell tests to probe.
 *
 *   kp_target_func()       noinline, exported, in the module's .text
 *   kp_target_asm()        hand-written, known instruction layout (see .S)
 *   kp_target_init_func()  in .init.text, called once from the module's init
 *
 * debugfs, /sys/kernel/debug/kp_target/:
 *   call    write N: calls kp_target_func(N) and kp_target_asm() once each;
 *           read: how many writes so far
 *   result  kp_target_func()'s last result
 *   cc      s390 only: kp_target_cc()'s last result (it is called with
 *           the others)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/module.h>

#include "kp_target.h"

static atomic_t kpt_calls = ATOMIC_INIT(0);
static u32 kpt_result;
static unsigned long kpt_asm_result;
static struct dentry *kpt_dir;
#ifdef CONFIG_S390
static u32 kpt_cc_result;
#endif

noinline int kp_target_func(int x)
{
	/* Keep the call: no const/pure function the compiler could drop. */
	barrier();
	return 3 * x + 1;
}
EXPORT_SYMBOL_GPL(kp_target_func);

/* Global, so the compiler keeps it under this name (no .constprop clone). */
noinline int __init kp_target_init_func(int x)
{
	barrier();
	return x + 1;
}

static int kpt_call_get(void *data, u64 *val)
{
	*val = atomic_read(&kpt_calls);
	return 0;
}

static int kpt_call_set(void *data, u64 val)
{
	kpt_result = kp_target_func((int)val);
	WRITE_ONCE(kpt_asm_result, kp_target_asm());
#ifdef CONFIG_S390
	WRITE_ONCE(kpt_cc_result, kp_target_cc());
#endif
	atomic_inc(&kpt_calls);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kpt_call_fops, kpt_call_get, kpt_call_set, "%llu\n");

static int __init kpt_init(void)
{
	int r = kp_target_init_func(1);

	pr_info("loaded, init function returned %d\n", r);
	kpt_dir = debugfs_create_dir("kp_target", NULL);
	debugfs_create_file_unsafe("call", 0600, kpt_dir, NULL, &kpt_call_fops);
	debugfs_create_u32("result", 0400, kpt_dir, &kpt_result);
#ifdef CONFIG_S390
	debugfs_create_u32("cc", 0400, kpt_dir, &kpt_cc_result);
#endif
	return 0;
}

static void __exit kpt_exit(void)
{
	debugfs_remove_recursive(kpt_dir);
	pr_info("unloaded after %d calls\n", atomic_read(&kpt_calls));
}

module_init(kpt_init);
module_exit(kpt_exit);
MODULE_DESCRIPTION("Functions in module text for the kprobes guest tests");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Timing a kernel function with a kretprobe.
 *
 * The entry handler stamps the time into the per-call scratch area that
 * kretprobes hands out (data_size bytes of kretprobe_instance.data); the
 * return handler reads it back and logs what the function returned and how
 * long the call took.
 *
 *   insmod kretprobe_example.ko func=kernel_clone
 *   sh -c true; dmesg | tail
 *   rmmod kretprobe_example
 *
 * Both handlers run with preemption disabled and must not sleep.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>

static char *func = "kernel_clone";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function whose calls are timed (default: kernel_clone)");

/* What one call in flight keeps between its entry and its return. */
struct call_stamp {
	u64 entered;	/* ns, monotonic */
};

static int timing_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_stamp *stamp = (struct call_stamp *)ri->data;

	/*
	 * A non-zero return tells kretprobes not to hook this call: the
	 * instance goes straight back to the pool and timing_return() is
	 * not called for it.  We use that to time only the calls made on
	 * behalf of user processes.  Kernel threads have no mm; skipping
	 * them keeps the log about the forks user space asked for, and
	 * keeps instances free for those calls.
	 */
	if (!current->mm)
		return 1;

	/*
	 * The entry handler runs inside the breakpoint trap, which x86
	 * treats like an NMI: only the NMI-safe clock may be read here.
	 */
	stamp->entered = ktime_get_mono_fast_ns();
	return 0;
}

static int timing_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_stamp *stamp = (struct call_stamp *)ri->data;
	long retval = (long)regs_return_value(regs);
	s64 took = ktime_get_mono_fast_ns() - stamp->entered;

	pr_info("%s returned %ld after %lld ns\n", func, retval, took);
	return 0;
}

static struct kretprobe timing_probe = {
	.entry_handler	= timing_entry,
	.handler	= timing_return,
	.data_size	= sizeof(struct call_stamp),
	/* Up to 20 calls may be timed at once; more only count as missed. */
	.maxactive	= 20,
};

static int __init kretprobe_sample_init(void)
{
	int err;

	timing_probe.kp.symbol_name = func;

	err = register_kretprobe(&timing_probe);
	if (err) {
		pr_err("cannot put a kretprobe on %s: error %d\n", func, err);
		return err;
	}

	pr_info("kretprobe armed on %s at %p (%pS)\n", func,
		timing_probe.kp.addr, timing_probe.kp.addr);
	return 0;
}

static void __exit kretprobe_sample_exit(void)
{
	unregister_kretprobe(&timing_probe);
	pr_info("kretprobe on %s removed; calls missed: %d\n", func,
		timing_probe.nmissed);
}

module_init(kretprobe_sample_init);
module_exit(kretprobe_sample_exit);
MODULE_DESCRIPTION("Sample kretprobe timing a kernel function");
MODULE_LICENSE("GPL");

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of arch/arm64/kernel/probes share: the end of a step
 * without a second trap, jump optimization.
 */
#ifndef _ARM64_KERNEL_PROBES_INTERNAL_H
#define _ARM64_KERNEL_PROBES_INTERNAL_H

#include <linux/ftrace.h>
#include <linux/irqflags.h>
#include <linux/linkage.h>
#include <linux/types.h>

struct kprobe_site;
struct pt_regs;

/*
 * Handlers called from code that masked DAIF itself, not from a trap: the
 * step's tail and the detour buffers.  lockdep still believes interrupts
 * are as the probed code had them; it hears they are off until the
 * masking code unmasks, as it would in a trap.  Not with pseudo-NMIs,
 * where irqs_disabled() looks at the interrupt priority mask, which only
 * an exception entry sets: lockdep would object to hearing it.  Return:
 * whether it is to hear they are back on.
 */
static __always_inline bool kp_a64_lockdep_irqs_off(void)
{
#ifdef CONFIG_TRACE_IRQFLAGS
	/* lockdep_hardirqs_enabled(), without a preemption count: masked */
	bool on = raw_cpu_read(hardirqs_enabled) && irqs_disabled();
#else
	bool on = false;
#endif

	if (on)
		lockdep_hardirqs_off(CALLER_ADDR0);
	return on;
}

static __always_inline void kp_a64_lockdep_irqs_restore(bool on)
{
	if (!on)
		return;
	lockdep_hardirqs_on_prepare();
	lockdep_hardirqs_on(CALLER_ADDR0);
}

/* Where a stepped copy branches when done (step_tail.S), and its C half. */
void kp_a64_step_tail(void);
asmlinkage void kp_a64_step_tail_done(struct pt_regs *regs);

#ifdef CONFIG_OPTPROBES
/* The detour buffer's template and its fill-in points (opt_template.S). */
extern const u32 kp_a64_opt_tmpl[], kp_a64_opt_tmpl_call[];
extern const u32 kp_a64_opt_tmpl_copy[], kp_a64_opt_tmpl_back[];
extern const u64 kp_a64_opt_tmpl_site[], kp_a64_opt_tmpl_pc[];
extern const u32 kp_a64_opt_tmpl_end[];

/* Set a site up for a jump if it can have one (s->opt_len). */
void kp_opt_prepare(struct kprobe_site *s);
void kp_opt_release(struct kprobe_site *s);
#else
static inline void kp_opt_prepare(struct kprobe_site *s) { }
static inline void kp_opt_release(struct kprobe_site *s) { }
#endif

#endif /* _ARM64_KERNEL_PROBES_INTERNAL_H */

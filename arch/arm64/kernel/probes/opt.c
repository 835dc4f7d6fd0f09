// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64 jump optimization: a probe's BRK becomes a "b" to a detour buffer
 * (opt_template.S) that saves the registers, runs the handlers and the
 * copy of the probed instruction, and branches back.  The handlers run
 * with every DAIF exception masked, as they do in a BRK trap: what they
 * see does not depend on whether the probe is optimized, and masking
 * costs less than a preemption count.
 *
 * A64 instructions are all 4 bytes, and so is the branch: the region a
 * jump replaces is the probed instruction alone.  Nothing can branch into
 * the middle of it and no other probe can sit inside it, the two things
 * x86's optimizer has to check function by function.  What is left:
 *
 *  - the copy must do in the buffer what it did in place: only position
 *    independent instructions are taken (the ones decode.c steps, and the
 *    simulated ones that do not read the pc, bar blr, whose callee would
 *    return into the buffer), and none with an exception table entry,
 *    whose fixup would be looked up at the buffer's address;
 *  - the buffer must be in a branch's reach (+-128 MiB) of the probe, and
 *    the callback in a "bl"'s reach of the buffer.  Buffers come from the
 *    module area's window that the kernel text reaches (prepare.c's
 *    arch_kprobe_alloc_slot_page()); with KASLR the window moves with the
 *    kernel, so the kernel's own text is always in reach.  Module text
 *    loaded out of the window (when it is full, in the PLT region) may be
 *    out of reach: each site is checked, and one that is not keeps its BRK;
 *  - under BTI, a landing pad (bti, paciasp/pacibsp) may be reached by an
 *    indirect branch, which must land on one: it keeps its BRK, which
 *    every branch may land on.
 *
 * Writing the jump: a BRK and a B may replace each other while other CPUs
 * run them (the architecture's rule for concurrent modification), so the
 * jump goes in and comes out without stop_machine(); an IPI to every CPU
 * afterwards makes sure none still runs the old one from its pipeline.
 * A CPU that took the BRK just before finds the site and handles it as a
 * BRK hit.  The generic half (kernel/kprobes_opt.c) has waited for an
 * RCU-tasks grace period before the jump goes in, and frees a buffer only
 * after another one, so no task can be inside a buffer that goes away.
 */
#include <linux/extable.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/perf_event.h>
#include <linux/smp.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>

#include "internal.h"

#define KP_TMPL_OFF(sym)	((unsigned long)(sym) - (unsigned long)kp_a64_opt_tmpl)
#define KP_TMPL_LEN		KP_TMPL_OFF(kp_a64_opt_tmpl_end)

asmlinkage void kp_a64_opt_callback(struct kprobe_site *s,
				    struct pt_regs *regs);

/*
 * Called from a detour buffer, with the registers the probed code had and
 * every DAIF exception masked: the handlers run as in a BRK trap, with
 * nothing to arrive in the middle and no preemption count to keep.
 */
asmlinkage notrace void kp_a64_opt_callback(struct kprobe_site *s,
					    struct pt_regs *regs)
{
	bool lockdep_irqs = kp_a64_lockdep_irqs_off();

	__kprobe_opt_run(s, regs);
	kp_a64_lockdep_irqs_restore(lockdep_irqs);
}
NOKPROBE_SYMBOL(kp_a64_opt_callback);

/* Can the instruction of @s run from a buffer, as it runs in place? */
static bool kp_opt_movable(struct kprobe_site *s)
{
	u32 insn = s->arch.opcode;

	if (search_exception_tables((unsigned long)s->addr))
		return false;
	if (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) &&
	    (aarch64_insn_is_bti(insn) ||
	     insn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_PACIASP) ||
	     insn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_PACIBSP)))
		return false;
	if (!s->arch.simulate)
		return true;
	switch (s->arch.insn.op) {
	case A64P_NOP:
	case A64P_MRS_PSTATE:	/* the buffer runs with the probed DAIF */
	case A64P_ADDSUB_IMM:
	case A64P_MOV_REG:
		return true;
	case A64P_BR:
		return !s->arch.insn.link;
	default:
		return false;	/* reads the pc */
	}
}

/* A "b"/"bl" from @from to @to, or 0 when it does not reach. */
static u32 kp_branch(unsigned long from, unsigned long to, bool link)
{
	u32 b = aarch64_insn_gen_branch_imm(from, to, link ?
					    AARCH64_INSN_BRANCH_LINK :
					    AARCH64_INSN_BRANCH_NOLINK);

	return b == AARCH64_BREAK_FAULT ? 0 : b;
}

/* Fill @buf, the image of @s's detour buffer at @detour; false: no reach. */
static bool kp_opt_build(struct kprobe_site *s, u32 *buf,
			 kprobe_opcode_t *detour)
{
	unsigned long d = (unsigned long)detour, addr = (unsigned long)s->addr;
	u32 call, back;

	call = kp_branch(d + KP_TMPL_OFF(kp_a64_opt_tmpl_call),
			 (unsigned long)kp_a64_opt_callback, true);
	back = kp_branch(d + KP_TMPL_OFF(kp_a64_opt_tmpl_back),
			 addr + AARCH64_INSN_SIZE, false);
	if (!call || !back || !kp_branch(addr, d, false))
		return false;

	memcpy(buf, kp_a64_opt_tmpl, KP_TMPL_LEN);
	buf[KP_TMPL_OFF(kp_a64_opt_tmpl_call) / 4] = cpu_to_le32(call);
	buf[KP_TMPL_OFF(kp_a64_opt_tmpl_copy) / 4] = cpu_to_le32(s->arch.opcode);
	buf[KP_TMPL_OFF(kp_a64_opt_tmpl_back) / 4] = cpu_to_le32(back);
	*(u64 *)&buf[KP_TMPL_OFF(kp_a64_opt_tmpl_site) / 4] = (unsigned long)s;
	*(u64 *)&buf[KP_TMPL_OFF(kp_a64_opt_tmpl_pc) / 4] = addr;
	return true;
}

/*
 * Give @s a detour buffer if it can have one, and say so with s->opt_len;
 * without one it stays a BRK probe.  No CPU runs the buffer before the
 * jump goes in, long after this.
 */
void kp_opt_prepare(struct kprobe_site *s)
{
	u32 buf[KPROBE_OPTINSN_SLOT_SIZE / sizeof(u32)];
	kprobe_opcode_t *detour;

	s->arch.detour = NULL;
	/* The template's length is known at link time only. */
	if (WARN_ON_ONCE(KP_TMPL_LEN > KPROBE_OPTINSN_SLOT_SIZE) ||
	    !kp_opt_movable(s))
		return;
	detour = get_optinsn_slot();
	if (!detour)
		return;
	if (!kp_opt_build(s, buf, detour)) {
		free_optinsn_slot(detour, 0);
		return;
	}
	aarch64_insn_copy(detour, buf, KP_TMPL_LEN);
	s->arch.detour = detour;
	s->opt_len = AARCH64_INSN_SIZE;
}

/* The core frees a site that was ever queued after an RCU-tasks period. */
void kp_opt_release(struct kprobe_site *s)
{
	if (!s->arch.detour)
		return;
	free_optinsn_slot(s->arch.detour, 0);
	s->arch.detour = NULL;
	s->opt_len = 0;
}

/* Write each site's jump (or BRK back), then resync every CPU. */
static void kp_opt_poke(struct list_head *sites, bool optimize)
{
	u32 brk = BRK64_OPCODE_KPROBES, jmp;
	struct kprobe_site *s;

	mutex_lock(&text_mutex);
	list_for_each_entry(s, sites, opt_list) {
		jmp = kp_branch((unsigned long)s->addr,
				(unsigned long)s->arch.detour, false);
		aarch64_insn_patch_text_nosync(s->addr, optimize ? jmp : brk);
	}
	mutex_unlock(&text_mutex);
	kick_all_cpus_sync();

	list_for_each_entry(s, sites, opt_list) {
		jmp = kp_branch((unsigned long)s->addr,
				(unsigned long)s->arch.detour, false);
		if (optimize)
			perf_event_text_poke(s->addr, &brk, 4, &jmp, 4);
		else
			perf_event_text_poke(s->addr, &jmp, 4, &brk, 4);
	}
}

void arch_optimize_kprobe_sites(struct list_head *sites)
{
	kp_opt_poke(sites, true);
}

void arch_unoptimize_kprobe_sites(struct list_head *sites)
{
	kp_opt_poke(sites, false);
}

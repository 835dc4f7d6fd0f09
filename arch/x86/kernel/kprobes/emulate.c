// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probed instructions that cannot run from an out-of-line slot, carried out
 * on the saved registers instead, and the register fixups after a slot run.
 *
 * Everything here runs inside the int3 handler (interrupts off, NMI-like
 * context) and is therefore excluded from probing.  Writes below regs->sp
 * are safe: the int3 entry leaves a gap under the interrupted stack for
 * exactly this kind of emulated push.
 */
#include <linux/kprobes.h>
#include <asm/probe-insn.h>
#include <asm/text-patching.h>

#include "internal.h"

/* Flags a POPF may change in ring 0 (VM, VIF and VIP stay as they are). */
#define KP_POPF_MASK	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_TF | \
			 X86_EFLAGS_IF | X86_EFLAGS_DF | X86_EFLAGS_OF | \
			 X86_EFLAGS_IOPL | X86_EFLAGS_NT | X86_EFLAGS_AC | \
			 X86_EFLAGS_ID)

/*
 * arch_kprobe_site.cond of the 0xe0..0xe3 family holds the variant as
 * <asm/probe-insn.h> numbers them.
 */

/*
 * Where the CPU goes on after the probed instruction.
 *
 * While a site is queued for, carries or is losing a jump, the bytes after
 * its first instruction may be the jump's displacement: being written, in
 * place, or not yet restored (unoptimizing writes the int3, waits for every
 * CPU, then restores them).  A hit in that window that carried out the first
 * instruction here (a re-entered hit, or one with a post handler attached
 * meanwhile) must not continue in place, so it continues in the detour
 * buffer's copy of the region instead, at the copy of the second
 * instruction (a relocated branch may be longer than the original), which
 * goes on to the end of the region and jumps back.  The state
 * is read at this point, after the instruction: it only goes back to NONE
 * once every CPU has seen the original bytes again, which cannot happen
 * while this one is inside the trap with interrupts off.  The buffer
 * outlives any task that can be running in it (kprobe_opt_reap()).
 */
static nokprobe_inline unsigned long kp_next_ip(struct kprobe_site *s)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(s->opt) != KPROBE_OPT_NONE && s->arch.len < s->opt_len)
		return (unsigned long)kp_opt_region_copy(s) +
		       s->arch.copy_next;
#endif
	return (unsigned long)s->addr + s->arch.len;
}

static nokprobe_inline void kp_emulate_popf(struct pt_regs *regs)
{
	unsigned long val = int3_emulate_pop(regs);

	regs->flags &= ~(KP_POPF_MASK | X86_EFLAGS_RF);
	regs->flags |= val & KP_POPF_MASK;
}

/* A call to @target that returns to the instruction after the probe. */
static nokprobe_inline void kp_emulate_call(struct kprobe_site *s,
					    struct pt_regs *regs,
					    unsigned long target)
{
	/* Never a region's first instruction: the return is in place. */
	int3_emulate_push(regs, (unsigned long)s->addr + s->arch.len);
	int3_emulate_jmp(regs, target);
}

/*
 * The instructions that cannot run out of line, one function each, so that
 * a hit makes one indirect call instead of walking a switch: prepare picks
 * the function (kprobe_x86_pick_emulation()).  Each leaves the registers as
 * after the instruction, regs->ip included, and cannot fail.  They run in
 * the int3 handler, so they live in the kprobes section, where no probe
 * can go.
 *
 * kpx_nop(): on to the next instruction; every emulation but a branch's
 * ends there.  A site in the optimizer's hands is rare: kp_next_ip() for
 * it is out of line, so that the usual case saves no registers for a call.
 */
static noinline bool __kprobes kpx_next_in_opt(struct kprobe_site *s,
						struct pt_regs *regs)
{
	int3_emulate_jmp(regs, kp_next_ip(s));
	return true;
}

static bool __kprobes kpx_nop(struct kprobe_site *s, struct pt_regs *regs)
{
	if (unlikely(READ_ONCE(s->opt) != KPROBE_OPT_NONE))
		return kpx_next_in_opt(s, regs);
	int3_emulate_jmp(regs, (unsigned long)s->addr + s->arch.len);
	return true;
}

static bool __kprobes kpx_jmp(struct kprobe_site *s, struct pt_regs *regs)
{
	int3_emulate_jmp(regs, s->arch.target);
	return true;
}

static bool __kprobes kpx_call(struct kprobe_site *s, struct pt_regs *regs)
{
	kp_emulate_call(s, regs, s->arch.target);
	return true;
}

static bool __kprobes kpx_jcc(struct kprobe_site *s, struct pt_regs *regs)
{
	unsigned long next = kp_next_ip(s);

	int3_emulate_jcc(regs, s->arch.cond, next, s->arch.target - next);
	return true;
}

static bool __kprobes kpx_loop(struct kprobe_site *s, struct pt_regs *regs)
{
	int3_emulate_jmp(regs, probe_insn_loop_taken(s->arch.cond, regs) ?
			 s->arch.target : kp_next_ip(s));
	return true;
}

static bool __kprobes kpx_ret(struct kprobe_site *s, struct pt_regs *regs)
{
	int3_emulate_ret(regs);
	regs->sp += s->arch.imm;
	return true;
}

static bool __kprobes kpx_jmp_reg(struct kprobe_site *s, struct pt_regs *regs)
{
	int3_emulate_jmp(regs, regs_get_register(regs, s->arch.imm));
	return true;
}

static bool __kprobes kpx_call_reg(struct kprobe_site *s, struct pt_regs *regs)
{
	/* Read the register first: it may be %rsp itself. */
	kp_emulate_call(s, regs, regs_get_register(regs, s->arch.imm));
	return true;
}

static bool __kprobes kpx_cli(struct kprobe_site *s, struct pt_regs *regs)
{
	regs->flags &= ~X86_EFLAGS_IF;
	return kpx_nop(s, regs);
}

static bool __kprobes kpx_sti(struct kprobe_site *s, struct pt_regs *regs)
{
	regs->flags |= X86_EFLAGS_IF;
	return kpx_nop(s, regs);
}

static bool __kprobes kpx_popf(struct kprobe_site *s, struct pt_regs *regs)
{
	kp_emulate_popf(regs);
	return kpx_nop(s, regs);
}

static kprobe_x86_emulate_t *const kpx_emulate[] = {
	[KPX_NOP] = kpx_nop,		[KPX_JMP] = kpx_jmp,
	[KPX_CALL] = kpx_call,		[KPX_JCC] = kpx_jcc,
	[KPX_LOOP] = kpx_loop,		[KPX_RET] = kpx_ret,
	[KPX_JMP_REG] = kpx_jmp_reg,	[KPX_CALL_REG] = kpx_call_reg,
	[KPX_CLI] = kpx_cli,		[KPX_STI] = kpx_sti,
	[KPX_POPF] = kpx_popf,
};

/*
 * Plain register, stack and RIP-relative data instructions (KPX_STEP with
 * an emu decoding): carried out here too, so that a hit with a post
 * handler traps once instead of twice.  These leave the registers (and
 * memory) exactly as running the slot's copy and kprobe_x86_step_fixup()
 * would.  The decoding in s->arch.emu is written before the site is armed
 * and stays until after it is gone, like the slot, so it cannot change
 * under a CPU in here.  They return false when a memory access faulted
 * and nothing was changed: the caller then runs the copy, which faults as
 * the original would.
 */

/* The arithmetic flags; inc and dec leave CF as it was. */
#define KP_ALU_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF)

static nokprobe_inline void kp_emu_set_flags(struct pt_regs *regs,
					     unsigned long fl,
					     unsigned long mask)
{
	regs->flags = (regs->flags & ~mask) | (fl & mask);
}

/*
 * Registers by pt_regs offset (decode.c only hands out valid ones).  A
 * 32-bit result reaches here already zero-extended, as the CPU writes it.
 */
static nokprobe_inline unsigned long kp_emu_get_reg(struct pt_regs *regs,
						    u8 reg)
{
	return *(unsigned long *)((u8 *)regs + reg);
}

static nokprobe_inline void kp_emu_set_reg(struct pt_regs *regs, u8 reg,
					   unsigned long v)
{
	*(unsigned long *)((u8 *)regs + reg) = v;
}

static bool __kprobes kpe_push(struct kprobe_site *s, struct pt_regs *regs)
{
	/* push %rsp pushes the value from before the push. */
	int3_emulate_push(regs, kp_emu_get_reg(regs, s->arch.emu.src));
	return kpx_nop(s, regs);
}

static bool __kprobes kpe_pop(struct kprobe_site *s, struct pt_regs *regs)
{
	/* pop %rsp loads %rsp last, overriding the increment. */
	unsigned long v = int3_emulate_pop(regs);

	kp_emu_set_reg(regs, s->arch.emu.dst, v);
	return kpx_nop(s, regs);
}

static bool __kprobes kpe_lea(struct kprobe_site *s, struct pt_regs *regs)
{
	const struct kprobe_x86_emu *e = &s->arch.emu;
	unsigned long ea = e->addr;

	if (e->base != KPE_NOREG)
		ea += kp_emu_get_reg(regs, e->base);
	if (e->index != KPE_NOREG)
		ea += kp_emu_get_reg(regs, e->index) << e->scale;
	kp_emu_set_reg(regs, e->dst, e->size == 8 ? ea : (u32)ea);
	return kpx_nop(s, regs);
}

/*
 * The ALU instructions: one function per operation and operand width.
 * Their operands are found without a test on their kind: decode.c left
 * each as an offset into pt_regs, or as an address (the RIP-relative
 * operand, or .imm), and a mask that adds the registers' base only to the
 * former (kp_emu_opd()).  Every access goes through the exception table:
 * a register never faults, the memory operand lies in data that decode.c
 * made sure the probed code's own image keeps mapped and writable while
 * the code exists (kp_emu_data_ok()), and if one faults anyway, nothing
 * has been written yet.  The operation itself is run by the CPU on the
 * values, so that the result and every flag (also those the manuals leave
 * undefined, like AF after a logical operation) are what the probed
 * instruction would have produced.  These are inline asm, so no sanitizer
 * call can sneak into the trap handler.
 */
static nokprobe_inline void *kp_emu_opd(struct pt_regs *regs,
					unsigned long at, unsigned long in_regs)
{
	return (void *)(at + ((unsigned long)regs & in_regs));
}

#define KP_EMU_GET(v, p)	__get_kernel_nofault(&(v), (p), typeof(v), fault)
#define KP_EMU_PUT(p, v)	__put_kernel_nofault((p), &(v), typeof(v), fault)

/* dst OP= src; an operation that writes its destination. */
#define KP_EMU_OP2(op)							\
	do {								\
		KP_EMU_GET(sv, sp);					\
		KP_EMU_GET(dv, dp);					\
		asm volatile(op " %[src], %[dst]\n\tpushf\n\tpop %[flg]"\
			     : [dst] "+r" (dv), [flg] "=r" (fl)		\
			     : [src] "r" (sv) : "cc");			\
		wv = dv;						\
		KP_EMU_PUT(dp, wv);					\
		kp_emu_set_flags(regs, fl, KP_ALU_FLAGS);		\
	} while (0)

/* cmp and test: only the flags. */
#define KP_EMU_FLAGS2(op)						\
	do {								\
		KP_EMU_GET(sv, sp);					\
		KP_EMU_GET(dv, dp);					\
		asm volatile(op " %[src], %[dst]\n\tpushf\n\tpop %[flg]"\
			     : [flg] "=r" (fl)				\
			     : [dst] "r" (dv), [src] "r" (sv) : "cc");	\
		kp_emu_set_flags(regs, fl, KP_ALU_FLAGS);		\
	} while (0)

/* inc and dec: one operand, CF untouched. */
#define KP_EMU_OP1(op)							\
	do {								\
		KP_EMU_GET(dv, dp);					\
		asm volatile(op " %[dst]\n\tpushf\n\tpop %[flg]"	\
			     : [dst] "+r" (dv), [flg] "=r" (fl) : : "cc");\
		wv = dv;						\
		KP_EMU_PUT(dp, wv);					\
		kp_emu_set_flags(regs, fl,				\
				 KP_ALU_FLAGS & ~X86_EFLAGS_CF);	\
	} while (0)

#define KP_EMU_MOV()							\
	do {								\
		KP_EMU_GET(sv, sp);					\
		wv = sv;						\
		KP_EMU_PUT(dp, wv);					\
	} while (0)

/*
 * kpe_NAME(): operands of type T, the result written back as W.  The
 * widths: _q 64-bit, _lr 32-bit into a register (zero-extended to the
 * whole register on x86_64; the whole register on i386), _lm 32-bit into
 * memory (4 bytes); cmp and test write nothing, so their _l serves both.
 * A 32-bit kernel has no 64-bit operand size (no REX.W): no _q there.
 */
#define KP_EMU_FN(name, T, W, body)					\
static bool __kprobes kpe_##name(struct kprobe_site *s,			\
				 struct pt_regs *regs)			\
{									\
	const struct kprobe_x86_emu *e = &s->arch.emu;			\
	T *sp __maybe_unused = kp_emu_opd(regs, e->src_at, e->src_regs);\
	void *dp = kp_emu_opd(regs, e->dst_at, e->dst_regs);		\
	unsigned long fl __maybe_unused;				\
	T sv __maybe_unused, dv __maybe_unused;				\
	W wv __maybe_unused;						\
									\
	body;								\
	return kpx_nop(s, regs);					\
fault:									\
	return false;							\
}

#ifdef CONFIG_X86_64
KP_EMU_FN(mov_q, u64, u64, KP_EMU_MOV());
KP_EMU_FN(add_q, u64, u64, KP_EMU_OP2("add"));
KP_EMU_FN(or_q, u64, u64, KP_EMU_OP2("or"));
KP_EMU_FN(and_q, u64, u64, KP_EMU_OP2("and"));
KP_EMU_FN(sub_q, u64, u64, KP_EMU_OP2("sub"));
KP_EMU_FN(xor_q, u64, u64, KP_EMU_OP2("xor"));
KP_EMU_FN(cmp_q, u64, u64, KP_EMU_FLAGS2("cmp"));
KP_EMU_FN(test_q, u64, u64, KP_EMU_FLAGS2("test"));
KP_EMU_FN(inc_q, u64, u64, KP_EMU_OP1("inc"));
KP_EMU_FN(dec_q, u64, u64, KP_EMU_OP1("dec"));
#define KPE_Q(name)		kpe_##name##_q
#else
#define KPE_Q(...)		NULL
#endif
KP_EMU_FN(mov_lr, u32, unsigned long, KP_EMU_MOV());
KP_EMU_FN(mov_lm, u32, u32, KP_EMU_MOV());
KP_EMU_FN(add_lr, u32, unsigned long, KP_EMU_OP2("add"));
KP_EMU_FN(add_lm, u32, u32, KP_EMU_OP2("add"));
KP_EMU_FN(or_lr, u32, unsigned long, KP_EMU_OP2("or"));
KP_EMU_FN(or_lm, u32, u32, KP_EMU_OP2("or"));
KP_EMU_FN(and_lr, u32, unsigned long, KP_EMU_OP2("and"));
KP_EMU_FN(and_lm, u32, u32, KP_EMU_OP2("and"));
KP_EMU_FN(sub_lr, u32, unsigned long, KP_EMU_OP2("sub"));
KP_EMU_FN(sub_lm, u32, u32, KP_EMU_OP2("sub"));
KP_EMU_FN(xor_lr, u32, unsigned long, KP_EMU_OP2("xor"));
KP_EMU_FN(xor_lm, u32, u32, KP_EMU_OP2("xor"));
KP_EMU_FN(cmp_l, u32, u32, KP_EMU_FLAGS2("cmp"));
KP_EMU_FN(test_l, u32, u32, KP_EMU_FLAGS2("test"));
KP_EMU_FN(inc_lr, u32, unsigned long, KP_EMU_OP1("inc"));
KP_EMU_FN(inc_lm, u32, u32, KP_EMU_OP1("inc"));
KP_EMU_FN(dec_lr, u32, unsigned long, KP_EMU_OP1("dec"));
KP_EMU_FN(dec_lm, u32, u32, KP_EMU_OP1("dec"));

#define KPE_WIDTHS(name)	{ KPE_Q(name), kpe_##name##_lr, kpe_##name##_lm }
#define KPE_FLAGS(name)		{ KPE_Q(name), kpe_##name##_l, kpe_##name##_l }

/* By enum kprobe_x86_emu_alu, then width: _q, _lr, _lm. */
static kprobe_x86_emulate_t *const kpe_alu[][3] = {
	[KPE_MOV] = KPE_WIDTHS(mov),	[KPE_ADD] = KPE_WIDTHS(add),
	[KPE_OR] = KPE_WIDTHS(or),	[KPE_AND] = KPE_WIDTHS(and),
	[KPE_SUB] = KPE_WIDTHS(sub),	[KPE_XOR] = KPE_WIDTHS(xor),
	[KPE_CMP] = KPE_FLAGS(cmp),	[KPE_TEST] = KPE_FLAGS(test),
	[KPE_INC] = KPE_WIDTHS(inc),	[KPE_DEC] = KPE_WIDTHS(dec),
};

/* Where an ALU function finds an operand of kind @opd (register @reg). */
static void kp_emu_locate(struct kprobe_x86_emu *e, u8 opd, u8 reg,
			  unsigned long *at, unsigned long *in_regs)
{
	*in_regs = 0;
	switch (opd) {
	case KPE_OPD_REG:
		*at = reg;
		*in_regs = ~0UL;
		break;
	case KPE_OPD_MEM:
		*at = e->addr;
		break;
	default:	/* an immediate; for inc and dec, never read */
		*at = (unsigned long)&e->imm;
		break;
	}
}

static kprobe_x86_emulate_t *kp_pick_alu(struct kprobe_x86_emu *e)
{
	int width = e->size == 8 ? 0 : e->dst_opd == KPE_OPD_MEM ? 2 : 1;

	if (e->alu >= ARRAY_SIZE(kpe_alu))
		return NULL;
	kp_emu_locate(e, e->dst_opd, e->dst, &e->dst_at, &e->dst_regs);
	kp_emu_locate(e, e->src_opd, e->src, &e->src_at, &e->src_regs);
	return kpe_alu[e->alu][width];
}

/**
 * kprobe_x86_pick_emulation() - choose how a hit carries the instruction out
 * @s: a site whose arch.op (and, for KPX_STEP, arch.emu) prepare has set
 *
 * Sets s->arch.emulate: the function that carries the probed instruction
 * out in the trap, or NULL when only the slot's copy can run it.  Call it
 * once, before the site is armed, where s->arch stays (the operand
 * locations it computes may point into s->arch.emu).
 *
 * Return: 0, or -EINVAL when an instruction that has no copy to run has no
 * emulation either (a decoding this file does not know).
 */
int kprobe_x86_pick_emulation(struct kprobe_site *s)
{
	struct arch_kprobe_site *a = &s->arch;

	a->emulate = NULL;
	if (!kprobe_x86_op_steps(a->op)) {
		if (a->op < ARRAY_SIZE(kpx_emulate))
			a->emulate = kpx_emulate[a->op];
		return a->emulate ? 0 : -EINVAL;
	}
	switch (a->emu.kind) {
	case KPE_PUSH:
		a->emulate = kpe_push;
		break;
	case KPE_POP:
		a->emulate = kpe_pop;
		break;
	case KPE_LEA:
		a->emulate = kpe_lea;
		break;
	case KPE_ALU:
		a->emulate = kp_pick_alu(&a->emu);
		break;
	}
	return 0;
}

void kprobe_x86_step_fixup(struct kprobe_site *s, struct pt_regs *regs,
			   unsigned long flags_at_hit)
{
	unsigned long if_bit = flags_at_hit & X86_EFLAGS_IF;
	unsigned long *top;

	/* The copy ran with interrupts off; hand back the caller's IF. */
	regs->flags = (regs->flags & ~X86_EFLAGS_IF) | if_bit;

	switch (s->arch.op) {
	case KPX_STEP_PUSHF:
		top = (unsigned long *)regs->sp;
		*top = (*top & ~X86_EFLAGS_IF) | if_bit;
		break;
	case KPX_STEP_JMP_MEM:
		/* The copy pushed the branch target instead of jumping. */
		int3_emulate_jmp(regs, int3_emulate_pop(regs));
		return;
	case KPX_STEP_CALL_MEM:
		kp_emulate_call(s, regs, int3_emulate_pop(regs));
		return;
	default:
		break;
	}
	int3_emulate_jmp(regs, kp_next_ip(s));
}
NOKPROBE_SYMBOL(kprobe_x86_step_fixup);

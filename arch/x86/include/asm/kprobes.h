/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86 side of kprobes: the opcode type, the per-site data the hit path
 * needs and the architecture's part of the per-CPU stepping state.
 *
 * A probe site is armed by replacing the first byte of its instruction with
 * int3.  On a hit the instruction either is emulated on the saved registers
 * or runs from an out-of-line slot that holds a copy of it followed by an
 * int3; that second int3 brings the CPU back to finish the probe.  Where the
 * instruction allows, the slot also holds a boosted copy followed by a jump
 * back to the probed code: with no post handler to run, the CPU leaves the
 * trap straight for that copy and never traps a second time.
 *
 * A jump-optimized site has a jmp rel32 at the probe address instead of the
 * int3, to a detour buffer that saves the registers as the trap would, runs
 * the handlers, and continues with copies of the instructions the jump
 * covers (arch/x86/kernel/kprobes/opt.c).
 */
#ifndef _ASM_X86_KPROBES_H
#define _ASM_X86_KPROBES_H

#include <asm-generic/kprobes.h>

#ifdef CONFIG_KPROBES
#include <linux/types.h>
#include <linux/ptrace.h>
#include <linux/percpu.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

/* The generic core allocates out-of-line slots for us. */
#define __ARCH_WANT_KPROBES_INSN_SLOT

typedef u8 kprobe_opcode_t;

/* What arming writes over the first byte of the probed instruction. */
#define KPROBE_BREAKPOINT_INSN	INT3_INSN_OPCODE

/*
 * A slot: the stepped copy (longest instruction, then int3) at offset 0,
 * the boosted copy (instruction, then a jmp rel32 back) at KPROBE_BOOST_OFF.
 */
#define KPROBE_BOOST_OFF	(MAX_INSN_SIZE + INT3_INSN_SIZE)
#define KPROBE_INSN_SLOT_SIZE	(KPROBE_BOOST_OFF + MAX_INSN_SIZE + \
				 JMP32_INSN_SIZE)

/*
 * Jump optimization replaces the instructions covering the 5 bytes of a
 * jmp rel32: at most 4 bytes into an instruction of up to 15.  A detour
 * buffer holds the register-saving code, a copy of those instructions and
 * a jump back.
 */
#define KPROBE_OPT_MAX_LEN	(JMP32_INSN_SIZE - 1 + MAX_INSN_SIZE)
#define KPROBE_OPTINSN_SLOT_SIZE	128

/* Slots are written with text_poke(), which keeps the caches coherent. */
#define flush_insn_slot(p)	((void)(p))

struct kprobe;
struct kprobe_site;
struct pt_regs;

/*
 * How the probed instruction is carried out on a hit.  The STEP kinds run
 * the copy in the slot (some with a fixup when it comes back), the others
 * are emulated on pt_regs inside the int3 handler and need no slot.
 */
enum kprobe_x86_op {
	KPX_STEP,		/* run the copy, nothing to fix */
	KPX_STEP_PUSHF,		/* pushf: put the caller's IF in the pushed word */
	KPX_STEP_JMP_MEM,	/* jmp *mem, run as push mem: pop, jump */
	KPX_STEP_CALL_MEM,	/* call *mem, run as push mem: pop, call */
	KPX_NOP,		/* nothing but a skip */
	KPX_JMP,		/* jmp rel */
	KPX_CALL,		/* call rel */
	KPX_JCC,		/* jcc rel, condition in .cond */
	KPX_LOOP,		/* loopne/loope/loop/jrcxz, variant in .cond */
	KPX_RET,		/* ret [imm16], imm in .imm */
	KPX_JMP_REG,		/* jmp *%reg, pt_regs offset in .imm */
	KPX_CALL_REG,		/* call *%reg, pt_regs offset in .imm */
	KPX_CLI,
	KPX_STI,
	KPX_POPF,
};

/*
 * A KPX_STEP instruction that the int3 handler can also carry out itself
 * (emulate.c), so that a hit with a post handler traps once instead of
 * twice.  The slot's copy stays: it is the boosted path when there is no
 * post handler, and the fallback when an emulated memory access faults.
 * Operands are KPE_OPD_* kinds; registers are pt_regs offsets.
 */
enum kprobe_x86_emu_kind {
	KPE_NONE,
	KPE_PUSH,		/* push %src */
	KPE_POP,		/* pop %dst */
	KPE_LEA,		/* lea: .addr [+ .base] [+ .index << .scale] */
	KPE_ALU,		/* .alu on dst (and src) of .size bytes */
};

enum kprobe_x86_emu_alu {
	KPE_MOV, KPE_ADD, KPE_OR, KPE_AND, KPE_SUB, KPE_XOR, KPE_CMP,
	KPE_TEST, KPE_INC, KPE_DEC,
};

enum kprobe_x86_emu_opd {
	KPE_OPD_NONE, KPE_OPD_REG, KPE_OPD_IMM, KPE_OPD_MEM,
};

#define KPE_NOREG	0xff

struct kprobe_x86_emu {
	unsigned long	addr;		/* RIP-relative operand; lea's constant */
	s64		imm;		/* immediate, sign-extended */
	/*
	 * Where an ALU instruction's operands are, for emulate.c: a pt_regs
	 * offset when the *_regs mask is ~0UL, an address (the memory
	 * operand, or .imm) when it is 0.
	 */
	unsigned long	dst_at, src_at;
	unsigned long	dst_regs, src_regs;
	u8		kind;		/* enum kprobe_x86_emu_kind */
	u8		alu;		/* enum kprobe_x86_emu_alu */
	u8		size;		/* operand size: 4 or 8 */
	u8		dst_opd, src_opd;	/* enum kprobe_x86_emu_opd */
	u8		dst, src;	/* register operands */
	u8		base, index, scale;	/* lea; KPE_NOREG if absent */
};

#ifdef CONFIG_KPROBES_KUNIT_TEST
/* Tests only: sites prepared while this is set step instead of emulating. */
extern bool kprobe_x86_emu_off;
/* Tests only: decode.c's copy of an instruction with its RIP fixup. */
int kp_copy_insn(u8 *dst, const u8 *src, struct insn *insn, long delta);
/* Tests only: offsets into kprobes_kunit.c's kpkunit_asm_refused(). */
extern const s32 kpkunit_refused_off[];
#endif

/*
 * Carries a site's instruction out on the registers of a hit, regs->ip
 * included; false when it could not and changed nothing (emulate.c).
 */
typedef bool kprobe_x86_emulate_t(struct kprobe_site *s, struct pt_regs *regs);

/* Per probe site, filled by arch_prepare_kprobe_site(). */
struct arch_kprobe_site {
	kprobe_x86_emulate_t *emulate;	/* NULL: only the slot's copy can */
	kprobe_opcode_t	*slot;		/* copy + int3; NULL when emulated */
	unsigned long	target;		/* destination of a relative branch */
	u16		imm;		/* ret imm16, or register offset */
	u8		op;		/* enum kprobe_x86_op */
	u8		len;		/* length of the probed instruction */
	u8		cond;		/* jcc condition / loop variant */
	bool		boost;		/* the slot has a boosted copy */
	kprobe_opcode_t	opcode;		/* original first byte */
	struct kprobe_x86_emu emu;	/* KPX_STEP that can be emulated */
#ifdef CONFIG_OPTPROBES
	kprobe_opcode_t	*detour;	/* detour buffer, or NULL */
	u8		orig[JMP32_INSN_SIZE];	/* bytes the jump replaces */
	/* offset of the region's second instruction in the buffer's copy */
	u8		copy_next;
#endif
};

/* Of a copy stepped out of line (struct kprobe_step): IF at the hit. */
struct arch_kprobe_step {
	unsigned long		flags;	/* regs->flags at the hit */
};

int kprobe_int3_handler(struct pt_regs *regs);
int kprobe_fault_handler(struct pt_regs *regs, int trapnr);

/*
 * The return trampoline's pt_regs sits right below the slot it returns
 * through: the real return address goes there before the handlers run, so
 * that unwinding from them finds it.  Inline: it is part of every return.
 */
#define arch_kretprobe_fixup_return arch_kretprobe_fixup_return
static __always_inline void
arch_kretprobe_fixup_return(struct pt_regs *regs,
			    kprobe_opcode_t *correct_ret_addr)
{
	*(unsigned long *)(regs + 1) = (unsigned long)correct_ret_addr;
}

#else /* !CONFIG_KPROBES */

static inline int kprobe_debug_handler(struct pt_regs *regs) { return 0; }

#endif /* CONFIG_KPROBES */
#endif /* _ASM_X86_KPROBES_H */

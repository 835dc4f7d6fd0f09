/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 side of uprobes: the breakpoint opcode, what instruction analysis
 * keeps per probe, and the per-thread state of an out-of-line step.
 *
 * A site is 64-bit code, or 32-bit code when the file is an i386 ELF; it
 * is armed only in processes of its kind.  A hit is carried out in one of
 * two ways.  Branches, calls, returns, nops,
 * pushes and pushf are emulated on the saved registers and never leave the
 * trap.  Everything else runs once from a slot of the process's XOL area
 * with the trap flag set, and the debug trap after it brings the thread
 * back to have its registers fixed up (arch/x86/kernel/uprobes.c) -- or,
 * boosted, from a stub near the text that jumps back by itself, when the
 * thread is not being single-stepped.  A 5-byte nop, after its first hit,
 * is entered by a jump to a stub instead of the int3 (optimized sites).
 * 32-bit sites are never boosted nor optimized.
 */
#ifndef _ASM_X86_UPROBES_H
#define _ASM_X86_UPROBES_H

#include <linux/types.h>
#include <linux/notifier.h>

typedef u8 uprobe_opcode_t;

#define MAX_UINSN_BYTES			16
/* One slot per stepping thread; 64-byte lines, two per slot. */
#define UPROBE_XOL_SLOT_BYTES		128

#define UPROBE_SWBP_INSN		0xcc
#define UPROBE_SWBP_INSN_SIZE		1

/*
 * thread.trap_nr while a copy steps or a boosted copy runs: any real trap
 * overwrites it.
 */
#define UPROBE_TRAP_NR			UINT_MAX

/*
 * How much of the start of a probed file arch_uprobe_file_mode() reads:
 * an ELF header up to e_machine.
 */
#define UPROBE_FILE_HDR_BYTES		20

/*
 * Optimized sites: a 5-byte nop becomes jmp rel32 to a stub of this size;
 * the stub's system call ends at UPROBE_STUB_SYSCALL_END.
 */
#define UPROBE_JMP_INSN_SIZE		5
#define UPROBE_STUB_BYTES		32
#define UPROBE_STUBS_PER_PAGE		(PAGE_SIZE / UPROBE_STUB_BYTES)
#define UPROBE_STUB_SYSCALL_END		16

/*
 * The registers the return trampoline and the stubs push before their
 * system call clobbers them, from the stack pointer up.
 */
struct uprobe_x86_saved {
	unsigned long	r11, cx, ax;
};

bool uprobe_x86_read_saved(struct pt_regs *regs,
			   struct uprobe_x86_saved *saved);

/* How a hit is carried out: one of these in arch_uprobe.op. */
enum uprobe_x86_op {
	UPX_STEP,		/* run the copy in a slot */
	UPX_NOP,		/* any nop form, endbr64/32 */
	UPX_JMP,		/* jmp rel8/rel32 */
	UPX_CALL,		/* call rel32 */
	UPX_JCC,		/* jcc rel8/rel32, condition in .cond */
	UPX_LOOP,		/* loopne/loope/loop/jrcxz, variant in .cond */
	UPX_RET,		/* ret [imm16], the bytes popped in .rel */
	UPX_PUSH,		/* push %reg, pt_regs offset in .reg */
	UPX_PUSHF,		/* pushf: push the flags without TF */
	UPX_JMP_REG,		/* jmp *%reg, pt_regs offset in .reg */
	UPX_CALL_REG,		/* call *%reg, pt_regs offset in .reg */
	UPX_POP,		/* pop %reg, pt_regs offset in .reg */
	UPX_LEAVE,		/* leave */
	UPX_MOV,		/* mov %src,%reg (.src, .reg; .cond: 32-bit) */
	UPX_LEA,		/* lea disp(%src or %rip),%reg (.rel: disp) */
	UPX_LOAD,		/* mov disp(%rip),%reg (.cond: 32-bit) */
	UPX_ADD_RSP,		/* add or sub $imm,%rsp (.rel: +imm or -imm) */
};

/* After a step: what the registers need (arch_uprobe.fixups). */
#define UPX_FIX_IP	0x01	/* ip moved from the slot back to the text */
#define UPX_FIX_CALL	0x02	/* the pushed return address points at the slot */
#define UPX_FIX_SCRATCH	0x04	/* a RIP-relative operand used .scratch */
#define UPX_NO_BOOST	0x08	/* stepped, never run from a stub (popf) */
#define UPX_KEEP_TF	0x10	/* sets TF itself (popf): keep it after the step */

struct arch_uprobe {
	/* The instruction as in the file; perf's unwinder reads insn[0..3]. */
	u8	insn[MAX_UINSN_BYTES];
	/* What runs in the slot: RIP-relative operands rewritten. */
	u8	ixol[MAX_UINSN_BYTES];
	s32	rel;		/* branch displacement; ret: bytes it pops */
	u8	len;		/* instruction length */
	u8	op;		/* enum uprobe_x86_op */
	u8	cond;		/* jcc condition, loop variant */
	u8	reg;		/* pt_regs offset / 8 of an operand register */
	u8	src;		/* pt_regs offset / 8 of a source register */
	u8	scratch;	/* pt_regs offset / 8 of the scratch register */
	u8	fixups;		/* UPX_FIX_* */
	bool	ia32;		/* 32-bit code (an i386 ELF), see mm_supported */
};

struct arch_uprobe_task {
	unsigned long	saved_scratch;	/* the scratch register's value */
	unsigned int	saved_trap_nr;	/* thread.trap_nr before the step */
	bool		saved_tf;	/* the thread had TF set itself */
	bool		saved_btf;	/* and block-step (PTRACE_SINGLEBLOCK) */
};

#endif /* _ASM_X86_UPROBES_H */

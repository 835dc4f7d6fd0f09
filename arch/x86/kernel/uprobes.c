// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 side of uprobes: which user instructions can be probed and how a
 * hit carries each out, the single-step of a slot copy, return-address
 * hijacking and the uretprobe system call.
 *
 * A site is decoded as 32-bit code when its file is an i386 ELF, else as
 * 64-bit code (arch_uprobe_file_mode()), and is armed only in processes of
 * that kind.  Emulation then pushes and pops 4-byte words and keeps ip in
 * 32 bits; a 32-bit process returns from a probed function to an int3
 * (no uretprobe system call in the compat table).  Refused, with
 * -ENOTSUPP as upstream:
 *  - instructions that trap on purpose or leave the process's control:
 *    int3, int n, into, int1, ud0/ud1/ud2, syscall, sysenter and the
 *    system returns, iret and far transfers;
 *  - privileged ones that could only fault: hlt, cli, sti, in/out and the
 *    string forms, mov to/from control and debug registers, rdmsr/wrmsr,
 *    invd/wbinvd, clts, rsm, vmread/vmwrite and the system forms of 0f 01;
 *  - mov to %ss and pop %ss (they hide the trap after them), xbegin (its
 *    abort address is relative), REX2 and near branches with an
 *    operand-size prefix;
 *  - encodings invalid in 64-bit mode, in 64-bit code.
 * Bytes that do not decode give -ENOEXEC.
 */
#include <linux/elf.h>
#include <linux/kdebug.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/uprobes.h>
#include <asm/insn.h>
#include <asm/mmu_context.h>
#include <asm/probe-insn.h>
#include <asm/shstk.h>
#include <asm/text-patching.h>
#include <asm/unistd.h>

#define PFX_OPSIZE		PROBE_PREFIX_OPSIZE
#define PFX_REP			PROBE_PREFIX_REP
#define PFX_REPNE		PROBE_PREFIX_REPNE

/* pt_regs slot (offset / 8) of general purpose register @n. */
static u8 gpr_slot(unsigned int n)
{
	return probe_insn_gpr_offset(n) / sizeof(long);
}

static unsigned long *reg_ptr(struct pt_regs *regs, u8 slot)
{
	return (unsigned long *)regs + slot;
}

bool is_swbp_insn(uprobe_opcode_t *insn)
{
	return *insn == UPROBE_SWBP_INSN;
}

bool is_trap_insn(uprobe_opcode_t *insn)
{
	return is_swbp_insn(insn);
}

/* The register number in the low opcode bits, extended by REX.B. */
static u8 opcode_reg(struct insn *insn)
{
	u8 r = insn->opcode.bytes[0] & 7;

	if (insn->rex_prefix.nbytes && X86_REX_B(insn->rex_prefix.bytes[0]))
		r += 8;
	return r;
}

static u8 modrm_rm(struct insn *insn)
{
	u8 r = X86_MODRM_RM(insn->modrm.bytes[0]);

	if (insn->rex_prefix.nbytes && X86_REX_B(insn->rex_prefix.bytes[0]))
		r += 8;
	return r;
}

static u8 modrm_reg(struct insn *insn)
{
	u8 r = X86_MODRM_REG(insn->modrm.bytes[0]);

	if (insn->rex_prefix.nbytes && X86_REX_R(insn->rex_prefix.bytes[0]))
		r += 8;
	return r;
}

static bool rex_w(struct insn *insn)
{
	return insn->rex_prefix.nbytes && X86_REX_W(insn->rex_prefix.bytes[0]);
}

/* arch_uprobe.src of a RIP-relative lea or load. */
#define SRC_RIP		0xff

/*
 * 89/8b with two registers, 8d (lea) with a RIP-relative or base+disp
 * operand, 8b loading from a RIP-relative address; 64-bit, or 32-bit with
 * the upper half cleared.  Only without legacy prefixes: an operand-size,
 * address-size or segment prefix changes what they do.  Stores, index
 * registers and everything else are stepped.
 */
static int analyze_mov(struct arch_uprobe *a, struct insn *insn, u8 opc)
{
	u8 modrm = insn->modrm.bytes[0];
	bool regs_only = X86_MODRM_MOD(modrm) == 3;

	if (insn->prefixes.nbytes)
		return 0;
	if (regs_only && opc != 0x8d) {
		bool store = opc == 0x89;	/* 89: r/m <- reg */

		a->op = UPX_MOV;
		a->cond = !rex_w(insn);
		a->reg = gpr_slot(store ? modrm_rm(insn) : modrm_reg(insn));
		a->src = gpr_slot(store ? modrm_reg(insn) : modrm_rm(insn));
		return 0;
	}
	if (regs_only || opc == 0x89)
		return 0;
	if (insn_rip_relative(insn))
		a->src = SRC_RIP;
	else if (opc == 0x8d && X86_MODRM_RM(modrm) != 4 &&	/* no SIB */
		 (X86_MODRM_MOD(modrm) || X86_MODRM_RM(modrm) != 5))
		a->src = gpr_slot(modrm_rm(insn));	/* not disp32 alone */
	else
		return 0;
	a->op = opc == 0x8d ? UPX_LEA : UPX_LOAD;
	a->cond = !rex_w(insn);
	a->reg = gpr_slot(modrm_reg(insn));
	a->rel = insn->displacement.value;
	return 0;
}

/* 48 81/83 /0 and /5 on %rsp: add and sub of an immediate (frames). */
static int analyze_alu_rsp(struct arch_uprobe *a, struct insn *insn)
{
	u8 modrm = insn->modrm.bytes[0];
	u8 op = X86_MODRM_REG(modrm);

	if (insn->prefixes.nbytes || !rex_w(insn) || X86_MODRM_MOD(modrm) != 3 ||
	    modrm_rm(insn) != 4 || (op != 0 && op != 5))
		return 0;
	a->op = UPX_ADD_RSP;
	a->cond = op == 5;		/* sub */
	a->rel = insn->immediate.value;
	return 0;
}

/* The size of a stack slot, of a pushed return address. */
static __always_inline unsigned int word_size(struct arch_uprobe *a)
{
	return a->ia32 ? sizeof(u32) : sizeof(u64);
}

static int set_branch(struct arch_uprobe *a, struct insn *insn, u8 op)
{
	if (probe_insn_has_prefix(insn, PFX_OPSIZE))
		return -ENOTSUPP;
	a->op = op;
	a->rel = insn->immediate.value;
	return 0;
}

/* ff /2 and /4: indirect call and jmp; /3 and /5 are far. */
static int analyze_group5(struct arch_uprobe *a, struct insn *insn)
{
	u8 reg = X86_MODRM_REG(insn->modrm.bytes[0]);
	bool call = reg == 2;

	if (reg == 3 || reg == 5)
		return -ENOTSUPP;
	if (reg != 2 && reg != 4)
		return 0;
	if (probe_insn_has_prefix(insn, PFX_OPSIZE))
		return -ENOTSUPP;
	if (X86_MODRM_MOD(insn->modrm.bytes[0]) == 3) {
		a->op = call ? UPX_CALL_REG : UPX_JMP_REG;
		a->reg = gpr_slot(modrm_rm(insn));
		return 0;
	}
	/* Stepped: ip is the target already; a call pushed the slot. */
	a->fixups &= ~UPX_FIX_IP;
	if (call)
		a->fixups |= UPX_FIX_CALL;
	return 0;
}

static int analyze_onebyte(struct arch_uprobe *a, struct insn *insn)
{
	u8 opc = insn->opcode.bytes[0];

	if (opc >= 0x70 && opc <= 0x7f) {
		a->cond = opc & 0xf;
		return set_branch(a, insn, UPX_JCC);
	}
	if (opc >= 0xe0 && opc <= 0xe3) {
		/*
		 * 0x67 makes the counter %ecx (jecxz, loop on %ecx); the
		 * emulation counts %rcx, and a copy cannot run out of line.
		 */
		if (probe_insn_has_prefix(insn, PROBE_PREFIX_ADDRSIZE))
			return -ENOTSUPP;
		a->cond = opc - 0xe0;
		return set_branch(a, insn, UPX_LOOP);
	}
	if (opc >= 0x50 && opc <= 0x57) {
		/* A 16-bit push is rare enough to step. */
		if (!probe_insn_has_prefix(insn, PFX_OPSIZE)) {
			a->op = UPX_PUSH;
			a->reg = gpr_slot(opcode_reg(insn));
		}
		return 0;
	}
	if (opc >= 0x58 && opc <= 0x5f) {
		if (!insn->prefixes.nbytes) {
			a->op = UPX_POP;
			a->reg = gpr_slot(opcode_reg(insn));
		}
		return 0;
	}

	switch (opc) {
	case 0x89:
	case 0x8b:
	case 0x8d:
		return analyze_mov(a, insn, opc);
	case 0x81:
	case 0x83:
		return analyze_alu_rsp(a, insn);
	case 0xc9:
		if (!insn->prefixes.nbytes)
			a->op = UPX_LEAVE;
		return 0;
	case 0xe8:
		return set_branch(a, insn, UPX_CALL);
	case 0xe9:
	case 0xeb:
		return set_branch(a, insn, UPX_JMP);
	case 0xc2:
	case 0xc3:
		if (probe_insn_has_prefix(insn, PFX_OPSIZE))
			return -ENOTSUPP;
		a->op = UPX_RET;
		/* The return address and imm16 more, worked out once here. */
		a->rel = word_size(a) +
			 (opc == 0xc2 ? (u16)insn->immediate.value : 0);
		return 0;
	case 0xff:
		return analyze_group5(a, insn);
	case 0x9c:
		if (!probe_insn_has_prefix(insn, PFX_OPSIZE))
			a->op = UPX_PUSHF;
		return 0;
	case 0x9d:
		/*
		 * popf setting TF traps after the next instruction: from a
		 * stub, that would be the jump back instead of the one after
		 * the popf.
		 */
		a->fixups |= UPX_NO_BOOST | UPX_KEEP_TF;
		return 0;
	case 0x90:
		/* Not pause (f3 90), not xchg %eax,%r8d. */
		if (!insn->rex_prefix.nbytes && !probe_insn_has_prefix(insn, PFX_REP))
			a->op = UPX_NOP;
		return 0;
	case 0xc7:
		return insn->modrm.bytes[0] == 0xf8 ? -ENOTSUPP : 0;	/* xbegin */
	case 0x8e:
		return X86_MODRM_REG(insn->modrm.bytes[0]) == 2 ? -ENOTSUPP : 0;
	/* Not valid in 64-bit mode; stepped in 32-bit code but for pop %ss. */
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x1e:
	case 0x1f: case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60:
	case 0x61: case 0x62: case 0x82: case 0xc4: case 0xc5:
	case 0xd4: case 0xd5: case 0xd6:
		return a->ia32 ? 0 : -ENOTSUPP;
	/* pop %ss; traps, far transfers, privileged. */
	case 0x17: case 0x9a: case 0xea:
	case 0xcc: case 0xcd: case 0xce: case 0xcf: case 0xca: case 0xcb:
	case 0xf1: case 0xf4: case 0xfa: case 0xfb:
	case 0x6c ... 0x6f: case 0xe4 ... 0xe7: case 0xec ... 0xef:
		return -ENOTSUPP;
	}
	return 0;
}

/* 0f 01 with a register operand: only the user-mode forms. */
static bool group7_user_ok(u8 modrm)
{
	switch (modrm) {
	case 0xd0:		/* xgetbv */
	case 0xd5: case 0xd6:	/* xend, xtest */
	case 0xee: case 0xef:	/* rdpkru, wrpkru */
	case 0xf9:		/* rdtscp */
		return true;
	}
	return false;
}

static int analyze_twobyte(struct arch_uprobe *a, struct insn *insn)
{
	u8 opc = insn->opcode.bytes[1];
	u8 modrm = insn->modrm.bytes[0];

	if (opc >= 0x80 && opc <= 0x8f) {
		a->cond = opc & 0xf;
		return set_branch(a, insn, UPX_JCC);
	}

	switch (opc) {
	case 0x01:
		if (X86_MODRM_MOD(modrm) == 3 && !group7_user_ok(modrm))
			return -ENOTSUPP;
		return 0;
	case 0x1f:
		a->op = UPX_NOP;
		return 0;
	case 0x1e:
		/* endbr64 and endbr32 are nops; rdssp and the like are not. */
		if (probe_insn_has_prefix(insn, PFX_REP) && (modrm == 0xfa || modrm == 0xfb))
			a->op = UPX_NOP;
		return 0;
	case 0x05: case 0x07: case 0x34: case 0x35:	/* system calls */
	case 0x0b: case 0xb9: case 0xff:		/* ud2, ud1, ud0 */
	case 0x00: case 0x06: case 0x08: case 0x09:	/* privileged */
	case 0x20 ... 0x23: case 0x30: case 0x32: case 0x78: case 0x79:
	case 0xaa:
		return -ENOTSUPP;
	}
	return 0;
}

/*
 * A RIP-relative operand would point elsewhere from the slot.  Rewrite it
 * as disp32(%scratch) and load the scratch register with the address the
 * original would have used as its base (the next instruction) during the
 * step.  The scratch register is one the instruction does not name.
 */
static int riprel_prepare(struct arch_uprobe *a, struct insn *insn)
{
	static const u8 candidates[] = { 6, 7, 3 };	/* %rsi, %rdi, %rbx */
	u8 *modrm = &a->ixol[insn_offset_modrm(insn)];
	int reg = X86_MODRM_REG(*modrm), vvvv = -1;
	u8 scratch = 0xff;
	int i;

	if (insn->rex_prefix.nbytes && X86_REX_R(insn->rex_prefix.bytes[0]))
		reg += 8;
	if (insn->vex_prefix.nbytes) {
		u8 b = insn->vex_prefix.bytes[insn->vex_prefix.nbytes == 2 ? 1 : 2];

		vvvv = ~X86_VEX_V(b) & 0xf;
	}
	for (i = 0; i < ARRAY_SIZE(candidates); i++) {
		u8 c = candidates[i];

		if (c == reg || c == vvvv)
			continue;
		/* cmpxchg8b/16b use %rbx implicitly. */
		if (c == 3 && insn->opcode.nbytes == 2 &&
		    insn->opcode.bytes[0] == 0x0f && insn->opcode.bytes[1] == 0xc7)
			continue;
		scratch = c;
		break;
	}
	if (scratch == 0xff)
		return -ENOTSUPP;

	/* mod 00 rm 101 (disp32 + rip) becomes mod 10 rm scratch. */
	*modrm = 0x80 | (*modrm & 0x38) | scratch;
	/* The base register must not be extended to %r8-%r15. */
	if (insn->rex_prefix.nbytes)
		a->ixol[insn_offset_rex_prefix(insn)] &= ~1;
	else if (insn->vex_prefix.nbytes >= 3)
		a->ixol[insn_offset_vex_prefix(insn) + 1] |= 0x20;	/* ~B */
	a->scratch = gpr_slot(scratch);
	a->fixups |= UPX_FIX_SCRATCH;
	return 0;
}

static bool is_rep_string(struct insn *insn)
{
	u8 opc = insn->opcode.bytes[0];

	if (insn->opcode.nbytes != 1 ||
	    !(probe_insn_has_prefix(insn, PFX_REP) || probe_insn_has_prefix(insn, PFX_REPNE)))
		return false;
	return (opc >= 0xa4 && opc <= 0xa7) || (opc >= 0xaa && opc <= 0xaf);
}

/**
 * arch_uprobe_file_mode() - which kind of code a probed file holds
 * @a: the site, before arch_uprobe_analyze_insn()
 * @hdr: the first UPROBE_FILE_HDR_BYTES of the file (zeroes past its end)
 *
 * An i386 ELF holds 32-bit code.  Anything else (an x86-64 or x32 ELF, a
 * file that is not ELF) is taken for 64-bit code, except by a 32-bit
 * kernel, whose processes all run 32-bit code.
 */
void arch_uprobe_file_mode(struct arch_uprobe *a, const u8 *hdr)
{
	BUILD_BUG_ON(UPROBE_FILE_HDR_BYTES <
		     offsetofend(struct elf32_hdr, e_machine));
	if (IS_ENABLED(CONFIG_X86_32)) {
		a->ia32 = true;
		return;
	}
	a->ia32 = IS_ENABLED(CONFIG_IA32_EMULATION) &&
		  !memcmp(hdr, ELFMAG, SELFMAG) &&
		  hdr[EI_CLASS] == ELFCLASS32 &&
		  get_unaligned_le16(hdr + offsetof(struct elf32_hdr,
						    e_machine)) == EM_386;
}

/**
 * arch_uprobe_analyze_insn() - decide how a probed instruction runs
 * @a: insn[] holds the bytes from the file, ia32 its kind; the rest is
 *     filled in
 * @mm: unused: the kind of code is the file's (arch_uprobe_file_mode())
 * @addr: unused: nothing depends on where the file is mapped
 *
 * Return: 0, -ENOEXEC for bytes that do not decode, -ENOTSUPP for an
 * instruction that cannot be probed (see the top of this file).
 */
int arch_uprobe_analyze_insn(struct arch_uprobe *a, struct mm_struct *mm,
			     unsigned long addr)
{
	struct insn insn;
	int ret;

	if (insn_decode(&insn, a->insn, MAX_UINSN_BYTES,
			a->ia32 ? INSN_MODE_32 : INSN_MODE_64))
		return -ENOEXEC;
	if (insn_is_rex2(&insn) || insn_has_emulate_prefix(&insn))
		return -ENOTSUPP;

	/*
	 * int3 after the copy (x86 instructions are 15 bytes at most):
	 * should its step ever not trap, the thread stops there instead of
	 * running whatever follows in the slot.
	 */
	memset(a->ixol, UPROBE_SWBP_INSN, sizeof(a->ixol));
	memcpy(a->ixol, a->insn, insn.length);
	a->len = insn.length;
	a->op = UPX_STEP;
	a->fixups = UPX_FIX_IP;

	if (insn.vex_prefix.nbytes)
		ret = 0;	/* other opcode maps: stepped */
	else if (insn.opcode.nbytes == 1)
		ret = analyze_onebyte(a, &insn);
	else if (insn.opcode.nbytes == 2 && insn.opcode.bytes[0] == 0x0f)
		ret = analyze_twobyte(a, &insn);
	else
		ret = 0;
	if (ret)
		return ret;

	/*
	 * Emulations that read user memory step instead when that faults,
	 * so that the fault is the instruction's own: they keep the step's
	 * preparation.
	 */
	if (a->op != UPX_STEP && a->op != UPX_POP && a->op != UPX_LEAVE &&
	    a->op != UPX_LOAD)
		a->fixups = 0;
	else if (insn_rip_relative(&insn))
		ret = riprel_prepare(a, &insn);
	if (!ret && a->op == UPX_STEP && is_rep_string(&insn))
		a->cond = 1;	/* steps once per iteration */
	return ret;
}

/* ---- emulation ------------------------------------------------------------ */

/*
 * A word of @a's size to user memory; 0 or -EFAULT.  These helpers are
 * inlined into the emulation, which runs on every hit: out of line, they
 * cost a hit on push or ret some 20 instructions more (make bench).
 */
static __always_inline int store_user(struct arch_uprobe *a,
				      unsigned long addr, unsigned long val)
{
	if (a->ia32)
		return put_user((u32)val, (u32 __user *)addr);
	return put_user(val, (unsigned long __user *)addr);
}

static __always_inline bool push_user(struct arch_uprobe *a,
				      struct pt_regs *regs, unsigned long val)
{
	unsigned long sp = regs->sp - word_size(a);

	if (store_user(a, sp, val)) {
		force_sig_fault(SIGSEGV, SEGV_MAPERR, (void __user *)sp);
		return false;
	}
	regs->sp = sp;
	return true;
}

#define ARITH_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF)

/*
 * add or sub $imm,%rsp: the CPU computes the result and its flags (all six
 * arithmetic ones, none of which depends on the flags before).
 */
static void emulate_add_rsp(struct arch_uprobe *a, struct pt_regs *regs)
{
	unsigned long sp = regs->sp, imm = (long)a->rel, fl;

	if (a->cond)
		asm ("sub %[imm], %[sp]\n\tpushf\n\tpop %[fl]"
		     : [sp] "+r" (sp), [fl] "=r" (fl) : [imm] "r" (imm) : "cc");
	else
		asm ("add %[imm], %[sp]\n\tpushf\n\tpop %[fl]"
		     : [sp] "+r" (sp), [fl] "=r" (fl) : [imm] "r" (imm) : "cc");
	regs->sp = sp;
	regs->flags = (regs->flags & ~ARITH_FLAGS) | (fl & ARITH_FLAGS);
}

/*
 * Read 8 (or 4, zero-extended) bytes of user memory; false on a fault.
 * In 32-bit code, registers are written zero-extended too.
 */
static __always_inline bool load_user(unsigned long addr, bool half,
				      unsigned long *val)
{
	u32 v32;

	if (!half)
		return !get_user(*val, (unsigned long __user *)addr);
	if (get_user(v32, (u32 __user *)addr))
		return false;
	*val = v32;
	return true;
}

/*
 * Where a branch goes: 32-bit code wraps at 4 GiB, and a register target
 * counts with its low half.  Other instructions cannot end beyond 4 GiB,
 * since 32-bit user code lies below it: they need no such care.
 */
static unsigned long code_addr(struct arch_uprobe *a, unsigned long ip)
{
	return a->ia32 ? (u32)ip : ip;
}

/* A register result: 32-bit ones clear the upper half. */
static void set_reg(struct arch_uprobe *a, struct pt_regs *regs,
		    unsigned long val)
{
	*reg_ptr(regs, a->reg) = a->cond ? (u32)val : val;
}

bool arch_uprobe_emulated(struct arch_uprobe *a)
{
	return a->op != UPX_STEP;
}

/**
 * arch_uprobe_skip_sstep() - carry out an emulated instruction
 * @a: the probe
 * @regs: with ip at the probed instruction
 *
 * Return: true when done (a fault on the user stack leaves ip at the probe
 * with SIGSEGV pending, as the instruction itself would have); false when
 * the instruction must be stepped.
 */
bool arch_uprobe_skip_sstep(struct arch_uprobe *a, struct pt_regs *regs)
{
	unsigned long next = regs->ip + a->len, target = next + a->rel;
	unsigned long val;

	/* The commonest first instruction (nop, endbr64) before the rest. */
	if (a->op == UPX_NOP) {
		regs->ip = next;
		goto done;
	}
	switch (a->op) {
	case UPX_JMP:
		next = code_addr(a, target);
		break;
	case UPX_CALL:
		if (!push_user(a, regs, next))
			return true;
		next = code_addr(a, target);
		break;
	case UPX_JCC:
		int3_emulate_jcc(regs, a->cond, next, a->rel);
		regs->ip = code_addr(a, regs->ip);
		goto done;
	case UPX_LOOP:
		/* 32-bit code counts %ecx: the same test on it zero-extended. */
		if (a->ia32)
			regs->cx = (u32)regs->cx;
		if (probe_insn_loop_taken(a->cond, regs))
			next = code_addr(a, target);
		if (a->ia32)
			regs->cx = (u32)regs->cx;
		break;
	case UPX_RET:
		if (!load_user(regs->sp, a->ia32, &val)) {
			force_sig_fault(SIGSEGV, SEGV_MAPERR,
					(void __user *)regs->sp);
			return true;
		}
		regs->sp += a->rel;
		next = val;
		break;
	case UPX_PUSH:
		/* push %rsp stores the value from before the push. */
		if (!push_user(a, regs, *reg_ptr(regs, a->reg)))
			return true;
		break;
	case UPX_PUSHF:
		if (!push_user(a, regs, regs->flags &
			       ~(X86_EFLAGS_RF | X86_EFLAGS_VM)))
			return true;
		break;
	case UPX_JMP_REG:
		next = code_addr(a, *reg_ptr(regs, a->reg));
		break;
	case UPX_CALL_REG:
		/* Read the target first: it may be %rsp itself. */
		val = code_addr(a, *reg_ptr(regs, a->reg));
		if (!push_user(a, regs, next))
			return true;
		next = val;
		break;
	case UPX_POP:
		if (!load_user(regs->sp, a->ia32, &val))
			return false;
		/* pop %rsp: the loaded value wins over the increment. */
		regs->sp += word_size(a);
		*reg_ptr(regs, a->reg) = val;
		break;
	case UPX_LEAVE:
		if (!load_user(regs->bp, a->ia32, &val))
			return false;
		regs->sp = regs->bp + word_size(a);
		regs->bp = val;
		break;
	case UPX_MOV:
		set_reg(a, regs, *reg_ptr(regs, a->src));
		break;
	case UPX_LEA:
		set_reg(a, regs, (a->src == SRC_RIP ? next :
				  *reg_ptr(regs, a->src)) + a->rel);
		break;
	case UPX_LOAD:
		if (!load_user(next + a->rel, a->cond, &val))
			return false;
		set_reg(a, regs, val);
		break;
	case UPX_ADD_RSP:
		emulate_add_rsp(a, regs);
		break;
	default:
		return false;
	}
	regs->ip = next;
done:
	/*
	 * TF set by the program or a debugger (ptrace single-step): the real
	 * instruction would have trapped after it, so must the emulated one.
	 */
	if (regs->flags & X86_EFLAGS_TF)
		send_sig(SIGTRAP, current, 0);
	return true;
}

/* ---- single-step ----------------------------------------------------------- */

int arch_uprobe_pre_xol(struct arch_uprobe *a, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;

	at->saved_trap_nr = current->thread.trap_nr;
	current->thread.trap_nr = UPROBE_TRAP_NR;
	at->saved_tf = regs->flags & X86_EFLAGS_TF;
	/* Block-step traps only at branches; the copy must trap after one. */
	at->saved_btf = test_thread_flag(TIF_BLOCKSTEP);
	if (at->saved_btf)
		set_task_blockstep(current, false);
	if (a->fixups & UPX_FIX_SCRATCH) {
		unsigned long *r = reg_ptr(regs, a->scratch);

		at->saved_scratch = *r;
		*r = utask->bp_vaddr + a->len;
	}
	regs->ip = utask->xol_vaddr;
	regs->flags |= X86_EFLAGS_TF;
	return 0;
}

/**
 * arch_uprobe_step_skipped() - did the kernel carry the stepped copy out?
 * @a: the site being stepped
 * @regs: at a breakpoint trap during the step
 *
 * UMIP's emulation of sgdt, sidt and smsw, a SEV-ES or TDX guest's of
 * cpuid: the kernel moved ip past the copy without the debug trap, and the
 * thread ran into the int3 that follows the copy in its slot.  That is
 * where the step ends, as the trap would have ended it: ip goes back to
 * the end of the copy.
 *
 * Return: true when @regs is at that int3.
 */
bool arch_uprobe_step_skipped(struct arch_uprobe *a, struct pt_regs *regs)
{
	unsigned long end = current->utask->xol_vaddr + a->len;

	if (regs->ip != end + INT3_INSN_SIZE)
		return false;
	regs->ip = end;
	return true;
}

/*
 * Undo what arch_uprobe_pre_xol() set up.  TF goes back to the thread's
 * own, except after a popf that ran (@ran): the flags are then the ones
 * it loaded, and the program's own single-step trap must come after the
 * next instruction, as without the probe.
 */
static void xol_restore(struct arch_uprobe *a, struct pt_regs *regs, bool ran)
{
	struct arch_uprobe_task *at = &current->utask->autask;

	current->thread.trap_nr = at->saved_trap_nr;
	if (a->fixups & UPX_FIX_SCRATCH)
		*reg_ptr(regs, a->scratch) = at->saved_scratch;
	if (!at->saved_tf && !(ran && (a->fixups & UPX_KEEP_TF)))
		regs->flags &= ~X86_EFLAGS_TF;
	if (at->saved_btf)
		set_task_blockstep(current, true);
}

/**
 * arch_uprobe_post_xol() - the copy ran: move the registers back
 * @a: the probe
 * @regs: as the debug trap left them
 *
 * Return: 0; 1 when a rep string instruction stopped after an iteration
 * and must be stepped on; -EFAULT when the return address a stepped call
 * pushed cannot be corrected.
 */
int arch_uprobe_post_xol(struct arch_uprobe *a, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	long delta = utask->bp_vaddr - utask->xol_vaddr;

	/*
	 * TF traps after every iteration of a rep string instruction.  We
	 * step on to the last one, unless a debugger is stepping the thread:
	 * it stops after each iteration, at the probed address, and the
	 * thread hits the probe again when it goes on (as after a signal).
	 */
	if (a->op == UPX_STEP && a->cond && regs->ip == utask->xol_vaddr) {
		if (!utask->autask.saved_tf)
			return 1;
		xol_restore(a, regs, true);
		regs->ip = utask->bp_vaddr;
		send_sigtrap(regs, 0, TRAP_BRKPT);
		return 0;
	}

	xol_restore(a, regs, true);
	if (a->fixups & UPX_FIX_IP)
		regs->ip += delta;
	if (a->fixups & UPX_FIX_CALL) {
		unsigned long ret = utask->xol_vaddr + a->len + delta;

		if (store_user(a, regs->sp, ret))
			return -EFAULT;
	}
	/* A debugger was stepping the thread: this was its step. */
	if (utask->autask.saved_tf)
		send_sigtrap(regs, 0, TRAP_BRKPT);
	return 0;
}

/* A fault or a fatal signal during the step: back to the probed address. */
void arch_uprobe_abort_xol(struct arch_uprobe *a, struct pt_regs *regs)
{
	xol_restore(a, regs, false);
	regs->ip = current->utask->bp_vaddr;
}

/*
 * May @a be armed in @mm?  Only in a process of the kind of code it was
 * analysed as: a file mapped by both a 64-bit and a 32-bit process (not an
 * ELF either could run, a data file mapped executable) is probed in the
 * processes of one kind only.
 */
bool arch_uprobe_mm_supported(struct arch_uprobe *a, struct mm_struct *mm)
{
	return a->ia32 == !is_64bit_mm(mm);
}

bool arch_uprobe_xol_was_trapped(struct task_struct *t)
{
	return t->thread.trap_nr != UPROBE_TRAP_NR;
}

int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args->regs;

	/*
	 * Kernel traps are kprobes' business.  Nor is a trap in code of the
	 * other kind than its process ours (a 64-bit process that switched
	 * to a 32-bit code segment, or the reverse): its sites were analysed
	 * and its XOL area placed for the process's kind, and would run
	 * wrongly.  Such a process gets SIGTRAP at a probe it hits in the
	 * other mode: probing code it runs in that mode is not supported.
	 */
	if (!regs || !user_mode(regs) || !current->mm ||
	    user_64bit_mode(regs) != is_64bit_mm(current->mm))
		return NOTIFY_DONE;

	switch (val) {
	case DIE_INT3:
		if (uprobe_pre_sstep_notifier(regs))
			return NOTIFY_STOP;
		break;
	case DIE_DEBUG:
		if (uprobe_post_sstep_notifier(regs))
			return NOTIFY_STOP;
		break;
	}
	return NOTIFY_DONE;
}

/* ---- return probes ------------------------------------------------------- */

/*
 * The trampoline, at the start of the XOL page.  A probed function returns
 * here; it saves the registers the syscall instruction clobbers and calls
 * sys_uretprobe(), which restores them and resumes at the real return
 * address.  It never comes back: ud2 if it does.  A 32-bit process has an
 * int3 there instead, which handle_swbp() recognises by its address (on a
 * 32-bit kernel, the only kind; the system call is x86_64's).
 */
static u8 uretprobe_tramp32[] = { UPROBE_SWBP_INSN };

#ifdef CONFIG_X86_64
#define URETPROBE_SYSCALL_END	11	/* offset after the syscall */

static u8 uretprobe_tramp[] = {
	0x50,				/* push %rax */
	0x51,				/* push %rcx */
	0x41, 0x53,			/* push %r11 */
	0xb8, 0, 0, 0, 0,		/* mov $__NR_uretprobe, %eax */
	0x0f, 0x05,			/* syscall */
	0x0f, 0x0b,			/* ud2 */
};
#endif

/* Called by the process the XOL page is for. */
void *arch_uprobe_trampoline(unsigned long *psize)
{
#ifdef CONFIG_X86_64
	if (is_64bit_mm(current->mm)) {
		put_unaligned_le32(__NR_uretprobe, &uretprobe_tramp[5]);
		*psize = sizeof(uretprobe_tramp);
		return uretprobe_tramp;
	}
#endif
	*psize = sizeof(uretprobe_tramp32);
	return uretprobe_tramp32;
}

/* No shadow stack: the kernel has it for 64-bit processes only. */
static unsigned long hijack_return32(unsigned long tramp, struct pt_regs *regs)
{
	u32 __user *sp = (u32 __user *)regs->sp;
	u32 orig;

	if (tramp > U32_MAX || get_user(orig, sp))
		return -1UL;
	if (orig != tramp && put_user(tramp, sp))
		return -1UL;
	return orig;
}

unsigned long arch_uretprobe_hijack_return_addr(unsigned long tramp,
						struct pt_regs *regs)
{
	unsigned long __user *sp = (unsigned long __user *)regs->sp;
	unsigned long orig;

	if (!user_64bit_mode(regs))
		return hijack_return32(tramp, regs);
	if (get_user(orig, sp))
		return -1UL;
	if (orig == tramp)
		return orig;
	if (put_user(tramp, sp))
		return -1UL;
	/* With a shadow stack, its copy of the return address must agree. */
	if (shstk_update_last_frame(tramp)) {
		force_sig(SIGSEGV);
		return -1UL;
	}
	return orig;
}

/*
 * Is @ri's frame still live?  At a call, sp points at the new return
 * address, below every live frame (or at the same slot for a tail call
 * chained to it).  At the trampoline, sp is above the returning frame's
 * slot (by a word, and more after "ret $n"), and at or below the slot of
 * every frame still to return; the core asks about those only.
 */
bool arch_uretprobe_is_alive(struct return_instance *ri, enum rp_check ctx,
			     struct pt_regs *regs)
{
	if (ctx == RP_CHECK_CALL)
		return regs->sp < ri->stack;
	return regs->sp <= ri->stack;
}

#ifdef CONFIG_X86_64
/**
 * uprobe_x86_read_saved() - read what the trampoline or a stub pushed
 * @regs: the registers at their system call
 * @saved: filled from the three words at regs->sp
 *
 * One user access section for the three words: through copy_from_user()
 * they cost more than the rest of a stub's hit.
 *
 * Return: false when the stack cannot be read.
 */
bool uprobe_x86_read_saved(struct pt_regs *regs,
			   struct uprobe_x86_saved *saved)
{
	unsigned long __user *sp = (unsigned long __user *)regs->sp;

	if (!user_access_begin(sp, sizeof(*saved)))
		return false;
	unsafe_get_user(saved->r11, &sp[0], fault);
	unsafe_get_user(saved->cx, &sp[1], fault);
	unsafe_get_user(saved->ax, &sp[2], fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * The trampoline's system call.  Anyone calling it from elsewhere gets
 * SIGILL.  Registers go back to what they were when the probed function
 * returned; the return handlers see them so, and so does the caller.  rcx
 * and r11 then differ from what sysret needs, so the way back is iret.
 */
SYSCALL_DEFINE0(uretprobe)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long tramp = uprobe_get_trampoline_vaddr();
	/* Read before use: no stack zeroing on every return. */
	struct uprobe_x86_saved saved __uninitialized;

	if (tramp == UPROBE_NO_TRAMPOLINE_VADDR ||
	    regs->ip != tramp + URETPROBE_SYSCALL_END) {
		/* Or from the stub of an optimized site. */
		if (IS_ENABLED(CONFIG_UPROBES_OPT) && uprobe_stub_syscall(regs))
			return regs->ax;
		goto sigill;
	}
	if (!uprobe_x86_read_saved(regs, &saved))
		goto sigill;
	regs->r11 = saved.r11;
	regs->cx = saved.cx;
	regs->ax = saved.ax;
	regs->sp += sizeof(saved);
	regs->ip = tramp;
	/*
	 * Not a system call to restart: with %rax now the function's return
	 * value (say -ERESTARTSYS) and a signal pending, signal delivery
	 * would otherwise rewind ip and reload %rax.
	 */
	regs->orig_ax = -1;
	uprobe_handle_trampoline(regs);
	/* The system call's return value is what %rax must hold. */
	return regs->ax;
sigill:
	force_sig(SIGILL);
	return -1;
}
#endif /* CONFIG_X86_64 */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Instruction analysis for x86 kprobes: is the address an instruction
 * boundary, can the instruction there be probed, and how is it carried out
 * on a hit (emulated, or run from an out-of-line slot).  Also prepares and
 * releases the slot.
 *
 * Refused, with the errno upstream gives where it refuses the same thing
 * (the table is in Documentation/trace/kprobes.rst):
 *  -EILSEQ: instructions that raise an exception on purpose (int3, int n,
 *	int1, into, ud0/ud1/ud2: debuggers' breakpoints, BUG/WARN sites);
 *  -EOPNOTSUPP: instructions that cannot run anywhere but in place or that
 *	leave the kernel's control: iret, far jmp, call and ret,
 *	syscall/sysret/sysenter/sysexit, swapgs, VMX/SVM, SGX, rsm, and hlt
 *	and mwait (they would wait with interrupts off while stepped);
 *  -EINVAL: mov to or pop %ss (it hides the trap after it), xbegin, sti
 *	right before hlt or mwait (emulation loses sti's interrupt shadow), a near
 *	branch with an operand- or address-size prefix, REX2 and
 *	emulate-prefixed instructions, endbr64 with kernel IBT.
 */
#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/kgdb.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <asm/alternative.h>
#include <asm/ibt.h>
#include <asm/insn.h>
#include <asm/probe-insn.h>
#include <asm/sections.h>
#include <asm/text-patching.h>

#include "internal.h"

#define KP_PREFIX_OPSIZE	PROBE_PREFIX_OPSIZE
#define KP_PREFIX_ADDRSIZE	PROBE_PREFIX_ADDRSIZE
#define KP_PREFIX_LOCK		PROBE_PREFIX_LOCK
#define KP_MODRM_PUSH		6	/* ModRM.reg of "push r/m" (0xff /6) */

/* Functions longer than this are not probed (nothing in the kernel is). */
#define KP_FUNC_MAX	SZ_1M

/* Put back in @f what our armed site @s wrote into the text. */
static void kp_func_undo_site(struct kp_func *f, struct kprobe_site *s)
{
	unsigned long off = (unsigned long)s->addr - f->start;

	f->text[off] = s->arch.opcode;
#ifdef CONFIG_OPTPROBES
	if (s->arch.detour)
		memcpy(&f->text[off], s->arch.orig,
		       min_t(unsigned long, JMP32_INSN_SIZE, f->size - off));
#endif
}

/**
 * kp_func_read() - copy the function around an address, as it was before
 *	any of our breakpoints and jumps went in
 * @addr: an address inside the function
 * @f: filled in; kp_func_free() it
 *
 * Call under kprobe_mutex (the sites must not change) and text_mutex (no
 * one else's text patching may be half done).  Return: 0, -EILSEQ when
 * @addr is in no known function, or -ENOMEM.
 */
int kp_func_read(unsigned long addr, struct kp_func *f)
{
	unsigned long size, offset, a;
	struct kprobe_site *s;

	f->text = NULL;
	if (!kallsyms_lookup_size_offset(addr, &size, &offset) ||
	    !size || size > KP_FUNC_MAX)
		return -EILSEQ;
	f->start = addr - offset;
	f->size = size;
	f->text = kvmalloc(size, GFP_KERNEL);
	if (!f->text)
		return -ENOMEM;
	if (copy_from_kernel_nofault(f->text, (void *)f->start, size)) {
		kp_func_free(f);
		return -EILSEQ;
	}
	for (a = f->start; a < f->start + size; a++) {
		s = kprobe_site_lookup(a);
		if (s && !s->ftrace)
			kp_func_undo_site(f, s);
	}
	return 0;
}

void kp_func_free(struct kp_func *f)
{
	kvfree(f->text);
	f->text = NULL;
}

/**
 * kp_func_decode() - decode the instruction at @at in a function's copy
 * @f: from kp_func_read()
 * @at: the address of the instruction
 * @insn: the decoded instruction
 *
 * Return: 0, or -EILSEQ outside the function or on bytes that do not decode.
 */
int kp_func_decode(const struct kp_func *f, unsigned long at,
		   struct insn *insn)
{
	unsigned long off = at - f->start;

	if (at < f->start || off >= f->size)
		return -EILSEQ;
	if (insn_decode(insn, &f->text[off],
			min_t(unsigned long, MAX_INSN_SIZE, f->size - off),
			INSN_MODE_KERN))
		return -EILSEQ;
	return 0;
}

/* Is the instruction at @addr a breakpoint kgdb put there? */
static bool kp_debugger_break(unsigned long addr, struct insn *insn)
{
#ifdef CONFIG_KGDB
	return insn->opcode.bytes[0] == INT3_INSN_OPCODE &&
	       kgdb_has_hit_break(addr);
#else
	return false;
#endif
}

/*
 * x86 instructions have no alignment, so the only way to know whether
 * @addr starts one is to decode its function from the start.  Padding and
 * straight-line-speculation int3s decode as one-byte instructions, which is
 * what they are.
 */
static int kp_check_boundary(const struct kp_func *f, unsigned long addr)
{
	struct insn insn;
	unsigned long cur;

	for (cur = f->start; cur < addr; cur += insn.length) {
		if (kp_func_decode(f, cur, &insn))
			return -EILSEQ;
		/*
		 * A debugger's breakpoint hides the length of the instruction
		 * it replaced, and with it every boundary after it.
		 */
		if (kp_debugger_break(cur, &insn))
			return -EILSEQ;
	}

	return cur == addr ? 0 : -EILSEQ;
}

/* A near branch whose size prefixes we would have to honour: refuse. */
static bool kp_odd_branch(struct insn *insn)
{
	return probe_insn_has_prefix(insn, KP_PREFIX_OPSIZE) ||
	       probe_insn_has_prefix(insn, KP_PREFIX_ADDRSIZE);
}

static void kp_set_branch(struct arch_kprobe_site *a, u8 op,
			  unsigned long addr, struct insn *insn)
{
	a->op = op;
	a->target = addr + insn->length + insn->immediate.value;
}

/* sti delays interrupts by one instruction; emulating it cannot. */
static bool kp_sti_needs_shadow(const struct kp_func *f, unsigned long next)
{
	struct insn insn;

	if (kp_func_decode(f, next, &insn))
		return true;
	if (insn.opcode.bytes[0] == 0xf4)			/* hlt */
		return true;
	return insn.opcode.bytes[0] == 0x0f &&			/* mwait */
	       insn.opcode.bytes[1] == 0x01 && insn.modrm.bytes[0] == 0xc9;
}

/* ff /2, /3, /4, /5: near and far indirect call and jmp. */
static int kp_classify_group5(struct insn *insn, struct arch_kprobe_site *a)
{
	u8 modrm = insn->modrm.bytes[0];
	u8 reg = X86_MODRM_REG(modrm);
	bool call = reg == 2;

	if (reg != 2 && reg != 4) {
		/* /3 and /5 are far transfers; the others are plain. */
		return (reg == 3 || reg == 5) ? -EOPNOTSUPP : 0;
	}
	if (kp_odd_branch(insn))
		return -EINVAL;

	if (X86_MODRM_MOD(modrm) == 3) {
		u8 rm = X86_MODRM_RM(modrm);

		if (insn->rex_prefix.nbytes &&
		    X86_REX_B(insn->rex_prefix.bytes[0]))
			rm += 8;
		a->op = call ? KPX_CALL_REG : KPX_JMP_REG;
		a->imm = probe_insn_gpr_offset(rm);
	} else {
		a->op = call ? KPX_STEP_CALL_MEM : KPX_STEP_JMP_MEM;
	}
	return 0;
}

static int kp_classify_onebyte(const struct kp_func *f, unsigned long addr,
			       struct insn *insn, struct arch_kprobe_site *a)
{
	u8 opc = insn->opcode.bytes[0];

	if (opc >= 0x70 && opc <= 0x7f) {
		a->cond = opc & 0xf;
		kp_set_branch(a, KPX_JCC, addr, insn);
		return kp_odd_branch(insn) ? -EINVAL : 0;
	}
	if (opc >= 0xe0 && opc <= 0xe3) {
		a->cond = opc - 0xe0;
		kp_set_branch(a, KPX_LOOP, addr, insn);
		return kp_odd_branch(insn) ? -EINVAL : 0;
	}

	switch (opc) {
	case 0xe8:
		kp_set_branch(a, KPX_CALL, addr, insn);
		return kp_odd_branch(insn) ? -EINVAL : 0;
	case 0xe9:
	case 0xeb:
		kp_set_branch(a, KPX_JMP, addr, insn);
		return kp_odd_branch(insn) ? -EINVAL : 0;
	case 0xc2:
	case 0xc3:
		a->op = KPX_RET;
		a->imm = opc == 0xc2 ? (u16)insn->immediate.value : 0;
		return kp_odd_branch(insn) ? -EINVAL : 0;
	case 0xff:
		return kp_classify_group5(insn, a);
	case 0x9c:
		a->op = KPX_STEP_PUSHF;
		return probe_insn_has_prefix(insn, KP_PREFIX_OPSIZE) ? -EINVAL : 0;
	case 0x9d:
		a->op = KPX_POPF;
		return probe_insn_has_prefix(insn, KP_PREFIX_OPSIZE) ? -EINVAL : 0;
	case 0xfa:
		a->op = KPX_CLI;
		return 0;
	case 0xfb:
		a->op = KPX_STI;
		return kp_sti_needs_shadow(f, addr + insn->length) ? -EINVAL : 0;
	case 0x90:
		/* Only a real nop: not pause (f3 90), not xchg %eax,%r8d. */
		if (!insn->rex_prefix.nbytes &&
		    !probe_insn_has_prefix(insn, PROBE_PREFIX_REP) &&
		    !probe_insn_has_prefix(insn, PROBE_PREFIX_REPNE))
			a->op = KPX_NOP;
		return 0;
	case 0xc7:	/* xbegin: a relative branch for the abort path */
		return insn->modrm.bytes[0] == 0xf8 ? -EINVAL : 0;
	case 0x8e:	/* mov to a segment register: not %ss, see above */
		return X86_MODRM_REG(insn->modrm.bytes[0]) == 2 ? -EINVAL : 0;
	case 0x17:	/* pop %ss (i386 only): the same interrupt shadow */
		return -EINVAL;
	case 0xcc: case 0xcd: case 0xce: case 0xf1:	/* int3/int/into/int1 */
		return -EILSEQ;
	case 0x9a: case 0xea:		/* far call/jmp absolute */
	case 0xca: case 0xcb:		/* far ret */
	case 0xcf:			/* iret */
	case 0xf4:			/* hlt */
		return -EOPNOTSUPP;
	}
	return 0;
}

/* 0f 01 with a register ModRM: the system instructions of group 7. */
static bool kp_bad_group7(u8 modrm)
{
	switch (modrm) {
	case 0xc1: case 0xc2: case 0xc3: case 0xc4:	/* VMX */
	case 0xc9: case 0xfb:				/* mwait, mwaitx */
	case 0xcf: case 0xd7:				/* encls, enclu */
	case 0xd4:					/* vmfunc */
	case 0xd8 ... 0xdf:				/* SVM */
	case 0xf8:					/* swapgs */
		return true;
	}
	return false;
}

static int kp_classify_twobyte(unsigned long addr, struct insn *insn,
			       struct arch_kprobe_site *a)
{
	u8 opc = insn->opcode.bytes[1];
	u8 modrm = insn->modrm.bytes[0];

	if (opc >= 0x80 && opc <= 0x8f) {
		a->cond = opc & 0xf;
		kp_set_branch(a, KPX_JCC, addr, insn);
		return kp_odd_branch(insn) ? -EINVAL : 0;
	}

	switch (opc) {
	case 0x01:
		return X86_MODRM_MOD(modrm) == 3 && kp_bad_group7(modrm) ?
			-EOPNOTSUPP : 0;
	case 0x1f:	/* the long nops */
		if (!probe_insn_has_prefix(insn, KP_PREFIX_LOCK))
			a->op = KPX_NOP;
		return 0;
	case 0x1e:	/* endbr64, endbr32 (refused earlier with IBT) */
		if (probe_insn_has_prefix(insn, PROBE_PREFIX_REP) &&
		    (modrm == 0xfa || modrm == 0xfb))
			a->op = KPX_NOP;
		return 0;
	case 0x0b: case 0xb9: case 0xff:		/* ud2, ud1, ud0 */
		return -EILSEQ;
	case 0x05: case 0x07: case 0x34: case 0x35:	/* system calls */
	case 0xaa:					/* rsm */
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Emulation of plain KPX_STEP instructions (emulate.c does the work).
 *
 * Only what the int3 handler can carry out exactly, with nothing it would
 * have to call: push and pop of a register, mov and the flag-setting
 * add/or/and/sub/xor/cmp/test/inc/dec between registers and immediates,
 * lea, and the same ALU and mov forms on a RIP-relative dword or qword in
 * data the probed code's image owns.  No legacy prefix at all (lock, rep,
 * segment and size overrides all mean "step it"), no byte operations, no
 * adc/sbb (they read CF; not worth the cases).  The instruction keeps its
 * slot: emulation is a shortcut taken only when there is something to do
 * after the instruction (a post handler, or a re-entered hit).
 */

#ifdef CONFIG_MODULES
static bool kp_emu_in_mod(struct module *mod, enum mod_mem_type type,
			  unsigned long addr, unsigned long last)
{
	return within_module_mem_type(addr, mod, type) &&
	       within_module_mem_type(last, mod, type);
}

/*
 * [@addr, @last] is data of the module whose code @site is in: the probe
 * on that code goes away (GONE) before the module's memory does, so no
 * hit can see it freed.
 */
static bool kp_emu_module_data(unsigned long site, unsigned long addr,
			       unsigned long last, bool write)
{
	struct module *mod;
	bool ok;

	preempt_disable();
	mod = __module_address(addr);
	ok = mod && mod == __module_address(site) &&
	     (kp_emu_in_mod(mod, MOD_DATA, addr, last) ||
	      (!write && kp_emu_in_mod(mod, MOD_RODATA, addr, last)));
	preempt_enable();
	return ok;
}
#else
static bool kp_emu_module_data(unsigned long site, unsigned long addr,
			       unsigned long last, bool write)
{
	return false;
}
#endif

/* May a dword or qword at @addr be read (@write: and written) from a trap? */
static bool kp_emu_data_ok(unsigned long site, unsigned long addr, u8 size,
			   bool write)
{
	unsigned long last = addr + size - 1;

	if (last < addr)
		return false;
	/*
	 * The kernel image's data and bss are never unmapped; ro_after_init
	 * data turns read-only (it is not between _sdata and _edata on x86,
	 * but say so).  Loads may also come from rodata.
	 */
	if (addr >= (unsigned long)__start_ro_after_init &&
	    addr < (unsigned long)__end_ro_after_init)
		return !write;
	if ((addr >= (unsigned long)_sdata && last < (unsigned long)_edata) ||
	    (addr >= (unsigned long)__bss_start &&
	     last < (unsigned long)__bss_stop))
		return true;
	if (!write && addr >= (unsigned long)__start_rodata &&
	    last < (unsigned long)__end_rodata)
		return true;
	return kp_emu_module_data(site, addr, last, write);
}

static u8 kp_emu_rex(struct insn *insn)
{
	return insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
}

/* The ModRM.rm operand: a register or a RIP-relative memory operand. */
static bool kp_emu_rm(struct kprobe_site *s, struct insn *insn, bool write,
		      u8 *opd, u8 *reg)
{
	struct kprobe_x86_emu *e = &s->arch.emu;
	u8 modrm = insn->modrm.bytes[0];
	unsigned long site = (unsigned long)s->addr;

	if (X86_MODRM_MOD(modrm) == 3) {
		*opd = KPE_OPD_REG;
		*reg = probe_insn_gpr_offset(X86_MODRM_RM(modrm) +
			(X86_REX_B(kp_emu_rex(insn)) ? 8 : 0));
		return true;
	}
	if (!insn_rip_relative(insn))
		return false;
	e->addr = site + insn->length + insn->displacement.value;
	*opd = KPE_OPD_MEM;
	*reg = 0;
	return kp_emu_data_ok(site, e->addr, e->size, write);
}

static u8 kp_emu_reg_field(struct insn *insn)
{
	return probe_insn_gpr_offset(X86_MODRM_REG(insn->modrm.bytes[0]) +
				     (X86_REX_R(kp_emu_rex(insn)) ? 8 : 0));
}

/* lea: every addressing form but RIP-relative needs registers at the hit. */
static bool kp_emu_lea(struct kprobe_site *s, struct insn *insn)
{
	struct kprobe_x86_emu *e = &s->arch.emu;
	u8 modrm = insn->modrm.bytes[0], rex = kp_emu_rex(insn);
	u8 mod = X86_MODRM_MOD(modrm), rm = X86_MODRM_RM(modrm);
	u8 sib, base, index;

	if (mod == 3)
		return false;
	e->kind = KPE_LEA;
	e->dst = kp_emu_reg_field(insn);
	e->base = KPE_NOREG;
	e->index = KPE_NOREG;
	/* .addr: the constant part of the address. */
	e->addr = (long)insn->displacement.value;
	if (insn_rip_relative(insn)) {
		e->addr += (unsigned long)s->addr + insn->length;
		return true;
	}
	if (rm != 4) {
		e->base = probe_insn_gpr_offset(rm + (X86_REX_B(rex) ? 8 : 0));
		return true;
	}
	sib = insn->sib.bytes[0];
	base = X86_SIB_BASE(sib) + (X86_REX_B(rex) ? 8 : 0);
	index = X86_SIB_INDEX(sib) + (X86_REX_X(rex) ? 8 : 0);
	/* Base 5 (%rbp, %r13) with mod 0 means no base, a disp32. */
	if (!(mod == 0 && (base & 7) == 5))
		e->base = probe_insn_gpr_offset(base);
	if (index != 4)		/* %rsp cannot be an index; %r12 can */
		e->index = probe_insn_gpr_offset(index);
	e->scale = X86_SIB_SCALE(sib);
	return true;
}

static const u8 kp_emu_alu_ops[8] = {
	[0] = KPE_ADD, [1] = KPE_OR, [4] = KPE_AND, [5] = KPE_SUB,
	[6] = KPE_XOR, [7] = KPE_CMP,	/* 2 adc and 3 sbb: KPE_MOV, refused */
};

static bool kp_emu_decode_one(struct kprobe_site *s, struct insn *insn)
{
	struct kprobe_x86_emu *e = &s->arch.emu;
	u8 opc = insn->opcode.bytes[0], rex = kp_emu_rex(insn);
	u8 reg = X86_MODRM_REG(insn->modrm.bytes[0]);
	bool rm_is_dst = true;

	e->size = X86_REX_W(rex) ? 8 : 4;
	e->kind = KPE_ALU;

	if (opc >= 0x50 && opc <= 0x5f) {
		u8 r = probe_insn_gpr_offset((opc & 7) +
					     (X86_REX_B(rex) ? 8 : 0));

		e->kind = opc < 0x58 ? KPE_PUSH : KPE_POP;
		e->src = r;
		e->dst = r;
		return true;
	}
	if (opc == 0x8d)
		return kp_emu_lea(s, insn);

	switch (opc) {
	case 0x01: case 0x09: case 0x21: case 0x29: case 0x31: case 0x39:
	case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33: case 0x3b:
		e->alu = kp_emu_alu_ops[opc >> 3];
		rm_is_dst = !(opc & 2);
		break;
	case 0x85:
		e->alu = KPE_TEST;
		break;
	case 0x89:
		e->alu = KPE_MOV;
		break;
	case 0x8b:
		e->alu = KPE_MOV;
		rm_is_dst = false;
		break;
	case 0x81: case 0x83:
		if (reg == 2 || reg == 3)	/* adc, sbb */
			return false;
		e->alu = kp_emu_alu_ops[reg];
		e->src_opd = KPE_OPD_IMM;
		e->imm = insn->immediate.value;
		return kp_emu_rm(s, insn, e->alu != KPE_CMP, &e->dst_opd,
				 &e->dst);
	case 0xc7:
		if (reg != 0)
			return false;
		e->alu = KPE_MOV;
		e->src_opd = KPE_OPD_IMM;
		e->imm = insn->immediate.value;
		return kp_emu_rm(s, insn, true, &e->dst_opd, &e->dst);
	case 0xff:
		if (reg > 1)
			return false;
		e->alu = reg ? KPE_DEC : KPE_INC;
		return kp_emu_rm(s, insn, true, &e->dst_opd, &e->dst);
	default:
		return false;
	}

	/* The two-operand forms: ModRM.reg is the other operand. */
	if (rm_is_dst) {
		e->src_opd = KPE_OPD_REG;
		e->src = kp_emu_reg_field(insn);
		return kp_emu_rm(s, insn,
				 e->alu != KPE_CMP && e->alu != KPE_TEST,
				 &e->dst_opd, &e->dst);
	}
	e->dst_opd = KPE_OPD_REG;
	e->dst = kp_emu_reg_field(insn);
	return kp_emu_rm(s, insn, false, &e->src_opd, &e->src);
}

#ifdef CONFIG_KPROBES_KUNIT_TEST
bool kprobe_x86_emu_off;
#define kp_emu_off()	READ_ONCE(kprobe_x86_emu_off)
#else
#define kp_emu_off()	false
#endif

/*
 * Would the emulation give %esp a value of its own on a 32-bit kernel?
 * There a return from the int3 trap to kernel mode goes through regs->sp:
 * entry_32.S rebuilds the iret frame just below it.  A word pushed or
 * popped stays within the gap the trap entry left under the interrupted
 * stack (as for int3_emulate_push()); any other new %esp (sub, and, lea,
 * mov, pop %esp) could put that frame over the pt_regs it is built from.
 * The slot's copy runs those on the real stack instead.
 */
static bool kp_emu_sets_sp(const struct kprobe_x86_emu *e)
{
	const u8 sp = offsetof(struct pt_regs, sp);

	if (!IS_ENABLED(CONFIG_X86_32))
		return false;
	switch (e->kind) {
	case KPE_POP:
	case KPE_LEA:
		return e->dst == sp;
	case KPE_ALU:
		return e->dst_opd == KPE_OPD_REG && e->dst == sp &&
		       e->alu != KPE_CMP && e->alu != KPE_TEST;
	default:
		return false;
	}
}

/* Fill s->arch.emu for a KPX_STEP instruction emulate.c can carry out. */
static void kp_emu_decode(struct kprobe_site *s, struct insn *insn)
{
	memset(&s->arch.emu, 0, sizeof(s->arch.emu));
	if (kp_emu_off() ||
	    s->arch.op != KPX_STEP || insn->prefixes.nbytes ||
	    insn->vex_prefix.nbytes || insn->opcode.nbytes != 1)
		return;
	if (!kp_emu_decode_one(s, insn) || kp_emu_sets_sp(&s->arch.emu))
		memset(&s->arch.emu, 0, sizeof(s->arch.emu));
}

static bool kp_is_endbr64(const u8 *buf)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	return !memcmp(buf, endbr64, sizeof(endbr64));
}

/**
 * kp_classify() - decide how the instruction at @addr is carried out
 * @f: the function's copy, from kp_func_read()
 * @addr: the instruction
 * @insn: its decoding
 * @a: gets .op and, for branches, .target, .cond and .imm
 *
 * Return: 0, or -EILSEQ, -EOPNOTSUPP or -EINVAL (see the top of this file)
 * when it cannot be probed.
 */
int kp_classify(const struct kp_func *f, unsigned long addr,
		struct insn *insn, struct arch_kprobe_site *a)
{
	const u8 *buf = kp_func_bytes(f, addr);

	/* The int3 of a debugger: what it replaced is unknown to us. */
	if (buf[0] == INT3_INSN_OPCODE)
		return -EILSEQ;
	/* An indirect branch must land on the endbr itself, not on int3. */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) && kp_is_endbr64(buf))
		return -EINVAL;
	if (insn_is_rex2(insn) || insn_has_emulate_prefix(insn))
		return -EINVAL;

	a->op = KPX_STEP;
	/* VEX/EVEX opcodes live in other maps: they only ever run as copies. */
	if (insn->vex_prefix.nbytes)
		return 0;
	if (insn->opcode.nbytes == 1)
		return kp_classify_onebyte(f, addr, insn, a);
	if (insn->opcode.nbytes == 2 && insn->opcode.bytes[0] == 0x0f)
		return kp_classify_twobyte(addr, insn, a);
	return 0;
}

/**
 * kp_copy_insn() - copy an instruction to where it will run
 * @dst: the destination bytes
 * @src: the instruction's original bytes
 * @insn: its decoding
 * @delta: original address minus the address it will run at
 *
 * Return: 0, or -EINVAL (as upstream) when a RIP-relative operand cannot
 * reach from there.
 */
int kp_copy_insn(u8 *dst, const u8 *src, struct insn *insn, long delta)
{
	s64 disp;

	memcpy(dst, src, insn->length);
	if (!insn_rip_relative(insn))
		return 0;
	disp = (s64)insn->displacement.value + delta;
	/* execmem keeps slots near the text, but make sure. */
	if (disp != (s32)disp) {
		pr_err("kprobes: a RIP-relative operand is out of the copy's reach\n");
		return -EINVAL;
	}
	put_unaligned((s32)disp, (s32 *)&dst[insn_offset_displacement(insn)]);
	return 0;
}

/* Copy the probed instruction to @dst, which will run at @at. */
static int kp_place_copy(struct kprobe_site *s, u8 *dst, unsigned long at,
			 const u8 *buf, struct insn *insn)
{
	int ret = kp_copy_insn(dst, buf, insn, (unsigned long)s->addr - at);

	if (ret)
		return ret;
	if (s->arch.op == KPX_STEP_JMP_MEM || s->arch.op == KPX_STEP_CALL_MEM) {
		u8 *modrm = &dst[insn_offset_modrm(insn)];

		*modrm = (*modrm & ~0x38) | (KP_MODRM_PUSH << 3);
	}
	return 0;
}

/*
 * Turn @buf into what runs from @slot: the stepped copy (memory-indirect
 * branches turned into a push of their target) ending in int3 and, when
 * boosting, the boosted copy ending in a jump back; int3s elsewhere.
 */
static int kp_build_copy(struct kprobe_site *s, kprobe_opcode_t *slot,
			 u8 *out, const u8 *buf, struct insn *insn)
{
	unsigned long base = (unsigned long)slot;
	unsigned long jmp_at = base + KPROBE_BOOST_OFF + insn->length;
	s64 back = (s64)((unsigned long)s->addr + insn->length) -
		   (s64)(jmp_at + JMP32_INSN_SIZE);
	int ret;

	memset(out, INT3_INSN_OPCODE, KPROBE_INSN_SLOT_SIZE);
	ret = kp_place_copy(s, out, base, buf, insn);
	if (ret)
		return ret;
	if (back != (s32)back)
		s->arch.boost = false;	/* the jump back cannot reach */
	if (!s->arch.boost)
		return 0;

	ret = kp_place_copy(s, out + KPROBE_BOOST_OFF, base + KPROBE_BOOST_OFF,
			    buf, insn);
	if (ret)
		return ret;
	memcpy(out + KPROBE_BOOST_OFF + insn->length,
	       text_gen_insn(JMP32_INSN_OPCODE, (void *)jmp_at,
			     s->addr + insn->length),
	       JMP32_INSN_SIZE);
	return 0;
}

/**
 * kp_write_text() - write bytes into a slot page, seen by every CPU
 * @dst: in a slot (slot pages are read-only and executable)
 * @src: the bytes
 * @len: how many
 */
void kp_write_text(void *dst, const void *src, size_t len)
{
	mutex_lock(&text_mutex);
	text_poke(dst, src, len);
	text_poke_sync();
	mutex_unlock(&text_mutex);
	perf_event_text_poke(dst, NULL, 0, src, len);
}

static int kp_fill_slot(struct kprobe_site *s, const u8 *buf,
			struct insn *insn)
{
	kprobe_opcode_t *slot = get_insn_slot();
	u8 out[KPROBE_INSN_SLOT_SIZE];
	int ret;

	if (!slot)
		return -ENOMEM;

	ret = kp_build_copy(s, slot, out, buf, insn);
	if (ret) {
		free_insn_slot(slot, 0);
		return ret;
	}
	/*
	 * No text_poke_sync() of its own: a CPU only ever enters the slot
	 * from the site's int3, and writing that int3 (alone or in a batch)
	 * ends with one, which serialises every CPU after this write too; a
	 * CPU that meets the int3 before that sync enters the slot by the
	 * IRET of the trap, which serialises it as well.  The slot was free,
	 * so no CPU is running an older copy there.
	 */
	mutex_lock(&text_mutex);
	text_poke(slot, out, KPROBE_INSN_SLOT_SIZE);
	mutex_unlock(&text_mutex);
	perf_event_text_poke(slot, NULL, 0, out, KPROBE_INSN_SLOT_SIZE);
	s->arch.slot = slot;
	return 0;
}

static int kp_analyse(struct kprobe_site *s, const struct kp_func *f,
		      struct insn *insn)
{
	unsigned long addr = (unsigned long)s->addr;
	int ret;

	ret = kp_check_boundary(f, addr);
	if (ret)
		return ret;
	ret = kp_func_decode(f, addr, insn);
	if (ret)
		return ret;
	/*
	 * Lock prefixes the SMP alternatives may rewrite under our copy (the
	 * end of the range is its last byte).
	 */
	if (alternatives_text_reserved(s->addr, s->addr + insn->length - 1))
		return -EINVAL;

	s->arch.len = insn->length;
	s->arch.opcode = kp_func_bytes(f, addr)[0];
	return kp_classify(f, addr, insn, &s->arch);
}

/*
 * May the copy run with interrupts on and leave by a jump?  Only a plain
 * copy (no fixup afterwards), and nothing the exception tables know: a
 * fault there would be looked up at the slot's address and not found.
 */
static bool kp_can_boost(struct kprobe_site *s)
{
	if (s->arch.op != KPX_STEP)
		return false;
	/* Exception-table entries are keyed by the instruction's address. */
	return !search_exception_tables((unsigned long)s->addr);
}

int arch_prepare_kprobe_site(struct kprobe_site *s)
{
	unsigned long addr = (unsigned long)s->addr;
	struct insn insn;
	struct kp_func f;
	int ret;

	memset(&s->arch, 0, sizeof(s->arch));

	/*
	 * An address on an ftrace call site is the core's (a site armed
	 * through ftrace, or refused); one inside the call is not an
	 * instruction boundary.
	 */
	if (ftrace_location(addr))
		return -EILSEQ;

	/*
	 * Keep text_poke_bp()'s temporary int3s out of the copy, and the
	 * alternatives' lock-prefix list still while we look it up.
	 */
	mutex_lock(&text_mutex);
	ret = kp_func_read(addr, &f);
	if (!ret)
		ret = kp_analyse(s, &f, &insn);
	mutex_unlock(&text_mutex);
	if (ret) {
		kp_func_free(&f);
		return ret;
	}

	if (kprobe_x86_op_steps(s->arch.op)) {
		kp_emu_decode(s, &insn);
		s->arch.boost = kp_can_boost(s);
		ret = kp_fill_slot(s, kp_func_bytes(&f, addr), &insn);
	}
	if (!ret)
		ret = kprobe_x86_pick_emulation(s);
	/* A site that cannot be optimized simply stays a breakpoint. */
	if (!ret)
		kp_opt_prepare(s, &f);
	kp_func_free(&f);
	return ret;
}

void arch_release_kprobe_site(struct kprobe_site *s)
{
	kp_opt_release(s);
	if (s->arch.slot) {
		/* A task may be preempted inside a boosted copy: "dirty". */
		free_insn_slot(s->arch.slot, s->arch.boost);
		s->arch.slot = NULL;
	}
}

/*
 * With kernel IBT a function starts with endbr64, which must stay in place
 * for indirect calls: a probe on the function's entry goes right after it.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr,
					 unsigned long offset,
					 bool *on_func_entry)
{
	u32 first;
	bool endbr;

	/*
	 * kallsyms still names freed init text, which page-table isolation
	 * unmaps: what cannot be read is no endbr, and the text checks after
	 * this refuse the address.
	 */
	endbr = !copy_from_kernel_nofault(&first, (void *)addr, sizeof(first)) &&
		is_endbr(first);

	if (endbr && !offset)
		offset = ENDBR_INSN_SIZE;
	*on_func_entry = !offset || (endbr && offset == ENDBR_INSN_SIZE);
	return (kprobe_opcode_t *)(addr + offset);
}

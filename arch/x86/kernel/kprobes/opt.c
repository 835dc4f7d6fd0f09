// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86 jump optimization: which sites may be reached by a jmp rel32
 * instead of an int3, their detour buffers, and writing the jumps.
 *
 * The jump replaces the instructions that cover its 5 bytes (the region).
 * That is only safe when nothing can arrive in the middle of the region:
 * no branch of the function targets it past its first byte, the function
 * has no indirect jump that could (a jump table; see kp_ijmp_may_enter()),
 * and no instruction of the function has an exception-table fixup (which
 * could resume anywhere).
 * The region's instructions must also do the same from the buffer:
 * RIP-relative operands are rebased, relative branches get a rel32 to
 * the same target, a call is taken only as the region's last instruction
 * (see kp_opt_movable()), and nothing other subsystems patch at run time
 * may be in it.  The generic half (kernel/kprobes_opt.c)
 * decides when, and makes sure no task is inside a region when its jump
 * is written.
 *
 * A detour buffer:
 *
 *   the template  builds a struct pt_regs on the stack exactly where an
 *                 int3 trap would, calls kp_opt_callback(site, regs) and
 *                 restores every register but sp from it;
 *   the region    copied, relocated by kp_opt_place();
 *   jmp back      to the first byte after the region.
 *
 * The int3 path also runs the region from the buffer (see kp_hit()) while
 * the site waits for its jump, so that no task enters the region in place.
 */
#include <linux/kprobes.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/memory.h>
#include <linux/perf_event.h>
#include <linux/static_call.h>
#include <linux/unaligned.h>
#include <asm/alternative.h>
#include <asm/cpufeature.h>
#include <asm/nospec-branch.h>
#include <asm/text-patching.h>

#include "common.h"
#include "internal.h"

/*
 * The template's two widths: the registers below orig_ax (x86_64: the
 * general purpose ones; i386: gs, which an exception entry leaves 0, the
 * data segment registers, then the general purpose ones), and the
 * callback's arguments: the site, whose address the buffer fills in at
 * kp_tmpl_site (the immediate of a mov to the first argument register),
 * and the pt_regs frame.
 */
#ifdef CONFIG_X86_64
#define KP_TMPL_SAVE_GPRS						\
	KP_PUSH_REGS_STRING						\
	"	mov %rsp, %rsi\n"					\
	"	.byte 0x48, 0xbf\n"		/* movabs $imm64, %rdi */	\
	"kp_tmpl_site:\n"						\
	"	.quad 0\n"
#else
#define KP_TMPL_SAVE_GPRS						\
	"	push $0\n"			/* gs */		\
	KP_PUSH_REGS_STRING						\
	"	mov %esp, %edx\n"					\
	"	.byte 0xb8\n"			/* mov $imm32, %eax */	\
	"kp_tmpl_site:\n"						\
	"	.long 0\n"
#endif

/*
 * Never executed in place: copied into each buffer.  Entered by a jump
 * with the probed code's stack; the pt_regs frame starts right below it.
 * Everything but the registers is pushed as an immediate (the ip is the
 * site's address after an int3, an imm32 that sign-extends on x86_64:
 * kernel and module text live in the top 2 GB), which costs the hit less
 * than having the callback store it.  "push %rsp" stores the stack pointer
 * a word too low (after the ss push); adding that word would change the
 * flags, which must be saved first, so the callback does it.
 */
asm (
	"	.pushsection .rodata\n"
	"kp_tmpl:\n"
	"	push $" __stringify(__KERNEL_DS) "\n"
	"	push %" _ASM_SP "\n"
	"	pushf\n"
	"kp_tmpl_clac:\n"
	"	.byte 0x0f, 0x1f, 0x00\n"	/* clac on SMAP CPUs */
	"	push $" __stringify(__KERNEL_CS) "\n"
	"kp_tmpl_ip:\n"
	"	.byte 0x68\n"			/* push imm32: ip, filled in */
	"	.long 0\n"
	"	push $-1\n"			/* orig_ax */
	KP_TMPL_SAVE_GPRS
	"kp_tmpl_call:\n"
	"	.byte 0xe8\n"			/* call rel32, filled in */
	"	.long 0\n"
	RESTORE_REGS_STRING
	"	popf\n"
	"	lea (2 * " KP_WORD ")(%" _ASM_SP "), %" _ASM_SP "\n"
	"kp_tmpl_end:\n"
	"	.balign 4\n"
	"	.globl kp_tmpl_len\n"
	"kp_tmpl_len:\n"
	"	.long kp_tmpl_end - kp_tmpl\n"
	"	.popsection\n"
);

#define KP_TMPL_LEN		(kp_tmpl_end - kp_tmpl)
#define KP_TMPL_IP_IMM		(kp_tmpl_ip - kp_tmpl + 1)	/* 68 imm32 */
#define KP_TMPL_SITE_IMM	(kp_tmpl_site - kp_tmpl)
#define KP_TMPL_CALL		(kp_tmpl_call - kp_tmpl)
#define KP_TMPL_CLAC		(kp_tmpl_clac - kp_tmpl)

static const u8 kp_clac[] = { 0x0f, 0x01, 0xca };

/*
 * Called from a detour buffer, with the registers the probed code had
 * (kprobe_opt_run() says what a hit there may and may not do).  The
 * template saved the stack pointer one word too low: the buffer restores
 * every register but sp, so the correction is for the handlers alone.
 */
static notrace void kp_opt_callback(struct kprobe_site *s,
				    struct pt_regs *regs)
{
	regs->sp += sizeof(long);	/* see the template */
	kprobe_opt_run(s, regs);
}
NOKPROBE_SYMBOL(kp_opt_callback);

/* On i386 every rel32 reaches: the address space wraps at 4 GB. */
static bool kp_rel32_reaches(unsigned long from_next, unsigned long to)
{
	long rel = (long)(to - from_next);

	return rel == (s32)rel;
}

/* The target of a relative branch (jmp, jcc, call, loop, xbegin), or 0. */
static unsigned long kp_rel_target(unsigned long a, struct insn *insn)
{
	u8 op0 = insn->opcode.bytes[0], op1 = insn->opcode.bytes[1];
	bool rel;

	if (insn->vex_prefix.nbytes)
		return 0;
	if (insn->opcode.nbytes == 1)
		rel = (op0 >= 0x70 && op0 <= 0x7f) ||
		      (op0 >= 0xe0 && op0 <= 0xe3) ||
		      op0 == 0xe8 || op0 == 0xe9 || op0 == 0xeb ||
		      (op0 == 0xc7 && insn->modrm.bytes[0] == 0xf8);
	else
		rel = op0 == 0x0f && op1 >= 0x80 && op1 <= 0x8f;
	return rel ? a + insn->length + insn->immediate.value : 0;
}

/*
 * Can a jmp through a register or memory land inside some region?
 *
 * Without kernel IBT it can: a jump table.  With it, the CPU faults unless
 * the jump lands on an endbr64 or carries a notrack prefix, and
 * kp_classify() keeps endbr64 out of every region, so only a notrack jump
 * can.  That holds on CPUs without IBT too, since the same code runs on
 * those that have it: C code is built with -fno-jump-tables (the
 * compilers' jump tables are notrack jumps, arch/x86/Makefile), objtool
 * warns about any notrack jump (the check below is for code it did not
 * see), and hand-written code must put an endbr64 wherever its indirect
 * jumps land.
 * This is what lets a function with a tail call through a pointer
 * (vfs_read() and its f_op->read) be optimized.
 */
static bool kp_ijmp_may_enter(struct insn *insn)
{
	insn_byte_t prefix;
	int i;

	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT))
		return true;
	for_each_insn_prefix(insn, i, prefix)
		if (prefix == 0x3e)	/* notrack */
			return true;
	return false;
}

/*
 * A jmp through a register or memory that may land in a region, or one to
 * a retpoline thunk (whose ret lands anywhere, endbr64 or not).
 */
static bool kp_jumps_indirectly(unsigned long target, struct insn *insn)
{
	u8 reg = X86_MODRM_REG(insn->modrm.bytes[0]);

	if (insn->opcode.nbytes == 1 && insn->opcode.bytes[0] == 0xff &&
	    (reg == 4 || reg == 5))
		return kp_ijmp_may_enter(insn);
#ifdef CONFIG_MITIGATION_RETPOLINE
	if (target >= (unsigned long)__x86_indirect_thunk_array &&
	    target < (unsigned long)&__x86_indirect_thunk_array[16])
		return true;
#endif
	return false;
}

/*
 * Can nothing but the flow from the instruction before and a branch to
 * @addr itself arrive inside [@addr, @addr + @len)?  Decodes the whole
 * function.
 */
static bool kp_opt_function_ok(const struct kp_func *f, unsigned long addr,
			       unsigned int len)
{
	unsigned long a, target;
	struct insn insn;

	for (a = f->start; a < f->start + f->size; a += insn.length) {
		if (kp_func_decode(f, a, &insn))
			return false;
		if (search_exception_tables(a))
			return false;
		target = kp_rel_target(a, &insn);
		if (kp_jumps_indirectly(target, &insn))
			return false;
		if (target > addr && target < addr + len)
			return false;
	}
	return true;
}

/*
 * Can the region's instruction of kind @op run from the buffer, as
 * kp_opt_place() writes it?  A call only as the region's @last one: its
 * return address is then the first byte after the region, in the original
 * code, so that no return address ever points into a buffer (which the
 * unwinder could not follow and which would have to outlive every sleeping
 * callee).  Not sti, whose one-instruction interrupt shadow would cover the
 * jump back instead of the instruction after it (sti; hlt), nor popf,
 * which may set IF the same way; loop and jrcxz have no rel32 form.
 */
static bool kp_opt_movable(const struct arch_kprobe_site *kind, bool last)
{
	switch (kind->op) {
	case KPX_STEP:
	case KPX_STEP_PUSHF:
	case KPX_STEP_JMP_MEM:
	case KPX_NOP:
	case KPX_JMP:
	case KPX_JCC:
	case KPX_RET:
	case KPX_JMP_REG:
	case KPX_CLI:
		return true;
	case KPX_CALL:
		return last;
	case KPX_CALL_REG:
		/* The push of the return address would move a %rsp target. */
		return last && kind->imm != offsetof(struct pt_regs, sp);
	default:
		return false;
	}
}

/* Length of the region a jump at s->addr replaces, or a negative errno. */
static int kp_opt_region(struct kprobe_site *s, const struct kp_func *f)
{
	unsigned long a, addr = (unsigned long)s->addr;
	struct arch_kprobe_site kind;
	struct insn insn;

	for (a = addr; a < addr + JMP32_INSN_SIZE; a += insn.length) {
		if (kp_func_decode(f, a, &insn))
			return -EILSEQ;
		memset(&kind, 0, sizeof(kind));
		if (kp_classify(f, a, &insn, &kind) ||
		    !kp_opt_movable(&kind, a + insn.length >= addr + JMP32_INSN_SIZE))
			return -EINVAL;
	}
	return a - addr;
}

/* Does someone else rewrite text in the region at run time? */
static bool kp_opt_text_reserved(kprobe_opcode_t *start, unsigned int len)
{
	kprobe_opcode_t *end = start + len - 1;
	bool ret;

	mutex_lock(&text_mutex);
	ret = alternatives_text_reserved(start, end);
	mutex_unlock(&text_mutex);
	if (ret || ftrace_text_reserved(start, end))
		return true;
	jump_label_lock();
	ret = kprobe_jump_label_reserved(start, end) ||
	      static_call_text_reserved(start, end);
	jump_label_unlock();
	return ret;
}

#define KP_PUSH_IMM_SIZE	5	/* push imm32 */

/* Write a rel32 at @dst, the end of an instruction at @at + @end, to @to. */
static int kp_opt_rel32(u8 *dst, unsigned long at, unsigned int end,
			unsigned long to)
{
	if (!kp_rel32_reaches(at + end, to))
		return -ERANGE;
	put_unaligned((s32)(to - (at + end)), (s32 *)&dst[end - 4]);
	return end;
}

/*
 * Write the region's instruction at @a (decoded in @insn) to @dst, where
 * it runs at @at, so that it does there what it did in place: relative
 * branches get a rel32 to the same target, RIP-relative operands are
 * rebased, and a call (the region's last instruction, see
 * kp_opt_movable()) becomes a push of @after, the first byte after the
 * region, and a jump: the callee returns to the original code.  The push
 * sign-extends its imm32, which reaches kernel and module text (the top
 * 2 GB), as the template's push of the ip does.
 * Return: the bytes written, or a negative errno.
 */
static int kp_opt_place(u8 *dst, unsigned long at, const struct kp_func *f,
			unsigned long a, struct insn *insn, unsigned long after)
{
	struct arch_kprobe_site kind = {};
	const u8 *src = kp_func_bytes(f, a);
	u8 *modrm;
	int ret;

	if (kp_classify(f, a, insn, &kind))
		return -EINVAL;
	switch (kind.op) {
	case KPX_JCC:
		dst[0] = 0x0f;
		dst[1] = 0x80 | kind.cond;
		return kp_opt_rel32(dst, at, 6, kind.target);
	case KPX_JMP:
		dst[0] = JMP32_INSN_OPCODE;
		return kp_opt_rel32(dst, at, JMP32_INSN_SIZE, kind.target);
	case KPX_CALL:
	case KPX_CALL_REG:
		if ((unsigned long)(long)(s32)after != after)
			return -ERANGE;
		dst[0] = 0x68;
		put_unaligned((s32)after, (s32 *)&dst[1]);
		dst += KP_PUSH_IMM_SIZE;
		at += KP_PUSH_IMM_SIZE;
		if (kind.op == KPX_CALL) {
			dst[0] = JMP32_INSN_OPCODE;
			ret = kp_opt_rel32(dst, at, JMP32_INSN_SIZE,
					   kind.target);
		} else {
			/* ff /2 (call) becomes ff /4 (jmp), same operand. */
			memcpy(dst, src, insn->length);
			modrm = &dst[insn_offset_modrm(insn)];
			*modrm = (*modrm & ~0x38) | (4 << 3);
			ret = insn->length;
		}
		return ret < 0 ? ret : ret + KP_PUSH_IMM_SIZE;
	default:
		ret = kp_copy_insn(dst, src, insn, (long)(a - at));
		return ret ?: insn->length;
	}
}

/* Fill @buf, the image of the detour buffer at @detour, for @s. */
static int kp_opt_build(struct kprobe_site *s, const struct kp_func *f,
			u8 *buf, kprobe_opcode_t *detour, unsigned int len)
{
	unsigned long addr = (unsigned long)s->addr;
	unsigned long copy = (unsigned long)detour + KP_TMPL_LEN;
	unsigned long call = (unsigned long)detour + KP_TMPL_CALL;
	unsigned long callback = (unsigned long)kp_opt_callback;
	unsigned long ip = addr + INT3_INSN_SIZE;
	unsigned int off, pos;
	struct insn insn;
	int ret;

	/* Keep the compiler from folding it into a reference objtool hates. */
	OPTIMIZER_HIDE_VAR(callback);
	if ((unsigned long)(long)(s32)ip != ip ||
	    !kp_rel32_reaches(addr + JMP32_INSN_SIZE, (unsigned long)detour) ||
	    !kp_rel32_reaches(call + CALL_INSN_SIZE, callback))
		return -ERANGE;

	memset(buf, INT3_INSN_OPCODE, KPROBE_OPTINSN_SLOT_SIZE);
	memcpy(buf, kp_tmpl, KP_TMPL_LEN);
	/*
	 * The probed code may be inside a user access section (AC set).
	 * Handlers run as after an exception, whose entry clears AC; the
	 * popfq at the end sets it again.
	 */
	if (cpu_feature_enabled(X86_FEATURE_SMAP))
		memcpy(&buf[KP_TMPL_CLAC], kp_clac, sizeof(kp_clac));
	put_unaligned((unsigned long)s, (unsigned long *)&buf[KP_TMPL_SITE_IMM]);
	put_unaligned((s32)ip, (s32 *)&buf[KP_TMPL_IP_IMM]);
	memcpy(&buf[KP_TMPL_CALL],
	       text_gen_insn(CALL_INSN_OPCODE, (void *)call, (void *)callback),
	       CALL_INSN_SIZE);

	for (off = 0, pos = 0; off < len; off += insn.length, pos += ret) {
		if (kp_func_decode(f, addr + off, &insn))
			return -EILSEQ;
		/* The most one instruction can grow to: a call through memory. */
		if (KP_TMPL_LEN + pos + insn.length + KP_PUSH_IMM_SIZE +
		    JMP32_INSN_SIZE > KPROBE_OPTINSN_SLOT_SIZE)
			return -E2BIG;
		ret = kp_opt_place(&buf[KP_TMPL_LEN + pos], copy + pos, f,
				   addr + off, &insn, addr + len);
		if (ret < 0)
			return ret;
		if (!off)
			s->arch.copy_next = ret;
	}
	if (!kp_rel32_reaches(copy + pos + JMP32_INSN_SIZE, addr + len))
		return -ERANGE;
	memcpy(&buf[KP_TMPL_LEN + pos],
	       text_gen_insn(JMP32_INSN_OPCODE, (void *)(copy + pos),
			     (void *)(addr + len)),
	       JMP32_INSN_SIZE);
	return 0;
}

void kp_opt_prepare(struct kprobe_site *s, const struct kp_func *f)
{
	unsigned long addr = (unsigned long)s->addr;
	u8 buf[KPROBE_OPTINSN_SLOT_SIZE];
	kprobe_opcode_t *detour;
	int len;

	len = kp_opt_region(s, f);
	if (len < 0 || kp_opt_text_reserved(s->addr, len) ||
	    !kp_opt_function_ok(f, addr, len))
		return;
	if (WARN_ON_ONCE(KP_TMPL_LEN + len + JMP32_INSN_SIZE >
			 KPROBE_OPTINSN_SLOT_SIZE))
		return;

	detour = get_optinsn_slot();
	if (!detour)
		return;
	if (kp_opt_build(s, f, buf, detour, len)) {
		free_optinsn_slot(detour, 0);
		return;
	}
	kp_write_text(detour, buf, KPROBE_OPTINSN_SLOT_SIZE);
	memcpy(s->arch.orig, kp_func_bytes(f, addr), JMP32_INSN_SIZE);
	s->arch.detour = detour;
	s->opt_len = len;
}

/*
 * The generic core frees a site that was ever queued only after an
 * RCU-tasks grace period, so no task can be inside its buffer any more.
 */
void kp_opt_release(struct kprobe_site *s)
{
	if (s->arch.detour) {
		free_optinsn_slot(s->arch.detour, 0);
		s->arch.detour = NULL;
		s->opt_len = 0;
	}
}

/* What the first JMP32_INSN_SIZE bytes hold while only the int3 is in. */
static void kp_opt_armed_bytes(struct kprobe_site *s, u8 *out)
{
	out[0] = INT3_INSN_OPCODE;
	memcpy(&out[1], &s->arch.orig[1], JMP32_INSN_SIZE - 1);
}

/*
 * text_poke_bp() sends CPUs that meet its int3 on along the jump, and
 * reports the change to perf itself.
 */
void arch_optimize_kprobe_sites(struct list_head *sites)
{
	struct kprobe_site *s;
	void *jmp;

	mutex_lock(&text_mutex);
	list_for_each_entry(s, sites, opt_list) {
		jmp = text_gen_insn(JMP32_INSN_OPCODE, s->addr, s->arch.detour);
		text_poke_queue(s->addr, jmp, JMP32_INSN_SIZE, NULL);
	}
	text_poke_finish();
	mutex_unlock(&text_mutex);
}

/*
 * The int3 goes in first: once every CPU sees it, none can be starting the
 * jump, and none is inside the region (it never ran there while the jump
 * was in), so the rest of the bytes can come back.
 */
void arch_unoptimize_kprobe_sites(struct list_head *sites)
{
	static const u8 int3 = INT3_INSN_OPCODE;
	u8 armed[JMP32_INSN_SIZE];
	struct kprobe_site *s;

	mutex_lock(&text_mutex);
	list_for_each_entry(s, sites, opt_list)
		text_poke(s->addr, &int3, INT3_INSN_SIZE);
	text_poke_sync();
	list_for_each_entry(s, sites, opt_list)
		text_poke(s->addr + INT3_INSN_SIZE, &s->arch.orig[1],
			  JMP32_INSN_SIZE - INT3_INSN_SIZE);
	text_poke_sync();
	mutex_unlock(&text_mutex);

	list_for_each_entry(s, sites, opt_list) {
		kp_opt_armed_bytes(s, armed);
		perf_event_text_poke(s->addr,
				     text_gen_insn(JMP32_INSN_OPCODE, s->addr,
						   s->arch.detour),
				     JMP32_INSN_SIZE, armed, JMP32_INSN_SIZE);
	}
}

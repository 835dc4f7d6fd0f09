/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Declarations shared by the files of the x86 kprobes code and nobody else.
 */
#ifndef _X86_KERNEL_KPROBES_INTERNAL_H
#define _X86_KERNEL_KPROBES_INTERNAL_H

#include <linux/kprobes.h>
#include <asm/insn.h>

/* emulate.c: set s->arch.emulate, once s->arch.op and .emu are decoded. */
int kprobe_x86_pick_emulation(struct kprobe_site *s);

/* emulate.c: fix the registers after the slot copy ran; sets regs->ip. */
void kprobe_x86_step_fixup(struct kprobe_site *s, struct pt_regs *regs,
			   unsigned long flags_at_hit);

static nokprobe_inline bool kprobe_x86_op_steps(u8 op)
{
	return op <= KPX_STEP_CALL_MEM;
}

/*
 * decode.c: a copy of the function around a probe, with every breakpoint
 * and jump of ours undone, so that it decodes as the compiler wrote it.
 */
struct kp_func {
	unsigned long	start;
	unsigned long	size;
	u8		*text;
};

int kp_func_read(unsigned long addr, struct kp_func *f);
void kp_func_free(struct kp_func *f);
int kp_func_decode(const struct kp_func *f, unsigned long at,
		   struct insn *insn);

static inline const u8 *kp_func_bytes(const struct kp_func *f,
				      unsigned long at)
{
	return &f->text[at - f->start];
}

/* decode.c: instruction analysis and copying, also for detour buffers. */
int kp_classify(const struct kp_func *f, unsigned long addr,
		struct insn *insn, struct arch_kprobe_site *a);
int kp_copy_insn(u8 *dst, const u8 *src, struct insn *insn, long delta);
void kp_write_text(void *dst, const void *src, size_t len);

#ifdef CONFIG_OPTPROBES
/* opt.c: set s->opt_len and the detour buffer when the site allows it. */
void kp_opt_prepare(struct kprobe_site *s, const struct kp_func *f);
void kp_opt_release(struct kprobe_site *s);
/* opt.c: labels of the detour buffer's template (assembly, never run). */
extern const u8 kp_tmpl[], kp_tmpl_clac[], kp_tmpl_ip[], kp_tmpl_site[];
extern const u8 kp_tmpl_call[];
extern const u8 kp_tmpl_end[];
/* The template's length, as a word the int3 path reads in one load. */
extern const u32 kp_tmpl_len;

/* The region's copy in @s's detour buffer; the int3 path jumps there too. */
static __always_inline kprobe_opcode_t *
kp_opt_region_copy(struct kprobe_site *s)
{
	return s->arch.detour + kp_tmpl_len;
}
#else
static inline void kp_opt_prepare(struct kprobe_site *s,
				  const struct kp_func *f) { }
static inline void kp_opt_release(struct kprobe_site *s) { }
#endif

#endif /* _X86_KERNEL_KPROBES_INTERNAL_H */

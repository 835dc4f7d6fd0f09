/* SPDX-License-Identifier: GPL-2.0-only */
/* What the files of arch/arm64/kernel/probes share: jump optimization. */
#ifndef _ARM64_KERNEL_PROBES_INTERNAL_H
#define _ARM64_KERNEL_PROBES_INTERNAL_H

#include <linux/types.h>

struct kprobe_site;

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

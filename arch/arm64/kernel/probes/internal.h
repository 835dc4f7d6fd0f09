/* SPDX-License-Identifier: GPL-2.0-only */
/* What the files of arch/arm64/kernel/probes share: jump optimization. */
#ifndef _ARM64_KERNEL_PROBES_INTERNAL_H
#define _ARM64_KERNEL_PROBES_INTERNAL_H

struct kprobe_site;

#ifdef CONFIG_OPTPROBES
/* Set a site up for a jump if it can have one (s->opt_len). */
void kp_opt_prepare(struct kprobe_site *s);
void kp_opt_release(struct kprobe_site *s);
#else
static inline void kp_opt_prepare(struct kprobe_site *s) { }
static inline void kp_opt_release(struct kprobe_site *s) { }
#endif

#endif /* _ARM64_KERNEL_PROBES_INTERNAL_H */

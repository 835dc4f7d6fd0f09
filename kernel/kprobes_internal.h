/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kprobes core (kernel/kprobes.c) shares with its jump optimizer
 * (kernel/kprobes_opt.c) and nobody else.
 */
#ifndef _KERNEL_KPROBES_INTERNAL_H
#define _KERNEL_KPROBES_INTERNAL_H

#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/rculist.h>

#define KP_HASH_BITS	8

/* Serialises every change to the sites; see the top of kprobes.c. */
extern struct mutex kprobe_mutex;
/* The table of sites, hashed by address. */
extern struct hlist_head kprobe_sites[1 << KP_HASH_BITS];

/*
 * kprobe_site_lookup(), inline for the hit paths that count every
 * instruction (the ftrace handler).  Same callers' rules.
 */
static __always_inline struct kprobe_site *kp_site_find(unsigned long addr)
{
	struct kprobe_site *s;

	hlist_for_each_entry_rcu(s, &kprobe_sites[hash_ptr((void *)addr,
							   KP_HASH_BITS)],
				 hash, lockdep_is_held(&kprobe_mutex))
		if ((unsigned long)s->addr == addr && !s->gone)
			return s;
	return NULL;
}

/* Free a site nobody can reach any more. */
void kprobe_site_destroy(struct kprobe_site *s);

#ifdef CONFIG_OPTPROBES
/*
 * Called under kprobe_mutex whenever something that decides a site's
 * optimization changed (its probes, its arming, a neighbour, the sysctl):
 * queue it, or take the jump out again.
 */
void kprobe_opt_sync(struct kprobe_site *s);
/* The breakpoint is about to go: no jump may stay in front of it. */
void kprobe_opt_stop(struct kprobe_site *s);
/* The text under @s went away: drop its state without touching the text. */
void kprobe_opt_forget(struct kprobe_site *s);
/* A site appeared at, or vanished from, @addr: re-check the sites before. */
void kprobe_opt_neighbours(unsigned long addr);
/* Free @s after an RCU-tasks grace period (it may be held in a detour). */
void kprobe_opt_reap(struct kprobe_site *s);
#else
static inline void kprobe_opt_sync(struct kprobe_site *s) { }
static inline void kprobe_opt_stop(struct kprobe_site *s) { }
static inline void kprobe_opt_forget(struct kprobe_site *s) { }
static inline void kprobe_opt_neighbours(unsigned long addr) { }
static inline void kprobe_opt_reap(struct kprobe_site *s)
{
	kprobe_site_destroy(s);
}
#endif

#endif /* _KERNEL_KPROBES_INTERNAL_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of the kprobes core share with each other and nobody
 * else: the table and its lock (kprobes.c), the blacklist
 * (kprobes_blacklist.c), module text (kprobes_module.c), ftrace call
 * sites (kprobes_ftrace.c), return probes (kretprobes.c), jump
 * optimization (kprobes_opt.c) and the debugfs files (kprobes_debugfs.c).
 * Each feature that can be configured out has stubs here, so that the core
 * calls it unconditionally.
 */
#ifndef _KERNEL_KPROBES_INTERNAL_H
#define _KERNEL_KPROBES_INTERNAL_H

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/rculist.h>

#define KP_HASH_BITS	8

#ifdef CONFIG_KPROBES_PER_PROBE
static inline struct kprobe *kprobe_site_arch_probe(struct kprobe_site *s)
{
	return &s->arch.kp;
}

#ifdef CONFIG_OPTPROBES
/* The site's detour buffer, when the architecture can give it one. */
void kp_pp_opt_prepare(struct kprobe_site *s);
void kp_pp_opt_release(struct kprobe_site *s);
#else
static inline void kp_pp_opt_prepare(struct kprobe_site *s) { }
static inline void kp_pp_opt_release(struct kprobe_site *s) { }
#endif

/*
 * The architecture's own probe on its return trampoline (powerpc, mips,
 * sparc...: arch_trampoline_kprobe()) stays armed when debugfs "enabled"
 * disarms everything, as upstream's does: a return already sent to the
 * trampoline would otherwise run its bare code, which on powerpc is "nop;
 * blr" with the link register still pointing there, a loop for good.
 */
static inline bool kprobe_site_stays_armed(struct kprobe_site *s)
{
	return arch_trampoline_kprobe(&s->arch.kp);
}
#else
static inline struct kprobe *kprobe_site_arch_probe(struct kprobe_site *s)
{
	return NULL;
}

/* Site-native architectures return from kretprobes without a probe. */
static inline bool kprobe_site_stays_armed(struct kprobe_site *s)
{
	return false;
}
#endif

struct module;

/* Serialises every change to the sites; see the top of kprobes.c. */
extern struct mutex kprobe_mutex;
/* The table of sites, hashed by address. */
extern struct hlist_head kprobe_sites[1 << KP_HASH_BITS];
/* debugfs "enabled" is 0: every site is disarmed, whatever its probes. */
extern bool kprobes_all_disarmed;
/* What current_kprobe points at while kprobes itself is busy on a CPU. */
extern struct kprobe kprobe_busy;
/* Functions no probe may go into, one entry each; RCU, kprobe_mutex. */
extern struct list_head kprobe_blacklist;

/*
 * The bucket of a site's address: its low byte folded with the next one.
 * Code addresses vary there from function to function, and the trap
 * computes it in two instructions on arm64, where hash_ptr()'s 64-bit
 * multiplier alone takes four to build.
 */
static __always_inline unsigned int kp_site_hash(unsigned long addr)
{
	u32 a = addr;

	return (a ^ (a >> KP_HASH_BITS)) & ((1U << KP_HASH_BITS) - 1);
}

/*
 * kprobe_site_lookup(), inline for the hit paths that count every
 * instruction (the ftrace handler).  Same callers' rules.
 */
static __always_inline struct kprobe_site *kp_site_find(unsigned long addr)
{
	struct kprobe_site *s;

	hlist_for_each_entry_rcu(s, &kprobe_sites[kp_site_hash(addr)],
				 hash, lockdep_is_held(&kprobe_mutex))
		if ((unsigned long)s->addr == addr && !s->gone)
			return s;
	return NULL;
}

/* Hold the CPUs and text_mutex around the architecture's text writes. */
void kprobe_text_lock(void);
void kprobe_text_unlock(void);
/* Free a site nobody can reach any more. */
void kprobe_site_destroy(struct kprobe_site *s);
/* The registered site of @p, or NULL; under kprobe_mutex. */
struct kprobe_site *kprobe_site_of(struct kprobe *p);
/* Where a probe at @addr or @sym, plus @offset, lands; ERR_PTR on error. */
kprobe_opcode_t *kprobe_resolve(kprobe_opcode_t *addr, const char *sym,
				unsigned long offset, bool *on_func_entry);
/* register_kprobes() and unregister_kprobes(), for return probes too. */
int kprobe_register_many(struct kprobe **kps, int num);
void kprobe_unregister_many(struct kprobe **kps, int num);
/*
 * Mark gone every site whose address @going() says is going away; with
 * @restore, writing each one's instruction back first.
 */
void kprobe_kill_range(bool (*going)(unsigned long addr, void *arg),
		       void *arg, bool restore);
/* Arm (or disarm) every site, as debugfs "enabled" asks. */
int kprobe_arm_all(bool disarmed);

/* kprobes_blacklist.c */
int __init kprobe_blacklist_init(void);
bool kprobe_text_refused(kprobe_opcode_t *addr);
void kprobe_blacklist_module_add(struct module *mod);
void kprobe_blacklist_module_remove(struct module *mod);

#ifdef CONFIG_MODULES
/* Hold @mod while a probe at @a in it is set up: -ENOENT if @a is going. */
int kprobe_module_hold(struct module *mod, unsigned long a);
int __init kprobe_modules_init(void);
#else
static inline int kprobe_module_hold(struct module *mod, unsigned long a)
{
	return -ENOENT;		/* no module text without modules */
}

static inline int kprobe_modules_init(void)
{
	return 0;
}
#endif

#ifdef CONFIG_KPROBES_ON_FTRACE
/* Is @addr an ftrace call site (armed through ftrace, not an int3)? */
bool kprobe_ftrace_site(kprobe_opcode_t *addr);
int kprobe_ftrace_arm(struct kprobe_site *s);
int kprobe_ftrace_disarm(struct kprobe_site *s);
/* Move an armed site to the ops its post handlers now need. */
int kprobe_ftrace_rehook(struct kprobe_site *s);
/* In a batch: queue @s's change to @want, written by the flush. */
int kprobe_ftrace_queue(struct kprobe_site *s, bool want);
int kprobe_ftrace_flush(bool arm);

static inline bool kprobe_ftrace_refused(kprobe_opcode_t *addr)
{
	return false;
}

/*
 * Should this call of an ftrace handler fire @s?  Only when @ops is the
 * one of our two (kprobes_ftrace.c) that @s is hooked on: while a site
 * moves from one to the other, both call the handler for it.  The ops'
 * private word says which one it is (1 on the IPMODIFY ops): one load,
 * where the flags would take a shift and a mask more on every hit.
 */
static nokprobe_inline bool kp_ftrace_ops_acts(struct kprobe_site *s,
					       struct ftrace_ops *ops)
{
	return (unsigned long)READ_ONCE(s->ftrace_ipmodify) ==
	       (unsigned long)ops->private;
}

#ifdef CONFIG_KPROBES_PER_PROBE
/*
 * Upstream's kprobe_ftrace_handler() does not tell our two ops apart:
 * they call it through kprobe_pp_ftrace_entry(), which does.
 */
void kprobe_pp_ftrace_entry(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *ops, struct ftrace_regs *fregs);
#define KPROBE_FTRACE_FUNC	kprobe_pp_ftrace_entry
/* The kprobe an ftrace site gives a per-probe architecture's handler. */
int kprobe_ftrace_prepare(struct kprobe_site *s);
#else
#define KPROBE_FTRACE_FUNC	kprobe_ftrace_handler
/* The architecture's handler works on the site itself. */
static inline int kprobe_ftrace_prepare(struct kprobe_site *s)
{
	return 0;
}
#endif
#else
static inline bool kprobe_ftrace_site(kprobe_opcode_t *addr)
{
	return false;
}

/*
 * Without probes on ftrace call sites, ftrace still rewrites its call
 * sites while they may hold our breakpoint: refuse them.
 */
static inline bool kprobe_ftrace_refused(kprobe_opcode_t *addr)
{
	return ftrace_location((unsigned long)addr) == (unsigned long)addr;
}

static inline int kprobe_ftrace_prepare(struct kprobe_site *s)
{
	return -ENODEV;
}

static inline int kprobe_ftrace_arm(struct kprobe_site *s)
{
	return -ENODEV;
}

static inline int kprobe_ftrace_disarm(struct kprobe_site *s)
{
	return -ENODEV;
}

static inline int kprobe_ftrace_rehook(struct kprobe_site *s)
{
	return -ENODEV;
}

static inline int kprobe_ftrace_queue(struct kprobe_site *s, bool want)
{
	return -ENODEV;
}

static inline int kprobe_ftrace_flush(bool arm)
{
	return 0;
}
#endif

#ifdef CONFIG_KRETPROBES
bool kprobe_is_kretprobe(struct kprobe *p);
/* Unregistering: no return handler of @p may start any more. */
void kretprobe_detach(struct kprobe *p);
/* After the grace period: give @p's instances back. */
void kretprobe_retire(struct kprobe *p);
/*
 * The backend of return probes, the core's own trampoline (kretprobes.c)
 * or rethook's (kretprobes_rethook.c): give @rp its maxactive instances
 * and the entry handler that hands them out, or free them again when @rp
 * did not get registered.  kretprobe_instances(rp) is non-NULL while @rp
 * has them.
 */
int kretprobe_alloc_instances(struct kretprobe *rp);
void kretprobe_free_instances(struct kretprobe *rp);
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
#define kretprobe_instances(rp)	((rp)->rh)
#else
#define kretprobe_instances(rp)	((rp)->rph)
#endif
#else
static inline bool kprobe_is_kretprobe(struct kprobe *p)
{
	return false;
}

static inline void kretprobe_detach(struct kprobe *p) { }
static inline void kretprobe_retire(struct kprobe *p) { }
#endif

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

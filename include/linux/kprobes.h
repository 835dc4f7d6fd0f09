/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kprobes: dynamic probes on kernel instructions.
 *
 * A kprobe names an instruction (by address, or by symbol and offset) and
 * gets its pre_handler called just before that instruction runs and its
 * post_handler just after.  A kretprobe puts a kprobe on a function's entry
 * and gets its handler called when the function returns.
 *
 * Inside the core, all probes registered on one address share a probe site
 * (struct kprobe_site): one breakpoint, one copy of the instruction, and the
 * list of the probes whose handlers run when it is hit.  The architecture
 * sees only sites, through the arch_*_kprobe_site() calls below.
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/compiler.h>
#include <linux/linkage.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/notifier.h>
#include <linux/smp.h>
#include <linux/bug.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/mutex.h>
#include <linux/ftrace.h>
#include <linux/objpool.h>
#include <linux/rethook.h>
#include <linux/wprobes.h>
#include <asm/kprobes.h>

#ifdef CONFIG_KPROBES
/* Values of kprobe_ctlblk.kprobe_status while this CPU handles a probe. */
#define KPROBE_HIT_ACTIVE	0x00000001	/* pre handlers running */
#define KPROBE_HIT_SS		0x00000002	/* probed instruction running */
#define KPROBE_REENTER		0x00000004	/* a nested hit being skipped */
#define KPROBE_HIT_SSDONE	0x00000008	/* post handlers running */

#ifndef CONFIG_KPROBES_PER_PROBE
/*
 * A site-native architecture (HAVE_KPROBE_SITES) keeps everything about
 * the instruction in struct arch_kprobe_site; kprobe.ainsn is kept for the
 * code that still looks at it.
 */
struct arch_specific_insn {
	kprobe_opcode_t *insn;		/* the site's slot, or NULL */
};

/**
 * struct kprobe_step - a hit's instruction carried out of line
 * @site: the site whose copy runs out of line, or NULL (none, or emulated)
 * @probe: the probe whose pre handler the hit ran alone, or NULL when it
 *	ran the site's list: whose post handlers the end of the step runs
 * @arch: what the architecture keeps to undo its masking at the end
 *	(x86: the flags at the hit; arm64: pstate)
 */
struct kprobe_step {
	struct kprobe_site	*site;
	struct kprobe		*probe;
	struct arch_kprobe_step	arch;
};

/**
 * struct kprobe_ctlblk - the per-CPU state of a hit (kernel/kprobes_hit.h)
 * @kprobe_status: KPROBE_HIT_* or KPROBE_REENTER
 * @step: the instruction being carried out
 * @prev: the interrupted probe's current_kprobe, status and step while a
 *	re-entered one is carried out
 */
struct kprobe_ctlblk {
	unsigned long		kprobe_status;
	struct kprobe_step	step;
	struct {
		struct kprobe		*kp;
		unsigned long		status;
		struct kprobe_step	step;
	} prev;
};
#endif
#else
typedef int kprobe_opcode_t;
struct arch_specific_insn {
	int dummy;
};
#endif

struct kprobe;
struct kprobe_site;
struct pt_regs;
struct task_struct;
struct kretprobe;
struct kretprobe_instance;

typedef int (*kprobe_pre_handler_t)(struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t)(struct kprobe *, struct pt_regs *,
				      unsigned long flags);
typedef int (*kretprobe_handler_t)(struct kretprobe_instance *,
				   struct pt_regs *);

/**
 * struct kprobe - one probe on one kernel instruction
 * @hlist: kept for callers that initialise it; the core does not hash it
 * @list: link in the probe site's list while registered, empty otherwise
 * @nmissed: hits on which the handlers did not run (nested hits)
 * @addr: probed address; filled in by register_kprobe() from @symbol_name
 * @symbol_name: symbol to probe ("sym" or "module:sym"), or NULL
 * @offset: byte offset from @symbol_name (or from @addr)
 * @pre_handler: run before the instruction; non-zero return means the
 *	handler moved the instruction pointer and the instruction must be
 *	skipped
 * @post_handler: run after the instruction, with interrupts off
 * @opcode: what the breakpoint replaced (x86: the instruction's first byte)
 * @ainsn: the copy of the instruction (ainsn.insn is its slot or NULL)
 * @flags: KPROBE_FLAG_*; callers may set only KPROBE_FLAG_DISABLED
 * @hit_gen: the generation of its site from which a hit that walks the
 *	site's list runs this probe's handlers; 0 while none may run them
 *	(disabled, gone, not yet listed).  The core's own, see
 *	kprobe_site_pre().
 * @site: the probe site this probe is on, while registered
 * @nhit: per-CPU count of hits that ran this probe's handlers
 */
struct kprobe {
	/* First: the hit paths get the probe from its site's list for free. */
	struct list_head list;
	struct hlist_node hlist;
	unsigned long nmissed;
	kprobe_opcode_t *addr;
	const char *symbol_name;
	unsigned int offset;
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_opcode_t opcode;
	struct arch_specific_insn ainsn;
	u32 flags;
	u32 hit_gen;
	struct kprobe_site *site;
	unsigned long __percpu *nhit;
};

#define KPROBE_FLAG_GONE		1	/* its text went away */
#define KPROBE_FLAG_DISABLED		2	/* handlers switched off */
#define KPROBE_FLAG_OPTIMIZED		4	/* reached by a jump (or queued) */
#define KPROBE_FLAG_FTRACE		8	/* reached through ftrace */
#define KPROBE_FLAG_ON_FUNC_ENTRY	16	/* on a function's entry */

#ifdef CONFIG_KPROBES_PER_PROBE
/*
 * Architectures whose kprobes code is upstream's, written for one struct
 * kprobe at a time (kernel/kprobes_per_probe.c): each site hands the
 * architecture a kprobe of its own that stands for all the site's probes.
 */
#ifdef CONFIG_OPTPROBES
/*
 * A probe site's kprobe on an architecture with jump optimization of its
 * own (powerpc, 32-bit arm): its optimized_kprobe, whose @kp is the
 * site's kprobe.  @list links it in the lists the architecture's
 * arch_optimize_kprobes() and arch_unoptimize_kprobes() are handed, and
 * @optinsn is its detour buffer (kernel/kprobes_per_probe_opt.c).
 */
struct optimized_kprobe {
	struct kprobe kp;
	struct list_head list;
	struct arch_optimized_insn optinsn;
};

struct arch_kprobe_site {
	union {
		struct kprobe kp;
		struct optimized_kprobe op;
	};
};

/* The region a jump replaces, for the generic optimizer. */
#define KPROBE_OPT_MAX_LEN	MAX_OPTIMIZED_LENGTH
/*
 * A detour buffer: the architecture's template, which only its linker
 * symbols measure (powerpc's, the longest, is about 130 instructions).
 */
#define KPROBE_OPTINSN_SLOT_SIZE	1024

int arch_prepare_optimized_kprobe(struct optimized_kprobe *op,
				  struct kprobe *orig);
int arch_prepared_optinsn(struct arch_optimized_insn *optinsn);
int arch_check_optimized_kprobe(struct optimized_kprobe *op);
void arch_optimize_kprobes(struct list_head *oplist);
void arch_unoptimize_kprobe(struct optimized_kprobe *op);
void arch_unoptimize_kprobes(struct list_head *oplist,
			     struct list_head *done_list);
int arch_within_optimized_kprobe(struct optimized_kprobe *op,
				 kprobe_opcode_t *addr);
void arch_remove_optimized_kprobe(struct optimized_kprobe *op);
/* What a detour buffer's callback calls: the site's pre handlers. */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs);
/* Pages for detour buffers: alloc_insn_page()'s, unless the arch has its own. */
void *alloc_optinsn_page(void);
void free_optinsn_page(void *page);
/*
 * A detour buffer just prepared, fitted to the per-probe layer: 0, or an
 * error when the site must keep its breakpoint (default: 0).
 */
int arch_pp_opt_adjust(struct optimized_kprobe *op);
#else
struct arch_kprobe_site {
	struct kprobe kp;
};
#endif

int arch_prepare_kprobe(struct kprobe *p);
void arch_arm_kprobe(struct kprobe *p);
void arch_disarm_kprobe(struct kprobe *p);
void arch_remove_kprobe(struct kprobe *p);
int arch_trampoline_kprobe(struct kprobe *p);
/* For a probe on an ftrace call site, instead of arch_prepare_kprobe(). */
int arch_prepare_kprobe_ftrace(struct kprobe *p);
void *alloc_insn_page(void);
/* A hit of @p's site skipped: every probe there counts it. */
void kprobes_inc_nmissed_count(struct kprobe *p);
/*
 * Functions no return probe may go on, a list some architectures still
 * define: every one of them is empty (kretprobe_blacklist_size is 0), so
 * the core does not read it.
 */
struct kretprobe_blackpoint {
	const char *name;
	void *addr;
};

extern struct kretprobe_blackpoint kretprobe_blacklist[];
/* Die notifier events, on architectures that deliver traps that way. */
int kprobe_exceptions_notify(struct notifier_block *self, unsigned long val,
			     void *data);

#ifndef KPROBE_INSN_SLOT_SIZE
#define KPROBE_INSN_SLOT_SIZE	(MAX_INSN_SIZE * sizeof(kprobe_opcode_t))
#endif
#endif

static __always_inline bool kprobe_gone(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_GONE;
}

static __always_inline bool kprobe_disabled(struct kprobe *p)
{
	return p->flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE);
}

static __always_inline bool kprobe_optimized(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_OPTIMIZED;
}

static __always_inline bool kprobe_ftrace(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_FTRACE;
}

#ifndef CONFIG_KRETPROBE_ON_RETHOOK
/*
 * The instances of one kretprobe.  It outlives the kretprobe while some of
 * its instances are still waiting for their functions to return.
 *
 * @rp stays valid for as long as a return handler may run: unregistering
 * first marks the holder @dead (no handler starts any more, instances go
 * back to no pool), waits for the handlers in flight, and only then
 * clears @rp.  So get_kretprobe() is never NULL inside a handler.
 */
struct kretprobe_holder {
	struct kretprobe __rcu	*rp;	/* NULL once unregistered */
	bool			dead;	/* being unregistered */
	struct objpool_head	pool;	/* free instances */
	/* One more free instance per CPU, the first place to look. */
	struct kretprobe_instance * __percpu *cache;
	refcount_t		ref;	/* instances not yet retired, + 1 */
	struct rcu_head		rcu;
};
#endif

/**
 * struct kretprobe - a probe on a function's return
 * @kp: the entry probe (set kp.symbol_name or kp.addr)
 * @handler: run when the function returns
 * @entry_handler: run at entry; non-zero return means no @handler for
 *	this call
 * @maxactive: calls that can be followed at once; <= 0 picks a default
 * @nmissed: calls not followed because every instance was in use
 * @data_size: bytes of private data per instance (kretprobe_instance.data)
 * @rph: the instances, while registered (the core's own trampoline)
 * @rh: the instances, while registered (rethook's trampoline)
 */
struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	int maxactive;
	int nmissed;
	size_t data_size;
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct rethook *rh;
#else
	struct kretprobe_holder *rph;
#endif
};

#define KRETPROBE_MAX_DATA_SIZE	4096

/**
 * struct kretprobe_instance - one call being followed
 * @node: rethook's record of the call (return address, frame, the task's
 *	list of pending returns); its rethook's data is the kretprobe
 * @llist: link in the task's list of pending returns (newest first)
 * @rph: the kretprobe's instances this one belongs to
 * @ret_addr: where the function really returns to
 * @fp: the stack slot that held the return address
 * @task: the task that made the call
 * @data: the kretprobe's private data for this call
 */
struct kretprobe_instance {
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct rethook_node node;
#else
	struct llist_node llist;
	struct kretprobe_holder *rph;
	kprobe_opcode_t *ret_addr;
	void *fp;
	struct task_struct *task;
#endif
	char data[];
};

struct kprobe_blacklist_entry {
	struct list_head list;
	unsigned long start_addr;
	unsigned long end_addr;
	struct rcu_head rcu;
};

#ifdef CONFIG_KPROBES

/**
 * struct kprobe_site - the probes registered on one address
 * @hash: link in the core's table of sites, looked up under RCU
 * @probes: the struct kprobe's here, in registration order (RCU list)
 * @fast: the probe a hit runs without walking @probes: the only one here
 *	when it is enabled, else NULL (kp_site_sync() keeps it)
 * @addr: the probed instruction
 * @nr_post: how many of the probes have a post_handler
 * @gen: the newest of the probes' @hit_gen values, published after them
 * @armed: the breakpoint is in the text
 * @gone: the text went away (module unloaded, init text freed)
 * @ftrace: the address is an ftrace call site; ftrace calls us there
 *	instead of a breakpoint trapping
 * @reap: link in a list of emptied sites waiting to be freed
 * @opt: jump optimization state (KPROBE_OPT_*), read by the hit path
 * @opt_len: bytes a jump at @addr would replace, set by the architecture's
 *	prepare; 0 when the site can never be optimized
 * @opt_used: the site was queued for optimization once, so tasks may hold
 *	it in a detour buffer: it is freed only after an RCU-tasks grace period
 * @opt_list: link in the optimizer's queue, or its list of optimized sites
 * @arch: what the architecture needs to carry the instruction out
 */
struct kprobe_site {
	struct hlist_node	hash;
	struct list_head	probes;
	struct kprobe		*fast;
	kprobe_opcode_t		*addr;
	unsigned int		nr_post;
	u32			gen;
	bool			armed;
	bool			gone;
	bool			ftrace;
	bool			ftrace_ipmodify;	/* on the IPMODIFY ops */
	u8			opt;
	u8			opt_len;
	bool			opt_used;
	struct list_head	reap;
	struct list_head	opt_list;
	struct list_head	poke;	/* arming queued in a batch */
	struct arch_kprobe_site	arch;
};

/*
 * Jump optimization of a site: none; queued (the jump is not written yet,
 * but a hit already leaves through the detour buffer's copy of the region);
 * done (the jump is in the text).
 */
enum {
	KPROBE_OPT_NONE,
	KPROBE_OPT_QUEUED,
	KPROBE_OPT_DONE,
};

DECLARE_PER_CPU(struct kprobe *, current_kprobe);
DECLARE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

/*
 * The helpers an architecture's trap handler calls before it can tell a
 * nested hit are always inlined: an out-of-line copy (a size-optimised
 * build makes them for "static inline") would be a function in the trap
 * path that a probe could be put on, and hitting it would trap again before
 * any reentry check, forever.
 */

/* The probe whose handler this CPU runs, or NULL; preemption must be off. */
static __always_inline struct kprobe *kprobe_running(void)
{
	return __this_cpu_read(current_kprobe);
}

static __always_inline struct kprobe_ctlblk *get_kprobe_ctlblk(void)
{
	return this_cpu_ptr(&kprobe_ctlblk);
}

static __always_inline void reset_current_kprobe(void)
{
	__this_cpu_write(current_kprobe, NULL);
}

/* Mark this CPU as inside kprobes, so that probes hit meanwhile are skipped. */
void kprobe_busy_begin(void);
void kprobe_busy_end(void);

/* The core's side of the hit path, for the architecture's trap handler. */
struct kprobe_site *kprobe_site_lookup(unsigned long addr);
int kprobe_site_pre(struct kprobe_site *s, struct pt_regs *regs);
void kprobe_site_post(struct kprobe_site *s, struct pt_regs *regs);
void kprobe_site_missed(struct kprobe_site *s);

static __always_inline bool kprobe_site_has_post(struct kprobe_site *s)
{
	return READ_ONCE(s->nr_post) != 0;
}

/*
 * The site's only probe when it is enabled, else NULL: then the hit takes
 * the site's list (kprobe_site_pre()).  Preemption off is an RCU-sched
 * read side, as the trap is: the probe cannot be freed under the hit.
 */
static __always_inline struct kprobe *kprobe_site_fast(struct kprobe_site *s)
{
	return READ_ONCE(s->fast);
}

/*
 * The per-CPU variables of a hit, through kprobe_cpu_off() read once for
 * the hit and handed to kprobe_cpu_read(), kprobe_cpu_write(),
 * kprobe_cpu_inc() and kprobe_cpu_ptr() (preemption off).  An
 * architecture whose this-CPU accesses are dear defines them in
 * asm/kprobes.h (arm64: each reads a system register again after any
 * store); elsewhere they are this-CPU operations and the offset goes
 * unused.
 */
#ifndef kprobe_cpu_off
#define kprobe_cpu_off()			0UL
#define kprobe_cpu_read(var, off)		((void)(off), __this_cpu_read(var))
#define kprobe_cpu_write(var, off, val)		\
	do { (void)(off); __this_cpu_write(var, val); } while (0)
#define kprobe_cpu_inc(ptr, off)		\
	do { (void)(off); raw_cpu_inc(*(ptr)); } while (0)
#define kprobe_cpu_ptr(var, off)		((void)(off), this_cpu_ptr(&(var)))
#endif

/**
 * kprobe_pre_one_at() - run the pre handler of a site's only probe
 * @p: the probe, found by kprobe_site_fast()
 * @regs: the registers at the hit
 * @off: kprobe_cpu_off()
 *
 * For the trap, and for callers that hold preemption off (an RCU-sched
 * read side, as the trap is) with interrupts perhaps on, having found
 * kprobe_running() NULL.  The probe becomes current_kprobe before
 * kprobe_status is written, its hit counted and its handler run, so a
 * probe hit by an interrupt from then on only counts as missed; an
 * interrupt that comes earlier finds no probe running, and every hit it
 * takes puts current_kprobe back to NULL before it returns.  The caller
 * clears current_kprobe when done.
 *
 * Return: what the pre handler returned (non-zero: it moved the pc).
 */
static __always_inline int kprobe_pre_one_at(struct kprobe *p,
					     struct pt_regs *regs,
					     unsigned long off)
{
	kprobe_cpu_write(current_kprobe, off, p);
	barrier();	/* an interrupt must see the two in this order */
	kprobe_cpu_write(kprobe_ctlblk.kprobe_status, off, KPROBE_HIT_ACTIVE);
	/*
	 * A plain increment: with current_kprobe set, no hit an interrupt
	 * takes on this CPU counts one (they are missed), so none can come
	 * between its load and its store.  On arm64 the protected
	 * this_cpu_inc() is a preempt count round trip and an atomic.
	 */
	kprobe_cpu_inc(p->nhit, off);
	return p->pre_handler ? p->pre_handler(p, regs) : 0;
}

/* kprobe_pre_one_at() on this CPU. */
static __always_inline int kprobe_pre_one(struct kprobe *p,
					  struct pt_regs *regs)
{
	return kprobe_pre_one_at(p, regs, kprobe_cpu_off());
}

/**
 * kprobe_site_pre_one() - the pre handler of a site with one probe, inlined
 * @s: the site
 * @regs: the registers at the hit
 * @off: kprobe_cpu_off()
 *
 * The usual case of a jump's detour, cheap enough to inline there; same
 * callers' rules as kprobe_pre_one_at().  A handler's return value is
 * ignored: there is no other probe to skip.  The caller clears
 * current_kprobe when done.
 *
 * Return: false, having done nothing, when @s has no fast probe (several,
 * or a disabled one): then call kprobe_site_pre().
 */
static __always_inline bool kprobe_site_pre_one(struct kprobe_site *s,
						struct pt_regs *regs,
						unsigned long off)
{
	struct kprobe *p = kprobe_site_fast(s);

	if (!p)
		return false;
	kprobe_pre_one_at(p, regs, off);
	return true;
}

/**
 * kprobe_site_post_owed() - the post handlers a hit owes after its instruction
 * @s: the site
 * @p: the probe whose pre handler the hit ran alone (kprobe_site_fast()
 *	at the hit, kprobe_pre_one_at()), or NULL when it ran kprobe_site_pre()
 * @regs: the registers after the instruction
 *
 * Only the probes whose pre handler ran in the same hit: the site may have
 * gained a probe, or had one enabled, since then.  Same callers as above.
 */
static __always_inline void kprobe_site_post_owed(struct kprobe_site *s,
						  struct kprobe *p,
						  struct pt_regs *regs)
{
	if (!p) {
		kprobe_site_post(s, regs);
		return;
	}
	__this_cpu_write(current_kprobe, p);
	p->post_handler(p, regs, 0);
}

/* Does a hit that ran as for kprobe_site_post_owed() owe post handlers? */
static __always_inline bool kprobe_site_owes_post(struct kprobe_site *s,
						  struct kprobe *p)
{
	return p ? !!p->post_handler : kprobe_site_has_post(s);
}

#ifdef CONFIG_OPTPROBES
/**
 * __kprobe_opt_run() - kprobe_opt_run() without the preemption count
 * @s: the site whose detour buffer called
 * @regs: the registers the probed code had, as the detour saved them
 *
 * For a detour that masks every interrupt around its call, as a trap
 * does (arm64): nothing can then arrive in the middle, and nothing can
 * preempt the handlers.
 */
static __always_inline void __kprobe_opt_run(struct kprobe_site *s,
					     struct pt_regs *regs)
{
	unsigned long off = kprobe_cpu_off();

	if (unlikely(kprobe_cpu_read(current_kprobe, off))) {
		kprobe_site_missed(s);
	} else {
		if (!kprobe_site_pre_one(s, regs, off))
			kprobe_site_pre(s, regs);
		kprobe_cpu_write(current_kprobe, off, NULL);
	}
}

/**
 * kprobe_opt_run() - the pre handlers of a site reached through its jump
 * @s: the site whose detour buffer called
 * @regs: the registers the probed code had, as the detour saved them
 *
 * For the architecture's detour callback.  As on an optimized probe
 * anywhere, a handler's change of the instruction pointer cannot be
 * honoured: the buffer goes on with its copy regardless.
 *
 * Handlers run with preemption off and interrupts as the probed code had
 * them, as on probes on ftrace call sites; saving and restoring the
 * interrupt state would cost more than the rest of the hit with irq
 * tracing on.  What that means for the per-CPU state an interrupt (or NMI)
 * arriving in the middle can touch:
 *
 *  - preemption is off from the first instruction that reads per-CPU
 *    state, so it all stays this CPU's, and the site and its probe list
 *    stay alive (RCU-sched readers, as in the trap);
 *  - before current_kprobe is set, an interrupt's probe hits find it NULL
 *    and run in full; each of them puts it back to NULL, and the
 *    architecture's step state back to idle, before the interrupt
 *    returns, so this CPU looks to us as we left it;
 *  - once it is set, their hits only count as missed: through a jump they
 *    touch nothing but nmissed (atomic); through ftrace likewise; through
 *    a breakpoint they carry out the instruction in the REENTER state,
 *    which parks current_kprobe, kprobe_status and the step and puts them
 *    back before the trap returns.  No return trampoline can run in the
 *    interrupt for an instance pushed before it (a function entered in
 *    the interrupt returns in it; its entry probe was missed);
 *  - the hit count is incremented with current_kprobe set, so no hit in
 *    an interrupt increments one meanwhile (kprobe_pre_one_at()).
 *
 * kprobe_status is written only after current_kprobe (see
 * kprobe_site_pre_one() and kprobe_site_pre()), so an interrupt's hit
 * cannot leave it stale while a handler runs.
 */
static __always_inline void kprobe_opt_run(struct kprobe_site *s,
					   struct pt_regs *regs)
{
	preempt_disable_notrace();
	__kprobe_opt_run(s, regs);
	preempt_enable_notrace();
}
#endif

/*
 * The architecture's side.  prepare checks that s->addr can be probed and
 * fills s->arch (-EILSEQ off an instruction boundary, -EINVAL for what
 * cannot be probed); release frees what prepare took.
 */
int arch_prepare_kprobe_site(struct kprobe_site *s);
void arch_release_kprobe_site(struct kprobe_site *s);
/*
 * Arming and disarming, as jump_label's transform queue: the core queues
 * each site of a batch (one site is a batch of one) and applies the queue,
 * with the CPUs held and text_mutex taken, and reports the writes to perf.
 * queue puts the breakpoint in (@arm) or the original instruction back in
 * the queue, or writes it at once where that is safe before the CPUs are
 * synchronised; false when the queue is full (the core applies it and
 * queues @s again).  apply writes what is queued: when it returns, every
 * CPU sees every queued site changed.
 */
bool arch_kprobe_poke_queue(struct kprobe_site *s, bool arm);
void arch_kprobe_poke_apply(void);
/* What @p, registered on @s, shows of the instruction (opcode, ainsn). */
void arch_kprobe_site_describe(struct kprobe_site *s, struct kprobe *p);
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr,
					 unsigned long offset,
					 bool *on_func_entry);
int arch_init_kprobes(void);
bool arch_within_kprobe_blacklist(unsigned long addr);
/* May the function starting at @func not have a return probe? */
bool arch_kretprobe_refused(unsigned long func);

#ifdef CONFIG_OPTPROBES
/*
 * Jump optimization, on sites whose opt_len the architecture set: write the
 * jumps of the sites on @sites (linked by opt_list) once no task can be
 * inside their regions any more, or put their original bytes back behind
 * the breakpoint.  Both finish on every CPU before they return.
 */
void arch_optimize_kprobe_sites(struct list_head *sites);
void arch_unoptimize_kprobe_sites(struct list_head *sites);

/* Executable slots for detour buffers. */
kprobe_opcode_t *get_optinsn_slot(void);
void free_optinsn_slot(kprobe_opcode_t *slot, int dirty);
bool is_kprobe_optinsn_slot(unsigned long addr);
void wait_for_kprobe_optimizer(void);
#else
static inline bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return false;
}

static inline void wait_for_kprobe_optimizer(void) { }
#endif
int arch_populate_kprobe_blacklist(void);

/* The blacklist. */
bool within_kprobe_blacklist(unsigned long addr);
bool kprobe_jump_label_reserved(void *start, void *end);
int kprobe_add_ksym_blacklist(unsigned long entry);
int kprobe_add_area_blacklist(unsigned long start, unsigned long end);

/* Text between two linker symbols, which an architecture refuses. */
struct kprobe_text_area {
	const char *start, *end;
};

/* For arch_within_kprobe_blacklist(): is @addr in one of the @n @areas? */
static inline bool kprobe_in_text_areas(unsigned long addr,
					const struct kprobe_text_area *areas,
					unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (addr >= (unsigned long)areas[i].start &&
		    addr < (unsigned long)areas[i].end)
			return true;
	return false;
}

/* Markers of the _kprobe_blacklist section (NOKPROBE_SYMBOL entries). */
extern unsigned long __start_kprobe_blacklist[];
extern unsigned long __stop_kprobe_blacklist[];

/* Executable slots for out-of-line copies of probed instructions. */
#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
void *arch_kprobe_alloc_slot_page(void);
void arch_kprobe_fill_slot_page(void *page);
kprobe_opcode_t *get_insn_slot(void);
void free_insn_slot(kprobe_opcode_t *slot, int dirty);
bool is_kprobe_insn_slot(unsigned long addr);
#else
static inline bool is_kprobe_insn_slot(unsigned long addr)
{
	return false;
}
#endif

/*
 * For return handlers.  Without CONFIG_KRETPROBES no instance exists and
 * these are never called, but callers such as trace_kprobe still build.
 */
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
static nokprobe_inline struct kretprobe *
get_kretprobe(struct kretprobe_instance *ri)
{
	/* Set at rethook_alloc() and never changed: the kretprobe. */
	return ri->node.rethook->data;
}

static nokprobe_inline unsigned long
get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return ri->node.ret_addr;
}
#else
static nokprobe_inline struct kretprobe *
get_kretprobe(struct kretprobe_instance *ri)
{
	return rcu_dereference_check(ri->rph->rp, rcu_read_lock_any_held());
}

static nokprobe_inline unsigned long
get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return (unsigned long)ri->ret_addr;
}
#endif

#if defined(CONFIG_KRETPROBES) && defined(CONFIG_KRETPROBE_ON_RETHOOK)
/*
 * Return probes on rethook (kernel/kretprobes_rethook.c): the trampoline,
 * the task's list of pending returns and the unwinders' view of them are
 * rethook's; rethook_flush_task() retires what a dead task left.
 */
static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return is_rethook_trampoline(addr);
}

static nokprobe_inline unsigned long
kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
			struct llist_node **cur)
{
	return rethook_find_ret_addr(tsk, (unsigned long)fp, cur);
}

static inline void kprobe_flush_task(struct task_struct *tk) { }
#elif defined(CONFIG_KRETPROBES)
void arch_prepare_kretprobe(struct kretprobe_instance *ri,
			    struct pt_regs *regs);
#ifndef arch_kretprobe_fixup_return
void arch_kretprobe_fixup_return(struct pt_regs *regs,
				 kprobe_opcode_t *correct_ret_addr);
#endif
void __kretprobe_trampoline(void);

static nokprobe_inline void *kretprobe_trampoline_addr(void)
{
	return dereference_kernel_function_descriptor(__kretprobe_trampoline);
}

/*
 * Called by the architecture's trampoline with the registers it saved and
 * the stack slot the return address was in: runs the return handlers and
 * gives back the address the function really returns to.
 */
unsigned long kretprobe_trampoline_handler(struct pt_regs *regs,
					   void *frame_pointer);
/* The same from the pre handler of a trampoline that is a kprobe. */
unsigned long __kretprobe_trampoline_handler(struct pt_regs *regs,
					     void *frame_pointer);

static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return (void *)addr == kretprobe_trampoline_addr();
}

unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur);
void kprobe_flush_task(struct task_struct *tk);
#else
static inline void kprobe_flush_task(struct task_struct *tk) { }
#endif /* CONFIG_KRETPROBES */

struct kprobe *get_kprobe(void *addr);
kprobe_opcode_t *kprobe_lookup_name(const char *name, unsigned int offset);
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym,
			 unsigned long offset);

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);

int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);

int disable_kprobe(struct kprobe *kp);
int enable_kprobe(struct kprobe *kp);
int disable_kprobes(struct kprobe **kps, int num);
int enable_kprobes(struct kprobe **kps, int num);

void kprobe_free_init_mem(void);
void dump_kprobe(struct kprobe *kp);
int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym);

#else /* !CONFIG_KPROBES */

/* Without kprobes nothing can be registered, and nothing is ever running. */
#define kprobe_busy_begin()	do {} while (0)
#define kprobe_busy_end()	do {} while (0)

static inline struct kprobe *kprobe_running(void) { return NULL; }
static inline struct kprobe *get_kprobe(void *addr) { return NULL; }
static inline bool is_kprobe_insn_slot(unsigned long addr) { return false; }
static inline bool is_kprobe_optinsn_slot(unsigned long addr) { return false; }
static inline void wait_for_kprobe_optimizer(void) { }
static inline bool within_kprobe_blacklist(unsigned long addr) { return true; }
static inline void kprobe_free_init_mem(void) { }
static inline void kprobe_flush_task(struct task_struct *tk) { }

static inline int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	return 0;
}

static inline int kprobe_get_kallsym(unsigned int symnum, unsigned long *value,
				     char *type, char *sym)
{
	return -ERANGE;
}

static inline int register_kprobe(struct kprobe *p) { return -EOPNOTSUPP; }
static inline void unregister_kprobe(struct kprobe *p) { }
static inline int enable_kprobe(struct kprobe *kp) { return -EOPNOTSUPP; }
static inline int disable_kprobe(struct kprobe *kp) { return -EOPNOTSUPP; }
static inline int enable_kprobes(struct kprobe **kps, int num)
{
	return -EOPNOTSUPP;
}
static inline int disable_kprobes(struct kprobe **kps, int num)
{
	return -EOPNOTSUPP;
}

static inline int register_kprobes(struct kprobe **kps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kprobes(struct kprobe **kps, int num) { }

static inline int register_kretprobe(struct kretprobe *rp)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kretprobe(struct kretprobe *rp) { }

static inline int register_kretprobes(struct kretprobe **rps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kretprobes(struct kretprobe **rps, int num) { }

#endif /* CONFIG_KPROBES */

#if !defined(CONFIG_KPROBES) || !defined(CONFIG_KRETPROBES)
/* No return probes: no trampoline address can show up on a stack. */
static nokprobe_inline unsigned long
kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
			struct llist_node **cur)
{
	return 0;
}

static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return false;
}
#endif

static inline int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

static inline int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/* The architecture's handler for probes on ftrace call sites. */
void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs);
/* Set once ftrace has shut itself down: its call sites are dead ends. */
extern bool kprobe_ftrace_disabled;
void kprobe_ftrace_kill(void);
#else
static inline void kprobe_ftrace_kill(void) { }
#endif

/*
 * For the page fault handler: a fault taken while this CPU handles a probe
 * may be the probed instruction's own, which the architecture undoes.
 */
static nokprobe_inline bool kprobe_page_fault(struct pt_regs *regs,
					      unsigned int trap)
{
	if (!IS_ENABLED(CONFIG_KPROBES) || user_mode(regs))
		return false;
	/* kprobe_running() means nothing where we could migrate. */
	if (preemptible() || !kprobe_running())
		return false;
	return kprobe_fault_handler(regs, trap);
}

#endif /* _LINUX_KPROBES_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic kprobes core: the probe table, the hit path, registration.
 * The rest of the core is in files of their own, each with its part of
 * kprobes_internal.h: out-of-line slots (kprobes_slots.c), where probes may
 * not go (kprobes_blacklist.c), module text (kprobes_module.c), ftrace call
 * sites (kprobes_ftrace.c), return probes (kretprobes.c), jump optimization
 * (kprobes_opt.c) and debugfs (kprobes_debugfs.c).
 *
 * Probe table.  Every probed address has one struct kprobe_site, found in
 * kprobe_sites[] by hashing the address.  A site owns the breakpoint and the
 * architecture's copy of the instruction, and lists the struct kprobe's
 * registered there; each keeps its own handlers and flags, so several users
 * can probe one instruction without knowing of each other.  A site whose
 * text went away (module unloaded, init text freed) stays in the table,
 * marked gone and never touched again, until its probes are unregistered;
 * the hit path and new registrations look past it.
 *
 * Locking.  kprobe_mutex serialises every change: registration, arming,
 * enabling, module events, the debugfs knobs.  The hit path takes no lock:
 * it runs in the breakpoint trap, with interrupts off, and reads the table
 * and the site lists under RCU (sched flavour, implied by the trap).  Sites
 * and probes are therefore only freed, and unregister only returns, after a
 * grace period; batch unregistration waits for one grace period in all.
 *
 * Hit path.  The architecture's trap handler looks the site up and calls
 * kprobe_site_pre(), carries out the instruction, then calls
 * kprobe_site_post(); on a site-native architecture the whole of that is
 * kernel/kprobes_hit.h, around the architecture's hooks.  current_kprobe
 * is non-NULL on a CPU for the whole of that; a probe hit meanwhile runs
 * no handler and counts as missed.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/cpu.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/memory.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

#include "kprobes_internal.h"

DEFINE_MUTEX(kprobe_mutex);
struct hlist_head kprobe_sites[1 << KP_HASH_BITS];
bool kprobes_all_disarmed;
static bool kprobes_ready;			/* init_kprobes() has run */

/* Per-probe architectures define these in their own code, as upstream. */
#ifndef CONFIG_KPROBES_PER_PROBE
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
DEFINE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);
#endif
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

struct kprobe kprobe_busy = {
	.addr = (kprobe_opcode_t *)&kprobe_busy_begin,
};

static struct hlist_head *kp_bucket(const void *addr)
{
	return &kprobe_sites[kp_site_hash((unsigned long)addr)];
}

/* ------------------------------------------------------------------ */
/* Hit path: everything here runs inside the breakpoint trap.          */
/* ------------------------------------------------------------------ */

/**
 * kprobe_site_lookup() - find the live probe site at an address
 * @addr: the probed address
 *
 * Called from the trap with interrupts off, or with the RCU read lock or
 * kprobe_mutex held.  Return: the site, or NULL.
 */
notrace struct kprobe_site *kprobe_site_lookup(unsigned long addr)
{
	return kp_site_find(addr);
}
NOKPROBE_SYMBOL(kprobe_site_lookup);

/*
 * The generation of the site whose pre handlers this CPU ran last, for
 * the post handlers of the same hit.  Nothing can run another site's pre
 * handlers on this CPU in between: current_kprobe is set all along, and
 * every hit meanwhile only counts as missed.
 */
static DEFINE_PER_CPU(u32, kp_hit_gen);

/*
 * Does a hit that read generation @gen of @p's site run @p?  One load of
 * the probe: kp_site_stamp() says why that is all it takes.
 */
static __always_inline bool kp_runs_in(struct kprobe *p, u32 gen)
{
	u32 g = READ_ONCE(p->hit_gen);

	return g && g <= gen;
}

/**
 * kprobe_site_pre() - run the pre handlers of a site that was hit
 * @s: the site
 * @regs: the registers at the hit
 *
 * Runs the probes of the site's generation at this moment, and
 * kprobe_site_post() the same probes, less any disabled or taken off
 * meanwhile: a probe added or enabled between the two passes runs in
 * neither.  Leaves current_kprobe non-NULL.  Return: 1 when a handler
 * changed regs->ip and asks for the instruction to be skipped (the
 * remaining handlers do not run), 0 otherwise.
 */
int kprobe_site_pre(struct kprobe_site *s, struct pt_regs *regs)
{
	struct kprobe *p;
	u32 gen;

	__this_cpu_write(current_kprobe, &kprobe_busy);
	/* Only now: callers may run with interrupts on (see opt.c). */
	barrier();
	get_kprobe_ctlblk()->kprobe_status = KPROBE_HIT_ACTIVE;
	/* Pairs with kp_site_stamp(): the stamps of @gen are seen below. */
	gen = smp_load_acquire(&s->gen);
	__this_cpu_write(kp_hit_gen, gen);
	list_for_each_entry_rcu(p, &s->probes, list) {
		if (!kp_runs_in(p, gen))
			continue;
		/*
		 * Set before the probe is listed, freed after it is gone;
		 * a plain increment, as in kprobe_pre_one_at().
		 */
		raw_cpu_inc(*p->nhit);
		__this_cpu_write(current_kprobe, p);
		if (p->pre_handler && p->pre_handler(p, regs))
			return 1;
	}
	return 0;
}
NOKPROBE_SYMBOL(kprobe_site_pre);

/**
 * kprobe_site_post() - run the post handlers of a site after its instruction
 * @s: the site
 * @regs: the registers after the instruction
 *
 * Only after kprobe_site_pre() on @s, in the same hit.
 */
void kprobe_site_post(struct kprobe_site *s, struct pt_regs *regs)
{
	u32 gen = __this_cpu_read(kp_hit_gen);
	struct kprobe *p;

	list_for_each_entry_rcu(p, &s->probes, list) {
		if (!p->post_handler || !kp_runs_in(p, gen))
			continue;
		__this_cpu_write(current_kprobe, p);
		p->post_handler(p, regs, 0);
	}
}
NOKPROBE_SYMBOL(kprobe_site_post);

/* Count a hit whose handlers were skipped; nmissed is read without locks. */
static nokprobe_inline void kp_count_miss(struct kprobe *p)
{
	BUILD_BUG_ON(sizeof(p->nmissed) != sizeof(atomic_long_t));
	atomic_long_inc((atomic_long_t *)&p->nmissed);
}

/**
 * kprobe_site_missed() - a site was hit while this CPU was inside kprobes
 * @s: the site
 */
void kprobe_site_missed(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &s->probes, list)
		if (!kprobe_disabled(p))
			kp_count_miss(p);
}
NOKPROBE_SYMBOL(kprobe_site_missed);

/**
 * kprobe_busy_begin() - make probes hit on this CPU count as missed
 *
 * For code of kprobes' own that runs outside the trap (the return
 * trampoline) and must not be re-entered.  Disables preemption until
 * kprobe_busy_end().
 */
void kprobe_busy_begin(void)
{
	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
	get_kprobe_ctlblk()->kprobe_status = KPROBE_HIT_ACTIVE;
}
NOKPROBE_SYMBOL(kprobe_busy_begin);

void kprobe_busy_end(void)
{
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
}
NOKPROBE_SYMBOL(kprobe_busy_end);

/* ------------------------------------------------------------------ */
/* Where a probe goes, and whether it may go there.                    */
/* ------------------------------------------------------------------ */

/**
 * kprobe_lookup_name() - the address of a symbol
 * @name: "symbol" or "module:symbol"
 * @offset: the offset the probe asks for from the symbol, unused here.  An
 *	architecture whose symbols need more than kallsyms has its own
 *	(powerpc: function descriptors, and with offset 0 the function's
 *	local entry or its ftrace call site); the offset is never folded
 *	into the address returned
 *
 * Return: the address, or NULL.
 */
kprobe_opcode_t *__weak kprobe_lookup_name(const char *name,
					   unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

/*
 * Where a probe asked for at @offset into the function at @addr goes, and
 * whether that is the function's entry.  Architectures whose functions
 * start with something no probe should sit on (x86's endbr) say otherwise.
 */
kprobe_opcode_t *__weak arch_adjust_kprobe_addr(unsigned long addr,
						unsigned long offset,
						bool *on_func_entry)
{
	*on_func_entry = !offset;
	return (kprobe_opcode_t *)(addr + offset);
}

int __weak arch_init_kprobes(void)
{
	return 0;
}

/*
 * The address a probe described by @addr or @sym, plus @offset, lands on,
 * with the architecture's say on function entries.
 */
kprobe_opcode_t *kprobe_resolve(kprobe_opcode_t *addr, const char *sym,
				unsigned long offset, bool *on_func_entry)
{
	unsigned long target, size, sym_off;

	if (!!addr == !!sym)
		return ERR_PTR(-EINVAL);
	if (sym) {
		addr = kprobe_lookup_name(sym, offset);
		if (!addr)
			return ERR_PTR(-ENOENT);
	}

	target = (unsigned long)addr + offset;
	if (!kallsyms_lookup_size_offset(target, &size, &sym_off))
		return ERR_PTR(-ENOENT);
	return arch_adjust_kprobe_addr(target - sym_off, sym_off,
				       on_func_entry);
}

/**
 * kprobe_on_func_entry() - does a probe description land on a function's
 *	entry?
 * @addr: address, or NULL
 * @sym: symbol, or NULL
 * @offset: offset from either
 *
 * Return: 0 if so, -EINVAL if not, -ENOENT if the symbol is unknown.
 */
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym,
			 unsigned long offset)
{
	bool on_entry = false;
	kprobe_opcode_t *at = kprobe_resolve(addr, sym, offset, &on_entry);

	if (IS_ERR(at))
		return PTR_ERR(at);
	return on_entry ? 0 : -EINVAL;
}

/*
 * Check that @addr is text we may probe.  A probe in a module holds a
 * reference (returned in @modp) only until it is armed: probes pin nothing,
 * they go when their module goes.  Everything is checked with preemption
 * off, so that a module found here cannot be freed before the reference
 * is taken; the jump label lock keeps the jump label entries still.
 */
static int kp_check_text(kprobe_opcode_t *addr, struct module **modp)
{
	unsigned long a = (unsigned long)addr;
	struct module *mod = NULL;
	int ret = 0;

	*modp = NULL;
	jump_label_lock();
	preempt_disable();
	if (!core_kernel_text(a)) {
		mod = __module_text_address(a);
		if (!mod) {
			ret = -EINVAL;
			goto out;
		}
	}
	if (kprobe_text_refused(addr)) {
		ret = -EINVAL;
		goto out;
	}
	if (mod) {
		ret = kprobe_module_hold(mod, a);
		if (!ret)
			*modp = mod;
	}
out:
	preempt_enable();
	jump_label_unlock();
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sites: creation, arming, teardown.  All under kprobe_mutex.          */
/* ------------------------------------------------------------------ */

#ifndef CONFIG_KPROBES_PER_PROBE
/* perf's record of a breakpoint written or taken out, for text decoders. */
static void kp_poke_report(struct kprobe_site *s, bool arm)
{
	kprobe_opcode_t brk = KPROBE_BREAKPOINT_INSN;
	kprobe_opcode_t *orig = &s->arch.opcode;

	if (arm)
		perf_event_text_poke(s->addr, orig, sizeof(brk), &brk,
				     sizeof(brk));
	else
		perf_event_text_poke(s->addr, &brk, sizeof(brk), orig,
				     sizeof(brk));
}
#else
/* Upstream's arch_arm_kprobe() reports its writes itself, where it does. */
static void kp_poke_report(struct kprobe_site *s, bool arm)
{
}
#endif

/*
 * Around every write of probe text: the CPUs held, for the architectures
 * that stop them to write, and text_mutex, as every writer of kernel text
 * takes it.
 */
void kprobe_text_lock(void)
{
	cpus_read_lock();
	mutex_lock(&text_mutex);
}

void kprobe_text_unlock(void)
{
	mutex_unlock(&text_mutex);
	cpus_read_unlock();
}

/*
 * Write the breakpoints of the sites on @sites (linked by poke), or take
 * them out, in as few of the architecture's passes as its queue allows:
 * every CPU sees every site changed when this returns.
 */
static void kp_poke_sites(struct list_head *sites, bool arm)
{
	struct kprobe_site *s;
	bool queued;

	kprobe_text_lock();
	list_for_each_entry(s, sites, poke) {
		if (arch_kprobe_poke_queue(s, arm))
			continue;
		arch_kprobe_poke_apply();
		queued = arch_kprobe_poke_queue(s, arm);
		/* An empty queue takes any site. */
		WARN_ON_ONCE(!queued);
	}
	arch_kprobe_poke_apply();
	kprobe_text_unlock();
	list_for_each_entry(s, sites, poke)
		kp_poke_report(s, arm);
}

/* One site is a batch of one; its poke link is free outside a batch. */
static void kp_poke_one(struct kprobe_site *s, bool arm)
{
	LIST_HEAD(one);

	list_add(&s->poke, &one);
	kp_poke_sites(&one, arm);
	list_del_init(&s->poke);
}

/*
 * Batches.  Between kp_batch_begin() and kp_batch_end(), both under
 * kprobe_mutex, a breakpoint site whose arming changes only has the change
 * queued; kp_batch_flush() writes all of them in one pass of the
 * architecture's (one serialisation of every CPU for the lot).  s->armed
 * always says what the site should be, and a site is on one of the lists
 * exactly while its text says otherwise.  Ftrace sites are not deferred.
 *
 * What a hit sees meanwhile: a site is hashed, its copy prepared and its
 * probe on its list before its int3 can be written, and stays hashed with
 * its copy until its int3 is gone (kp_site_release_if_empty() flushes
 * first), so a CPU meeting any int3 of the batch, before or after its
 * write reached that CPU, finds a complete site.  A probe that is not
 * armed yet simply does not fire; nothing exists in between.
 */
static bool kp_batching;
static LIST_HEAD(kp_to_arm);
static LIST_HEAD(kp_to_disarm);

static void kp_batch_begin(void)
{
	lockdep_assert_held(&kprobe_mutex);
	kp_batching = true;
}

/*
 * Write every queued change now: one filter update per ftrace ops and
 * direction, one text-patching pass each way for the breakpoints.
 * Return: 0, or ftrace's error when it refused to hook sites; those are
 * left disarmed (s->armed false) with their probes still on them, for the
 * caller to deal with.
 */
static int kp_batch_flush(void)
{
	struct kprobe_site *s, *tmp;
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	kprobe_ftrace_flush(false);
	if (!list_empty(&kp_to_disarm))
		kp_poke_sites(&kp_to_disarm, false);
	ret = kprobe_ftrace_flush(true);
	if (!list_empty(&kp_to_arm))
		kp_poke_sites(&kp_to_arm, true);
	list_for_each_entry_safe(s, tmp, &kp_to_disarm, poke)
		list_del_init(&s->poke);
	list_for_each_entry_safe(s, tmp, &kp_to_arm, poke)
		list_del_init(&s->poke);
	return ret;
}

/* Armed as asked when it returns, like the one-by-one paths. */
static int kp_batch_end(void)
{
	int ret = kp_batch_flush();

	kp_batching = false;
	return ret;
}

/* @s's int3 should now be @arm: queue the change, or cancel a queued one. */
static void kp_batch_queue(struct kprobe_site *s, bool arm)
{
	if (!list_empty(&s->poke))
		list_del_init(&s->poke);	/* the text already says @arm */
	else
		list_add_tail(&s->poke, arm ? &kp_to_arm : &kp_to_disarm);
}

static bool kp_site_wants_arming(struct kprobe_site *s)
{
	struct kprobe *p;

	if (s->gone)
		return false;
	if (kprobes_all_disarmed && !kprobe_site_stays_armed(s))
		return false;
	list_for_each_entry(p, &s->probes, list)
		if (!kprobe_disabled(p))
			return true;
	return false;
}

/*
 * The hit paths' shortcut (kprobe_site_fast()): @s's only probe if it is
 * enabled.  Every change to the list or to a probe's flags ends in
 * kp_site_sync(), which calls this (kp_site_publish()), so a hit sees the probe through @fast
 * until then: a probe being added is not seen yet, which is allowed until
 * its registration returns, and one being taken off or disabled is seen a
 * little longer, as it could be by a hit that tested its flags just
 * before (disabling never promised more).  Unregistering clears @fast
 * before the grace period it waits for, so no hit still holds the probe
 * when it returns.
 */
static void kp_site_set_fast(struct kprobe_site *s)
{
	struct kprobe *p = list_first_entry_or_null(&s->probes, struct kprobe,
						    list);

	if (p && (!list_is_singular(&s->probes) || kprobe_disabled(p)))
		p = NULL;
	WRITE_ONCE(s->fast, p);
}

/*
 * The generations were used up (2^32 probes enabled on one site): let
 * every hit that may hold an old one end, then start again from 1.  Until
 * then each running probe has generation 1, which every hit runs.
 */
static void kp_site_gen_wrap(struct kprobe_site *s)
{
	struct kprobe *p;

	list_for_each_entry(p, &s->probes, list)
		if (p->hit_gen)
			WRITE_ONCE(p->hit_gen, 1);
	synchronize_rcu();
	/* After the stamps, as in kp_site_stamp(). */
	smp_store_release(&s->gen, 1);
}

/*
 * Bring each probe's hit_gen in line with its flags: 0 when no hit may
 * run it, else the site generation from which hits that walk the list run
 * it.  A probe that becomes runnable gets the next generation, and the
 * site publishes it only after that store (release; the hit's load is an
 * acquire): a hit that read an older one runs neither its pre nor its
 * post handler, one that read it or a newer one saw the stamp.  Values
 * only ever grow from 0 to a generation the site had not published, so a
 * hit whose pre pass skipped a probe cannot find it runnable in its post
 * pass (kprobe_site_pre()).
 */
static void kp_site_stamp(struct kprobe_site *s)
{
	bool fresh = false;
	struct kprobe *p;
	u32 next;

	if (unlikely(s->gen == U32_MAX))
		kp_site_gen_wrap(s);
	next = s->gen + 1;
	list_for_each_entry(p, &s->probes, list) {
		if (kprobe_disabled(p)) {
			WRITE_ONCE(p->hit_gen, 0);
		} else if (!p->hit_gen) {
			WRITE_ONCE(p->hit_gen, next);
			fresh = true;
		}
	}
	if (fresh)	/* after the stamps; kprobe_site_pre() pairs with it */
		smp_store_release(&s->gen, next);
}

/* What the hit paths read of @s: each probe's generation, the shortcut. */
static void kp_site_publish(struct kprobe_site *s)
{
	kp_site_stamp(s);
	kp_site_set_fast(s);
}

/*
 * Bring the breakpoint (or ftrace hook) in line with the site's probes and
 * the global knob.  Only ftrace can refuse.
 */
static int kp_site_sync(struct kprobe_site *s)
{
	bool want = kp_site_wants_arming(s);
	int ret = 0;

	lockdep_assert_held(&kprobe_mutex);
	kp_site_publish(s);
	if (s->ftrace && kp_batching)
		return kprobe_ftrace_queue(s, want);
	if (s->ftrace && want && s->armed)
		return kprobe_ftrace_rehook(s);
	if (want != s->armed) {
		if (s->ftrace) {
			ret = want ? kprobe_ftrace_arm(s) : kprobe_ftrace_disarm(s);
		} else {
			/* The jump sits in front of the breakpoint. */
			if (!want)
				kprobe_opt_stop(s);
			/*
			 * A queued arm leaves s->armed ahead of the text; the
			 * optimizer only writes a jump under the mutex, after
			 * kp_batch_end() has put the int3 in.
			 */
			if (kp_batching)
				kp_batch_queue(s, want);
			else
				kp_poke_one(s, want);
		}
		if (!ret)
			s->armed = want;
	}
	kprobe_opt_sync(s);
	return ret;
}

static struct kprobe_site *kp_site_new(kprobe_opcode_t *addr)
{
	struct kprobe_site *s;
	int ret;

	if (kprobe_ftrace_refused(addr))
		return ERR_PTR(-EINVAL);
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&s->probes);
	INIT_LIST_HEAD(&s->opt_list);
	INIT_LIST_HEAD(&s->poke);
	s->addr = addr;
	s->ftrace = kprobe_ftrace_site(addr);
	ret = s->ftrace ? kprobe_ftrace_prepare(s) : arch_prepare_kprobe_site(s);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
	hlist_add_head_rcu(&s->hash, kp_bucket(addr));
	/* A jump in front of us would cover the breakpoint. */
	kprobe_opt_neighbours((unsigned long)addr);
	return s;
}

void kprobe_site_destroy(struct kprobe_site *s)
{
	if (!s->ftrace)
		arch_release_kprobe_site(s);
	kfree(s);
}

/* After a grace period: no CPU can be using @s any more. */
static void kp_site_free(struct kprobe_site *s)
{
	/* But a task preempted in a detour buffer may hold it. */
	if (s->opt_used)
		kprobe_opt_reap(s);
	else
		kprobe_site_destroy(s);
}

static bool kp_site_has(struct kprobe_site *s, struct kprobe *p)
{
	struct kprobe *q;

	list_for_each_entry(q, &s->probes, list)
		if (q == p)
			return true;
	return false;
}

/*
 * Is @p registered?  p->site is only trusted once found in the table, since
 * the struct may have been copied from a registered one.
 */
struct kprobe_site *kprobe_site_of(struct kprobe *p)
{
	struct kprobe_site *s, *want = p->site;

	lockdep_assert_held(&kprobe_mutex);
	if (!want || !p->addr)
		return NULL;
	hlist_for_each_entry(s, kp_bucket(p->addr), hash)
		if (s == want && kp_site_has(s, p))
			return s;
	return NULL;
}

/* The probe is off the site's list; is the site itself still needed? */
static bool kp_site_release_if_empty(struct kprobe_site *s)
{
	if (!list_empty(&s->probes))
		return false;
	/*
	 * The hit path must find the site as long as its int3 may be seen;
	 * callers flush first, this is a safety net.
	 */
	if (WARN_ON_ONCE(!list_empty(&s->poke)))
		kp_batch_flush();
	hlist_del_init_rcu(&s->hash);
	kprobe_opt_neighbours((unsigned long)s->addr);
	return true;
}

/* Add @p to the live site at @addr, creating and arming it as needed. */
static int kp_attach(struct kprobe *p, kprobe_opcode_t *addr)
{
	struct kprobe_site *s;
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	s = kprobe_site_lookup((unsigned long)addr);
	if (!s) {
		s = kp_site_new(addr);
		if (IS_ERR(s))
			return PTR_ERR(s);
	} else if (kp_site_has(s, p)) {
		return -EINVAL;
	}

	p->site = s;
	arch_kprobe_site_describe(s, p);
	if (s->ftrace)
		p->flags |= KPROBE_FLAG_FTRACE;
	if (p->post_handler) {
		/*
		 * Before @p shows: no jump may stay (it runs no post handler)
		 * and an armed ftrace site moves to the IPMODIFY ops, which
		 * ftrace may refuse (-EBUSY: livepatch got there first).
		 */
		WRITE_ONCE(s->nr_post, s->nr_post + 1);
		ret = kp_site_sync(s);
		if (ret)
			goto undo_post;
	}
	/* Fully set up before the hit path can see it. */
	list_add_tail_rcu(&p->list, &s->probes);
	ret = kp_site_sync(s);
	if (!ret)
		return 0;

	/* Not armed: undo, leaving no trace of @p. */
	list_del_rcu(&p->list);
	kp_site_set_fast(s);
	WRITE_ONCE(p->hit_gen, 0);
undo_post:
	if (p->post_handler) {
		WRITE_ONCE(s->nr_post, s->nr_post - 1);
		kp_site_sync(s);
	}
	p->site = NULL;
	if (kp_site_release_if_empty(s)) {
		synchronize_rcu();
		kp_site_free(s);
	}
	return ret;
}

/*
 * Take @p off its site, disarming the site (or queueing that, in a batch)
 * when nothing enabled is left.  The site stays hashed.
 */
static void kp_detach(struct kprobe_site *s, struct kprobe *p)
{
	lockdep_assert_held(&kprobe_mutex);
	list_del_rcu(&p->list);
	if (p->post_handler)
		WRITE_ONCE(s->nr_post, s->nr_post - 1);
	kp_site_sync(s);
}

/* ------------------------------------------------------------------ */
/* Registration.                                                        */
/* ------------------------------------------------------------------ */

static int kp_register_locked(struct kprobe *p)
{
	bool on_func_entry = false;
	kprobe_opcode_t *addr;
	struct module *mod;
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	addr = kprobe_resolve(p->addr, p->symbol_name, p->offset, &on_func_entry);
	if (IS_ERR(addr))
		return PTR_ERR(addr);

	p->addr = addr;
	if (kprobe_site_of(p))
		return -EINVAL;		/* this very struct is registered */

	ret = kp_check_text(addr, &mod);
	if (ret)
		return ret;

	p->flags &= KPROBE_FLAG_DISABLED;
	if (on_func_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	p->nmissed = 0;
	p->hit_gen = 0;		/* not listed yet: kp_site_stamp() sets it */
	p->nhit = alloc_percpu(unsigned long);
	if (!p->nhit) {
		ret = -ENOMEM;
		goto out_put;
	}
	INIT_LIST_HEAD(&p->list);
	ret = kp_attach(p, addr);
	if (ret) {
		free_percpu(p->nhit);
		p->nhit = NULL;
	}
out_put:
	module_put(mod);
	return ret;
}

static int kp_register_one(struct kprobe *p)
{
	int ret;

	if (!kprobes_ready)
		return -EBUSY;
	mutex_lock(&kprobe_mutex);
	ret = kp_register_locked(p);
	mutex_unlock(&kprobe_mutex);
	return ret;
}

/**
 * register_kprobe() - put a probe on a kernel instruction
 * @p: the probe; set either @p->addr or @p->symbol_name (plus @p->offset),
 *	the handlers, and optionally KPROBE_FLAG_DISABLED in @p->flags
 *
 * Return: 0 when the probe is in place, or -EINVAL (both or neither of addr
 * and symbol_name, not probeable text, blacklisted, an instruction that
 * cannot be probed, @p already registered), -ENOENT (unknown symbol, module
 * going), -EILSEQ (not on an instruction boundary), -ENOMEM.
 */
int register_kprobe(struct kprobe *p)
{
	int ret = kp_register_one(p);

	if (ret)
		pr_debug("probe at %s%s+%#x refused: %d\n",
			 p->symbol_name ?: "", p->symbol_name ? "" : "address",
			 p->offset, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kprobe);

/* Second half, after a grace period: nothing can be using @p any more. */
static void kp_unregister_finish(struct kprobe *p)
{
	INIT_LIST_HEAD(&p->list);
	free_percpu(p->nhit);
	p->nhit = NULL;
	p->site = NULL;
	p->flags &= ~KPROBE_FLAG_OPTIMIZED;
}

/*
 * First half of unregistering @num probes, under kprobe_mutex and in a
 * batch: take them off their sites, disarm in one pass what is left
 * without an enabled probe, then unhash the sites left empty (onto
 * @dead).  Probes that are not registered get their addr cleared.  No
 * handler of theirs can start once this returns; one may still be running
 * until a grace period has passed.
 */
static void kp_unregister_locked(struct kprobe **kps, int num,
				 struct list_head *dead)
{
	struct kprobe_site *s;
	int i;

	lockdep_assert_held(&kprobe_mutex);
	for (i = 0; i < num; i++) {
		s = kprobe_site_of(kps[i]);
		if (!s) {
			/* Not registered: say so, as the API promises. */
			kps[i]->addr = NULL;
			continue;
		}
		kp_detach(s, kps[i]);
		kretprobe_detach(kps[i]);
	}
	kp_batch_flush();
	for (i = 0; i < num; i++) {
		if (!kps[i]->addr)
			continue;
		s = kps[i]->site;
		/* Several probes of the batch may share it. */
		if (!hlist_unhashed(&s->hash) && kp_site_release_if_empty(s))
			list_add(&s->reap, dead);
	}
}

/* Second half, after the grace period. */
static void kp_unregister_done(struct kprobe **kps, int num,
			       struct list_head *dead)
{
	struct kprobe_site *s, *tmp;
	int i;

	for (i = 0; i < num; i++) {
		if (!kps[i]->addr)
			continue;
		kretprobe_retire(kps[i]);
		kp_unregister_finish(kps[i]);
	}
	list_for_each_entry_safe(s, tmp, dead, reap)
		kp_site_free(s);
}

/* Unregister @num probes: one text-patching pass, one grace period. */
void kprobe_unregister_many(struct kprobe **kps, int num)
{
	LIST_HEAD(dead);

	if (num <= 0)
		return;

	mutex_lock(&kprobe_mutex);
	kp_batch_begin();
	kp_unregister_locked(kps, num, &dead);
	kp_batch_end();
	mutex_unlock(&kprobe_mutex);

	synchronize_rcu();
	kp_unregister_done(kps, num, &dead);
}

/*
 * Register @num probes in one batch: every site is prepared and every
 * probe is on its site's list before the first int3 is written, and all
 * are written in one pass.  On a failure the probes registered so far
 * are taken off again before their int3s were ever written (the queued
 * arms cancel out), so nothing of the batch stays and, at a new site, no
 * CPU ever ran one of its handlers.
 */
int kprobe_register_many(struct kprobe **kps, int num)
{
	LIST_HEAD(dead);
	int i, ret = 0;

	if (num <= 0)
		return -EINVAL;
	if (!kprobes_ready)
		return -EBUSY;

	mutex_lock(&kprobe_mutex);
	kp_batch_begin();
	for (i = 0; i < num; i++) {
		ret = kp_register_locked(kps[i]);
		if (ret)
			break;
		/* Long batches: let others run (kprobe_mutex is a mutex). */
		cond_resched();
	}
	if (!ret) {
		/* ftrace may refuse the hooks now: then undo the lot. */
		ret = kp_batch_flush();
		if (ret)
			i = num;
	}
	if (ret)
		kp_unregister_locked(kps, i, &dead);
	kp_batch_end();
	mutex_unlock(&kprobe_mutex);

	if (ret) {
		/* A probe joining an armed site may have fired meanwhile. */
		synchronize_rcu();
		kp_unregister_done(kps, i, &dead);
		pr_debug("batch of %d refused at probe %d: %d\n", num, i, ret);
	}
	return ret;
}

/**
 * unregister_kprobe() - remove a probe
 * @p: a probe registered with register_kprobe()
 *
 * When it returns, no handler of @p runs any more and @p may be freed.
 * A probe that is not registered gets its addr cleared, nothing else.
 */
void unregister_kprobe(struct kprobe *p)
{
	kprobe_unregister_many(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kprobe);

/**
 * unregister_kprobes() - remove several probes, waiting only once
 * @kps: the probes
 * @num: how many
 */
void unregister_kprobes(struct kprobe **kps, int num)
{
	kprobe_unregister_many(kps, num);
}
EXPORT_SYMBOL_GPL(unregister_kprobes);

/**
 * register_kprobes() - register several probes, all or none
 * @kps: the probes
 * @num: how many
 *
 * All are armed in one text-patching pass; a hit meanwhile finds each of
 * them either not armed yet or fully in place.
 *
 * Return: 0, or the error of the first probe that failed, in which case
 * none of them is registered.
 */
int register_kprobes(struct kprobe **kps, int num)
{
	return kprobe_register_many(kps, num);
}
EXPORT_SYMBOL_GPL(register_kprobes);

/**
 * disable_kprobe() - stop a probe's handlers without unregistering it
 * @kp: a registered probe
 *
 * Return: 0, or -EINVAL when @kp is not registered.
 */
int disable_kprobe(struct kprobe *kp)
{
	struct kprobe_site *s;
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	s = kprobe_site_of(kp);
	if (s) {
		kp->flags |= KPROBE_FLAG_DISABLED;
		ret = kp_site_sync(s);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&kprobe_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(disable_kprobe);

/**
 * enable_kprobe() - let a disabled probe's handlers run again
 * @kp: a registered probe
 *
 * Return: 0, -EINVAL when @kp is not registered or its text is gone, or
 * ftrace's error when it cannot hook the site (@kp stays disabled).
 */
int enable_kprobe(struct kprobe *kp)
{
	struct kprobe_site *s;
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	s = kprobe_site_of(kp);
	if (s && !kprobe_gone(kp)) {
		kp->flags &= ~KPROBE_FLAG_DISABLED;
		ret = kp_site_sync(s);
		if (ret)
			kp->flags |= KPROBE_FLAG_DISABLED;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&kprobe_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(enable_kprobe);

/* Enable or disable @num probes under kprobe_mutex, in one batch. */
static int kp_toggle_many(struct kprobe **kps, int num, bool enable)
{
	struct kprobe_site *s;
	int i, ret, first = 0;

	if (num <= 0)
		return -EINVAL;
	mutex_lock(&kprobe_mutex);
	kp_batch_begin();
	for (i = 0; i < num; i++) {
		s = kprobe_site_of(kps[i]);
		if (!s || (enable && kprobe_gone(kps[i]))) {
			ret = -EINVAL;
		} else if (enable) {
			kps[i]->flags &= ~KPROBE_FLAG_DISABLED;
			ret = kp_site_sync(s);
			if (ret)
				kps[i]->flags |= KPROBE_FLAG_DISABLED;
		} else {
			kps[i]->flags |= KPROBE_FLAG_DISABLED;
			ret = kp_site_sync(s);
		}
		if (ret && !first)
			first = ret;
	}
	ret = kp_batch_end();
	if (ret && enable) {
		/* What ftrace would not hook stays disabled, as one by one. */
		for (i = 0; i < num; i++) {
			s = kprobe_site_of(kps[i]);
			if (s && !s->armed && !kprobe_disabled(kps[i]) &&
			    kp_site_wants_arming(s)) {
				kps[i]->flags |= KPROBE_FLAG_DISABLED;
				first = first ?: ret;
			}
		}
	}
	mutex_unlock(&kprobe_mutex);
	return first;
}

/**
 * enable_kprobes() - enable several probes in one text-patching pass
 * @kps: registered probes
 * @num: how many
 *
 * Our extension: enable_kprobe() on each of them, with every breakpoint
 * written in one pass.  A probe that cannot be enabled stays disabled and
 * does not stop the others.
 *
 * Return: 0, or the first error enable_kprobe() would have returned.
 */
int enable_kprobes(struct kprobe **kps, int num)
{
	return kp_toggle_many(kps, num, true);
}
EXPORT_SYMBOL_GPL(enable_kprobes);

/**
 * disable_kprobes() - disable several probes in one text-patching pass
 * @kps: registered probes
 * @num: how many
 *
 * Our extension: disable_kprobe() on each of them, with every breakpoint
 * removed in one pass.  As with disable_kprobe(), a handler that already
 * started may still be running when it returns.
 *
 * Return: 0, or -EINVAL when one of them is not registered (the others
 * are disabled all the same).
 */
int disable_kprobes(struct kprobe **kps, int num)
{
	return kp_toggle_many(kps, num, false);
}
EXPORT_SYMBOL_GPL(disable_kprobes);

/**
 * get_kprobe() - the first probe registered at an address
 * @addr: the address
 *
 * On an architecture served per probe (CONFIG_KPROBES_PER_PROBE), the
 * kprobe the architecture prepared for the site instead: its trap calls
 * this and runs that kprobe's handlers, which run the site's probes.
 *
 * Call with preemption disabled; the probe is only valid until it is
 * enabled again.  Return: the probe, or NULL.
 */
struct kprobe *get_kprobe(void *addr)
{
	struct kprobe_site *s = kprobe_site_lookup((unsigned long)addr);

	if (!s)
		return NULL;
	/* A per-probe architecture's trap wants the kprobe it prepared. */
	if (IS_ENABLED(CONFIG_KPROBES_PER_PROBE))
		return kprobe_site_arch_probe(s);
	return list_first_or_null_rcu(&s->probes, struct kprobe, list);
}
NOKPROBE_SYMBOL(get_kprobe);

/**
 * dump_kprobe() - print what is known of a probe, for oops reports
 * @kp: the probe
 */
void dump_kprobe(struct kprobe *kp)
{
	pr_err("Dumping kprobe:\n");
	pr_err("Name: %s\nOffset: %x\nAddress: %pS\n",
	       kp->symbol_name, kp->offset, kp->addr);
}
NOKPROBE_SYMBOL(dump_kprobe);

/* ------------------------------------------------------------------ */
/* Without return probes (kretprobes.c), callers are told so.        */
/* ------------------------------------------------------------------ */

#ifndef CONFIG_KRETPROBES

int register_kretprobe(struct kretprobe *rp)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(register_kretprobe);

int register_kretprobes(struct kretprobe **rps, int num)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(register_kretprobes);

void unregister_kretprobe(struct kretprobe *rp)
{
}
EXPORT_SYMBOL_GPL(unregister_kretprobe);

void unregister_kretprobes(struct kretprobe **rps, int num)
{
}
EXPORT_SYMBOL_GPL(unregister_kretprobes);

#endif /* CONFIG_KRETPROBES */

/* ------------------------------------------------------------------ */
/* Text that goes away: module unload (kprobes_module.c), init text.   */
/* ------------------------------------------------------------------ */

/*
 * The text under @s is going: its probes stay registered, marked gone.
 * With @restore the text is still mapped and @s's instruction is written
 * back first, while the site can still be found, so that nothing of ours
 * outlives it in memory that is about to be reused: a CPU that kept a
 * copy of the old bytes (QEMU's translated code, seen on s390x when a
 * module was loaded again at the same address) would otherwise run our
 * breakpoint in the next module's text, where no site claims it.
 * Without @restore (the kernel's init text, no longer ours to write once
 * freeing has begun) the breakpoint is left alone.
 */
static void kp_site_kill(struct kprobe_site *s, bool restore)
{
	struct kprobe *p;

	lockdep_assert_held(&kprobe_mutex);
	/* ftrace is still tracking the site: take our hook out of it. */
	if (s->ftrace && s->armed && !kprobe_ftrace_disarm(s))
		s->armed = false;
	if (restore && !s->ftrace && s->armed) {
		kprobe_opt_stop(s);	/* the jump sits in front */
		kp_poke_one(s, false);
	}
	kprobe_opt_forget(s);
	WRITE_ONCE(s->gone, true);
	s->armed = false;
	list_for_each_entry(p, &s->probes, list)
		p->flags |= KPROBE_FLAG_GONE;
	kp_site_publish(s);
}

void kprobe_kill_range(bool (*going)(unsigned long addr, void *arg),
		       void *arg, bool restore)
{
	struct kprobe_site *s;
	unsigned int b;

	lockdep_assert_held(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++)
		hlist_for_each_entry(s, &kprobe_sites[b], hash)
			if (!s->gone && going((unsigned long)s->addr, arg))
				kp_site_kill(s, restore);
}

static bool kp_in_kernel_init(unsigned long addr, void *unused)
{
	return is_kernel_inittext(addr);
}

/**
 * kprobe_free_init_mem() - the kernel's init text is about to be freed
 */
void kprobe_free_init_mem(void)
{
	mutex_lock(&kprobe_mutex);
	kprobe_kill_range(kp_in_kernel_init, NULL, false);
	mutex_unlock(&kprobe_mutex);
}

/* ------------------------------------------------------------------ */
/* Every site at once: debugfs "enabled".                              */
/* ------------------------------------------------------------------ */

/* Sites ftrace would not (un)hook stay as they were and are counted. */
int kprobe_arm_all(bool disarmed)
{
	struct kprobe_site *s;
	unsigned int b, failed = 0;

	mutex_lock(&kprobe_mutex);
	if (kprobes_all_disarmed != disarmed) {
		kprobes_all_disarmed = disarmed;
		kp_batch_begin();
		for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++)
			hlist_for_each_entry(s, &kprobe_sites[b], hash)
				if (kp_site_sync(s))
					failed++;
		if (kp_batch_end())
			for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++)
				hlist_for_each_entry(s, &kprobe_sites[b], hash)
					if (s->armed != kp_site_wants_arming(s))
						failed++;
		pr_info("kprobes globally %s\n", disarmed ? "disarmed" : "armed");
	}
	mutex_unlock(&kprobe_mutex);
	wprobe_arm_all(disarmed);	/* watchpoint probes too */
	if (failed)
		pr_warn("%u probe sites could not be %s\n", failed,
			disarmed ? "disarmed" : "armed");
	return failed ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Start-up.                                                            */
/* ------------------------------------------------------------------ */

static int __init init_kprobes(void)
{
	int ret;

	/* Without a full blacklist, the architecture's checks still hold. */
	ret = kprobe_blacklist_init();
	if (ret)
		pr_warn("the blacklist is incomplete (%d)\n", ret);
	ret = kprobe_modules_init();
	if (ret)
		return ret;
	/*
	 * Open before the architecture's set-up, which may register probes
	 * of its own (powerpc's on its return trampoline).  An early
	 * initcall runs before the other CPUs are up: nobody else can see
	 * the window.
	 */
	kprobes_ready = true;
	ret = arch_init_kprobes();
	if (ret) {
		kprobes_ready = false;
		pr_err("architecture set-up failed (%d); kprobes disabled\n",
		       ret);
	}
	return ret;
}
early_initcall(init_kprobes);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic kprobes core.
 *
 * Probe table.  Every probed address has one struct kprobe_site, found in
 * kp_sites[] by hashing the address.  A site owns the breakpoint and the
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
 * kprobe_site_post().  current_kprobe is non-NULL on a CPU for the whole of
 * that; a probe hit meanwhile runs no handler and counts as missed.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/debugfs.h>
#include <linux/execmem.h>
#include <linux/extable.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleloader.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/set_memory.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/static_call.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/sections.h>

#include "kprobes_internal.h"

DEFINE_MUTEX(kprobe_mutex);
struct hlist_head kprobe_sites[1 << KP_HASH_BITS];
static bool kprobes_all_disarmed;		/* debugfs "enabled" is 0 */
static bool kprobes_ready;			/* init_kprobes() has run */

DEFINE_PER_CPU(struct kprobe *, current_kprobe);
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);
DEFINE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

/* What current_kprobe points at while kprobes itself is busy on a CPU. */
static struct kprobe kprobe_busy = {
	.addr = (kprobe_opcode_t *)&kprobe_busy_begin,
};

static struct hlist_head *kp_bucket(const void *addr)
{
	return &kprobe_sites[hash_ptr(addr, KP_HASH_BITS)];
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

/**
 * kprobe_site_pre() - run the pre handlers of a site that was hit
 * @s: the site
 * @regs: the registers at the hit
 *
 * Leaves current_kprobe non-NULL.  Return: 1 when a handler changed
 * regs->ip and asks for the instruction to be skipped (the remaining
 * handlers do not run), 0 otherwise.
 */
int kprobe_site_pre(struct kprobe_site *s, struct pt_regs *regs)
{
	struct kprobe *p;

	__this_cpu_write(current_kprobe, &kprobe_busy);
	/* Only now: callers may run with interrupts on (see opt.c). */
	barrier();
	get_kprobe_ctlblk()->kprobe_status = KPROBE_HIT_ACTIVE;
	list_for_each_entry_rcu(p, &s->probes, list) {
		if (kprobe_disabled(p))
			continue;
		/* Set before the probe is listed, freed after it is gone. */
		this_cpu_inc(*p->nhit);
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
 */
void kprobe_site_post(struct kprobe_site *s, struct pt_regs *regs)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &s->probes, list) {
		if (!p->post_handler || kprobe_disabled(p))
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
/* Out-of-line slots.                                                   */
/* ------------------------------------------------------------------ */

#ifdef __ARCH_WANT_KPROBES_INSN_SLOT

/* Every cache's slots are at least this big; it sizes the page bitmaps. */
#define KP_SLOTS_PER_PAGE	(PAGE_SIZE / KPROBE_INSN_SLOT_SIZE)

/*
 * Slots of one size: out-of-line copies, or (with jump optimization)
 * detour buffers.  Pages are allocated near the kernel text (so that
 * RIP-relative operands and rel32 jumps reach) and mapped read-only and
 * executable; the architecture writes slots with its text patching.  Each
 * page is listed in /proc/kallsyms under the cache's name.
 */
struct kp_slot_cache {
	const char		*name;
	unsigned int		size;
	struct list_head	pages;		/* RCU */
	struct work_struct	reclaim;
};

struct kp_slot_page {
	struct list_head	list;		/* kp_slot_cache.pages */
	kprobe_opcode_t		*base;
	unsigned int		nr_used;
	DECLARE_BITMAP(used, KP_SLOTS_PER_PAGE);
	/* Freed, but a preempted task may still be inside: not reusable. */
	DECLARE_BITMAP(dirty, KP_SLOTS_PER_PAGE);
	/* Dirty slots whose RCU-tasks grace period is running. */
	DECLARE_BITMAP(reaping, KP_SLOTS_PER_PAGE);
	struct rcu_work		free_work;
};

/* One lock for all caches: slots are taken and given back rarely. */
static DEFINE_MUTEX(kp_slot_mutex);

static void kp_slot_reclaim(struct work_struct *work);

#define KP_SLOT_CACHE(var, sym, sz)					\
	struct kp_slot_cache var = {					\
		.name = sym,						\
		.size = sz,						\
		.pages = LIST_HEAD_INIT(var.pages),			\
		.reclaim = __WORK_INITIALIZER(var.reclaim, kp_slot_reclaim), \
	}

static KP_SLOT_CACHE(kp_insn_slots, "kprobe_insn_page", KPROBE_INSN_SLOT_SIZE);
#ifdef CONFIG_OPTPROBES
static_assert(KPROBE_OPTINSN_SLOT_SIZE >= KPROBE_INSN_SLOT_SIZE);
static KP_SLOT_CACHE(kp_optinsn_slots, "kprobe_optinsn_page",
		     KPROBE_OPTINSN_SLOT_SIZE);
#endif

static struct kp_slot_cache *const kp_slot_caches[] = {
	&kp_insn_slots,
#ifdef CONFIG_OPTPROBES
	&kp_optinsn_slots,
#endif
};

static unsigned int kp_slots_per_page(struct kp_slot_cache *c)
{
	return PAGE_SIZE / c->size;
}

static struct kp_slot_page *kp_slot_page_new(struct kp_slot_cache *c)
{
	struct kp_slot_page *pg = kzalloc(sizeof(*pg), GFP_KERNEL);

	if (!pg)
		return NULL;
	pg->base = execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
	if (!pg->base) {
		kfree(pg);
		return NULL;
	}
	/* Anything that jumps into an unused slot traps. */
	memset(pg->base, INT3_INSN_OPCODE, PAGE_SIZE);
	set_memory_rox((unsigned long)pg->base, 1);
	list_add_rcu(&pg->list, &c->pages);
	return pg;
}

static void kp_slot_page_free(struct work_struct *work)
{
	struct kp_slot_page *pg = container_of(to_rcu_work(work),
					       struct kp_slot_page, free_work);

	execmem_free(pg->base);
	kfree(pg);
}

static kprobe_opcode_t *kp_slot_get(struct kp_slot_cache *c)
{
	unsigned int i, n = kp_slots_per_page(c);
	kprobe_opcode_t *slot = NULL;
	struct kp_slot_page *pg;

	mutex_lock(&kp_slot_mutex);
	list_for_each_entry(pg, &c->pages, list)
		if (pg->nr_used < n)
			goto found;
	pg = kp_slot_page_new(c);
	if (!pg)
		goto out;
found:
	i = find_first_zero_bit(pg->used, n);
	__set_bit(i, pg->used);
	pg->nr_used++;
	slot = pg->base + i * c->size;
out:
	mutex_unlock(&kp_slot_mutex);
	return slot;
}

/* Under kp_slot_mutex: the slot at index @i of @pg is free again. */
static void kp_slot_put(struct kp_slot_page *pg, unsigned int i)
{
	WARN_ON(!__test_and_clear_bit(i, pg->used));
	if (--pg->nr_used)
		return;
	list_del_rcu(&pg->list);
	INIT_RCU_WORK(&pg->free_work, kp_slot_page_free);
	queue_rcu_work(system_wq, &pg->free_work);
}

/*
 * Dirty slots: code running there with interrupts on (a boosted copy, a
 * detour buffer) may have been preempted, and a preempted task only leaves
 * once it runs again.  An RCU-tasks grace period waits for every such task.
 */
static void kp_slot_reclaim(struct work_struct *work)
{
	struct kp_slot_cache *c = container_of(work, struct kp_slot_cache,
					       reclaim);
	unsigned int i, n = kp_slots_per_page(c);
	struct kp_slot_page *pg, *tmp;

	/* Only what was dirty before the grace period began. */
	mutex_lock(&kp_slot_mutex);
	list_for_each_entry(pg, &c->pages, list) {
		bitmap_or(pg->reaping, pg->reaping, pg->dirty, n);
		bitmap_zero(pg->dirty, n);
	}
	mutex_unlock(&kp_slot_mutex);

	synchronize_rcu_tasks();

	mutex_lock(&kp_slot_mutex);
	list_for_each_entry_safe(pg, tmp, &c->pages, list) {
		for_each_set_bit(i, pg->reaping, n) {
			__clear_bit(i, pg->reaping);
			kp_slot_put(pg, i);
		}
	}
	mutex_unlock(&kp_slot_mutex);
}

static void kp_slot_free(struct kp_slot_cache *c, kprobe_opcode_t *slot,
			 int dirty)
{
	struct kp_slot_page *pg;
	unsigned long off;

	mutex_lock(&kp_slot_mutex);
	list_for_each_entry(pg, &c->pages, list) {
		off = slot - pg->base;
		if (slot < pg->base || off >= PAGE_SIZE)
			continue;
		if (dirty) {
			__set_bit(off / c->size, pg->dirty);
			schedule_work(&c->reclaim);
		} else {
			kp_slot_put(pg, off / c->size);
		}
		break;
	}
	mutex_unlock(&kp_slot_mutex);
}

/* Safe in any context; the unwinders and kernel_text_address() use it. */
static bool kp_slot_owns(struct kp_slot_cache *c, unsigned long addr)
{
	struct kp_slot_page *pg;
	bool ret = false;

	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(pg, &c->pages, list) {
		if (addr >= (unsigned long)pg->base &&
		    addr < (unsigned long)pg->base + PAGE_SIZE) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock_sched_notrace();
	return ret;
}
NOKPROBE_SYMBOL(kp_slot_owns);

/**
 * get_insn_slot() - take a slot for an out-of-line copy
 *
 * Return: the slot (its bytes are int3 until written), or NULL.
 */
kprobe_opcode_t *get_insn_slot(void)
{
	return kp_slot_get(&kp_insn_slots);
}

/**
 * free_insn_slot() - give a slot back
 * @slot: from get_insn_slot()
 * @dirty: a preempted task may still be running the slot's code; it is
 *	reused only after an RCU-tasks grace period
 *
 * The caller has already waited until no CPU runs the slot with interrupts
 * off.  An emptied page is unmapped after a grace period, as
 * is_kprobe_insn_slot() may be looking at it.
 */
void free_insn_slot(kprobe_opcode_t *slot, int dirty)
{
	kp_slot_free(&kp_insn_slots, slot, dirty);
}

/**
 * is_kprobe_insn_slot() - is an address inside a page of out-of-line copies?
 * @addr: any address
 *
 * Return: true if so.  Safe in any context.
 */
bool is_kprobe_insn_slot(unsigned long addr)
{
	return kp_slot_owns(&kp_insn_slots, addr);
}
NOKPROBE_SYMBOL(is_kprobe_insn_slot);

#ifdef CONFIG_OPTPROBES
/**
 * get_optinsn_slot() - take a slot for a detour buffer
 *
 * Return: the slot (KPROBE_OPTINSN_SLOT_SIZE bytes of int3), or NULL.
 */
kprobe_opcode_t *get_optinsn_slot(void)
{
	return kp_slot_get(&kp_optinsn_slots);
}

/**
 * free_optinsn_slot() - give a detour buffer back
 * @slot: from get_optinsn_slot()
 * @dirty: as for free_insn_slot()
 */
void free_optinsn_slot(kprobe_opcode_t *slot, int dirty)
{
	kp_slot_free(&kp_optinsn_slots, slot, dirty);
}

/**
 * is_kprobe_optinsn_slot() - is an address inside a page of detour buffers?
 * @addr: any address
 *
 * Return: true if so.  Safe in any context.
 */
bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return kp_slot_owns(&kp_optinsn_slots, addr);
}
NOKPROBE_SYMBOL(is_kprobe_optinsn_slot);
#endif

/**
 * kprobe_get_kallsym() - describe the @symnum'th slot page for kallsyms
 * @symnum: index among kprobes' symbols
 * @value: its address
 * @type: its kallsyms type
 * @sym: its name, at least KSYM_NAME_LEN bytes
 *
 * Return: 0, or -ERANGE past the last page.
 */
int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym)
{
	struct kp_slot_page *pg;
	int i, ret = -ERANGE;

	mutex_lock(&kp_slot_mutex);
	for (i = 0; i < ARRAY_SIZE(kp_slot_caches); i++) {
		list_for_each_entry(pg, &kp_slot_caches[i]->pages, list) {
			if (symnum--)
				continue;
			*value = (unsigned long)pg->base;
			*type = 't';
			strscpy(sym, kp_slot_caches[i]->name, KSYM_NAME_LEN);
			ret = 0;
			goto out;
		}
	}
out:
	mutex_unlock(&kp_slot_mutex);
	return ret;
}

#else /* !__ARCH_WANT_KPROBES_INSN_SLOT */

int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym)
{
	return -ERANGE;
}

#endif /* __ARCH_WANT_KPROBES_INSN_SLOT */

/* ------------------------------------------------------------------ */
/* The blacklist: code that must never be probed.                      */
/* ------------------------------------------------------------------ */

/* Written under kprobe_mutex (or at boot), read under RCU. */
static LIST_HEAD(kprobe_blacklist);

/**
 * kprobe_add_ksym_blacklist() - refuse probes in the function at @entry
 * @entry: an address inside a kernel or module function
 *
 * Return: the function's size, or -EINVAL when @entry is not in a known
 * function, -ENOMEM.
 */
int kprobe_add_ksym_blacklist(unsigned long entry)
{
	struct kprobe_blacklist_entry *ent;
	unsigned long size, offset;

	if (!kernel_text_address(entry) ||
	    !kallsyms_lookup_size_offset(entry, &size, &offset) || !size)
		return -EINVAL;

	ent = kmalloc(sizeof(*ent), GFP_KERNEL);
	if (!ent)
		return -ENOMEM;
	ent->start_addr = entry - offset;
	ent->end_addr = ent->start_addr + size;
	list_add_tail_rcu(&ent->list, &kprobe_blacklist);
	return size;
}

/**
 * kprobe_add_area_blacklist() - refuse probes in every function of a range
 * @start: first address
 * @end: address after the range
 *
 * One entry per function, so that the debugfs list names them.
 * Return: 0 or a negative errno.
 */
int kprobe_add_area_blacklist(unsigned long start, unsigned long end)
{
	unsigned long addr;
	int ret;

	for (addr = start; addr < end; addr += ret) {
		ret = kprobe_add_ksym_blacklist(addr);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static bool kp_listed(unsigned long addr)
{
	struct kprobe_blacklist_entry *ent;
	bool ret = false;

	if (arch_within_kprobe_blacklist(addr))
		return true;

	rcu_read_lock();
	list_for_each_entry_rcu(ent, &kprobe_blacklist, list) {
		if (addr >= ent->start_addr && addr < ent->end_addr) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

/**
 * within_kprobe_blacklist() - may no probe go at this address?
 * @addr: the address
 *
 * Copies the compiler made of a blacklisted function ("foo.isra.0",
 * "foo.cold") are refused too.
 */
bool within_kprobe_blacklist(unsigned long addr)
{
	char name[KSYM_NAME_LEN];
	unsigned long base;
	char *dot;

	if (kp_listed(addr))
		return true;

	if (lookup_symbol_name(addr, name))
		return false;
	dot = strchr(name, '.');
	if (!dot || dot == name)
		return false;
	*dot = '\0';
	base = kallsyms_lookup_name(name);
	return base && kp_listed(base);
}

#ifdef CONFIG_MODULES
static void kp_blacklist_module_add(struct module *mod)
{
	unsigned long start;
	unsigned int i;

	for (i = 0; i < mod->num_kprobe_blacklist; i++)
		kprobe_add_ksym_blacklist(mod->kprobe_blacklist[i]);

	start = (unsigned long)mod->kprobes_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->kprobes_text_size);
	start = (unsigned long)mod->noinstr_text_start;
	if (start)
		kprobe_add_area_blacklist(start, start + mod->noinstr_text_size);
}

static void kp_blacklist_module_remove(struct module *mod)
{
	struct kprobe_blacklist_entry *ent, *next;

	list_for_each_entry_safe(ent, next, &kprobe_blacklist, list) {
		if (!within_module(ent->start_addr, mod))
			continue;
		list_del_rcu(&ent->list);
		kfree_rcu(ent, rcu);
	}
}
#endif /* CONFIG_MODULES */

/* Add every entry it can; the first error, if any, is returned. */
static int __init kp_blacklist_init(void)
{
	unsigned long *entry;
	int ret, err = 0;

	for (entry = __start_kprobe_blacklist;
	     entry < __stop_kprobe_blacklist; entry++) {
		ret = kprobe_add_ksym_blacklist(*entry);
		/* -EINVAL: e.g. a symbol in discarded init code */
		if (ret < 0 && ret != -EINVAL && !err)
			err = ret;
	}
	ret = arch_populate_kprobe_blacklist();
	return err ?: ret;
}

/* ------------------------------------------------------------------ */
/* Where a probe goes, and whether it may go there.                    */
/* ------------------------------------------------------------------ */

/**
 * kprobe_lookup_name() - the address of a symbol
 * @name: "symbol" or "module:symbol"
 * @offset: unused; kept for callers of the historical interface
 *
 * Return: the address, or NULL.
 */
kprobe_opcode_t *kprobe_lookup_name(const char *name, unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

/*
 * The address a probe described by @addr or @sym, plus @offset, lands on,
 * with the architecture's say on function entries.
 */
static kprobe_opcode_t *kp_resolve(kprobe_opcode_t *addr, const char *sym,
				   unsigned long offset, bool *on_func_entry)
{
	unsigned long target, size, sym_off;

	if (!!addr == !!sym)
		return ERR_PTR(-EINVAL);
	if (sym) {
		addr = kprobe_lookup_name(sym, 0);
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
	kprobe_opcode_t *at = kp_resolve(addr, sym, offset, &on_entry);

	if (IS_ERR(at))
		return PTR_ERR(at);
	return on_entry ? 0 : -EINVAL;
}

/* The CFI and padding preambles in front of a function are not code. */
static bool kp_in_preamble(unsigned long addr)
{
	char name[KSYM_NAME_LEN];

	if (lookup_symbol_name(addr, name))
		return false;
	return str_has_prefix(name, "__cfi_") || str_has_prefix(name, "__pfx_");
}

#ifdef CONFIG_JUMP_LABEL
/*
 * The kernel's own jump entries, sorted by address, so that checking a
 * probe is a binary search instead of jump_label_text_reserved()'s walk
 * over every entry: that walk was the largest part of registering a
 * breakpoint probe (0.6 ms of 3.2 under TCG, twice with the optimizer's
 * check) and of a register_kprobes() per probe.  Built once at boot, before
 * kprobes_ready, and only read afterwards, so no lock: the entries of the
 * kernel proper never move or change address.  Init entries stay listed
 * after their text is freed; freed init text is not core_kernel_text(), so
 * such an address takes the slow path below, like module text does.
 */
static struct jump_entry **kp_jump_sorted __ro_after_init;
static unsigned int kp_jump_nr __ro_after_init;

/* No jump label instruction of any architecture is longer. */
#define KP_JUMP_MAX_LEN	16

static int __init kp_jump_cmp(const void *a, const void *b)
{
	unsigned long x = jump_entry_code(*(struct jump_entry * const *)a);
	unsigned long y = jump_entry_code(*(struct jump_entry * const *)b);

	return x < y ? -1 : x > y;
}

static void __init kp_jump_sort(void)
{
	unsigned int i, n = __stop___jump_table - __start___jump_table;
	struct jump_entry **v;

	if (!n)
		return;
	v = kvmalloc_array(n, sizeof(*v), GFP_KERNEL);
	if (!v)
		return;		/* jump_label_text_reserved() it is */
	for (i = 0; i < n; i++)
		v[i] = &__start___jump_table[i];
	sort(v, n, sizeof(*v), kp_jump_cmp, NULL);
	kp_jump_sorted = v;
	kp_jump_nr = n;
}

/**
 * kprobe_jump_label_reserved() - does a jump label sit in [@start, @end]?
 * @start: first byte
 * @end: last byte
 *
 * The answer of jump_label_text_reserved(), faster for the kernel proper.
 * Call with jump_label_lock() held when @start may be in a module.
 */
bool kprobe_jump_label_reserved(void *start, void *end)
{
	unsigned long a = (unsigned long)start, b = (unsigned long)end;
	unsigned int lo = 0, hi = kp_jump_nr, mid;
	struct jump_entry *j;

	if (!kp_jump_sorted || !core_kernel_text(a) || !core_kernel_text(b))
		return jump_label_text_reserved(start, end);
	/* The first entry that may reach @a. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (jump_entry_code(kp_jump_sorted[mid]) + KP_JUMP_MAX_LEN <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < kp_jump_nr; lo++) {
		j = kp_jump_sorted[lo];
		if (jump_entry_code(j) > b)
			break;
		if (jump_entry_code(j) + jump_entry_size(j) > a)
			return true;
	}
	return false;
}
#else
static void __init kp_jump_sort(void)
{
}

bool kprobe_jump_label_reserved(void *start, void *end)
{
	return jump_label_text_reserved(start, end);
}
#endif

/*
 * Is @addr text no probe may go into?  Places other subsystems rewrite at
 * run time, BUG()/WARN() sites, the blacklist, preambles.  Called with
 * jump_label_lock() held and preemption off.
 */
static bool kp_text_refused(kprobe_opcode_t *addr)
{
	unsigned long a = (unsigned long)addr;

	return in_gate_area_no_mm(a) || within_kprobe_blacklist(a) ||
	       kprobe_jump_label_reserved(addr, addr) ||
	       static_call_text_reserved(addr, addr) ||
	       find_bug(a) || kp_in_preamble(a);
}

#ifdef CONFIG_MODULES
/* Hold @mod while a probe at @a in it is set up: -ENOENT if @a is going. */
static int kp_module_hold(struct module *mod, unsigned long a)
{
	if (!try_module_get(mod))
		return -ENOENT;		/* on its way out */
	if (within_module_init(a, mod) && mod->state != MODULE_STATE_COMING) {
		module_put(mod);	/* init text is gone */
		return -ENOENT;
	}
	return 0;
}
#else
static int kp_module_hold(struct module *mod, unsigned long a)
{
	return -ENOENT;		/* no module text without modules */
}
#endif

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
	if (kp_text_refused(addr)) {
		ret = -EINVAL;
		goto out;
	}
	if (mod) {
		ret = kp_module_hold(mod, a);
		if (!ret)
			*modp = mod;
	}
out:
	preempt_enable();
	jump_label_unlock();
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sites on ftrace call sites: armed through an ftrace_ops filter.      */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_KPROBES_ON_FTRACE

bool kprobe_ftrace_disabled __read_mostly;

/*
 * Two ops: sites with a post handler go on the one that says it modifies
 * regs->ip (the handler sets it to after the call for the post handlers),
 * so that ftrace refuses them on a function another IPMODIFY user, such
 * as livepatch, owns; and refuses that user while they are there.  Each
 * ops is registered while it has an armed site.
 */
static struct kp_ftrace_hook {
	struct ftrace_ops ops;
	unsigned int armed;
} kp_ftrace_hooks[2] = {
	{ .ops = {
		.func	= kprobe_ftrace_handler,
		.flags	= FTRACE_OPS_FL_SAVE_REGS,
	} },
	{ .ops = {
		.func	= kprobe_ftrace_handler,
		.flags	= FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
		/* Which ops calls: the handler compares it with the site's. */
		.private = (void *)1UL,
	} },
};

static bool kp_is_ftrace_site(kprobe_opcode_t *addr)
{
	return ftrace_location((unsigned long)addr) == (unsigned long)addr;
}

/* Put @s's address into @h's filter, registering @h for the first one. */
static int kp_ftrace_hook_add(struct kp_ftrace_hook *h, struct kprobe_site *s)
{
	unsigned long ip = (unsigned long)s->addr;
	int ret;

	/* The filter first: registered with an empty one, it traces all. */
	ret = ftrace_set_filter_ip(&h->ops, ip, 0, 0);
	if (ret)
		return ret;
	if (!h->armed) {
		ret = register_ftrace_function(&h->ops);
		if (ret) {
			ftrace_set_filter_ip(&h->ops, ip, 1, 0);
			return ret;
		}
	}
	h->armed++;
	return 0;
}

static int kp_ftrace_hook_del(struct kp_ftrace_hook *h, struct kprobe_site *s)
{
	unsigned long ip = (unsigned long)s->addr;
	int ret;

	/* Unregister before the filter empties, for the same reason. */
	if (h->armed == 1) {
		ret = unregister_ftrace_function(&h->ops);
		if (ret) {
			pr_warn("cannot unhook ftrace ops: %d\n", ret);
			return ret;
		}
	}
	h->armed--;
	ret = ftrace_set_filter_ip(&h->ops, ip, 1, 0);
	if (ret)
		pr_warn("cannot drop ftrace site %pS from the filter: %d\n",
			s->addr, ret);
	return 0;
}

static int kp_ftrace_arm(struct kprobe_site *s)
{
	bool ipmodify = kprobe_site_has_post(s);
	int ret;

	if (kprobe_ftrace_disabled)
		return -ENODEV;
	ret = kp_ftrace_hook_add(&kp_ftrace_hooks[ipmodify], s);
	if (ret) {
		pr_warn("cannot hook ftrace site %pS: %d\n", s->addr, ret);
		return ret;
	}
	WRITE_ONCE(s->ftrace_ipmodify, ipmodify);
	return 0;
}

static int kp_ftrace_disarm(struct kprobe_site *s)
{
	return kp_ftrace_hook_del(&kp_ftrace_hooks[s->ftrace_ipmodify], s);
}

/*
 * An armed site moves to the other ops when it gains its first post
 * handler or loses its last.  The new ops is hooked before the old one is
 * unhooked, and the handler only acts on calls from the ops the site
 * names (kp_ftrace_ops_acts() in the handler), so no hit is lost or run
 * twice.
 */
static int kp_ftrace_rehook(struct kprobe_site *s)
{
	bool ipmodify = kprobe_site_has_post(s);
	int ret;

	if (s->ftrace_ipmodify == ipmodify)
		return 0;
	ret = kp_ftrace_hook_add(&kp_ftrace_hooks[ipmodify], s);
	if (ret)
		return ret;
	WRITE_ONCE(s->ftrace_ipmodify, ipmodify);
	kp_ftrace_hook_del(&kp_ftrace_hooks[!ipmodify], s);
	return 0;
}

/*
 * Batches (see kp_batch_begin()): ftrace sites whose hook must come or go,
 * by ops.  A queued site is hooked as !s->armed says, on the ops
 * s->ftrace_ipmodify names (for a queued arm: the one it will go on).
 */
static struct list_head kp_ft_to_arm[2] = {
	LIST_HEAD_INIT(kp_ft_to_arm[0]), LIST_HEAD_INIT(kp_ft_to_arm[1]),
};

static struct list_head kp_ft_to_disarm[2] = {
	LIST_HEAD_INIT(kp_ft_to_disarm[0]), LIST_HEAD_INIT(kp_ft_to_disarm[1]),
};

/* In a batch: queue @s's change to @want.  Return: a rehook's error. */
static int kp_ftrace_queue(struct kprobe_site *s, bool want)
{
	bool post = kprobe_site_has_post(s);

	if (list_empty(&s->poke)) {
		if (want && s->armed)
			return kp_ftrace_rehook(s);
		if (want == s->armed)
			return 0;
		if (want)
			WRITE_ONCE(s->ftrace_ipmodify, post);
		list_add_tail(&s->poke, want ?
			      &kp_ft_to_arm[s->ftrace_ipmodify] :
			      &kp_ft_to_disarm[s->ftrace_ipmodify]);
		s->armed = want;
		return 0;
	}
	if (want != s->armed) {
		/* Cancelled: back to what ftrace has, on the ops it has. */
		list_del_init(&s->poke);
		s->armed = want;
		return want ? kp_ftrace_rehook(s) : 0;
	}
	/* Still to be armed: on the ops its post handlers need by now. */
	if (want && s->ftrace_ipmodify != post) {
		WRITE_ONCE(s->ftrace_ipmodify, post);
		list_move_tail(&s->poke, &kp_ft_to_arm[post]);
	}
	return 0;
}

/* The addresses of the sites on @list (NULL if none or out of memory). */
static unsigned long *kp_ftrace_ips(struct list_head *list, unsigned int *n)
{
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int i = 0;

	*n = list_count_nodes(list);
	if (!*n)
		return NULL;
	ips = kvmalloc_array(*n, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return NULL;
	list_for_each_entry(s, list, poke)
		ips[i++] = (unsigned long)s->addr;
	return ips;
}

/* Unhook the queued sites of ops @ipm with one filter update. */
static void kp_ftrace_flush_disarm(int ipm)
{
	struct kp_ftrace_hook *h = &kp_ftrace_hooks[ipm];
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n;
	int ret;

	ips = kp_ftrace_ips(&kp_ft_to_disarm[ipm], &n);
	if (!n)
		return;
	if (!ips) {
		/* No memory for the array: one filter update per site. */
		list_for_each_entry(s, &kp_ft_to_disarm[ipm], poke)
			kp_ftrace_hook_del(h, s);
		return;
	}
	/* Unregister before the filter empties: it would trace all. */
	if (h->armed == n) {
		ret = unregister_ftrace_function(&h->ops);
		if (ret) {
			/* Left hooked; the handler finds no site there. */
			pr_warn("cannot unhook ftrace ops: %d\n", ret);
			kvfree(ips);
			return;
		}
	}
	h->armed -= n;
	ret = ftrace_set_filter_ips(&h->ops, ips, n, 1, 0);
	if (ret)
		pr_warn("cannot drop %u ftrace sites from the filter: %d\n",
			n, ret);
	kvfree(ips);
}

/*
 * Hook the queued sites of ops @ipm with one filter update.  When ftrace
 * refuses, none of them is hooked and each is marked disarmed.
 */
static int kp_ftrace_flush_arm(int ipm)
{
	struct kp_ftrace_hook *h = &kp_ftrace_hooks[ipm];
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n;
	int ret;

	ips = kp_ftrace_ips(&kp_ft_to_arm[ipm], &n);
	if (!n)
		return 0;
	if (kprobe_ftrace_disabled)
		ret = -ENODEV;
	else if (!ips)
		ret = -ENOMEM;
	else
		ret = ftrace_set_filter_ips(&h->ops, ips, n, 0, 0);
	if (!ret && !h->armed) {
		ret = register_ftrace_function(&h->ops);
		if (ret)
			ftrace_set_filter_ips(&h->ops, ips, n, 1, 0);
	}
	kvfree(ips);
	if (ret) {
		pr_warn("cannot hook %u ftrace sites: %d\n", n, ret);
		list_for_each_entry(s, &kp_ft_to_arm[ipm], poke)
			s->armed = false;
		return ret;
	}
	h->armed += n;
	return 0;
}

/* Write every queued ftrace change; the first error of the arms. */
static int kp_ftrace_flush(bool arm)
{
	struct kprobe_site *s, *tmp;
	int ipm, err, ret = 0;

	for (ipm = 0; ipm < 2; ipm++) {
		if (arm) {
			err = kp_ftrace_flush_arm(ipm);
			ret = ret ?: err;
		} else {
			kp_ftrace_flush_disarm(ipm);
		}
		list_for_each_entry_safe(s, tmp, arm ? &kp_ft_to_arm[ipm] :
					 &kp_ft_to_disarm[ipm], poke)
			list_del_init(&s->poke);
	}
	return ret;
}

/**
 * kprobe_ftrace_kill() - ftrace has shut down: stop using its call sites
 */
void kprobe_ftrace_kill(void)
{
	kprobe_ftrace_disabled = true;
}

#else /* !CONFIG_KPROBES_ON_FTRACE */

static bool kp_is_ftrace_site(kprobe_opcode_t *addr)
{
	return false;
}

static int kp_ftrace_arm(struct kprobe_site *s)
{
	return -ENODEV;
}

static int kp_ftrace_disarm(struct kprobe_site *s)
{
	return -ENODEV;
}

static int kp_ftrace_rehook(struct kprobe_site *s)
{
	return -ENODEV;
}

static int kp_ftrace_queue(struct kprobe_site *s, bool want)
{
	return -ENODEV;
}

static int kp_ftrace_flush(bool arm)
{
	return 0;
}

#endif /* CONFIG_KPROBES_ON_FTRACE */

/* ------------------------------------------------------------------ */
/* Sites: creation, arming, teardown.  All under kprobe_mutex.          */
/* ------------------------------------------------------------------ */

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
	kp_ftrace_flush(false);
	if (!list_empty(&kp_to_disarm))
		arch_disarm_kprobe_sites(&kp_to_disarm);
	ret = kp_ftrace_flush(true);
	if (!list_empty(&kp_to_arm))
		arch_arm_kprobe_sites(&kp_to_arm);
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

	if (kprobes_all_disarmed || s->gone)
		return false;
	list_for_each_entry(p, &s->probes, list)
		if (!kprobe_disabled(p))
			return true;
	return false;
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
	if (s->ftrace && kp_batching)
		return kp_ftrace_queue(s, want);
	if (s->ftrace && want && s->armed)
		return kp_ftrace_rehook(s);
	if (want != s->armed) {
		if (s->ftrace) {
			ret = want ? kp_ftrace_arm(s) : kp_ftrace_disarm(s);
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
			else if (want)
				arch_arm_kprobe_site(s);
			else
				arch_disarm_kprobe_site(s);
		}
		if (!ret)
			s->armed = want;
	}
	kprobe_opt_sync(s);
	return ret;
}

static struct kprobe_site *kp_site_new(kprobe_opcode_t *addr)
{
	struct kprobe_site *s = kzalloc(sizeof(*s), GFP_KERNEL);
	int ret;

	if (!s)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&s->probes);
	INIT_LIST_HEAD(&s->opt_list);
	INIT_LIST_HEAD(&s->poke);
	s->addr = addr;
	s->ftrace = kp_is_ftrace_site(addr);
	ret = s->ftrace ? 0 : arch_prepare_kprobe_site(s);
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
static struct kprobe_site *kp_site_of(struct kprobe *p)
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
	p->opcode = s->arch.opcode;
	p->ainsn.insn = s->arch.slot;
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
	addr = kp_resolve(p->addr, p->symbol_name, p->offset, &on_func_entry);
	if (IS_ERR(addr))
		return PTR_ERR(addr);

	p->addr = addr;
	if (kp_site_of(p))
		return -EINVAL;		/* this very struct is registered */

	ret = kp_check_text(addr, &mod);
	if (ret)
		return ret;

	p->flags &= KPROBE_FLAG_DISABLED;
	if (on_func_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	p->nmissed = 0;
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

#ifdef CONFIG_KRETPROBES
static void kp_kretprobe_detach(struct kprobe *p);
static void kp_kretprobe_retire(struct kprobe *p);
#else
static inline void kp_kretprobe_detach(struct kprobe *p) { }
static inline void kp_kretprobe_retire(struct kprobe *p) { }
#endif

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
		s = kp_site_of(kps[i]);
		if (!s) {
			/* Not registered: say so, as the API promises. */
			kps[i]->addr = NULL;
			continue;
		}
		kp_detach(s, kps[i]);
		kp_kretprobe_detach(kps[i]);
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
		kp_kretprobe_retire(kps[i]);
		kp_unregister_finish(kps[i]);
	}
	list_for_each_entry_safe(s, tmp, dead, reap)
		kp_site_free(s);
}

/* Unregister @num probes: one text-patching pass, one grace period. */
static void kp_unregister_many(struct kprobe **kps, int num)
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
static int kp_register_many(struct kprobe **kps, int num)
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
	kp_unregister_many(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kprobe);

/**
 * unregister_kprobes() - remove several probes, waiting only once
 * @kps: the probes
 * @num: how many
 */
void unregister_kprobes(struct kprobe **kps, int num)
{
	kp_unregister_many(kps, num);
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
	return kp_register_many(kps, num);
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
	s = kp_site_of(kp);
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
	s = kp_site_of(kp);
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
		s = kp_site_of(kps[i]);
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
			s = kp_site_of(kps[i]);
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
 * Call with preemption disabled; the probe is only valid until it is
 * enabled again.  Return: the probe, or NULL.
 */
struct kprobe *get_kprobe(void *addr)
{
	struct kprobe_site *s = kprobe_site_lookup((unsigned long)addr);

	return s ? list_first_or_null_rcu(&s->probes, struct kprobe, list) :
		   NULL;
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
/* Return probes.                                                       */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_KRETPROBES

static notrace int pre_handler_kretprobe(struct kprobe *p,
					 struct pt_regs *regs);

static bool kp_is_kretprobe(struct kprobe *p)
{
	return p->pre_handler == pre_handler_kretprobe;
}

static void kp_holder_free(struct rcu_head *head)
{
	struct kretprobe_holder *rph = container_of(head,
						    struct kretprobe_holder,
						    rcu);

	objpool_free(&rph->pool);
	kfree(rph);
}

/*
 * Drop @n references to the holder.  The last one may go in the return
 * trampoline, so the memory goes back after a grace period, not here.
 */
static void kp_holder_put(struct kretprobe_holder *rph, unsigned int n)
{
	if (refcount_sub_and_test(n, &rph->ref))
		call_rcu(&rph->rcu, kp_holder_free);
}
NOKPROBE_SYMBOL(kp_holder_put);

/* An instance is done with: back to the pool, or retired with its probe. */
static void kp_instance_recycle(struct kretprobe_instance *ri)
{
	struct kretprobe_holder *rph = ri->rph;

	ri->task = NULL;
	rcu_read_lock_sched_notrace();
	if (likely(!READ_ONCE(rph->dead)))
		objpool_push(ri, &rph->pool);
	else
		kp_holder_put(rph, 1);
	rcu_read_unlock_sched_notrace();
}
NOKPROBE_SYMBOL(kp_instance_recycle);

static nokprobe_inline void kp_count_rp_miss(struct kretprobe *rp)
{
	BUILD_BUG_ON(sizeof(rp->nmissed) != sizeof(atomic_t));
	atomic_inc((atomic_t *)&rp->nmissed);
}

/*
 * objpool_pop(), trying this CPU's slot first without masking interrupts:
 * the entry probe runs with preemption off, and taking from a slot is safe
 * against whatever an interrupt does to it meanwhile, as it is for the
 * other CPUs, which take from it the same way when theirs are empty.
 */
static nokprobe_inline void *kp_pool_get(struct objpool_head *pool)
{
	void *obj = __objpool_try_get_slot(pool, raw_smp_processor_id());

	return likely(obj) ? obj : objpool_pop(pool);
}

/*
 * The entry handler said no: the instance goes back.  Out of line, so that
 * the usual entry (no entry handler) saves fewer registers.
 */
static noinline bool kp_kretprobe_entry(struct kretprobe *rp,
					struct kretprobe_instance *ri,
					struct pt_regs *regs)
{
	if (!rp->entry_handler(ri, regs))
		return true;
	ri->task = NULL;
	objpool_push(ri, &ri->rph->pool);
	return false;
}
NOKPROBE_SYMBOL(kp_kretprobe_entry);

/*
 * The entry probe of every kretprobe: take an instance, hijack the return.
 * notrace, as the rest of the hit path: an instruction less per hit.
 */
static notrace int pre_handler_kretprobe(struct kprobe *p,
					 struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_holder *rph = READ_ONCE(rp->rph);
	struct kretprobe_instance *ri;

	if (unlikely(!rph))
		return 0;
	ri = kp_pool_get(&rph->pool);
	if (unlikely(!ri)) {
		kp_count_rp_miss(rp);
		return 0;
	}

	ri->task = current;
	if (unlikely(rp->entry_handler) && !kp_kretprobe_entry(rp, ri, regs))
		return 0;
	arch_prepare_kretprobe(ri, regs);
	/* Only this task touches its list: no atomics needed. */
	__llist_add(&ri->llist, &current->kretprobe_instances);
	return 0;
}
NOKPROBE_SYMBOL(pre_handler_kretprobe);

static nokprobe_inline struct kretprobe_instance *kp_ri(struct llist_node *n)
{
	return container_of(n, struct kretprobe_instance, llist);
}

/*
 * The first instance at or after @n that knows a real return address (the
 * others on the same frame hold the trampoline's, having been stacked on
 * top of another kretprobe of the same function).
 */
static struct llist_node *kp_next_real(struct llist_node *n)
{
	for (; n; n = n->next)
		if (!is_kretprobe_trampoline((unsigned long)kp_ri(n)->ret_addr))
			return n;
	return NULL;
}
NOKPROBE_SYMBOL(kp_next_real);

/**
 * kretprobe_find_ret_addr() - the real return address behind a trampoline
 * @tsk: the task whose stack is being walked (current, or not running)
 * @fp: the stack slot that holds the trampoline's address
 * @cur: the walker's cursor; set to the instance found, not needed to search
 *
 * Return: the address, or 0 when no pending return of @tsk is at @fp.
 */
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	struct llist_node *n;

	/* Pending returns are few: search from the newest every time. */
	for (n = kp_next_real(tsk->kretprobe_instances.first); n;
	     n = kp_next_real(n->next)) {
		if (kp_ri(n)->fp == fp) {
			*cur = n;
			return (unsigned long)kp_ri(n)->ret_addr;
		}
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kretprobe_find_ret_addr);
NOKPROBE_SYMBOL(kretprobe_find_ret_addr);

/*
 * Instances above @fp belong to frames that are gone without returning
 * through us: the "call count does not match return count" case.
 */
static void kp_drop_stale(void *fp)
{
	struct llist_head *head = &current->kretprobe_instances;
	struct kretprobe_instance *ri;

	while (head->first && kp_ri(head->first)->fp != fp &&
	       (unsigned long)kp_ri(head->first)->fp < (unsigned long)fp) {
		ri = kp_ri(head->first);
		pr_err("kretprobe BUG!: Processing kretprobe %p @ %pS\n",
		       ri, ri->ret_addr);
		head->first = head->first->next;
		kp_instance_recycle(ri);
	}
}
NOKPROBE_SYMBOL(kp_drop_stale);

static unsigned long kp_trampoline(struct pt_regs *regs, void *fp)
{
	struct llist_head *head = &current->kretprobe_instances;
	struct llist_node *n, *last, *next;
	kprobe_opcode_t *ret_addr;
	struct kretprobe *rp;

	kp_drop_stale(fp);
	last = kp_next_real(head->first);
	if (!last || kp_ri(last)->fp != fp) {
		pr_err("kretprobe: no pending return at %p for %s/%d\n",
		       fp, current->comm, task_pid_nr(current));
		BUG();
	}
	ret_addr = kp_ri(last)->ret_addr;

	/* Handlers and unwinders see where the function really returns. */
	instruction_pointer_set(regs, (unsigned long)ret_addr);
	arch_kretprobe_fixup_return(regs, ret_addr);

	for (n = head->first; ; n = n->next) {
		struct kretprobe_instance *ri = kp_ri(n);

		rp = get_kretprobe(ri);
		ri->ret_addr = ret_addr;
		/*
		 * Disabling stops new entries, not calls in flight: their
		 * return handlers still run, since users pair them with
		 * entry handlers.
		 */
		if (rp && rp->handler && !READ_ONCE(ri->rph->dead)) {
			__this_cpu_write(current_kprobe, &rp->kp);
			rp->handler(ri, regs);
			__this_cpu_write(current_kprobe, &kprobe_busy);
		}
		if (n == last)
			break;
	}

	/* Unlink this frame's instances, then give them back. */
	n = head->first;
	head->first = last->next;
	for (; ; n = next) {
		next = n->next;
		kp_instance_recycle(kp_ri(n));
		if (n == last)
			break;
	}
	return (unsigned long)ret_addr;
}
NOKPROBE_SYMBOL(kp_trampoline);

/*
 * The usual return: one instance on the frame, the newest of the task's,
 * holding the real return address (no stale ones above it, no second
 * kretprobe of the same function stacked on it).  What kp_trampoline()
 * does for that case, without its searches.  Preemption is off, so the
 * instance goes back to the pool without a read-side section of its own.
 */
static nokprobe_inline unsigned long
kp_trampoline_one(struct pt_regs *regs, struct kretprobe_instance *ri)
{
	struct kretprobe_holder *rph = ri->rph;
	unsigned long ret_addr = (unsigned long)ri->ret_addr;
	struct kretprobe *rp;

	instruction_pointer_set(regs, ret_addr);
	arch_kretprobe_fixup_return(regs, (kprobe_opcode_t *)ret_addr);
	rp = get_kretprobe(ri);
	if (rp && rp->handler && !READ_ONCE(rph->dead)) {
		__this_cpu_write(current_kprobe, &rp->kp);
		rp->handler(ri, regs);
	}
	current->kretprobe_instances.first = ri->llist.next;
	ri->task = NULL;
	if (likely(!READ_ONCE(rph->dead)))
		objpool_push(ri, &rph->pool);
	else
		kp_holder_put(rph, 1);
	return ret_addr;
}

/**
 * kretprobe_trampoline_handler() - a probed function returned
 * @regs: the registers at the return, as the trampoline saved them
 * @frame_pointer: the stack slot the return address was in
 *
 * Runs the return handlers of every kretprobe that caught this call.
 * Return: the address to return to.
 */
notrace unsigned long kretprobe_trampoline_handler(struct pt_regs *regs,
						   void *frame_pointer)
{
	struct llist_node *n = current->kretprobe_instances.first;
	unsigned long ret;

	/* kprobe_busy_begin(), inlined: probes hit from here on are missed. */
	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	if (likely(n && kp_ri(n)->fp == frame_pointer &&
		   !is_kretprobe_trampoline((unsigned long)kp_ri(n)->ret_addr)))
		ret = kp_trampoline_one(regs, kp_ri(n));
	else
		ret = kp_trampoline(regs, frame_pointer);
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
	return ret;
}
NOKPROBE_SYMBOL(kretprobe_trampoline_handler);

/**
 * kprobe_flush_task() - a task is freed: retire its pending instances
 * @tk: the task
 */
void kprobe_flush_task(struct task_struct *tk)
{
	struct llist_node *n = tk->kretprobe_instances.first, *next;

	/*
	 * No handler runs here, so this CPU need not be marked busy: that
	 * would also clobber current_kprobe of a trampoline this RCU
	 * callback may have interrupted.
	 */
	tk->kretprobe_instances.first = NULL;
	for (; n; n = next) {
		next = n->next;
		kp_instance_recycle(kp_ri(n));
	}
}
NOKPROBE_SYMBOL(kprobe_flush_task);

static int kp_instance_init(void *obj, void *context)
{
	struct kretprobe_instance *ri = obj;

	ri->rph = context;
	return 0;
}

/* A return probe goes on the entry of a function that allows it. */
static int kp_kretprobe_check_func(struct kprobe *p)
{
	unsigned long size, offset;
	bool on_entry = false;
	kprobe_opcode_t *at;

	at = kp_resolve(p->addr, p->symbol_name, p->offset, &on_entry);
	if (IS_ERR(at))
		return PTR_ERR(at);
	if (!on_entry)
		return -EINVAL;
	if (kallsyms_lookup_size_offset((unsigned long)at, &size, &offset) &&
	    arch_kretprobe_refused((unsigned long)at - offset))
		return -EINVAL;
	return 0;
}

static int kp_kretprobe_prepare(struct kretprobe *rp)
{
	struct kretprobe_holder *rph;
	int ret;

	ret = kp_kretprobe_check_func(&rp->kp);
	if (ret)
		return ret;
	if (rp->data_size > KRETPROBE_MAX_DATA_SIZE)
		return -E2BIG;
	if (rp->maxactive <= 0)
		rp->maxactive = max_t(int, 10, 2 * num_possible_cpus());

	rph = kzalloc(sizeof(*rph), GFP_KERNEL);
	if (!rph)
		return -ENOMEM;
	ret = objpool_init(&rph->pool, rp->maxactive,
			   sizeof(struct kretprobe_instance) + rp->data_size,
			   GFP_KERNEL, rph, kp_instance_init, NULL);
	if (ret) {
		/* Too many instances or too little memory: -ENOMEM, as upstream. */
		kfree(rph);
		return -ENOMEM;
	}
	refcount_set(&rph->ref, rp->maxactive + 1);
	rcu_assign_pointer(rph->rp, rp);
	rp->rph = rph;
	rp->nmissed = 0;
	rp->kp.pre_handler = pre_handler_kretprobe;
	rp->kp.post_handler = NULL;
	return 0;
}

/*
 * Stop the kretprobe's return handlers from starting; under kprobe_mutex,
 * before the grace period.
 */
static void kp_kretprobe_detach(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);

	if (kp_is_kretprobe(p) && rp->rph)
		WRITE_ONCE(rp->rph->dead, true);
}

/*
 * After the grace period nobody pushes into the pool any more: free what
 * is in it, and let the pending instances retire the rest as they return.
 */
static void kp_kretprobe_retire(struct kprobe *p)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_holder *rph;
	unsigned int n = 1;

	if (!kp_is_kretprobe(p) || !rp->rph)
		return;
	rph = rp->rph;
	rp->rph = NULL;
	/* No handler of @rp runs any more: calls still out find nothing. */
	RCU_INIT_POINTER(rph->rp, NULL);
	while (objpool_pop(&rph->pool))
		n++;
	kp_holder_put(rph, n);
}

static void kp_kretprobe_abort(struct kretprobe *rp)
{
	struct kretprobe_holder *rph = rp->rph;

	rp->rph = NULL;
	objpool_free(&rph->pool);
	kfree(rph);
}

/**
 * register_kretprobe() - probe a function's returns
 * @rp: the return probe; set rp->kp.symbol_name or rp->kp.addr (a
 *	function's entry), the handlers, maxactive and data_size
 *
 * Return: 0, or the errors of register_kprobe(), -EINVAL when the address
 * is not a function's entry, -E2BIG when data_size is too large.
 */
int register_kretprobe(struct kretprobe *rp)
{
	bool registered;
	int ret;

	/* Preparing a registered one would take its instances from it. */
	mutex_lock(&kprobe_mutex);
	registered = rp->rph && kp_site_of(&rp->kp);
	mutex_unlock(&kprobe_mutex);
	if (registered)
		return -EINVAL;

	ret = kp_kretprobe_prepare(rp);
	if (ret)
		return ret;
	ret = register_kprobe(&rp->kp);
	if (ret)
		kp_kretprobe_abort(rp);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobe);

/**
 * register_kretprobes() - register several return probes, all or none
 * @rps: the return probes
 * @num: how many
 *
 * Return: 0, or the first error (the ones before it are unregistered).
 */
int register_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	bool registered = false;
	int i, ret = 0;

	if (num <= 0)
		return -EINVAL;
	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;

	/* Preparing a registered one would take its instances from it. */
	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num && !registered; i++)
		registered = rps[i]->rph && kp_site_of(&rps[i]->kp);
	mutex_unlock(&kprobe_mutex);
	if (registered) {
		ret = -EINVAL;
		goto out;
	}

	for (i = 0; i < num; i++)
		rps[i]->rph = NULL;	/* none is registered */
	for (i = 0; i < num; i++) {
		/* Prepared already: it is in the array twice. */
		ret = rps[i]->rph ? -EINVAL : kp_kretprobe_prepare(rps[i]);
		if (ret)
			break;
		kps[i] = &rps[i]->kp;
	}
	if (!ret)
		ret = kp_register_many(kps, num);
	/*
	 * On failure the registered ones were retired (rph cleared); the
	 * others still hold what kp_kretprobe_prepare() gave them.
	 */
	if (ret)
		for (i = 0; i < num; i++)
			if (rps[i]->rph)
				kp_kretprobe_abort(rps[i]);
out:
	kvfree(kps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobes);

/**
 * unregister_kretprobe() - remove a return probe
 * @rp: the return probe
 *
 * Calls still pending return to their callers as if never probed; the
 * instances are freed after the last of them has returned.
 */
void unregister_kretprobe(struct kretprobe *rp)
{
	struct kprobe *p = &rp->kp;

	kp_unregister_many(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kretprobe);

/**
 * unregister_kretprobes() - remove several return probes, waiting once
 * @rps: the return probes
 * @num: how many
 */
void unregister_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	int i;

	if (num <= 0)
		return;
	kps = kvmalloc_array(num, sizeof(*kps), GFP_KERNEL);
	if (!kps) {
		for (i = 0; i < num; i++)
			unregister_kretprobe(rps[i]);
		return;
	}
	for (i = 0; i < num; i++)
		kps[i] = &rps[i]->kp;
	kp_unregister_many(kps, num);
	kvfree(kps);
}
EXPORT_SYMBOL_GPL(unregister_kretprobes);

#else /* !CONFIG_KRETPROBES */

static bool kp_is_kretprobe(struct kprobe *p)
{
	return false;
}

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
/* Text that goes away: module unload, init text freed.                 */
/* ------------------------------------------------------------------ */

/*
 * The text under @s is going: its probes stay registered, marked gone, and
 * the breakpoint is left alone (the memory is no longer ours to write).
 */
static void kp_site_kill(struct kprobe_site *s)
{
	struct kprobe *p;

	lockdep_assert_held(&kprobe_mutex);
	/* ftrace is still tracking the site: take our hook out of it. */
	if (s->ftrace && s->armed && !kp_ftrace_disarm(s))
		s->armed = false;
	kprobe_opt_forget(s);
	WRITE_ONCE(s->gone, true);
	s->armed = false;
	list_for_each_entry(p, &s->probes, list)
		p->flags |= KPROBE_FLAG_GONE;
}

static void kp_kill_range(bool (*going)(unsigned long addr, void *arg),
			  void *arg)
{
	struct kprobe_site *s;
	unsigned int b;

	lockdep_assert_held(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++)
		hlist_for_each_entry(s, &kprobe_sites[b], hash)
			if (!s->gone && going((unsigned long)s->addr, arg))
				kp_site_kill(s);
}

#ifdef CONFIG_MODULES
static bool kp_in_module(unsigned long addr, void *mod)
{
	return within_module(addr, mod);
}

static bool kp_in_module_init(unsigned long addr, void *mod)
{
	return within_module_init(addr, mod);
}

static int kp_module_notify(struct notifier_block *nb, unsigned long val,
			    void *data)
{
	struct module *mod = data;

	mutex_lock(&kprobe_mutex);
	switch (val) {
	case MODULE_STATE_COMING:
		kp_blacklist_module_add(mod);
		break;
	case MODULE_STATE_LIVE:
		/* Its init text is freed next. */
		kp_kill_range(kp_in_module_init, mod);
		break;
	case MODULE_STATE_GOING:
		kp_kill_range(kp_in_module, mod);
		kp_blacklist_module_remove(mod);
		break;
	}
	mutex_unlock(&kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kp_module_nb = {
	.notifier_call = kp_module_notify,
	/* After the other users of module text have seen a coming module. */
	.priority = 0,
};

static int __init kp_modules_init(void)
{
	return register_module_notifier(&kp_module_nb);
}
#else
static int __init kp_modules_init(void)
{
	return 0;
}
#endif /* CONFIG_MODULES */

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
	kp_kill_range(kp_in_kernel_init, NULL);
	mutex_unlock(&kprobe_mutex);
}

/* ------------------------------------------------------------------ */
/* debugfs: list, enabled, blacklist, stats.                            */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_DEBUG_FS

/* Sites ftrace would not (un)hook stay as they were and are counted. */
static int kp_arm_all(bool disarmed)
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

/* "symbol+0xoffset" of a probe; the module name, if any, in @modname. */
static void kp_show_symbol(struct seq_file *m, struct kprobe *p,
			   char **modname)
{
	char name[KSYM_NAME_LEN];
	unsigned long size, offset;
	const char *sym;

	*modname = NULL;
	sym = kallsyms_lookup((unsigned long)p->addr, &size, &offset, modname,
			      name);
	if (sym)
		seq_printf(m, "%s+0x%lx", sym, offset);
	else
		seq_printf(m, "%pS", p->addr);	/* e.g. its module is gone */
}

/* "address  k|r  symbol+offset  module " as the documentation shows. */
static void kp_show_where(struct seq_file *m, struct kprobe *p, bool show)
{
	char *modname;

	seq_printf(m, "%px  %s  ", show ? p->addr : NULL,
		   kp_is_kretprobe(p) ? "r" : "k");
	kp_show_symbol(m, p, &modname);
	seq_printf(m, "  %s ", modname ?: " ");
}

static int kp_list_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;
	unsigned int b;

	mutex_lock(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++) {
		hlist_for_each_entry(s, &kprobe_sites[b], hash) {
			list_for_each_entry(p, &s->probes, list) {
				kp_show_where(m, p, show);
				seq_printf(m, "%s%s%s%s\n",
					   kprobe_gone(p) ? "[GONE]" : "",
					   kprobe_disabled(p) && !kprobe_gone(p) ?
					   "[DISABLED]" : "",
					   kprobe_optimized(p) ? "[OPTIMIZED]" : "",
					   kprobe_ftrace(p) ? "[FTRACE]" : "");
			}
		}
	}
	mutex_unlock(&kprobe_mutex);
	wprobe_debugfs_list(m, show);	/* watchpoint probes, type w */
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_list);

static unsigned long kp_sum_hits(struct kprobe *p)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(p->nhit, cpu);
	return sum;
}

/* Our addition: per-probe hit and miss counts. */
static int kp_stats_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;
	unsigned int b;

	seq_puts(m, "# address  symbol+offset  hits  missed\n");
	mutex_lock(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++) {
		hlist_for_each_entry(s, &kprobe_sites[b], hash) {
			list_for_each_entry(p, &s->probes, list) {
				char *modname;

				seq_printf(m, "%px  ", show ? p->addr : NULL);
				kp_show_symbol(m, p, &modname);
				seq_printf(m, "  %lu  %lu\n", kp_sum_hits(p),
					   READ_ONCE(p->nmissed));
			}
		}
	}
	mutex_unlock(&kprobe_mutex);
	wprobe_debugfs_stats(m, show);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_stats);

static int kp_blacklist_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_blacklist_entry *ent;

	mutex_lock(&kprobe_mutex);
	list_for_each_entry(ent, &kprobe_blacklist, list)
		seq_printf(m, "0x%px-0x%px\t%ps\n",
			   show ? (void *)ent->start_addr : NULL,
			   show ? (void *)ent->end_addr : NULL,
			   (void *)ent->start_addr);
	mutex_unlock(&kprobe_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_blacklist);

static ssize_t kp_enabled_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	const char *val = READ_ONCE(kprobes_all_disarmed) ? "0\n" : "1\n";

	return simple_read_from_buffer(ubuf, count, ppos, val, 2);
}

/* Whatever kstrtobool() takes: 0/1, y/n, on/off, with a newline or not. */
static ssize_t kp_enabled_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	bool enable;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &enable);
	if (ret)
		return ret;
	ret = kp_arm_all(!enable);
	return ret ? ret : count;
}

static const struct file_operations kp_enabled_fops = {
	.read =		kp_enabled_read,
	.write =	kp_enabled_write,
	.llseek =	default_llseek,
};

static int __init kp_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &kp_list_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &kp_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &kp_blacklist_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &kp_stats_fops);
	return 0;
}
late_initcall(kp_debugfs_init);

#endif /* CONFIG_DEBUG_FS */

/* ------------------------------------------------------------------ */
/* Start-up.                                                            */
/* ------------------------------------------------------------------ */

static int __init init_kprobes(void)
{
	int ret;

	kp_jump_sort();
	/* Without a full blacklist, the architecture's checks still hold. */
	ret = kp_blacklist_init();
	if (ret)
		pr_warn("the blacklist is incomplete (%d)\n", ret);
	ret = arch_init_kprobes();
	if (ret) {
		pr_err("architecture set-up failed (%d); kprobes disabled\n",
		       ret);
		return ret;
	}
	ret = kp_modules_init();
	if (ret)
		return ret;
	kprobes_ready = true;
	return 0;
}
early_initcall(init_kprobes);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Out-of-line slots: the executable pages that hold the copies of probed
 * instructions (and, with jump optimization, the detour buffers), and
 * their entries in /proc/kallsyms.
 */
#include <linux/execmem.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/set_memory.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#ifdef __ARCH_WANT_KPROBES_INSN_SLOT

/* Every cache's slots are at least this big; it sizes the page bitmaps. */
#define KP_SLOTS_PER_PAGE	(PAGE_SIZE / KPROBE_INSN_SLOT_SIZE)

/*
 * Slots of one size: out-of-line copies, or (with jump optimization)
 * detour buffers.  Pages come from execmem's kprobes range, near the
 * kernel text where the architecture needs its PC-relative operands and
 * jumps to reach, and are mapped read-only and executable; the
 * architecture writes slots with its text patching.  Each page is listed
 * in /proc/kallsyms under the cache's name.
 */
struct kp_slot_cache {
	const char		*name;
	unsigned int		size;
	struct list_head	pages;		/* RCU */
	struct work_struct	reclaim;
};

struct kp_slot_page {
	struct list_head	list;		/* kp_slot_cache.pages */
	struct kp_slot_cache	*cache;
	void			*base;		/* byte addressed: slot sizes are in bytes */
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

/*
 * A new page of slots, before it is mapped executable: architectures with
 * a one-word trap fill it so that anything running into an unused slot
 * traps.
 */
void __weak arch_kprobe_fill_slot_page(void *page)
{
}

#ifdef CONFIG_KPROBES_PER_PROBE
/*
 * An architecture served per probe writes its slots its own way: some
 * with their text patching (the page may be read-only), 32-bit arm with
 * plain stores.  Its alloc_insn_page(), or the default of
 * kprobes_per_probe.c, decides how the page is mapped; detour buffers may
 * have pages of their own (powerpc's is in its kernel text, one page that
 * is never freed).
 */
#ifdef CONFIG_OPTPROBES
void *__weak alloc_optinsn_page(void)
{
	return alloc_insn_page();
}

void __weak free_optinsn_page(void *page)
{
	execmem_free(page);
}
#endif

static void *kp_slot_page_alloc(struct kp_slot_cache *c)
{
#ifdef CONFIG_OPTPROBES
	if (c == &kp_optinsn_slots)
		return alloc_optinsn_page();
#endif
	return alloc_insn_page();
}

static void kp_slot_page_release(struct kp_slot_cache *c, void *page)
{
#ifdef CONFIG_OPTPROBES
	if (c == &kp_optinsn_slots) {
		free_optinsn_page(page);
		return;
	}
#endif
	execmem_free(page);
}
#else
/*
 * A page for slots, writable until kp_slot_page_alloc() has filled it:
 * execmem's kprobes range, unless the architecture needs its slots
 * somewhere else (arm64: in a branch's reach of the kernel text).
 */
void *__weak arch_kprobe_alloc_slot_page(void)
{
	return execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
}

static void *kp_slot_page_alloc(struct kp_slot_cache *c)
{
	void *page = arch_kprobe_alloc_slot_page();

	if (page) {
		arch_kprobe_fill_slot_page(page);
		set_memory_rox((unsigned long)page, 1);
	}
	return page;
}

static void kp_slot_page_release(struct kp_slot_cache *c, void *page)
{
	execmem_free(page);
}
#endif

static struct kp_slot_page *kp_slot_page_new(struct kp_slot_cache *c)
{
	struct kp_slot_page *pg = kzalloc(sizeof(*pg), GFP_KERNEL);

	if (!pg)
		return NULL;
	pg->cache = c;
	pg->base = kp_slot_page_alloc(c);
	if (!pg->base) {
		kfree(pg);
		return NULL;
	}
	list_add_rcu(&pg->list, &c->pages);
	return pg;
}

static void kp_slot_page_free(struct work_struct *work)
{
	struct kp_slot_page *pg = container_of(to_rcu_work(work),
					       struct kp_slot_page, free_work);

	kp_slot_page_release(pg->cache, pg->base);
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
		off = (unsigned long)slot - (unsigned long)pg->base;
		if (off >= PAGE_SIZE)	/* below base, it wraps around */
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
 * Return: the slot (as arch_kprobe_fill_slot_page() left it), or NULL.
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
 * Return: the slot (KPROBE_OPTINSN_SLOT_SIZE bytes, as
 * arch_kprobe_fill_slot_page() left them when unused), or NULL.
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

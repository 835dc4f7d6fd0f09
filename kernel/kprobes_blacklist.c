// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where no probe may go: the blacklist (functions marked NOKPROBE_SYMBOL()
 * or in the kprobes and noinstr sections, of the kernel and of modules,
 * plus the architecture's own), and text other subsystems rewrite at run
 * time (jump labels, static calls) or that is not code (CFI and padding
 * preambles).
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/bsearch.h>
#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/static_call.h>
#include <asm/sections.h>

#include "kprobes_internal.h"

/* Written under kprobe_mutex (or at boot), read under RCU. */
LIST_HEAD(kprobe_blacklist);

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
void kprobe_blacklist_module_add(struct module *mod)
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

void kprobe_blacklist_module_remove(struct module *mod)
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

/* The sections no architecture's kprobes may touch. */
static bool kp_in_core_sections(unsigned long addr)
{
	return (addr >= (unsigned long)__kprobes_text_start &&
		addr < (unsigned long)__kprobes_text_end) ||
	       (addr >= (unsigned long)__noinstr_text_start &&
		addr < (unsigned long)__noinstr_text_end);
}

/*
 * The architecture's quick check before the list is searched; its own
 * areas are listed by arch_populate_kprobe_blacklist().
 */
bool __weak arch_within_kprobe_blacklist(unsigned long addr)
{
	return kp_in_core_sections(addr);
}

int __weak arch_populate_kprobe_blacklist(void)
{
	return 0;
}

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
	ret = kprobe_add_area_blacklist((unsigned long)__kprobes_text_start,
					(unsigned long)__kprobes_text_end);
	if (!ret)
		ret = kprobe_add_area_blacklist((unsigned long)__noinstr_text_start,
						(unsigned long)__noinstr_text_end);
	if (!ret)
		ret = arch_populate_kprobe_blacklist();
	return err ?: ret;
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

#ifdef CONFIG_GENERIC_BUG
/*
 * The addresses of the kernel's own BUG()/WARN() sites, sorted, for the
 * same reason as the jump entries above: find_bug() walks the whole
 * __bug_table, some 30,000 instructions a probe with a few thousand
 * entries, most of registering one on arm64.  Built once at boot and only
 * read afterwards; module and freed init text take find_bug().
 */
extern struct bug_entry __start___bug_table[], __stop___bug_table[];

static unsigned long *kp_bug_sorted __ro_after_init;
static unsigned int kp_bug_nr __ro_after_init;

static unsigned long __init kp_bug_addr(const struct bug_entry *bug)
{
#ifdef CONFIG_GENERIC_BUG_RELATIVE_POINTERS
	return (unsigned long)&bug->bug_addr_disp + bug->bug_addr_disp;
#else
	return bug->bug_addr;
#endif
}

static int kp_addr_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static void __init kp_bug_sort(void)
{
	unsigned int i, n = __stop___bug_table - __start___bug_table;
	unsigned long *v;

	if (!n)
		return;
	v = kvmalloc_array(n, sizeof(*v), GFP_KERNEL);
	if (!v)
		return;		/* find_bug() it is */
	for (i = 0; i < n; i++)
		v[i] = kp_bug_addr(&__start___bug_table[i]);
	sort(v, n, sizeof(*v), kp_addr_cmp, NULL);
	kp_bug_sorted = v;
	kp_bug_nr = n;
}

/* Is there a BUG()/WARN() site at @addr?  find_bug()'s answer. */
static bool kp_bug_at(unsigned long addr)
{
	if (!kp_bug_sorted || !core_kernel_text(addr))
		return find_bug(addr);
	return bsearch(&addr, kp_bug_sorted, kp_bug_nr, sizeof(addr),
		       kp_addr_cmp);
}
#else
static void __init kp_bug_sort(void)
{
}

static bool kp_bug_at(unsigned long addr)
{
	return false;
}
#endif

/*
 * Is @addr text no probe may go into?  Places other subsystems rewrite at
 * run time, BUG()/WARN() sites, the blacklist, preambles.  Called with
 * jump_label_lock() held and preemption off.
 */
bool kprobe_text_refused(kprobe_opcode_t *addr)
{
	unsigned long a = (unsigned long)addr;

	return in_gate_area_no_mm(a) || within_kprobe_blacklist(a) ||
	       kprobe_jump_label_reserved(addr, addr) ||
	       static_call_text_reserved(addr, addr) ||
	       kp_bug_at(a) || kp_in_preamble(a);
}

/*
 * Sort the jump entries and fill the blacklist.  Add every entry it can;
 * the first error, if any, is returned.
 */
int __init kprobe_blacklist_init(void)
{
	kp_jump_sort();
	kp_bug_sort();
	return kp_blacklist_init();
}
